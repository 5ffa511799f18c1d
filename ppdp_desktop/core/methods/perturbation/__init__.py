"""methods/perturbation"""
