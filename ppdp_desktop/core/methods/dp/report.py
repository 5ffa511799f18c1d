"""The report part of a dp-microagg job: epsilon split, scales, warnings, measures against
the baselines, and figures (charts, :mod:`~ppdp_desktop.core.evaluation.chart`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.evaluation.chart import Axis, Bars, Chart, Steps, positions
from ppdp_desktop.core.methods.dp.evaluation import ALL, LAPLACE, METHOD, RANKING, DPRow, evaluate_job, histogram_counts
from ppdp_desktop.core.methods.dp.plan import dp_plan
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.methods.dp.plan import DPAttribute
    from ppdp_desktop.core.outcome import Anonymization

MAX_LABELS = 40
#: a mean moved by at most this many standard deviations still holds for averages (a negligible effect size)
NEGLIGIBLE_SHIFT = 0.1
#: a record's released value this many standard deviations away (95 % of records) says little about that record
PERSONAL_SPREAD = 0.5
COLORS = {METHOD: "#4c72b0", LAPLACE: "#c44e52", RANKING: "#55a868"}


def dp_report_part(report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken,
                   public: bool = False) -> None:
    """Fill ``report`` for a dp-microagg job: lines (split, scales, warnings, measures) and figures.

    ``public=True`` is the report that ships inside the release: it holds nothing computed from the
    original records (no original histograms, no measures against them), which would otherwise leak
    outside the epsilon budget. The custodian's full report stays in the window or is written apart
    with ``ppdp report DATA RELEASE``.
    """
    plan, frame = dp_plan(result), result.dataset.frame
    m = len(plan.attributes)
    statement = result.guarantee.get("statement")
    if statement:  # what the epsilon covers, against whom, and what it does not (with the measured figure)
        report.lines.append(f"What epsilon covers: {statement}")
    for a in plan.attributes:  # the plan's own lines (already in the report) give the split and each scale
        if a.domain is not None:
            grid, t = a.numeric_grid()
            report.lines.append(
                f"{a.attribute}: b = M*Delta/(k*epsilon) = {m}*{a.domain.delta:g}/({plan.k}*{plan.epsilon:g}) = {a.scale:.4g}, "
                f"shared by each cluster of k = {plan.k}; "
                f"plain Laplace per value would need {m * a.domain.delta / plan.epsilon:.4g}. "
                f"Drawn as discrete Laplace on a grid of step h = {grid.h:g} (t = {t:,} grid units on the cluster's "
                "sum, exact integer sampler): every released value is a grid point, so its last digits reveal nothing."
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
    report.lines += MEASURES_LEGEND
    report.lines += [row_line(r) for r in rows]
    unlinked = getattr(plan, "layout", "linked") == "unlinked"
    report.findings += [finding(a, frame[a.attribute], result.applied.columns[a.attribute], unlinked)
                        for a in plan.attributes]
    progress(0.6, "Drawing the figures")
    for a in plan.attributes:
        original = frame[a.attribute].to_numpy(dtype=np.float64) if a.domain is not None else frame[a.attribute]
        report.figures[f"histogram: {a.attribute}"] = histogram_figure(
            a.attribute, *histogram_counts(original, result.applied.columns[a.attribute], a.domain)
        )
        cancel.check()
    report.figures["relative error"] = error_figure(rows)


#: what the measure rows say, one line per measure (then one row per method and attribute)
MEASURES_LEGEND = [
    "Measures against the original records, for this release and two baselines at the same epsilon (plain Laplace: "
    "floating-point noise added to each value on its own, a comparison that is never released; "
    "individual ranking: the clusters' averages without noise). 0 means "
    "unchanged for each:",
    "relative error: how far a record's released value is from its own, relative to that value (for a categorical "
    "attribute: the mean distance between the two values in its taxonomy, 0 to 1);",
    "variance change: how much the spread (variance) of the column moved, relative to the original variance;",
    "Jensen-Shannon divergence: how different the released histogram is from the original one (0 = same "
    "distribution, 1 = disjoint).",
]


UNLINKED_FINDING = ("the columns are released unlinked, so a row shows values of different people: read {name} on its "
                    "own, for groups of values, never for one person or beside another column")


def finding(a: DPAttribute, original: pd.Series, released: Any, unlinked: bool = False) -> str:
    """What one protected attribute of the release is good for, from the job (the records in their original
    order): for a number, how far the mean moved and how far a record's released value lies from its own; for a
    category, how many records show their own value and how far the counts per value moved. ``unlinked``: the
    released column is shuffled on its own, so nothing is said per record."""
    if a.domain is not None:
        x = pd.to_numeric(original, errors="coerce").to_numpy(dtype=np.float64)
        y = np.asarray(released, dtype=np.float64)
        held = np.isfinite(x) & np.isfinite(y)
        x, y = x[held], y[held]
        if not len(x):
            return f"{a.attribute}: no value to compare."
        shift, sd = abs(float(y.mean() - x.mean())), float(x.std())
        spread = float(np.percentile(np.abs(y - x), 95))
        means = f"The mean of {a.attribute} in the release is {number(y.mean(), shift / 10)}, against " \
                f"{number(x.mean(), shift / 10)} in the original"
        if shift <= NEGLIGIBLE_SHIFT * sd:
            means += ": averages over many records hold"
        else:
            relative = f", {shift / sd * 100:.0f} % of a standard deviation" if sd > 0 else ""
            means += f" (off by {number(shift)}{relative}): even averages over many records are shifted"
        if unlinked:
            return f"{means}; {UNLINKED_FINDING.format(name=a.attribute)}."
        records = (f"95 % of the records' released values lie within ±{number(spread)} of their true value (the true "
                   f"values have a standard deviation of {number(sd)})")
        if spread >= PERSONAL_SPREAD * sd:
            records += f", so read {a.attribute} for groups of records, not for one person"
        return f"{means}; {records}."
    truth = text_column(pd.Series(np.asarray(original, dtype=object)))
    shown = text_column(pd.Series(np.asarray(released, dtype=object)))
    same = float(np.mean(truth.to_numpy() == shown.to_numpy())) if len(truth) else 0.0
    labels, before, after = histogram_counts(truth, shown, None)
    common = before >= 0.01 * before.sum()
    off = float(np.mean(np.abs(after[common] - before[common]) / before[common])) if common.any() else float("nan")
    counts = ("" if not common.any() else
              f"the count of each {a.attribute} value held by at least 1 % of records is off by "
              f"{off * 100:.0f} % on average")
    if unlinked:
        return f"{counts[:1].upper() + counts[1:] + '; ' if counts else ''}{UNLINKED_FINDING.format(name=a.attribute)}."
    return f"{same * 100:.0f} % of the records show their true {a.attribute}{'; ' + counts if counts else ''}."


def number(value: float, precision: float | None = None) -> str:
    """``value`` rounded to two significant digits of ``precision`` (default: of itself; at most 4 decimals),
    with thousands separators: ``0.31``, ``28``, ``1,200``."""
    step = abs(precision if precision is not None else value)
    if not np.isfinite(value):
        return "n/a"
    if step == 0:
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"
    decimals = min(1 - int(np.floor(np.log10(step))), 4)
    rounded = round(value, decimals)
    if rounded == 0 and value != 0:
        return f"{value:.2g}"
    return f"{rounded:,.{max(decimals, 0)}f}"


def row_line(r: DPRow) -> str:
    """One measure row in words (a relative error the release cannot give, its rows being shuffled, as such)."""
    k = "" if r.k is None else f" (k = {r.k})"
    error = ("relative error not measurable (rows shuffled or columns unlinked)" if np.isnan(r.relative_error)
             else f"relative error {r.relative_error:.4f}")
    variation = "" if r.variance_variation is None else f", variance change {r.variance_variation:.4f}"
    return f"{r.method}{k}, {r.attribute}: {error}{variation}, Jensen-Shannon divergence {r.jsd:.4f}"


def histogram_figure(attribute: str, bins: list[str] | np.ndarray, original: np.ndarray | None,
                     released: np.ndarray) -> Chart:
    """Original vs released histogram: numeric bins as steps, categorical labels as paired bars
    (``original=None``: the released distribution alone, for the report inside the release)."""
    title = f"{attribute}: {'released' if original is None else 'original and released'} distribution"
    if isinstance(bins, np.ndarray):
        chart = Chart(title, (7.0, 3.4), Axis(attribute), Axis())
        if original is not None:
            chart.marks.append(Steps(bins, original, "#4c72b0", "original"))
        chart.marks.append(Steps(bins, released, "#dd8452", "released"))
        return chart
    order = np.argsort(-(released if original is None else original + released), kind="stable")[:MAX_LABELS]
    y = positions(len(order))
    categories = Axis(ticks=tuple(y), tick_labels=tuple(bins[i] for i in order), font_size=8.0, inverted=True)
    chart = Chart(title, (7.5, max(3.0, 0.6 + 0.24 * len(order))), categories, Axis("records"), horizontal=True)
    if original is not None:
        chart.marks.append(Bars(y - 0.2, original[order], 0.4, "#4c72b0", "original"))
    chart.marks.append(Bars(y + (0.0 if original is None else 0.2), released[order], 0.4, "#dd8452", "released"))
    return chart


def error_figure(rows: list[DPRow]) -> Chart:
    """Relative error per attribute (log scale, as in seed 003): the method vs both baselines."""
    attributes = list(dict.fromkeys(r.attribute for r in rows if r.attribute != ALL)) + [ALL]
    x = positions(len(attributes))
    chart = Chart("Relative error per attribute: the method and its baselines", (7.0, 3.6),
                  Axis(ticks=tuple(x), tick_labels=tuple(attributes), font_size=8.0),
                  Axis("relative error (log)", scale="log"), legend="below", legend_columns=3)
    for i, method in enumerate((METHOD, LAPLACE, RANKING)):
        by = {r.attribute: r.relative_error for r in rows if r.method == method}
        heights = np.array([by.get(a, np.nan) for a in attributes])
        chart.marks.append(Bars(x + (i - 1) * 0.27, np.maximum(heights, 1e-6), 0.27, COLORS[method], method))
    return chart
