"""methods/dp"""
