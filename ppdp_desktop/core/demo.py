"""The demo preset: the embedded synthetic patients with sensible roles and their taxonomy.

Used by ``ppdp demo`` and by the wizard's "Use the demo data", so a first run works with nothing else.
"""
from __future__ import annotations

from ppdp_desktop.core.resources import DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.schema import Role
from ppdp_desktop.core.taxonomy import Taxonomy
from ppdp_desktop.core.taxonomy_io import load_taxonomy

DEMO_SENSITIVE = "diagnosis"
DEMO_ROLES = {
    "patient_id": Role.IDENTIFIER,
    "name": Role.IDENTIFIER,
    "age": Role.QUASI_IDENTIFIER,
    "sex": Role.QUASI_IDENTIFIER,
    "postcode": Role.QUASI_IDENTIFIER,
    DEMO_SENSITIVE: Role.SENSITIVE,
}


def demo_taxonomy() -> Taxonomy:
    """The diagnosis taxonomy shipped with the demo data (chapters of diagnoses)."""
    return load_taxonomy(resource_path(DEMO_TAXONOMY), DEMO_SENSITIVE)


# Declared ranges of the demo's numeric columns for differential privacy: a custodian's knowledge of
# what the values can be, not the data's own min/max (which would be disclosed).
DEMO_DP_DOMAINS = {"length_of_stay": (0.0, 365.0), "income": (0.0, 500_000.0)}
