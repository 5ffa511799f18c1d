"""A chart's axes in numbers: scales, limits from the marks, and readable ticks (for :mod:`.chart_png`).

Linear ticks take the steps 1, 2, 2.5 and 5 times a power of ten (as matplotlib's default locator); log ticks the
powers of ten; the symlog scale of record counts is linear up to 1 and logarithmic above, so 0 has its place.
Labels are plain numbers with thousands separators ("1,000", never 10^3).
"""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.evaluation.chart import Axis, Bars, Chart, Intervals, Markers, Rule, Steps

MARGIN = 0.05  # of the data's span, added on each side of an axis whose limits are not stated (matplotlib's)
TICKS_PER_INCH = 1.4  # at most this many linear ticks an inch of axis (at least 3)


def transform(scale: str, values: np.ndarray) -> np.ndarray:
    """``values`` in the axis's own linear coordinate: as they are, their log10, or symlog (linear to 1)."""
    values = np.asarray(values, dtype=float)
    if scale == "log":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log10(np.maximum(values, 1e-300))
    if scale == "symlog":
        magnitude = np.abs(values)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(magnitude <= 1.0, values, np.sign(values) * (1.0 + np.log10(np.maximum(magnitude, 1.0))))
    return values


def inverse(scale: str, values: np.ndarray) -> np.ndarray:
    """The inverse of :func:`transform`."""
    values = np.asarray(values, dtype=float)
    if scale == "log":
        return np.power(10.0, values)
    if scale == "symlog":
        return np.where(np.abs(values) <= 1.0, values, np.sign(values) * np.power(10.0, np.abs(values) - 1.0))
    return values


def _extent(chart: Chart, axis: Axis) -> np.ndarray:
    """Every value the marks put on ``axis`` (finite ones), the bars' 0 included."""
    on_values = axis is chart.value
    parts: list[np.ndarray] = []
    for mark in chart.marks:
        if isinstance(mark, Bars):
            width = np.broadcast_to(np.asarray(mark.width, dtype=float), np.shape(mark.at))
            at = np.asarray(mark.at, dtype=float)
            parts.append(np.asarray(mark.values, dtype=float) if on_values else np.concatenate([at - width / 2, at + width / 2]))
            if on_values and axis.scale != "log":
                parts.append(np.zeros(1))
        elif isinstance(mark, Intervals):
            parts.append(np.concatenate([mark.low, mark.high]) if on_values else np.asarray(mark.at, dtype=float))
        elif isinstance(mark, Markers):
            parts.append(np.asarray(mark.values if on_values else mark.at, dtype=float))
        elif isinstance(mark, Steps):
            parts.append(np.append(np.asarray(mark.values, dtype=float), 0.0) if on_values
                         else np.asarray(mark.edges, dtype=float))
        elif isinstance(mark, Rule) and not on_values:
            parts.append(np.array([mark.at], dtype=float))
    values = np.concatenate(parts) if parts else np.zeros(0)
    values = values[np.isfinite(values)]
    if axis.scale == "log":
        values = values[values > 0]
    return values


def axis_limits(chart: Chart, axis: Axis) -> tuple[float, float]:
    """The stated limits, or the marks' extent with a margin (whole decades on a log axis; a value axis of bars
    starts at 0, with no margin below it)."""
    if axis.limits is not None:
        return float(axis.limits[0]), float(axis.limits[1])
    values = _extent(chart, axis)
    if axis.scale == "log":
        if not len(values):
            return 0.1, 10.0
        lo, hi = np.floor(np.log10(values.min())), np.ceil(np.log10(values.max()))
        return float(10 ** lo), float(10 ** max(hi, lo + 1))
    if not len(values):
        return 0.0, 1.0
    t = transform(axis.scale, values)
    lo, hi = float(t.min()), float(t.max())
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    margin = (hi - lo) * MARGIN
    bars_from_zero = axis is chart.value and any(isinstance(m, Bars | Steps) for m in chart.marks) and lo == 0.0
    lo = lo if bars_from_zero else lo - margin
    out = inverse(axis.scale, np.array([lo, hi + margin]))
    return float(out[0]), float(out[1])


def nice_step(span: float, most: int) -> float:
    """The smallest of 1, 2, 2.5, 5 and 10 times a power of ten that cuts ``span`` in at most ``most`` steps."""
    raw = span / max(most, 1)
    power = 10.0 ** np.floor(np.log10(raw))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * power >= raw * (1 - 1e-9):
            return float(step * power)
    return float(10.0 * power)


def axis_ticks(axis: Axis, limits: tuple[float, float], length_inches: float) -> list[float]:
    """The stated ticks within the limits, or ticks chosen for the scale."""
    lo, hi = min(limits), max(limits)
    if axis.ticks is not None:
        return [float(t) for t in axis.ticks if lo - 1e-9 <= t <= hi + 1e-9]
    if axis.scale in ("log", "symlog"):
        first = 0 if axis.scale == "symlog" else int(np.ceil(np.log10(lo) - 1e-9))
        ticks = [0.0] if axis.scale == "symlog" and lo <= 0 <= hi else []
        ticks += [10.0 ** e for e in range(first, int(np.floor(np.log10(max(hi, 1e-300)) + 1e-9)) + 1) if 10.0 ** e >= lo]
        if len(ticks) < 3 and axis.scale == "log":  # less than a decade or two: 2 and 5 between the powers
            ticks = sorted({*ticks, *(m * 10.0 ** e for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))))
                                      for m in (1.0, 2.0, 5.0) if lo <= m * 10.0 ** e <= hi)})
        return ticks
    step = nice_step(hi - lo, max(3, int(length_inches * TICKS_PER_INCH)))
    first = np.ceil(lo / step - 1e-9) * step
    ticks = first + step * np.arange(int(np.floor((hi - first) / step + 1e-9)) + 1)
    return [0.0 if abs(t) < step * 1e-9 else float(t) for t in ticks]


def labelled_ticks(chart: Chart, axis: Axis) -> tuple[tuple[float, float], list[float], list[str]]:
    """``axis`` of ``chart`` as drawn: its limits, its ticks and their labels."""
    limits = axis_limits(chart, axis)
    ticks = axis_ticks(axis, limits, chart.size[0] if axis is chart.x else chart.size[1])
    return limits, ticks, tick_text(axis, ticks)


def tick_text(axis: Axis, ticks: list[float]) -> list[str]:
    """The ticks' labels: the axis's own (categories), or plain numbers with as many decimals as the step needs."""
    if axis.tick_labels is not None:
        labels = dict(zip((float(t) for t in axis.ticks or range(len(axis.tick_labels))), axis.tick_labels))
        return [labels.get(t, "") for t in ticks]
    if axis.scale in ("log", "symlog"):
        return [f"{t:,.0f}" if t >= 1 or t == 0 else f"{t:g}" for t in ticks]
    step = min((b - a for a, b in zip(ticks, ticks[1:])), default=1.0)
    if step >= 1:
        decimals = 0
    else:  # 0.2 -> 1 decimal, 0.25 -> 2, 0.05 -> 2
        decimals = int(np.ceil(-np.log10(step) - 1e-9))
        decimals += round(step * 10 ** decimals, 6) != round(step * 10 ** decimals)
    return [f"{t:,.{decimals}f}" for t in ticks]
