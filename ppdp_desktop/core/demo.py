"""The demo preset: the embedded synthetic patients with sensible roles and their taxonomy.

Used by ``ppdp demo`` and by the wizard's "Use the demo data", so a first run works with nothing else.
"""
from __future__ import annotations

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.resources import DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings, SensitivitySettings
from ppdp_desktop.core.taxonomy.tree import Taxonomy
from ppdp_desktop.core.taxonomy.io import load_taxonomy

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


def demo_settings(dataset: Dataset, method: str, theta: float = 3.0, seed: int | None = None) -> AnonymizationSettings:
    """The demo job's settings for ``method``: the demo roles, the theta rule, and sensible values of the
    method's own parameters (chosen by its settings type, so a new method gets its defaults).

    For personalized recoding: common diagnoses published as they are, rare (stigmatized) ones as an
    opaque code, the rest generalized to their chapter; income graded into 4 secret categories. For
    differential privacy: length of stay and income with declared ranges, epsilon 1, k 50.
    """
    share = dataset.frame[DEMO_SENSITIVE].value_counts(normalize=True)
    value_choices = {str(v): 1 if f > 0.05 else 3 if f < 0.01 else 2 for v, f in share.items()}
    settings_type = get_method(method).settings_type
    presets = {
        RecodingSettings: lambda: RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)), graded=["income"],
                                                   categories=4),
        DPSettings: lambda: DPSettings(list(DEMO_DP_DOMAINS), epsilon=1.0, k=50, domains=dict(DEMO_DP_DOMAINS)),
    }
    options = presets[settings_type]() if settings_type in presets else settings_type.from_json({})
    return AnonymizationSettings(
        sensitive=DEMO_SENSITIVE,
        method=method,
        identifiers=[c for c, r in DEMO_ROLES.items() if r is Role.IDENTIFIER],
        quasi=[c for c, r in DEMO_ROLES.items() if r is Role.QUASI_IDENTIFIER],
        sensitivity=SensitivitySettings(theta=theta),
        choices=ChoiceSettings(value_choices=value_choices),
        options=options,
        seed=seed,
    )
