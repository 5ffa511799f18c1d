"""What a report figure shows, as plain data (no drawing library, no Qt): the chart model.

A :class:`Chart` is two axes and the marks drawn between them: bars, intervals, markers, steps and rules, each
with its colour and legend label. :mod:`~ppdp_desktop.core.evaluation.chart_png` draws a chart as PNG (Pillow,
numpy): the report files and the window all show that one image. Tests read what a figure shows from here (bar
lengths, labels, a log axis, reference lines) without drawing it.

Marks are placed along the chart's *category* axis (``at``: where a bar stands, the y axis of a horizontal chart)
and measured along its *value* axis (``values``: how long a bar is).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Scale = Literal["linear", "log", "symlog"]  # symlog: linear up to 1, logarithmic above (record counts from 0)
Legend = Literal["best", "upper right", "upper left", "lower right", "lower left", "below"]


@dataclass(frozen=True)
class Axis:
    """One axis: its label, scale, limits (``None``: from the marks), ticks (``None``: chosen when drawn) and
    their labels (``None``: the tick values as numbers; given for category axes)."""

    label: str = ""
    scale: Scale = "linear"
    limits: tuple[float, float] | None = None
    ticks: tuple[float, ...] | None = None
    tick_labels: tuple[str, ...] | None = None
    font_size: float = 10.0  # of the tick labels, in points
    inverted: bool = False  # a horizontal chart's first category on top
    rotated: bool = False  # tick labels turned a quarter (many categories on a short axis)


@dataclass(frozen=True)
class Bars:
    """One series of bars: bar ``i`` stands at ``at[i]`` (``width`` wide) and reaches ``values[i]`` from 0."""

    at: np.ndarray
    values: np.ndarray
    width: float | np.ndarray
    color: str
    label: str | None = None
    alpha: float = 1.0
    annotate: str | None = None  # format of a label at each bar's end, e.g. "{:,.0f}"


@dataclass(frozen=True)
class Intervals:
    """Error bars: from ``low[i]`` to ``high[i]`` along the value axis at ``at[i]``, with caps."""

    at: np.ndarray
    low: np.ndarray
    high: np.ndarray
    color: str = "black"
    label: str | None = None


@dataclass(frozen=True)
class Markers:
    """One marker at ``values[i]`` on the value axis and ``at[i]`` on the category axis; ``shape`` is ``"|"`` (a
    tick across the bar, ``size`` points long) or ``"."`` (a dot)."""

    at: np.ndarray
    values: np.ndarray
    shape: Literal["|", "."]
    color: str
    label: str | None = None
    size: float = 9.0
    line_width: float = 1.0


@dataclass(frozen=True)
class Steps:
    """A histogram's outline: ``values[i]`` over ``edges[i]..edges[i + 1]`` (numeric bins)."""

    edges: np.ndarray
    values: np.ndarray
    color: str
    label: str | None = None
    line_width: float = 1.2


@dataclass(frozen=True)
class Rule:
    """A reference line across the chart at ``at`` on the category axis (a bound, a boundary, ``k``)."""

    at: float
    color: str = "black"
    dashed: bool = True
    line_width: float = 0.8
    label: str | None = None


Mark = Bars | Intervals | Markers | Steps | Rule


@dataclass
class Chart:
    """A figure: title, size in inches, the category and value axes, the marks in drawing order and where the
    legend goes. ``horizontal``: bars lie along x (categories on y). ``message``: drawn alone, no axes (no data)."""

    title: str
    size: tuple[float, float]
    category: Axis
    value: Axis
    marks: list[Mark] = field(default_factory=list)
    horizontal: bool = False
    legend: Legend | None = "best"
    legend_columns: int = 1
    message: str = ""

    @property
    def x(self) -> Axis:
        """The horizontal axis."""
        return self.value if self.horizontal else self.category

    @property
    def y(self) -> Axis:
        """The vertical axis."""
        return self.category if self.horizontal else self.value

    def series(self, label: str) -> Mark:
        """The mark labelled ``label`` (for tests and scripts: what a series shows)."""
        for mark in self.marks:
            if mark.label == label:
                return mark
        raise KeyError(label)

    def labels(self) -> list[str]:
        """The legend's labels, in drawing order."""
        return [m.label for m in self.marks if m.label]


def positions(n: int) -> np.ndarray:
    """The category axis positions of ``n`` categories: 0, 1, ..., n - 1."""
    return np.arange(n, dtype=float)
