"""methods/personalized"""
