"""Randomized response's figures (charts, :mod:`~ppdp_desktop.core.evaluation.chart`): a randomized column's
counts, and the disclosure risk per group."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.evaluation.chart import Axis, Bars, Chart, Intervals, Rule, positions
from ppdp_desktop.core.evaluation.figures import MAX_BARS, bar_chart, value_axis

if TYPE_CHECKING:
    from ppdp_desktop.core.evaluation.report_model import Marginal


def marginal_figure(m: Marginal, p: float) -> Chart:
    """Original (if known), released and estimated counts of each value, the estimate with its 95 % interval."""
    weight = m.original if m.original is not None else m.estimate
    idx = np.argsort(-weight, kind="stable")[:MAX_BARS]
    y = positions(len(idx))
    shown = "" if len(idx) == len(m.values) else f"; {len(idx)} of {len(m.values)} values shown"
    chart = bar_chart(len(idx), f"{m.attribute}: each record kept its value with probability {p * 100:.3g} %\n"
                      f"(else it got a random other value{shown})", value_axis(m.values, idx), Axis("records"))
    bars = [("released", m.released, "#8c8c8c")] + ([("original", m.original, "#4c72b0")] if m.original is not None else [])
    bars.append(("estimated from the release", m.estimate, "#dd8452"))
    height = 0.8 / len(bars)
    for k, (label, counts, color) in enumerate(bars):
        chart.marks.append(Bars(y + (k - (len(bars) - 1) / 2) * height, counts[idx], height, color, label))
    offset = ((len(bars) - 1) - (len(bars) - 1) / 2) * height
    chart.marks.append(Intervals(y + offset, m.low[idx], m.high[idx], label="95 % interval"))
    return chart


def risk_figure(before: np.ndarray, after: np.ndarray, bound: float) -> Chart:
    """Groups of records sharing their quasi-identifiers by their largest disclosure risk, before and after."""
    edges = np.linspace(0.0, 1.0, 21)
    centres, width = (edges[:-1] + edges[1:]) / 2, float(edges[1] - edges[0])
    chart = Chart(f"Attribute-disclosure risk of the {len(after):,} quasi-identifier groups", (7.0, 3.4),
                  Axis("largest attribute-disclosure risk of the group (the paper's attacker)"),
                  Axis("groups", scale="symlog"))
    chart.marks += [
        Bars(centres, np.histogram(before, bins=edges)[0].astype(float), width, "#c44e52", "original data", alpha=0.6),
        Bars(centres, np.histogram(after, bins=edges)[0].astype(float), width, "#4c72b0", "release", alpha=0.6),
        Rule(bound, line_width=1.0, label=f"bound 1/l = {bound:.2f}"),
    ]
    return chart
