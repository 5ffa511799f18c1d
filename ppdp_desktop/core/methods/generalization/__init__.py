"""methods/generalization: k-anonymity and the privacy criteria by generalization alone, nothing randomized."""
