"""methods/partition"""
