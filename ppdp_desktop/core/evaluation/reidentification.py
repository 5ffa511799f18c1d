"""The re-identification side of a release, as the report, the release and the window show it: the
prosecutor risk before and after, the k-anonymous generalization chosen (if any), and for randomized
quasi-identifiers what a naive linker gets right. Side by side with the method's own guarantee, it
makes the second verdict: never a lone green tick while records can be singled out. The verdict itself
follows the one rule of :mod:`ppdp_desktop.core.privacy.verdict`, here and for a release.json entry
(:func:`entry_verdict`, which README.txt and ``ppdp verify`` use)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.privacy.risk import SUPPRESSED, RiskAnalysis
from ppdp_desktop.core.privacy.verdict import RiskVerdict, risk_verdict

if TYPE_CHECKING:
    from ppdp_desktop.core.generalization import Generalization
    from ppdp_desktop.core.privacy.population import PopulationRisk
    from ppdp_desktop.core.privacy.risk import NaiveLinkage

__all__ = ["SUPPRESSED", "Reidentification", "entry_verdict"]


@dataclass
class Reidentification:
    """The re-identification side of a release: risk before and after, and the generalization chosen.

    All of it is public (it goes into ``release.json``): class-size figures and hierarchy levels.
    """

    quasi: list[str]
    before: RiskAnalysis | None  # None in a report that must hold nothing from the original records
    after: RiskAnalysis
    generalization: Generalization | None = None
    linkage: NaiveLinkage | None = None
    claimed: dict[str, Any] | None = None  # a written release's generalization (release.json), re-checked by verify
    #: the risk in the population the data was drawn from, when the custodian stated it (computed on the release)
    population: PopulationRisk | None = None
    #: the sensitive column is written as it is (criteria that read it can be re-checked on the release)
    sensitive_as_is: bool = True

    @property
    def protected(self) -> bool:
        """The user asked for k and the written table was checked to be k-anonymous (k holds; whether every
        record is also within the threshold is the verdict's other half: :meth:`risk_verdict`)."""
        return self.generalization is not None or self.claimed is not None

    def _k_and_suppressed(self) -> tuple[int, int]:
        if self.generalization is not None:
            return self.generalization.k, self.generalization.suppressed
        if self.claimed is None:  # asked only of a protected release (self.protected)
            from ppdp_desktop.core.errors import PrivacyError

            raise PrivacyError("The re-identification figures hold no k: neither a generalization nor a claimed one.")
        return int(self.claimed["k"]), int(self.claimed.get("suppressed", 0))

    def public(self) -> Reidentification:
        """The same without the original data's figures (for a report that ships inside an epsilon-DP release)."""
        return replace(self, before=None, linkage=None)

    def risk_verdict(self) -> RiskVerdict:
        """The verdict of the one rule (:mod:`~ppdp_desktop.core.privacy.verdict`): green only when the stated k
        holds and every released record is within the threshold, amber when k holds but records are above it,
        red otherwise, "not measured" without quasi-identifiers."""
        if not self.quasi:
            return risk_verdict(None)
        suppressed = self._k_and_suppressed()[1] if self.protected else None
        return risk_verdict(self.after, k_checked=self.protected, suppressed=suppressed)

    @property
    def verdict(self) -> str:
        """The verdict's code as release.json states it (``protected``, ``above threshold``, ``not protected``,
        ``not measured``)."""
        return self.risk_verdict().code

    @property
    def level(self) -> str:
        """The verdict's colour: ``ok`` (green), ``warning`` (amber) or ``danger`` (red)."""
        return self.risk_verdict().level

    def headline(self) -> str:
        """One sentence: the re-identification verdict in plain words."""
        return self.risk_verdict().text

    def lines(self) -> list[str]:
        """The verdict, then the figures original -> release, then the generalization chosen."""
        out = [self.headline()]
        if not self.quasi:
            return out
        if self.before is not None:
            out.append("Original data: " + " ".join(self.before.lines()))
        out.append("Release: " + " ".join(self.after.lines()))
        if self.generalization is not None:
            out += self.generalization.lines()
        if self.linkage is not None:
            out += self.linkage.lines()
        return out

    def to_json(self) -> dict[str, Any]:
        from ppdp_desktop.core.generalization.published import published_json

        return {
            "quasi_identifiers": list(self.quasi),
            "verdict": self.verdict,
            "original": None if self.before is None else self.before.to_json(),
            "release": {**self.after.to_json(), "verdict": self.verdict},  # with the suppressed records' group
            "generalization": self.claimed if self.generalization is None else published_json(self.generalization,
                                                                                                self.sensitive_as_is),
            "naive_linkage": None if self.linkage is None else self.linkage.to_json(),
            **({"population": self.population.to_json()} if self.population is not None else {}),
        }


def entry_verdict(entry: dict[str, Any] | None) -> RiskVerdict:
    """The verdict of a release.json ``reidentification`` entry by the one rule, from its stated figures (the
    release's, with the generalization's k; ``ppdp verify`` measures them again on the data)."""
    if not isinstance(entry, dict) or not entry.get("quasi_identifiers") or not isinstance(entry.get("release"), dict):
        return risk_verdict(None)
    claimed = entry.get("generalization") or None
    suppressed = None if claimed is None else int(claimed.get("suppressed", 0))
    return risk_verdict(RiskAnalysis.from_json(entry["release"]), k_checked=claimed is not None, suppressed=suppressed)


#: the verdicts releases written before the one rule stated (top level "verified", else the table's level)
LEGACY_VERDICTS = ("verified", "low", "elevated", "high")


def _legacy_level(risk: RiskAnalysis) -> str:
    """The table's level as releases written before the one rule stated it (for ``ppdp verify`` only)."""
    if risk.records_above_threshold > 0:
        return "high"
    return "elevated" if risk.highest_risk > risk.threshold / 2 or (risk.records_below_k or 0) > 0 else "low"


def check_stated_verdict(entry: dict[str, Any], measured: RiskAnalysis | None, suppressed: int | None = None) -> str:
    """``ppdp verify``: the verdicts release.json states (the entry's and its release figures') must be those the
    one rule gives on the release as measured again (``measured``, with the claimed k, whose k-anonymity and
    suppression limit verify checks on its own; None without quasi-identifiers: "not measured"). A release
    written before the rule states the older words: accepted when they are what that rule gave, with today's
    verdict said. ``suppressed``: the records found all ``*`` in the data (with a claimed k). Returns the line for
    verify."""
    from ppdp_desktop.core.errors import PrivacyError

    claimed = bool(entry.get("generalization"))
    today = risk_verdict(measured, k_checked=claimed, suppressed=suppressed if claimed else None).code
    release = entry.get("release")
    if not isinstance(release, dict):
        release = {}
    stated = entry.get("verdict"), release.get("verdict")
    legacy = any(v in LEGACY_VERDICTS for v in stated)
    expected: tuple[str | None, ...]
    if not legacy:
        expected = today, today
    elif measured is None:  # nothing was measured; an earlier version stated the level of one group of everyone
        expected = tuple(v if v in LEGACY_VERDICTS[1:] else None for v in stated)
    else:
        expected = ("verified" if claimed else _legacy_level(measured)), _legacy_level(measured)
    for said, found in zip(stated, expected):
        if said is not None and said != found:
            raise PrivacyError(f"release.json states the re-identification verdict {said!r}, but the released data "
                               f"gives {found or today!r}: the release was altered.")
    if legacy:
        return (f"re-identification verdict: {stated[0]!r}, in the words of an earlier version; by today's rule it is "
                f"{today!r} (green only when k holds and every record is within the threshold)")
    return f"re-identification verdict: {today!r}, as stated"
