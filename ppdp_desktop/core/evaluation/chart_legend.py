"""The legend of a chart drawn by :mod:`.chart_png`: a framed box of each labelled mark's sample, in a corner of
the axes that covers no mark (matplotlib's "best"), or below the axes when none is free."""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.evaluation.chart import Bars, Chart, Intervals, Mark, Markers, Rule, Steps
from ppdp_desktop.core.evaluation.chart_canvas import EDGE_PT, LEGEND_PT, Canvas, Frame, points, rgb


def _legend_entries(chart: Chart) -> list[Mark]:
    return [m for m in chart.marks if m.label]


def draw_legend(canvas: Canvas, chart: Chart, frame: Frame) -> None:
    """A framed legend in a corner of the axes (``best``: the corner over the fewest marks) or below them."""
    entries = _legend_entries(chart)
    columns = max(chart.legend_columns, 1) if chart.legend == "below" else 1
    pad, handle, row = canvas.px(4.0), canvas.px(20.0), canvas.line_height(LEGEND_PT) * 1.15
    column_width, (width, height) = _legend_column(canvas, chart), _legend_size(canvas, chart)
    if chart.legend == "below":
        left = (frame.left + frame.right) / 2 - width / 2
        top = canvas.height - canvas.px(EDGE_PT) - height
    else:
        (left, top), _ = corner(canvas, chart, frame)
    canvas.draw.rounded_rectangle([left, top, left + width, top + height], radius=canvas.px(2.0), fill=0,
                                  outline=canvas.ink("#cccccc"), width=max(1, round(canvas.px(0.8))))
    for i, mark in enumerate(entries):
        x = left + pad + (i % columns) * column_width
        y = top + pad * 0.75 + (i // columns) * row + row / 2
        _handle(canvas, mark, x, y, handle)
        canvas.text((x + handle + pad, y), str(mark.label), LEGEND_PT, anchor="lm")


def _legend_column(canvas: Canvas, chart: Chart) -> float:
    """The width of one column of the legend: a handle, a gap and the longest label, padded."""
    pad, handle = canvas.px(4.0), canvas.px(20.0)
    return max(handle + pad + canvas.text_width(str(m.label), LEGEND_PT) for m in _legend_entries(chart)) + 2 * pad


def _legend_size(canvas: Canvas, chart: Chart) -> tuple[float, float]:
    """The legend box's width and height in pixels."""
    columns = max(chart.legend_columns, 1) if chart.legend == "below" else 1
    rows = -(-len(_legend_entries(chart)) // columns)
    pad = canvas.px(4.0)
    return _legend_column(canvas, chart) * columns + pad, rows * canvas.line_height(LEGEND_PT) * 1.15 + 1.5 * pad


def _handle(canvas: Canvas, mark: Mark, x: float, y: float, width: float) -> None:
    """The legend's sample of ``mark`` in the box ``width`` wide centred vertically on ``y``."""
    half = canvas.px(3.5)
    if isinstance(mark, Bars):
        red, green, blue = (round(255 - (255 - c) * mark.alpha) for c in rgb(mark.color))  # over white
        canvas.draw.rectangle([x, y - half, x + width, y + half], fill=canvas.ink((red, green, blue)))
    elif isinstance(mark, Intervals):
        canvas.line([(x + width * 0.15, y), (x + width * 0.85, y)], mark.color, 0.8)
        for end in (x + width * 0.15, x + width * 0.85):
            canvas.line([(end, y - canvas.px(2.0)), (end, y + canvas.px(2.0))], mark.color, 0.8)
    elif isinstance(mark, Markers):
        if mark.shape == "|":
            canvas.line([(x + width / 2, y - half * 1.2), (x + width / 2, y + half * 1.2)], mark.color, mark.line_width)
        else:
            r = canvas.px(2.0)
            canvas.draw.ellipse([x + width / 2 - r, y - r, x + width / 2 + r, y + r], fill=canvas.ink(mark.color))
    elif isinstance(mark, Steps):
        canvas.line([(x, y), (x + width, y)], mark.color, mark.line_width)
    elif isinstance(mark, Rule):
        if mark.dashed:
            canvas.dashed((x, y), (x + width, y), mark.color, mark.line_width)
        else:
            canvas.line([(x, y), (x + width, y)], mark.color, mark.line_width)


def corner(canvas: Canvas, chart: Chart, frame: Frame) -> tuple[tuple[float, float], float]:
    """The legend's top-left corner and how many square pixels of marks its box covers there: the stated corner,
    or (``best``) the corner covering the least (matplotlib's order of preference on ties: upper right, upper
    left, lower left, lower right)."""
    inset = canvas.px(5.0)
    width, height = _legend_size(canvas, chart)
    corners = {"upper right": (frame.right - inset - width, frame.top + inset),
               "upper left": (frame.left + inset, frame.top + inset),
               "lower left": (frame.left + inset, frame.bottom - inset - height),
               "lower right": (frame.right - inset - width, frame.bottom - inset - height)}
    boxes = _mark_boxes(chart, frame)
    best, least = corners["upper right"], np.inf
    for x, y in [corners[str(chart.legend)]] if chart.legend in corners else corners.values():
        if len(boxes):
            w = np.clip(np.minimum(boxes[:, 2], x + width) - np.maximum(boxes[:, 0], x), 0, None)
            h = np.clip(np.minimum(boxes[:, 3], y + height) - np.maximum(boxes[:, 1], y), 0, None)
            covered = float((w * h).sum())
        else:
            covered = 0.0
        if covered < least - 1e-9:
            best, least = (x, y), covered
    return best, least


def _mark_boxes(chart: Chart, frame: Frame) -> np.ndarray:
    """Pixel boxes (x0, y0, x1, y1) of what the marks cover, for placing the legend."""
    boxes = []
    for mark in chart.marks:
        if isinstance(mark, Bars):
            values = np.nan_to_num(np.asarray(mark.values, dtype=float))
            width = np.broadcast_to(np.asarray(mark.width, dtype=float), np.shape(mark.at))
            a0, v0 = points(chart, frame, np.asarray(mark.at) - width / 2, np.zeros_like(values))
            a1, v1 = points(chart, frame, np.asarray(mark.at) + width / 2, values)
            if chart.value.scale == "log":
                a0, v0 = points(chart, frame, np.asarray(mark.at) - width / 2, np.full_like(values, 1e-300))
        elif isinstance(mark, Markers | Intervals):
            values = mark.values if isinstance(mark, Markers) else mark.high
            a0, v0 = points(chart, frame, np.asarray(mark.at) - 0.3, np.asarray(values, dtype=float) * 0.999)
            a1, v1 = points(chart, frame, np.asarray(mark.at) + 0.3, np.asarray(values, dtype=float))
        elif isinstance(mark, Steps):
            edges = np.asarray(mark.edges, dtype=float)
            a0, v0 = frame.to_x(edges[:-1]), frame.to_y(np.zeros(len(mark.values)))
            a1, v1 = frame.to_x(edges[1:]), frame.to_y(np.asarray(mark.values, dtype=float))
        else:
            continue
        xs, ys = np.stack([a0, a1]), np.stack([v0, v1])
        boxes.append(np.stack([xs.min(0), ys.min(0), xs.max(0), ys.max(0)], axis=1))
    return np.concatenate(boxes) if boxes else np.empty((0, 4))


