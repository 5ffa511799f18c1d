"""taxonomy"""
