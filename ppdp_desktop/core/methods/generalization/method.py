"""Generalization only (issue 33): the quasi-identifiers generalized to k-anonymity and the criteria asked (l-diversity,
t-closeness, risk thresholds), records suppressed where needed, and nothing randomized.

ARX's core workflow: "k >= 5, nothing randomized". The generalization itself is the job's (``core.protection``, in
front of every method); this method adds no noise, releases the sensitive column (if one is named) unchanged and
says so. Its release is checked before writing and by ``ppdp verify`` with the independent
:func:`~ppdp_desktop.core.generalization.check_criteria` on the released text (:mod:`.release`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from ppdp_desktop.core.errors import ParameterError, PPDPError, setting_ref
from ppdp_desktop.core.methods.base import Method
from ppdp_desktop.core.outcome import Applied
from ppdp_desktop.core.privacy.randomness import RandomSource, keyed_streams
from ppdp_desktop.core.settings import AnonymizationSettings, NoSettings, ProtectionSettings

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.released import LoadedRelease

#: what the release says of its sensitive values (the protection is the quasi-identifiers' generalization)
STATEMENT = ("Nothing is randomized: every released value is an original value or its generalization. The protection "
             "is the generalization of the quasi-identifiers to k-anonymity and the criteria stated with it, checked on "
             "the released table before writing and by ppdp verify.")

#: what a job without k or a criterion is told
NEEDS_CRITERION = (f"Generalization only needs k-anonymity ({setting_ref('k-anonymity', 'K')}) or a privacy criterion "
                   f"({setting_ref('l-diversity', 'L')}, {setting_ref('entropy-l', 'L')}, {setting_ref('recursive', 'C,L')}, "
                   f"{setting_ref('t-closeness', 'T')}, {setting_ref('average-risk', 'R')} or "
                   f"{setting_ref('highest-risk', 'R')}); without one it would release the data as it is.")


@dataclass
class GeneralizationPlan:
    """The plan of a generalization-only release: no randomization; the sensitive column (or none) kept as it is."""

    sensitive: str | None
    method: str = "generalization"
    needs_pseudonyms: bool = False

    def verify(self) -> dict[str, Any]:
        return {"kind": "none", "verified": True, "statement": STATEMENT, "randomized": False}

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0, bound: Any = None) -> Applied:
        """Nothing to replace: the job generalizes the quasi-identifiers, every other column is released as it is."""
        keyed_streams(randomness)  # the job's keyed source only (fail closed), though nothing is drawn
        return Applied({})

    def release_json(self) -> dict[str, Any]:
        return {"generalization_only": {"sensitive": self.sensitive, "sensitive_released_as_is": True},
                "guarantee": {"kind": "none", "statement": STATEMENT}}

    def key_json(self) -> dict[str, Any]:
        return {}

    def describe(self) -> list[str]:
        kept = f"the sensitive column {self.sensitive!r} is released unchanged" if self.sensitive else "no sensitive column"
        return [f"Generalization only: nothing randomized; {kept}."]


class GeneralizationOnly(Method[GeneralizationPlan, NoSettings]):
    """k-anonymity and the criteria by full-domain generalization and record suppression, with no randomization."""

    name = "generalization"
    title = "Generalization only (k-anonymity, l-diversity, t-closeness)"
    summary = ("Generalizes the quasi-identifiers until every released group has at least k records and meets the "
               "criteria asked (l-diversity or t-closeness of the sensitive column, risk thresholds), suppressing "
               "outlying records; nothing is randomized, so every released value is true. It protects against "
               "re-identification by the quasi-identifiers; what a group's sensitive values reveal is limited only "
               "by the criteria asked.")
    settings_type = NoSettings
    plan_type = GeneralizationPlan
    needs_sensitive = False
    needs_pairs = False
    generalizes_only = True
    public_report = False

    def roles(self, settings: AnonymizationSettings) -> tuple[list[str], list[str]]:
        """The sensitive column if one is named (released unchanged), and the quasi-identifiers."""
        return ([settings.sensitive] if settings.sensitive else []), list(settings.quasi)

    def precheck(self, settings: AnonymizationSettings) -> list[str]:
        protection = settings.protection
        try:
            protection.check()
        except PPDPError as exc:
            return [exc.message]
        if not protection.generalizes:
            return [NEEDS_CRITERION]
        if not settings.quasi:
            return [f"Generalization only needs the quasi-identifier columns: give them {setting_ref('quasi', 'COLS')}."]
        if protection.reads_sensitive and not settings.sensitive:
            return ["l-diversity and t-closeness are measured on the sensitive column: name it with "
                    f"{setting_ref('sensitive', 'COL')}."]
        return []

    def demo_protection(self) -> ProtectionSettings:
        """The demo: k = 5 and distinct 2-diversity of the diagnosis, age in 5-, 10- and 20-year bands."""
        return ProtectionSettings(k=5, intervals={"age": [5, 10, 20]}, l_diversity=2)

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> GeneralizationPlan:
        problems = self.precheck(settings)
        if problems:
            raise ParameterError(problems[0], setting="k-anonymity")
        return GeneralizationPlan(settings.sensitive or None)

    def verify_release(self, release: LoadedRelease) -> list[str]:
        from ppdp_desktop.core.methods.generalization.release import verify_generalized

        return verify_generalized(release)

    def readme_text(self, metadata: dict[str, Any]) -> str:
        from ppdp_desktop.core.methods.generalization.release import readme_text

        return readme_text(metadata)
