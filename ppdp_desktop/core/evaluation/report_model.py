"""The report of one anonymization as data: :class:`MethodReport` (guarantee, utility, per-value arrays,
figures). Method families fill their part of it; the report package lays it out as HTML, PDF and the
window's report page."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.evaluation.reidentification import Reidentification
from ppdp_desktop.core.evaluation.utility import UtilitySummary

if TYPE_CHECKING:
    from ppdp_desktop.core.evaluation.chart import Chart

MISSING_LABEL = "(missing)"


def value_label(value: object) -> str:
    """A domain value as the report shows it (missing values as ``(missing)``)."""
    text = label_text(value)
    return text if text else MISSING_LABEL


def percent(share: float) -> str:
    """A share as a percentage a reader takes in at once: ``77 %``, ``0.4 %``, ``< 0.1 %`` (``n/a`` if unknown)."""
    if not np.isfinite(share):
        return "n/a"
    if share <= 0:
        return "0 %"
    if share < 0.001:
        return "< 0.1 %"
    if share < 0.1:
        return f"{share * 100:.1f} %"
    if 0.999 < share < 1:
        return "> 99.9 %"
    return f"{share * 100:.0f} %"


@dataclass(frozen=True)
class Marginal:
    """One released column's counts per value: original (None in the report inside a release), as released,
    and estimated from the release with a 95 % interval. Randomized response fills one per randomized column."""

    attribute: str
    values: list[str]
    original: np.ndarray | None
    released: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray


@dataclass
class MethodReport:
    """Everything the report page and a report file show about one anonymization.

    Per-value arrays (``original``, ``reconstructed``, ``band_low``, ``band_high``, ``retention``,
    ``max_posterior``) follow ``values`` (the domain order); they are ``None`` for methods that do
    not perturb (personalized recoding).
    """

    method: str
    title: str
    n_records: int
    guarantee: dict[str, Any]
    lines: list[str]
    record_utility: float | None = None
    utility: UtilitySummary | None = None
    values: list[str] = field(default_factory=list)
    original: np.ndarray | None = None
    reconstructed: np.ndarray | None = None
    band_low: np.ndarray | None = None
    band_high: np.ndarray | None = None
    retention: np.ndarray | None = None
    max_posterior: np.ndarray | None = None
    rho2: np.ndarray | None = None
    epsilon_ldp: float | None = None
    downward_breaches: list[str] = field(default_factory=list)
    choice_counts: dict[str, int] = field(default_factory=dict)
    figures: dict[str, Chart] = field(default_factory=dict)
    reidentification: Reidentification | None = None
    #: what the release is good for, in plain sentences computed from the figures (the first page shows them
    #: after the generic ones on estimated counts); each method part adds its own
    findings: list[str] = field(default_factory=list)
    marginals: list[Marginal] = field(default_factory=list)  # randomized columns besides the sensitive one
    analysis: Any = None  # "does my analysis survive?" (a ModelComparison), when the user asked for it
    group_disclosure: Any = None  # what the release reveals about a group (a GroupDisclosure), every method
    images: dict[str, bytes] = field(default_factory=dict, repr=False)  # PNG of each figure, drawn once

    def image(self, name: str) -> bytes:
        """The figure ``name`` as PNG bytes, drawn on first use and kept (see :func:`figure_png`)."""
        if name not in self.images:
            from ppdp_desktop.core.evaluation.figures import figure_png

            self.images[name] = figure_png(self.figures[name])
        return self.images[name]

    def render_images(self) -> None:
        """Draw every figure now (in the worker), so neither the files nor the window draw one again."""
        for name in self.figures:
            self.image(name)

    @property
    def kind(self) -> str:
        """The guarantee's kind as the plan stated it (``"none"`` for personalized recoding)."""
        return str(self.guarantee.get("kind", "none"))

    @property
    def has_guarantee(self) -> bool:
        return self.kind != "none"

    def privacy_lines(self) -> list[str]:
        """The privacy summary in plain words (first line: verified or not, and what)."""
        if not self.has_guarantee:
            return [str(self.guarantee.get("statement", "This method gives no formal privacy guarantee."))]
        verified = "verified" if self.guarantee.get("verified") else "NOT verified"
        out = [f"Guarantee {verified}: {self.kind}."]
        if self.max_posterior is not None and self.rho2 is not None:
            protected = ~np.isnan(self.rho2)
            out.append(
                f"{int(protected.sum())} of {len(self.values)} values are protected: whatever released value an adversary "
                "sees, a protected value's posterior stays at or below its rho2 (for any prior up to its rho1)."
            )
            # a value held by more than its rho1 of the records is outside its bound for the data's own frequencies
            above = np.isin(self.values, [str(v) or MISSING_LABEL for v in self.guarantee.get("prior_above_rho1") or []])
            if (protected & above).any():
                out.append("Not covered by their bound for the data's own frequencies (held by more than their rho1 of "
                           f"the records): {', '.join(np.asarray(self.values)[protected & above])}.")
            if (protected & ~above).any():
                j = int(np.argmax(np.where(protected & ~above, self.max_posterior / self.rho2, -np.inf)))
                out.append(
                    f"Closest to its bound: {self.values[j]!r}, max posterior {self.max_posterior[j]:.4f} "
                    f"(rho2 {self.rho2[j]:.4f})."
                )
        if self.epsilon_ldp is not None:
            scope = self.guarantee.get("epsilon_ldp_scope")  # partitioning: within each sub-table only
            out.append(f"Equivalent to epsilon-local differential privacy with epsilon = {self.epsilon_ldp:.3f}"
                       + (f" {scope}" if isinstance(scope, str) else "") + ".")
        elif self.guarantee.get("no_ldp_bound"):  # a value never replaced: no finite epsilon, said in words
            out.append(str(self.guarantee["no_ldp_bound"]))
        # the report inside a release has no original prior, but release.json publishes the breaches it gave
        breaches = self.downward_breaches or [str(b) or MISSING_LABEL for b in self.guarantee.get("downward_breaches") or []]
        if breaches:
            out.append(
                "Downward breaches (not covered by the guarantee; a frequent value's posterior can fall to rho1 or "
                f"below): {', '.join(breaches)}."
            )
        elif "downward_breaches" in self.guarantee:  # only a guarantee that looked for them (not partitioning's)
            out.append("No downward breach for the data's own frequencies.")
        not_covered = self.guarantee.get("not_covered")
        if not_covered:
            out += [str(n) for n in not_covered] if isinstance(not_covered, list) else [str(not_covered)]
        return out

    @property
    def risk_level(self) -> str:
        """The re-identification verdict's colour by the one rule (``Reidentification.level``): ``ok``,
        ``warning`` (also when not measured) or ``danger``."""
        r = self.reidentification
        return "warning" if r is None else r.level

    def reidentification_lines(self) -> list[str]:
        """The second verdict in plain words: who can be singled out by their quasi-identifiers."""
        if self.reidentification is None:
            return ["Re-identification: not measured for this report (the release's own figures are in release.json)."]
        return self.reidentification.lines()

    def utility_lines(self) -> list[str]:
        """The utility summary in plain words."""
        out = [f"{self.n_records:,} records."]
        if self.utility is not None:
            out += self.utility.lines()
        elif self.record_utility is not None:
            out.append(f"record utility {self.record_utility:.4f}")
        if self.choice_counts:
            parts = [f"{name}: {count:,}" for name, count in self.choice_counts.items()]
            out.append("records published as " + "; ".join(parts))
        return out


def _label(value: object) -> str:
    text = label_text(value)
    return text if text else MISSING_LABEL
