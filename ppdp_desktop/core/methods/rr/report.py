"""Randomized response's part of the report: each randomized column's marginal (original, released and
estimated from the release with a 95 % interval), the attribute-disclosure risk per quasi-identifier group
against 1/l, the reconstruction of the QI x sensitive table against the baselines, and the first page's
findings, all in plain words."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ppdp_desktop.core.evaluation.report_model import Marginal, percent, value_label
from ppdp_desktop.core.methods.rr.figures import marginal_figure, risk_figure
from ppdp_desktop.core.methods.rr.risk import disclosure_risk, rr_matrix
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    from ppdp_desktop.core.data.domain import CategoricalDomain
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.methods.rr.evaluation import TensorEvaluation
    from ppdp_desktop.core.methods.rr.method import RRPlan
    from ppdp_desktop.core.outcome import Anonymization

#: shares of records at which a finding states how well a column's counts can be estimated
SHARE_LADDER = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
#: a count "can be estimated" when its 95 % interval lies within this share of the count
TOLERANCE = 0.25

#: how the comparison names each reconstruction
NAMES = {"rr": "this release", "anatomy": "Anatomy", "mondrian": "Mondrian"}
#: ``(field, what it measures, as a percentage)``: one readable line each in the comparison
MEASURES = (
    ("groupby_error", "Counts per combination of all quasi-identifiers and the sensitive value are off on average by",
     True),
    ("cube_error", "Counts of any one or two columns together (for example records per age and sensitive value) are "
                   "off on average by", True),
    ("kl", "Distance of the estimated table from the original as Kullback-Leibler divergence (0 = identical, no "
           "upper limit)", False),
    ("chi_square", "Distance of the estimated table from the original as chi-square distance (0 = identical)", False),
    ("uncertainty_gap", "Change in how strongly each pair of columns is linked (uncertainty coefficient: 0 = "
                        "unrelated, 1 = one column determines the other)", False),
)


def rr_report_part(report: MethodReport, result: Anonymization, plan: RRPlan, progress: Progress, cancel: CancelToken,
                   public: bool = False) -> None:
    """Fill ``report`` for the job ``result``, whose plan is ``plan`` (checked by the method's ``own_plan``);
    ``public``: the copy inside the release, with nothing computed from the original records."""
    frame = result.dataset.frame
    randomized = plan._randomized()
    for number, (domain, role, p) in enumerate(randomized):
        progress(0.1 + 0.5 * number / max(len(randomized), 1), f"Estimating {domain.attribute}")
        released_codes = _codes(domain, result.applied.columns[domain.attribute])
        original_codes = None if public else domain.encode(frame[domain.attribute])
        marginal = column_marginal(domain, released_codes, p, original_codes)
        cancel.check()  # each of these steps takes seconds near rr's limits (issue 31)
        report.marginals.append(marginal)
        report.figures[f"{domain.attribute} ({role}, p = {p:.3f})"] = marginal_figure(marginal, p)
        if original_codes is not None:
            report.findings.append(column_finding(marginal, float(np.mean(original_codes != released_codes)), p))
        cancel.check()
    unchanged = [d.attribute for d in [*plan.qi, plan.sensitive] if d.attribute not in result.applied.columns]
    if unchanged:
        report.lines.append("Released unchanged (every record keeps its value, retention p = 1): "
                            + ", ".join(unchanged) + ".")
    if public:
        report.lines.append("This report ships with the release: the counts shown are estimated from the released "
                            "data; the original counts and the risk per group stay with the custodian.")
        return
    cancel.check()
    progress(0.7, "Risk per quasi-identifier group")
    bound = 1.0 / plan.parameters.l
    before = _group_risk(plan.counts, None, None)
    cancel.check()
    after = _group_risk(plan.counts, plan.parameters.p_qi, plan.parameters.p_s)
    cancel.check()
    report.figures["risk per group"] = risk_figure(before, after, bound)
    report.findings += risk_findings(plan.counts, before, after, bound, plan.sensitive.attribute)
    from ppdp_desktop.core.methods.rr.evaluation import evaluate_job

    cancel.check()
    progress(0.8, "Comparing with Anatomy and Mondrian")
    report.lines += comparison_lines(evaluate_job(result, cancel), plan.sensitive.attribute, plan.parameters.l)


def column_marginal(domain: CategoricalDomain, released_codes: np.ndarray, p: float,
                    original_codes: np.ndarray | None) -> Marginal:
    """One randomized column's counts: released, estimated from them (non-negative MLE with the 95 % interval of
    a seeded parametric bootstrap, :func:`~ppdp_desktop.core.privacy.reconstruction.estimate_with_interval`)
    and, unless ``original_codes`` is None (the report inside the release), the original ones."""
    released = np.bincount(released_codes, minlength=domain.m).astype(float)
    estimate, low, high = reconstruction.estimate_with_interval(released, rr_matrix(domain.m, p))
    original = None if original_codes is None else np.bincount(original_codes, minlength=domain.m).astype(float)
    return Marginal(domain.attribute, [value_label(v) for v in domain.values], original, released, estimate, low, high)


def column_finding(m: Marginal, replaced: float, p: float) -> str:
    """What a randomized column is good for: the share of values replaced and how well its counts are estimated."""
    return (f"{percent(replaced)} of {m.attribute} values were deliberately replaced by random ones (each record kept "
            f"its own with probability {percent(p)}), so no single record's {m.attribute} can be relied on; "
            + estimability(m) + ".")


def estimability(m: Marginal) -> str:
    """How well ``m``'s counts can be estimated: the 95 % half-width relative to the count, for the values held by
    at least a share of records (from the original counts when known, else from the estimates)."""
    base = np.asarray(m.original if m.original is not None else np.clip(m.estimate, 0.0, None), dtype=float)
    if base.sum() <= 0:
        return "it has no records to count"
    share = base / base.sum()
    half = np.maximum(m.high - m.estimate, m.estimate - m.low)
    present = base > 0
    rel = np.divide(half, base, out=np.full(len(base), np.inf), where=present)
    for threshold in SHARE_LADDER:
        chosen = present & (share >= threshold)
        if chosen.any() and rel[chosen].max() <= TOLERANCE:
            within = math.ceil(rel[chosen].max() * 100)
            if chosen.sum() == present.sum():
                return f"the counts of all its values can still be estimated within ±{within} % (95 % interval)"
            return (f"the count of each value held by at least {percent(threshold)} of records can still be estimated "
                    f"within ±{within} % (95 % interval)")
    best = int(np.argmin(rel))
    return (f"no single value's count can be estimated within ±{round(TOLERANCE * 100)} % (the closest, "
            f"{m.values[best]!r}, within ±{math.ceil(rel[best] * 100)} %); combine values into groups")


def risk_findings(counts: np.ndarray, before: np.ndarray, after: np.ndarray, bound: float,
                  sensitive: str) -> list[str]:
    """The risk per group of records sharing their quasi-identifiers, after and before randomization (the paper's
    attacker's, rr/claims.py; before randomization it is the share of the group's most common value)."""
    if not len(after):
        return []
    out = [f"No group of records sharing their quasi-identifiers has an attribute-disclosure risk (the chance that "
           f"the paper's attacker recovers a record of the group with the person's {sensitive}, exactly) above "
           f"1/l = {percent(bound)} in the release (largest: {percent(float(after.max()))}); guessing a group's "
           "most common value is not bounded by this."]
    sizes = counts.sum(axis=-1)
    sizes = sizes[sizes > 0]
    over = before > bound + 1e-12
    if over.any():
        out.append(f"Before randomization, {int(over.sum()):,} of {len(before):,} such groups "
                   f"({percent(float(sizes[over].sum() / sizes.sum()))} of the records) were above that bound; "
                   f"the largest risk was {percent(float(before.max()))}.")
    return out


def comparison_lines(rows: list[TensorEvaluation], sensitive: str, l: float) -> list[str]:
    """The reconstruction of the quasi-identifier x sensitive table against the baselines: one line per measure,
    each saying what it measures, with every method's value."""
    out = [f"How well the table of quasi-identifiers x {sensitive} can be estimated from this release, against two "
           f"other ways of meeting the same bound l = {l:g}: Anatomy ({sensitive} published apart from the "
           f"quasi-identifiers, in groups of at least l different values) and Mondrian (quasi-identifiers "
           f"generalized into ranges holding at least l different values). 0 means the estimate equals the "
           "original table; lower is better."]
    measured = [r for r in rows if not r.note]
    for key, meaning, as_percent in MEASURES:
        parts = [f"{NAMES.get(r.method, r.method)} "
                 + (percent(getattr(r, key)) if as_percent else f"{getattr(r, key):.3f}") for r in measured]
        out.append(f"{meaning}: " + "; ".join(parts) + ".")
    out += [f"{NAMES.get(r.method, r.method)}: {r.note}" for r in rows if r.note]
    return out




def _codes(domain: CategoricalDomain, column) -> np.ndarray:
    """A released (Categorical) column as codes into ``domain`` (its missing value last)."""
    return domain.encode(pd.Series(column))


def _group_risk(counts: np.ndarray, p_qi, p_s) -> np.ndarray:
    """The largest attribute-disclosure risk of each non-empty quasi-identifier group."""
    risk = disclosure_risk(counts, p_qi, p_s).max(axis=-1)
    held = counts.sum(axis=-1) > 0
    return risk[held]
