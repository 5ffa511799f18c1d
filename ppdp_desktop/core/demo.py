"""The demo preset: the embedded synthetic patients with sensible roles and their taxonomy.

Used by ``ppdp demo`` and by the wizard's "Use the demo data", so a first run works with nothing else.
"""
from __future__ import annotations

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.resources import DEMO_DP_DOMAINS, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings, SensitivitySettings
from ppdp_desktop.core.taxonomy.io import load_taxonomy
from ppdp_desktop.core.taxonomy.tree import Taxonomy

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


__all__ = ["DEMO_DP_DOMAINS", "DEMO_ROLES", "DEMO_SENSITIVE", "demo_settings", "demo_taxonomy"]


def demo_settings(dataset: Dataset, method: str, theta: float = 3.0, seed: int | None = None) -> AnonymizationSettings:
    """The demo job's settings for ``method``: the demo roles, the theta rule, per-value choices, and the method's
    own parameters from its hook (``Method.demo_settings``: a new method gets its declared defaults).

    The per-value choices (read by personalized recoding): common diagnoses published as they are, rare
    (stigmatized) ones as an opaque code, the rest generalized to their chapter.
    """
    # as text: a loaded categorical would order tied counts by category, not by first appearance (the choices' order)
    share = dataset.frame[DEMO_SENSITIVE].astype("str").value_counts(normalize=True)
    value_choices = {str(v): 1 if f > 0.05 else 3 if f < 0.01 else 2 for v, f in share.items()}
    options = get_method(method).demo_settings()
    protection = get_method(method).demo_protection()
    return AnonymizationSettings(
        sensitive=DEMO_SENSITIVE,
        method=method,
        identifiers=[c for c, r in DEMO_ROLES.items() if r is Role.IDENTIFIER],
        quasi=[c for c, r in DEMO_ROLES.items() if r is Role.QUASI_IDENTIFIER],
        sensitivity=SensitivitySettings(theta=theta),
        choices=ChoiceSettings(value_choices=value_choices),
        options=options,
        protection=protection,
        seed=seed,
    )
