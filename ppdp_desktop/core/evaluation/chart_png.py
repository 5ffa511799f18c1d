"""Drawing a :class:`~ppdp_desktop.core.evaluation.chart.Chart` as PNG with Pillow (the one renderer of the report's
figures: the files embed its PNG and the window shows it).

Why not matplotlib: its import (~0.2 s) and its per-text layout (~0.1 s for a 40-bar figure) were most of the
report's own CPU time; every figure of the report is bars, intervals, markers, steps and rules on two axes, which
take a few rectangles and lines here. Sizes are in points (1/72 inch) at a fixed resolution, the layout of
matplotlib's defaults (10-point labels, a 12-point title, ticks outside, a framed legend), in DejaVu Sans.

The surface (a palette image, :mod:`.chart_canvas`) and the legend (:mod:`.chart_legend`) are modules of their own.
"""
from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ppdp_desktop.core.evaluation.chart import Axis, Bars, Chart, Intervals, Mark, Markers, Rule, Steps
from ppdp_desktop.core.evaluation.chart_canvas import (
    EDGE_PT,
    LABEL_PT,
    LEGEND_PT,
    LINE_PT,
    NOTE_PT,
    PAD_PT,
    TICK_PT,
    TITLE_PT,
    Canvas,
    Frame,
    points,
    rgb,
)
from ppdp_desktop.core.evaluation.chart_legend import corner, draw_legend
from ppdp_desktop.core.evaluation.ticks import labelled_ticks, transform


def render_png(chart: Chart, dpi: int, compress_level: int = 1) -> bytes:
    """``chart`` drawn at ``dpi`` pixels per inch, as PNG bytes (a palette image)."""
    canvas = Canvas(chart, dpi)
    if chart.message:
        canvas.text((canvas.width / 2, canvas.height / 2), chart.message, LABEL_PT, anchor="mm")
    else:
        _draw_chart(canvas, chart)
    buf = io.BytesIO()
    canvas.finished().save(buf, format="png", dpi=(dpi, dpi), compress_level=compress_level)
    return buf.getvalue()


def _draw_chart(canvas: Canvas, chart: Chart) -> None:
    x_axis, y_axis = chart.x, chart.y
    x_lim, x_ticks, x_texts = labelled_ticks(chart, x_axis)
    y_lim, y_ticks, y_texts = labelled_ticks(chart, y_axis)
    frame = _layout(canvas, chart, x_lim, y_lim, x_texts, y_texts)
    if chart.legend not in (None, "below") and chart.labels() and corner(canvas, chart, frame)[1] > 0:
        # no corner of the axes is free for the legend (a few long bars): below the axes, not over the bars
        chart = replace(chart, legend="below", legend_columns=min(len(chart.labels()), 2))
        frame = _layout(canvas, chart, x_lim, y_lim, x_texts, y_texts)
    _draw_marks(canvas, chart, frame)
    _draw_axes(canvas, frame, (x_axis, x_ticks, x_texts), (y_axis, y_ticks, y_texts))
    if chart.title:
        canvas.text_draw.multiline_text(((frame.left + frame.right) / 2, frame.top - canvas.px(6.0)), chart.title,
                                        font=canvas.font(TITLE_PT), fill=255, anchor="md", align="center")
    if chart.legend and chart.labels():
        draw_legend(canvas, chart, frame)


def _layout(canvas: Canvas, chart: Chart, x_lim: tuple[float, float], y_lim: tuple[float, float],
            x_texts: list[str], y_texts: list[str]) -> Frame:
    """Margins from the text around the axes: the title above, tick labels and axis labels left and below."""
    edge, pad, tick = canvas.px(EDGE_PT), canvas.px(PAD_PT), canvas.px(TICK_PT)
    x_axis, y_axis = chart.x, chart.y
    top = edge + canvas.line_height(TITLE_PT) * (chart.title.count("\n") + 1) + canvas.px(6.0) if chart.title else edge * 2
    y_label_width = max((canvas.text_width(t, y_axis.font_size) for t in y_texts), default=0.0)
    left = edge + y_label_width + pad + tick + (canvas.line_height(LABEL_PT) + pad if y_axis.label else 0.0)
    if x_axis.rotated:
        x_label_height = max((canvas.text_width(t, x_axis.font_size) for t in x_texts), default=0.0)
    else:
        x_label_height = canvas.line_height(x_axis.font_size)
    bottom = edge + tick + pad + x_label_height + (canvas.line_height(LABEL_PT) + pad if x_axis.label else 0.0)
    if chart.legend == "below" and chart.labels():
        rows = -(-len(chart.labels()) // max(chart.legend_columns, 1))
        bottom += rows * canvas.line_height(LEGEND_PT) + 3 * pad
    last = canvas.text_width(x_texts[-1], x_axis.font_size) / 2 if x_texts and not x_axis.rotated else 0.0
    right = max(canvas.px(18.0), last + edge)
    box = (left, top, canvas.width - right, canvas.height - bottom)
    return Frame(*box, _mapper(x_axis, x_lim, box[0], box[2]),
                  _mapper(y_axis, y_lim, box[3], box[1]))


def _mapper(axis: Axis, lim: tuple[float, float], start: float, end: float) -> Callable[[np.ndarray], np.ndarray]:
    """Data values to pixels along one axis (``start`` is where the lower limit goes; inverted axes swap)."""
    if axis.inverted:
        start, end = end, start
    lo, hi = transform(axis.scale, np.array(lim, dtype=float))
    span = (hi - lo) or 1.0

    def to_pixels(values: np.ndarray) -> np.ndarray:
        return start + (transform(axis.scale, np.asarray(values, dtype=float)) - lo) / span * (end - start)

    return to_pixels


def _draw_marks(canvas: Canvas, chart: Chart, frame: Frame) -> None:
    """The marks in order, clipped to the axes' box (bars of a log axis start at its lower edge)."""
    from PIL import Image, ImageDraw

    clip = canvas.image.copy()
    draw = ImageDraw.Draw(clip)
    layer_canvas = canvas.draw
    canvas.draw = draw
    try:
        for mark in chart.marks:
            if isinstance(mark, Bars) and mark.alpha < 1.0:  # over what is drawn: each colour under it blended
                cover = Image.new("L", clip.size, 0)
                _bars(canvas, ImageDraw.Draw(cover), chart, frame, mark, ink=255)
                pixels, under = np.array(clip), np.asarray(cover) > 0
                blend = np.arange(256, dtype=np.uint8)
                top = np.array(rgb(mark.color), dtype=float)
                a = round(255 * mark.alpha) / 255
                for u in np.unique(pixels[under]):
                    mixed = top * a + np.array(canvas.colours[u], dtype=float) * (1 - a)
                    blend[u] = canvas.ink((int(round(mixed[0])), int(round(mixed[1])), int(round(mixed[2]))))
                pixels[under] = blend[pixels[under]]
                clip = Image.fromarray(pixels, "P")
                draw = ImageDraw.Draw(clip)
                canvas.draw = draw
            else:
                _mark(canvas, draw, chart, frame, mark)
    finally:
        canvas.draw = layer_canvas
    box = (round(frame.left), round(frame.top), round(frame.right) + 1, round(frame.bottom) + 1)
    canvas.image.paste(clip.crop(box), (box[0], box[1]))
    for mark in chart.marks:  # labels at the bars' ends may stand above the box (drawn unclipped)
        if isinstance(mark, Bars) and mark.annotate:
            _annotate(canvas, chart, frame, mark)


def _bars(canvas: Canvas, draw: Any, chart: Chart, frame: Frame, bars: Bars, ink: int | None = None) -> None:
    """The bars in their colour (or in ``ink``, on a coverage layer)."""
    width = np.broadcast_to(np.asarray(bars.width, dtype=float), np.shape(bars.at))
    base = _base(chart, frame)
    values = np.asarray(bars.values, dtype=float)
    keep = np.isfinite(values)
    at, values, width = np.asarray(bars.at, dtype=float)[keep], values[keep], width[keep]
    v0 = np.full(len(values), base)
    v1 = _value_pixels(chart, frame, values)
    c0 = _category_pixels(chart, frame, at - width / 2)
    c1 = _category_pixels(chart, frame, at + width / 2)
    colour = canvas.ink(bars.color) if ink is None else ink
    for a, b, p, q in zip(c0, c1, v0, v1):
        if chart.horizontal:
            box = (min(p, q), min(a, b), max(p, q), max(a, b))
        else:
            box = (min(a, b), min(p, q), max(a, b), max(p, q))
        x0, y0, x1, y1 = round(box[0]), round(box[1]), round(box[2]), round(box[3])
        if x1 > x0 and y1 > y0:  # a bar thinner than half a pixel is not drawn
            draw.rectangle([x0, y0, x1 - 1, y1 - 1], fill=colour)


def _base(chart: Chart, frame: Frame) -> float:
    """The pixel where bars start: 0 on the value axis, or its lower edge on a log axis."""
    if chart.value.scale == "log":
        return frame.left if chart.horizontal else frame.bottom
    return float(_value_pixels(chart, frame, np.zeros(1))[0])


def _value_pixels(chart: Chart, frame: Frame, values: np.ndarray) -> np.ndarray:
    if chart.value.scale == "log":
        values = np.maximum(values, 1e-300)
    return frame.to_x(values) if chart.horizontal else frame.to_y(values)


def _category_pixels(chart: Chart, frame: Frame, at: np.ndarray) -> np.ndarray:
    return frame.to_y(at) if chart.horizontal else frame.to_x(at)


def _mark(canvas: Canvas, draw: Any, chart: Chart, frame: Frame, mark: Mark) -> None:
    if isinstance(mark, Bars):
        _bars(canvas, draw, chart, frame, mark)
    elif isinstance(mark, Intervals):
        cap = canvas.px(2.0)
        lo_x, lo_y = points(chart, frame, mark.at, mark.low)
        hi_x, hi_y = points(chart, frame, mark.at, mark.high)
        for x0, y0, x1, y1 in zip(lo_x, lo_y, hi_x, hi_y):
            if not np.isfinite([x0, y0, x1, y1]).all():
                continue
            canvas.line([(x0, y0), (x1, y1)], mark.color, 0.8)
            for x, y in ((x0, y0), (x1, y1)):
                ends = [(x, y - cap), (x, y + cap)] if chart.horizontal else [(x - cap, y), (x + cap, y)]
                canvas.line(ends, mark.color, 0.8)
    elif isinstance(mark, Markers):
        xs, ys = points(chart, frame, mark.at, mark.values)
        half = canvas.px(mark.size) / 2
        for x, y in zip(xs, ys):
            if not (np.isfinite(x) and np.isfinite(y)):
                continue
            if mark.shape == "|":
                canvas.line([(x, y - half), (x, y + half)], mark.color, mark.line_width)
            else:
                r = canvas.px(2.0)
                draw.ellipse([x - r, y - r, x + r, y + r], fill=canvas.ink(mark.color))
    elif isinstance(mark, Steps):
        xs = frame.to_x(np.repeat(np.asarray(mark.edges, dtype=float), 2)[1:-1])
        ys = frame.to_y(np.repeat(np.asarray(mark.values, dtype=float), 2))
        base = float(frame.to_y(np.zeros(1))[0])
        path = [(xs[0], base), *zip(xs, ys), (xs[-1], base)]
        canvas.line(path, mark.color, mark.line_width)
    elif isinstance(mark, Rule):
        at = float(_category_pixels(chart, frame, np.array([mark.at]))[0])
        start, end = ((frame.left, at), (frame.right, at)) if chart.horizontal else ((at, frame.top), (at, frame.bottom))
        if mark.dashed:
            canvas.dashed(start, end, mark.color, mark.line_width)
        else:
            canvas.line([start, end], mark.color, mark.line_width)


def _annotate(canvas: Canvas, chart: Chart, frame: Frame, bars: Bars) -> None:
    xs, ys = points(chart, frame, bars.at, bars.values)
    for x, y, v in zip(xs, ys, bars.values):
        if np.isfinite(v) and bars.annotate:
            canvas.text((x, y - canvas.px(3.0)), bars.annotate.format(v), NOTE_PT, anchor="md")


def _draw_axes(canvas: Canvas, frame: Frame, x: tuple[Axis, list[float], list[str]],
               y: tuple[Axis, list[float], list[str]]) -> None:
    """The frame, the ticks outside it with their labels, and each axis's label."""
    tick, pad = canvas.px(TICK_PT), canvas.px(PAD_PT)
    box = [round(frame.left), round(frame.top), round(frame.right), round(frame.bottom)]
    canvas.draw.rectangle(box, outline=canvas.ink("black"), width=max(1, round(canvas.px(LINE_PT))))
    axis, ticks, texts = x
    for px_x, text in zip(frame.to_x(np.array(ticks, dtype=float)), texts):
        canvas.line([(px_x, frame.bottom), (px_x, frame.bottom + tick)], "black", LINE_PT)
        if axis.rotated:
            canvas.text_up((px_x, frame.bottom + tick + pad + canvas.text_width(text, axis.font_size) / 2), text,
                           axis.font_size)
        else:
            canvas.text((px_x, frame.bottom + tick + pad), text, axis.font_size, anchor="ma")
    if axis.label:
        below = (max((canvas.text_width(t, axis.font_size) for t in texts), default=0.0) if axis.rotated
                 else canvas.line_height(axis.font_size))
        canvas.text(((frame.left + frame.right) / 2, frame.bottom + tick + 2 * pad + below), axis.label, LABEL_PT,
                    anchor="ma")
    axis, ticks, texts = y
    for px_y, text in zip(frame.to_y(np.array(ticks, dtype=float)), texts):
        canvas.line([(frame.left - tick, px_y), (frame.left, px_y)], "black", LINE_PT)
        canvas.text((frame.left - tick - pad, px_y), text, axis.font_size, anchor="rm")
    if axis.label:
        width = max((canvas.text_width(t, axis.font_size) for t in texts), default=0.0)
        canvas.text_up((frame.left - tick - 2 * pad - width - canvas.line_height(LABEL_PT) / 2,
                        (frame.top + frame.bottom) / 2), axis.label, LABEL_PT)


