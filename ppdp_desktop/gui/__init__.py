"""The PySide6 face of PPDP Desktop: it only adapts the core; every computation lives in ``core``."""
