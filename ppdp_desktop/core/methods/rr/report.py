"""Randomized response's part of the report: each randomized column's marginal (original, released and
estimated from the release with a 95 % interval), the attribute-disclosure risk per quasi-identifier group
against 1/l, and the reconstruction of the QI x sensitive table against the baselines, in words."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ppdp_desktop.core.evaluation.report_model import Marginal, value_label
from ppdp_desktop.core.methods.rr.figures import marginal_figure, risk_figure
from ppdp_desktop.core.methods.rr.risk import disclosure_risk, rr_matrix
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.outcome import Anonymization


def rr_report_part(report: "MethodReport", result: "Anonymization", progress: Progress, cancel: CancelToken,
                   public: bool = False) -> None:
    """Fill ``report``; ``public``: the copy inside the release, with nothing computed from the original records."""
    plan = result.plan
    frame = result.dataset.frame
    bound = 1.0 / plan.parameters.l
    for number, (domain, role, p) in enumerate(plan._randomized()):
        progress(0.1 + 0.5 * number / max(len(plan._randomized()), 1), f"Estimating {domain.attribute}")
        released_codes = _codes(domain, result.applied.columns[domain.attribute])
        released = np.bincount(released_codes, minlength=domain.m).astype(float)
        matrix = rr_matrix(domain.m, p)
        estimate, low, high = reconstruction.estimate_with_interval(released, matrix)
        original = None if public else np.bincount(domain.encode(frame[domain.attribute]), minlength=domain.m).astype(float)
        values = [value_label(v) for v in domain.values]
        marginal = Marginal(domain.attribute, values, original, released, estimate, low, high)
        report.marginals.append(marginal)
        report.figures[f"{domain.attribute} ({role}, p = {p:.3f})"] = marginal_figure(marginal, p)
        cancel.check()
    unchanged = [d.attribute for d in [*plan.qi, plan.sensitive] if d.attribute not in result.applied.columns]
    if unchanged:
        report.lines.append("Released unchanged (retention p = 1): " + ", ".join(unchanged) + ".")
    if public:
        report.lines.append("This report ships with the release: the counts shown are estimated from the released "
                            "data; the original counts and the risk per group stay with the custodian.")
        return
    progress(0.7, "Risk per quasi-identifier group")
    before = _group_risk(plan.counts, None, None)
    after = _group_risk(plan.counts, plan.parameters.p_qi, plan.parameters.p_s)
    report.figures["risk per group"] = risk_figure(before, after, bound)
    report.findings += _risk_findings(plan.counts, before, after, bound, plan.sensitive.attribute)
    from ppdp_desktop.core.methods.rr.evaluation import evaluate_job

    for row in evaluate_job(result):
        report.lines.append(_row_line(row))


def _codes(domain, column) -> np.ndarray:
    """A released (Categorical) column as codes into ``domain`` (its missing value last)."""
    return domain.encode(pd.Series(column))


def _group_risk(counts: np.ndarray, p_qi, p_s) -> np.ndarray:
    """The largest attribute-disclosure risk of each non-empty quasi-identifier group."""
    risk = disclosure_risk(counts, p_qi, p_s).max(axis=-1)
    held = counts.sum(axis=-1) > 0
    return risk[held]


def _risk_findings(counts: np.ndarray, before: np.ndarray, after: np.ndarray, bound: float, sensitive: str) -> list[str]:
    sizes = counts.sum(axis=-1)
    sizes = sizes[sizes > 0]
    over = before > bound + 1e-12
    out = [f"No group of records sharing their quasi-identifiers lets anyone infer a {sensitive} value with a "
           f"probability above 1/l = {bound:.0%} in the release (largest: {after.max():.0%})."]
    if over.any():
        out.append(f"Before randomization, {int(over.sum()):,} of {len(before):,} groups ({sizes[over].sum() / sizes.sum():.0%} "
                   f"of the records) were above that bound; the largest risk was {before.max():.0%}.")
    return out


def _row_line(row) -> str:
    """One row of the reconstruction comparison, in words."""
    if row.note:
        return f"{row.method}: {row.note}"
    return (f"{row.method}: the quasi-identifier x sensitive table estimated from its release is this far from the "
            f"original (0 = identical): KL divergence {row.kl:.4f}, chi-square {row.chi_square:.4f}; counts per "
            f"group off by {row.groupby_error:.1%} and counts of any sub-table by {row.cube_error:.1%} on average; "
            f"the association between quasi-identifiers and the sensitive value (uncertainty coefficient) moves by "
            f"{row.uncertainty_gap:.4f}.")
