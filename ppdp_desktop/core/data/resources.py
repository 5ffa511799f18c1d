"""Find the files that ship with the application (demo data, sample taxonomies, icons).

In a source checkout they live in ``<repo>/resources``; in an installed wheel or a PyInstaller
bundle they are copied to ``ppdp_desktop/resources``. Nothing here ever reads ``../shared``.
"""
from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[2]  # ppdp_desktop/


def resources_dir() -> Path:
    """The folder holding the shipped resources."""
    candidates = [_PACKAGE / "resources", _PACKAGE.parent / "resources"]
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.insert(0, Path(bundle) / "ppdp_desktop" / "resources")
    for candidate in candidates:
        if (candidate / "demo").is_dir():
            return candidate
    raise FileNotFoundError("The application's resources folder is missing; reinstall PPDP Desktop.")


def resource_path(relative: str) -> Path:
    """The path of one shipped resource, e.g. ``resource_path("demo/patients.csv")``."""
    return resources_dir() / relative


DEMO_DATA = "demo/patients.csv"
DEMO_TAXONOMY = "demo/diagnosis_taxonomy.json"
#: Declared ranges of the demo's numeric columns (for differential privacy): a custodian's knowledge of what the
#: values can be, not the data's own min/max (which would be disclosed).
DEMO_DP_DOMAINS = {"length_of_stay": (0.0, 365.0), "income": (0.0, 500_000.0)}
