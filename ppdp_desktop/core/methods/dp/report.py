"""The report part of a dp-microagg job: epsilon split, scales, warnings, measures against
the baselines, and figures (plain matplotlib Figures, no pyplot, no Qt)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure

from ppdp_desktop.core.methods.dp.evaluation import ALL, LAPLACE, METHOD, RANKING, DPRow, evaluate_job, histogram_counts
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    from ppdp_desktop.core.outcome import Anonymization
    from ppdp_desktop.core.evaluation.report_model import MethodReport

MAX_LABELS = 40
COLORS = {METHOD: "#4c72b0", LAPLACE: "#c44e52", RANKING: "#55a868"}


def dp_report_part(report: "MethodReport", result: "Anonymization", progress: Progress, cancel: CancelToken,
                   public: bool = False) -> None:
    """Fill ``report`` for a dp-microagg job: lines (split, scales, warnings, measures) and figures.

    ``public=True`` is the report that ships inside the release: it holds nothing computed from the
    original records (no original histograms, no measures against them), which would otherwise leak
    outside the epsilon budget. The custodian's full report stays in the window or is written apart
    with ``ppdp report DATA RELEASE``.
    """
    plan, frame = result.plan, result.dataset.frame
    m = len(plan.attributes)
    for a in plan.attributes:  # the plan's own lines (already in the report) give the split and each scale
        if a.domain is not None:
            report.lines.append(
                f"{a.attribute}: b = M*Delta/(k*epsilon) = {m}*{a.domain.delta:g}/({plan.k}*{plan.epsilon:g}) = {a.scale:.4g}, "
                f"shared by each cluster of k = {plan.k}; plain Laplace per value would need {m * a.domain.delta / plan.epsilon:.4g}."
            )
    if public:
        report.lines.append("This report ships with the release, so it shows only the released data: measures "
                            "against the original records stay with the custodian.")
        for a in plan.attributes:
            released = result.applied.columns[a.attribute]
            report.figures[f"released histogram: {a.attribute}"] = histogram_figure(
                a.attribute, *histogram_counts(None, released, a.domain))
            cancel.check()
        return
    progress(0.2, "Measuring against the baselines")
    rows = evaluate_job(result)
    cancel.check()
    report.lines.append("Measures against the original records, for the method and two baselines (RE: relative "
                        "error, the mean distance between a record's original and released value relative to the "
                        "value; for a categorical attribute the mean distance in its taxonomy; variance variation: "
                        "|var - var'| / var; JSD: Jensen-Shannon divergence in bits, 0 = same distribution):")
    report.lines += [row_line(r) for r in rows]
    report.findings += [finding(r) for r in rows if r.method == METHOD and r.attribute != ALL]
    progress(0.6, "Drawing the figures")
    for a in plan.attributes:
        original = frame[a.attribute].to_numpy(dtype=np.float64) if a.domain is not None else frame[a.attribute]
        report.figures[f"histogram: {a.attribute}"] = histogram_figure(
            a.attribute, *histogram_counts(original, result.applied.columns[a.attribute], a.domain)
        )
        cancel.check()
    report.figures["relative error"] = error_figure(rows)


def finding(r: DPRow) -> str:
    """The method's measures on one attribute, for the report's first page."""
    spread = ("" if r.variance_variation is None
              else f"; its spread (variance) changes by {r.variance_variation:.0%}")
    return (f"{r.attribute}: a released value is off by {r.relative_error:.0%} of the record's own value on average"
            f"{spread}; the distribution stays close (Jensen-Shannon divergence {r.jsd:.3f}, 0 = the same).")


def row_line(r: DPRow) -> str:
    """One measure row in words."""
    k = "" if r.k is None else f" (k = {r.k})"
    variation = "" if r.variance_variation is None else f", variance variation {r.variance_variation:.4f}"
    return f"{r.method}{k}, {r.attribute}: RE {r.relative_error:.4f}{variation}, JSD {r.jsd:.4f}"


def histogram_figure(attribute: str, bins: list[str] | np.ndarray, original: np.ndarray | None,
                     released: np.ndarray) -> Figure:
    """Original vs released histogram: numeric bins as steps, categorical labels as paired bars
    (``original=None``: the released distribution alone, for the report inside the release)."""
    shown = "released" if original is None else "original and released"
    if isinstance(bins, np.ndarray):
        fig = Figure(figsize=(7.0, 3.4), layout="constrained")
        ax = fig.add_subplot()
        if original is not None:
            ax.stairs(original, bins, label="original", color="#4c72b0", lw=1.2)
        ax.stairs(released, bins, label="released", color="#dd8452", lw=1.2)
        ax.set_xlabel(attribute)
    else:
        order = np.argsort(-(released if original is None else original + released), kind="stable")[:MAX_LABELS]
        fig = Figure(figsize=(7.5, max(3.0, 0.6 + 0.24 * len(order))), layout="constrained")
        ax = fig.add_subplot()
        y = np.arange(len(order))
        if original is not None:
            ax.barh(y - 0.2, original[order], height=0.4, label="original", color="#4c72b0")
        ax.barh(y + (0.0 if original is None else 0.2), released[order], height=0.4, label="released", color="#dd8452")
        ax.set_yticks(y, [bins[i] for i in order], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("records")
    ax.set_title(f"{attribute}: {shown} distribution")
    ax.legend(fontsize=8)
    return fig


def error_figure(rows: list[DPRow]) -> Figure:
    """Relative error per attribute (log scale, as in seed 003): the method vs both baselines."""
    attributes = list(dict.fromkeys(r.attribute for r in rows if r.attribute != ALL)) + [ALL]
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(attributes))
    for i, method in enumerate((METHOD, LAPLACE, RANKING)):
        by = {r.attribute: r.relative_error for r in rows if r.method == method}
        heights = np.array([by.get(a, np.nan) for a in attributes])
        ax.bar(x + (i - 1) * 0.27, np.maximum(heights, 1e-6), width=0.27, label=method, color=COLORS[method])
    ax.set_xticks(x, attributes, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("relative error (log)")
    ax.set_title("Relative error per attribute: the method and its baselines")
    ax.legend(fontsize=8, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    return fig
