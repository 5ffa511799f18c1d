"""The report's figures as charts (:mod:`.chart`: what each shows, no drawing library), shared by every method family.

Each is drawn once as PNG by :mod:`.chart_png` (:func:`figure_png`, in the worker); the report files embed that PNG
and the window shows it.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.evaluation.chart import Axis, Bars, Chart, Intervals, Legend, Markers, Rule, positions
from ppdp_desktop.core.visible import shortened, visible

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.structured import RetentionMatrix

MAX_BARS = 40  # larger domains show their 40 most frequent values
MAX_LABEL = 60  # a value's label is cut to this many characters (the tables give it whole)


def bar_chart(n_bars: int, title: str, categories: Axis, value: Axis, legend: Legend | None = "lower right",
              message: str = "") -> Chart:
    """A horizontal bar chart tall enough for ``n_bars`` bars with readable labels."""
    return Chart(title, (7.5, max(3.0, 0.6 + 0.24 * n_bars)), categories, value, horizontal=True, legend=legend,
                 message=message)


def _shown(weight: np.ndarray, what: str) -> tuple[np.ndarray, str]:
    """Indices of at most :data:`MAX_BARS` values by decreasing ``weight`` and a title suffix."""
    order = np.argsort(-np.nan_to_num(weight, nan=-np.inf), kind="stable")
    if len(order) <= MAX_BARS:
        return order, ""
    return order[:MAX_BARS], f"\n({MAX_BARS} {what} of {len(order)})"


def value_axis(values: list[str], idx: np.ndarray) -> Axis:
    """The category axis of a horizontal bar chart: the values ``idx`` (a label a few words on one line), the
    first (most frequent) on top."""
    labels = tuple(shortened(visible(values[i]), MAX_LABEL) for i in idx)
    return Axis(ticks=tuple(positions(len(idx))), tick_labels=labels, font_size=8.0, inverted=True)


def distribution_figure(
    values: list[str], original: np.ndarray | None, reconstructed: np.ndarray,
    low: np.ndarray | None, high: np.ndarray | None,
) -> Chart:
    """Original vs reconstructed count per value; the 95 % band as error bars. Without ``original`` (the
    report inside a release) the estimates alone, with the intervals computed from the released counts."""
    records = Axis("records")
    if original is None:
        idx, suffix = _shown(np.clip(reconstructed, 0, None), "values with the largest estimates")
        y = positions(len(idx))
        chart = bar_chart(len(idx), "Counts estimated from the release" + suffix, value_axis(values, idx), records)
        chart.marks.append(Bars(y, reconstructed[idx], 0.6, "#dd8452", "estimated from the release"))
        if low is not None and high is not None:
            chart.marks.append(Intervals(y, low[idx], high[idx], label="95 % interval"))
        return chart
    idx, suffix = _shown(original, "most frequent values")
    y = positions(len(idx))
    chart = bar_chart(len(idx), "Original and estimated counts" + suffix, value_axis(values, idx), records)
    chart.marks += [Bars(y - 0.2, original[idx], 0.4, "#4c72b0", "original"),
                    Bars(y + 0.2, reconstructed[idx], 0.4, "#dd8452", "estimated from the release")]
    if low is not None and high is not None:
        chart.marks.append(Intervals(y + 0.2, low[idx], high[idx], label="95 % interval of the estimate"))
    return chart


def retention_figure(values: list[str], original: np.ndarray, retention: np.ndarray,
                     matrix: np.ndarray | RetentionMatrix) -> Chart:
    """Per value: the retention probability ``p_i`` and the chance ``P[i][i]`` it is released unchanged."""
    idx, suffix = _shown(original, "most frequent values")
    y = positions(len(idx))
    diagonal = matrix.diagonal() if hasattr(matrix, "diagonal") else np.diag(matrix)
    chart = bar_chart(len(idx), "Retention per value" + suffix, value_axis(values, idx),
                      Axis("probability", limits=(0.0, 1.0)))
    chart.marks += [Bars(y, retention[idx], 0.6, "#55a868", "retention p"),
                    Markers(y, np.asarray(diagonal)[idx], "|", "black", "released unchanged P[i][i]", size=9.0)]
    return chart


def posterior_figure(values: list[str], max_posterior: np.ndarray, rho2: np.ndarray, prior: np.ndarray) -> Chart:
    """Per protected value: the adversary's largest posterior against its bound ``rho2``."""
    protected = np.flatnonzero(~np.isnan(rho2))
    ratio = max_posterior[protected] / rho2[protected]
    order, suffix = _shown(ratio, "closest to the bound")
    idx = protected[order]
    title = "Max posterior vs rho2 per protected value" + suffix
    if not len(idx):
        return bar_chart(0, title, Axis(), Axis(), message="No value carries a privacy requirement.")
    y = positions(len(idx))
    chart = bar_chart(len(idx), title, value_axis(values, idx), Axis("probability"))
    chart.marks += [Bars(y, max_posterior[idx], 0.6, "#8172b3", "max posterior"),
                    Markers(y, rho2[idx], "|", "red", "rho2 (bound)", size=11.0, line_width=2.0),
                    Markers(y, prior[idx], ".", "black", "prior (frequency)")]
    return chart


def choice_figure(attribute: str, counts: dict[str, int]) -> Chart:
    """How many records of ``attribute`` were published as value / alias1 / alias2."""
    colours = ["#c44e52", "#dd8452", "#4c72b0", "#8c8c8c"]
    x = positions(len(counts))
    chart = Chart(f"{attribute}: records published as", (6.0, 3.2),
                  Axis(ticks=tuple(x), tick_labels=tuple(counts)), Axis("records"), legend=None)
    heights = np.array(list(counts.values()), dtype=float)
    for i in range(len(counts)):  # one colour a bar
        chart.marks.append(Bars(x[i:i + 1], heights[i:i + 1], 0.8, colours[i % len(colours)], annotate="{:,.0f}"))
    return chart


def grade_figure(attribute: str, grades: np.ndarray, k: int) -> Chart:
    """Histogram of the published grades (category number + position within the category)."""
    finite = grades[np.isfinite(grades)]
    edges = np.linspace(1.0, k + 1.0, 10 * k + 1)
    counts, _ = np.histogram(finite, bins=edges)
    chart = Chart(f"{attribute}: grades in {k} secret categories", (6.5, 3.2),
                  Axis("published grade (category boundaries dashed)"), Axis("records"), legend=None)
    chart.marks.append(Bars((edges[:-1] + edges[1:]) / 2, counts.astype(float), np.diff(edges), "#4c72b0"))
    chart.marks += [Rule(float(c)) for c in range(2, k + 1)]
    return chart


#: resolution of the figures' PNG images: sharp on paper at the page width, light enough for a 1M-row report
PNG_DPI = 150
#: zlib level of the figures' PNG images: a third of the encoding time of the default (6) for about a tenth more
#: bytes; flat-coloured plots compress well at any level
PNG_COMPRESS_LEVEL = 1


def figure_png(chart: Chart, dpi: int = PNG_DPI) -> bytes:
    """``chart`` drawn once as PNG bytes (a palette image, :func:`~ppdp_desktop.core.evaluation.chart_png.render_png`): the
    report files and the window all show this image, so a figure is drawn once (in the worker), never again on
    the GUI thread."""
    from ppdp_desktop.core.evaluation.chart_png import render_png

    return render_png(chart, dpi, PNG_COMPRESS_LEVEL)


def count_ticks(top: float) -> tuple[float, ...]:
    """Enough labelled ticks on a symlog axis of record counts up to ``top``: every whole number up to 5, the
    1-2-5 steps up to 1,000, the powers of ten above."""
    if top <= 5:
        return tuple(float(t) for t in range(int(top) + 1))
    steps = (1,) if top > 1000 else (1, 2, 5)
    return (0.0, *(float(m * 10 ** e) for e in range(int(np.log10(top)) + 1) for m in steps if m * 10 ** e <= top))


_warmed = False
_warm_lock = threading.Lock()


def warm_up() -> None:
    """Import the renderer (Pillow) and load the figures' fonts now, not in the middle of a run. Only the first
    call does anything; a call while another thread warms up waits for it."""
    from ppdp_desktop.core.collection import collection_paused

    global _warmed
    with _warm_lock:
        if _warmed:
            return
        with collection_paused():  # the imports' objects live on: no collection to traverse them meanwhile
            from ppdp_desktop.core.evaluation import chart_png
            from ppdp_desktop.core.evaluation.fonts import pil_font

            for points in (chart_png.TITLE_PT, chart_png.LABEL_PT, chart_png.LEGEND_PT):
                pil_font(round(points * PNG_DPI / 72.0)).getlength("Warm up 0123456789")
        _warmed = True


def class_size_figure(before: dict[int, int] | None, after: dict[int, int], k: int | None = None) -> Chart:
    """Records by the size of the group sharing their quasi-identifiers, original and release (log scale):
    the bars left of ``k`` (or at 1) are the records that can be singled out."""
    sizes = sorted({int(s) for s in (before or {})} | {int(s) for s in after})
    cap = 50
    bins = [s for s in sizes if s < cap] + ([cap] if any(s >= cap for s in sizes) else [])

    def counts(hist: dict[int, int] | None) -> np.ndarray:
        hist = {int(s): int(c) for s, c in (hist or {}).items()}
        return np.array([sum(c for s, c in hist.items() if (s >= cap if b == cap else s == b)) for b in bins], float)

    x = positions(len(bins))
    top = max([*counts(before), *counts(after), 1.0])  # the axis goes a fifth of a decade above it (headroom)
    chart = Chart("Who can be singled out: records by group size", (7.0, 3.4),
                  Axis("size of the group sharing the quasi-identifiers", ticks=tuple(x),
                       tick_labels=tuple(f"{b}+" if b == cap else str(b) for b in bins), font_size=7.0,
                       rotated=len(bins) > 20),
                  Axis("records", scale="symlog", limits=(0.0, top * 1.6), ticks=count_ticks(top)))
    if before is not None:
        chart.marks.append(Bars(x - 0.2, counts(before), 0.4, "#c44e52", "original"))
    chart.marks.append(Bars(x + (0.2 if before is not None else 0.0), counts(after), 0.4, "#4c72b0", "release"))
    if k is not None and k in bins:
        chart.marks.append(Rule(bins.index(k) - 0.5, label=f"k = {k}"))
    return chart
