"""PPDP Desktop: privacy-preserving publishing of patient tables on an air-gapped PC."""

__version__ = "0.1.0"
