"""methods/rr"""
