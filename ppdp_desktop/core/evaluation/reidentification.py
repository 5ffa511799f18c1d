"""The re-identification side of a release, as the report, the release and the window show it: the
prosecutor risk before and after, the k-anonymous generalization chosen (if any), and for randomized
quasi-identifiers what a naive linker gets right. Side by side with the method's own guarantee, it
makes the second verdict: never a lone green tick while records can be singled out."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ppdp_desktop.core.generalization import Generalization
    from ppdp_desktop.core.privacy.risk import NaiveLinkage, RiskAnalysis

SUPPRESSED = "*"


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

    @property
    def protected(self) -> bool:
        """The user asked for k and the written table was checked to be k-anonymous."""
        return self.generalization is not None or self.claimed is not None

    def _k_and_suppressed(self) -> tuple[int, int]:
        if self.generalization is not None:
            return self.generalization.k, self.generalization.suppressed
        return int(self.claimed["k"]), int(self.claimed.get("suppressed", 0))

    def public(self) -> "Reidentification":
        """The same without the original data's figures (for a report that ships inside an epsilon-DP release)."""
        return replace(self, before=None, linkage=None)

    @property
    def verdict(self) -> str:
        """``"verified"`` (k-anonymity asked and checked), else the risk level of the release."""
        return "verified" if self.protected else self.after.verdict()

    def headline(self) -> str:
        """One sentence: the re-identification verdict in plain words."""
        if not self.quasi:
            return ("Re-identification: no quasi-identifiers were named, so the risk of singling someone out by "
                    "age, sex, postcode and the like was not measured.")
        if self.protected:
            k, suppressed = self._k_and_suppressed()
            return (f"Re-identification: protected — every released record shares its quasi-identifiers with at least "
                    f"{k - 1} others (k = {k}, verified); {suppressed:,} records suppressed.")
        return f"Re-identification: NOT protected — {self.after.lines()[0]}"

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
        return {
            "quasi_identifiers": list(self.quasi),
            "verdict": self.verdict,
            "original": None if self.before is None else self.before.to_json(),
            "release": self.after.to_json(),
            "generalization": self.claimed if self.generalization is None else self.generalization.to_json(),
            "naive_linkage": None if self.linkage is None else self.linkage.to_json(),
        }
