"""Randomized response's figures: a randomized column's counts, and the disclosure risk per group."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.evaluation.figures import MAX_BARS, _bar_figure, _figure, _value_axis, plain_log_ticks

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ppdp_desktop.core.evaluation.report_model import Marginal


def marginal_figure(m: Marginal, p: float) -> Figure:
    """Original (if known), released and estimated counts of each value, the estimate with its 95 % interval."""
    weight = m.original if m.original is not None else m.estimate
    idx = np.argsort(-weight, kind="stable")[:MAX_BARS]
    fig, ax = _bar_figure(len(idx))
    y = _value_axis(ax, m.values, idx)
    bars = [("released", m.released, "#8c8c8c")] + ([("original", m.original, "#4c72b0")] if m.original is not None else [])
    bars.append(("estimated from the release", m.estimate, "#dd8452"))
    height = 0.8 / len(bars)
    for k, (label, counts, color) in enumerate(bars):
        ax.barh(y + (k - (len(bars) - 1) / 2) * height, counts[idx], height=height, label=label, color=color)
    offset = ((len(bars) - 1) - (len(bars) - 1) / 2) * height
    mid, half = (m.low[idx] + m.high[idx]) / 2.0, (m.high[idx] - m.low[idx]) / 2.0
    ax.errorbar(mid, y + offset, xerr=half, fmt="none", ecolor="black", capsize=2, lw=0.8, label="95 % interval")
    ax.set_xlabel("records")
    shown = "" if len(idx) == len(m.values) else f"; {len(idx)} of {len(m.values)} values shown"
    ax.set_title(f"{m.attribute}: each record kept its value with probability {p * 100:.3g} %\n"
                 f"(else it got a random other value{shown})")
    ax.legend(loc="lower right", fontsize=8)
    return fig


def risk_figure(before: np.ndarray, after: np.ndarray, bound: float) -> Figure:
    """Groups of records sharing their quasi-identifiers by their largest disclosure risk, before and after."""
    fig = _figure(figsize=(7.0, 3.4), layout="constrained")
    ax = fig.add_subplot()
    bins = np.linspace(0.0, 1.0, 21).tolist()  # the same edges as plain floats (matplotlib's stubs take a sequence)
    ax.hist(before, bins=bins, alpha=0.6, label="original data", color="#c44e52")
    ax.hist(after, bins=bins, alpha=0.6, label="release", color="#4c72b0")
    ax.axvline(bound, color="black", ls="--", lw=1.0, label=f"bound 1/l = {bound:.2f}")
    ax.set_yscale("symlog")
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel("largest attribute-disclosure risk of the group (the paper's attacker)")
    ax.set_ylabel("groups")
    ax.set_title(f"Attribute-disclosure risk of the {len(after):,} quasi-identifier groups")
    ax.legend(fontsize=8)
    return fig
