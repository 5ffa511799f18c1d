"""Drawing a :class:`~ppdp_desktop.core.evaluation.chart.Chart` as PNG with Pillow (the one renderer of the report's
figures: the files embed its PNG and the window shows it).

Why not matplotlib: its import (~0.2 s) and its per-text layout (~0.1 s for a 40-bar figure) were most of the
report's own CPU time; every figure of the report is bars, intervals, markers, steps and rules on two axes, which
take a few rectangles and lines here. Sizes are in points (1/72 inch) at a fixed resolution, the layout of
matplotlib's defaults (10-point labels, a 12-point title, ticks outside, a framed legend), in DejaVu Sans.

A chart has a few flat colours, so it is drawn on a palette image: marks in their exact colours, text smoothed in
16 levels of grey (drawn on a layer of its own and laid on top at the end). Its PNG is a third of an RGB one's
bytes, encoded in a fifth of the time, and a PDF embeds it without expanding it to three bytes a pixel.
"""
from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ppdp_desktop.core.evaluation.chart import Axis, Bars, Chart, Intervals, Mark, Markers, Rule, Steps
from ppdp_desktop.core.evaluation.fonts import pil_font
from ppdp_desktop.core.evaluation.ticks import labelled_ticks, transform

TEXT_LEVELS = 16  # shades of the text's smoothing (black on white)
TITLE_PT, LABEL_PT, LEGEND_PT, NOTE_PT = 12.0, 10.0, 8.0, 8.0
TICK_PT, PAD_PT, LINE_PT = 3.5, 4.0, 0.8  # tick length, gap between text and what it labels, frame width
EDGE_PT = 7.0  # blank edge around the figure


@dataclass
class _Frame:
    """The axes' box in pixels and the maps from data values to pixels along each axis."""

    left: float
    top: float
    right: float
    bottom: float
    to_x: Callable[[np.ndarray], np.ndarray]
    to_y: Callable[[np.ndarray], np.ndarray]


class _Canvas:
    """The palette image (index 0 white, 1..16 the text's greys, then each colour as first used), its drawing
    context, the text's layer (0-255 coverage) and the point-to-pixel scale."""

    def __init__(self, chart: Chart, dpi: int) -> None:
        from PIL import Image, ImageDraw

        self.dpi, self.s = dpi, dpi / 72.0
        self.width, self.height = round(chart.size[0] * dpi), round(chart.size[1] * dpi)
        self.colours: list[tuple[int, int, int]] = [
            (255, 255, 255), *((round(255 * (1 - k / TEXT_LEVELS)),) * 3 for k in range(1, TEXT_LEVELS + 1))]
        self.index = {rgb: i for i, rgb in enumerate(self.colours)}
        self.image = Image.new("P", (self.width, self.height), 0)
        self.draw = ImageDraw.Draw(self.image)
        self.text_layer = Image.new("L", (self.width, self.height), 0)
        self.text_draw = ImageDraw.Draw(self.text_layer)

    def ink(self, colour: str | tuple[int, int, int]) -> int:
        """The palette index of ``colour`` (added on first use)."""
        rgb = _rgb(colour) if isinstance(colour, str) else colour
        if rgb not in self.index:
            if len(self.colours) == 256:
                raise ValueError("a chart of more than 256 colours")
            self.index[rgb] = len(self.colours)
            self.colours.append(rgb)
        return self.index[rgb]

    def finished(self) -> Any:
        """The image with the text laid on top and its palette set."""
        from PIL import Image

        pixels = np.array(self.image)
        coverage = np.asarray(self.text_layer)
        level = (coverage.astype(np.uint16) * TEXT_LEVELS + 127) // 255  # 0 (none) .. 16 (black)
        shown = level > 0
        pixels[shown] = level[shown]  # the greys' indices are their levels
        image = Image.fromarray(pixels, "P")
        image.putpalette([c for rgb in self.colours for c in rgb])
        return image

    def px(self, points: float) -> float:
        return points * self.s

    def font(self, points: float, bold: bool = False) -> Any:
        return pil_font(round(points * self.s), bold)

    def text_width(self, text: str, points: float) -> float:
        return float(max((self.font(points).getlength(line) for line in text.split("\n")), default=0.0))

    def line_height(self, points: float) -> float:
        return points * self.s * 1.2

    def text(self, xy: tuple[float, float], text: str, points: float, anchor: str = "la") -> None:
        """Black ``text`` (on the text layer)."""
        self.text_draw.text(xy, text, font=self.font(points), fill=255, anchor=anchor)

    def text_up(self, centre: tuple[float, float], text: str, points: float) -> None:
        """``text`` turned a quarter counter-clockwise (read from below), centred on ``centre``."""
        from PIL import Image, ImageDraw

        font = self.font(points)
        width, height = int(font.getlength(text)) + 2, int(self.line_height(points)) + 2
        mask = Image.new("L", (width, height), 0)
        ImageDraw.Draw(mask).text((1, height / 2), text, font=font, fill=255, anchor="lm")
        mask = mask.rotate(90, expand=True)
        box = (round(centre[0] - mask.width / 2), round(centre[1] - mask.height / 2))
        self.text_layer.paste(255, box, mask)

    def line(self, points: Sequence[tuple[float, float]], fill: str, width_pt: float) -> None:
        self.draw.line(list(points), fill=self.ink(fill), width=max(1, round(self.px(width_pt))))

    def dashed(self, start: tuple[float, float], end: tuple[float, float], fill: str, width_pt: float) -> None:
        """A dashed line (matplotlib's pattern: 3.7 on, 1.6 off, in line widths)."""
        length = float(np.hypot(end[0] - start[0], end[1] - start[1]))
        on, off = self.px(3.7 * max(width_pt, 1.0)), self.px(1.6 * max(width_pt, 1.0))
        for a in np.arange(0.0, length, on + off):
            b = min(a + on, length)
            p = (start[0] + (end[0] - start[0]) * a / length, start[1] + (end[1] - start[1]) * a / length)
            q = (start[0] + (end[0] - start[0]) * b / length, start[1] + (end[1] - start[1]) * b / length)
            self.line([p, q], fill, width_pt)


def render_png(chart: Chart, dpi: int, compress_level: int = 1) -> bytes:
    """``chart`` drawn at ``dpi`` pixels per inch, as PNG bytes (a palette image)."""
    canvas = _Canvas(chart, dpi)
    if chart.message:
        canvas.text((canvas.width / 2, canvas.height / 2), chart.message, LABEL_PT, anchor="mm")
    else:
        _draw_chart(canvas, chart)
    buf = io.BytesIO()
    canvas.finished().save(buf, format="png", dpi=(dpi, dpi), compress_level=compress_level)
    return buf.getvalue()


def _draw_chart(canvas: _Canvas, chart: Chart) -> None:
    x_axis, y_axis = chart.x, chart.y
    x_lim, x_ticks, x_texts = labelled_ticks(chart, x_axis)
    y_lim, y_ticks, y_texts = labelled_ticks(chart, y_axis)
    frame = _layout(canvas, chart, x_lim, y_lim, x_texts, y_texts)
    if chart.legend not in (None, "below") and chart.labels() and _corner(canvas, chart, frame)[1] > 0:
        # no corner of the axes is free for the legend (a few long bars): below the axes, not over the bars
        chart = replace(chart, legend="below", legend_columns=min(len(chart.labels()), 2))
        frame = _layout(canvas, chart, x_lim, y_lim, x_texts, y_texts)
    _draw_marks(canvas, chart, frame)
    _draw_axes(canvas, frame, (x_axis, x_ticks, x_texts), (y_axis, y_ticks, y_texts))
    if chart.title:
        canvas.text_draw.multiline_text(((frame.left + frame.right) / 2, frame.top - canvas.px(6.0)), chart.title,
                                        font=canvas.font(TITLE_PT), fill=255, anchor="md", align="center")
    if chart.legend and chart.labels():
        _draw_legend(canvas, chart, frame)


def _layout(canvas: _Canvas, chart: Chart, x_lim: tuple[float, float], y_lim: tuple[float, float],
            x_texts: list[str], y_texts: list[str]) -> _Frame:
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
    return _Frame(*box, _mapper(x_axis, x_lim, box[0], box[2], False),
                  _mapper(y_axis, y_lim, box[3], box[1], False))


def _mapper(axis: Axis, lim: tuple[float, float], start: float, end: float, _flip: bool) -> Callable[[np.ndarray], np.ndarray]:
    """Data values to pixels along one axis (``start`` is where the lower limit goes; inverted axes swap)."""
    if axis.inverted:
        start, end = end, start
    lo, hi = transform(axis.scale, np.array(lim, dtype=float))
    span = (hi - lo) or 1.0

    def to_pixels(values: np.ndarray) -> np.ndarray:
        return start + (transform(axis.scale, np.asarray(values, dtype=float)) - lo) / span * (end - start)

    return to_pixels


def _draw_marks(canvas: _Canvas, chart: Chart, frame: _Frame) -> None:
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
                top = np.array(_rgb(mark.color), dtype=float)
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


def _points(chart: Chart, frame: _Frame, at: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (x, y) of marks at ``at`` with ``values``."""
    if chart.horizontal:
        return frame.to_x(values), frame.to_y(at)
    return frame.to_x(at), frame.to_y(values)


def _bars(canvas: _Canvas, draw: Any, chart: Chart, frame: _Frame, bars: Bars, ink: int | None = None) -> None:
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


def _base(chart: Chart, frame: _Frame) -> float:
    """The pixel where bars start: 0 on the value axis, or its lower edge on a log axis."""
    if chart.value.scale == "log":
        return frame.left if chart.horizontal else frame.bottom
    return float(_value_pixels(chart, frame, np.zeros(1))[0])


def _value_pixels(chart: Chart, frame: _Frame, values: np.ndarray) -> np.ndarray:
    if chart.value.scale == "log":
        values = np.maximum(values, 1e-300)
    return frame.to_x(values) if chart.horizontal else frame.to_y(values)


def _category_pixels(chart: Chart, frame: _Frame, at: np.ndarray) -> np.ndarray:
    return frame.to_y(at) if chart.horizontal else frame.to_x(at)


def _mark(canvas: _Canvas, draw: Any, chart: Chart, frame: _Frame, mark: Mark) -> None:
    if isinstance(mark, Bars):
        _bars(canvas, draw, chart, frame, mark)
    elif isinstance(mark, Intervals):
        cap = canvas.px(2.0)
        lo_x, lo_y = _points(chart, frame, mark.at, mark.low)
        hi_x, hi_y = _points(chart, frame, mark.at, mark.high)
        for x0, y0, x1, y1 in zip(lo_x, lo_y, hi_x, hi_y):
            if not np.isfinite([x0, y0, x1, y1]).all():
                continue
            canvas.line([(x0, y0), (x1, y1)], mark.color, 0.8)
            for x, y in ((x0, y0), (x1, y1)):
                ends = [(x, y - cap), (x, y + cap)] if chart.horizontal else [(x - cap, y), (x + cap, y)]
                canvas.line(ends, mark.color, 0.8)
    elif isinstance(mark, Markers):
        xs, ys = _points(chart, frame, mark.at, mark.values)
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


def _annotate(canvas: _Canvas, chart: Chart, frame: _Frame, bars: Bars) -> None:
    xs, ys = _points(chart, frame, bars.at, bars.values)
    for x, y, v in zip(xs, ys, bars.values):
        if np.isfinite(v) and bars.annotate:
            canvas.text((x, y - canvas.px(3.0)), bars.annotate.format(v), NOTE_PT, anchor="md")


def _draw_axes(canvas: _Canvas, frame: _Frame, x: tuple[Axis, list[float], list[str]],
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


def _legend_entries(chart: Chart) -> list[Mark]:
    return [m for m in chart.marks if m.label]


def _draw_legend(canvas: _Canvas, chart: Chart, frame: _Frame) -> None:
    """A framed legend in a corner of the axes (``best``: the corner over the fewest marks) or below them."""
    entries = _legend_entries(chart)
    columns = max(chart.legend_columns, 1) if chart.legend == "below" else 1
    pad, handle, row = canvas.px(4.0), canvas.px(20.0), canvas.line_height(LEGEND_PT) * 1.15
    column_width, (width, height) = _legend_column(canvas, chart), _legend_size(canvas, chart)
    if chart.legend == "below":
        left = (frame.left + frame.right) / 2 - width / 2
        top = canvas.height - canvas.px(EDGE_PT) - height
    else:
        (left, top), _ = _corner(canvas, chart, frame)
    canvas.draw.rounded_rectangle([left, top, left + width, top + height], radius=canvas.px(2.0), fill=0,
                                  outline=canvas.ink("#cccccc"), width=max(1, round(canvas.px(0.8))))
    for i, mark in enumerate(entries):
        x = left + pad + (i % columns) * column_width
        y = top + pad * 0.75 + (i // columns) * row + row / 2
        _handle(canvas, mark, x, y, handle)
        canvas.text((x + handle + pad, y), str(mark.label), LEGEND_PT, anchor="lm")


def _legend_column(canvas: _Canvas, chart: Chart) -> float:
    """The width of one column of the legend: a handle, a gap and the longest label, padded."""
    pad, handle = canvas.px(4.0), canvas.px(20.0)
    return max(handle + pad + canvas.text_width(str(m.label), LEGEND_PT) for m in _legend_entries(chart)) + 2 * pad


def _legend_size(canvas: _Canvas, chart: Chart) -> tuple[float, float]:
    """The legend box's width and height in pixels."""
    columns = max(chart.legend_columns, 1) if chart.legend == "below" else 1
    rows = -(-len(_legend_entries(chart)) // columns)
    pad = canvas.px(4.0)
    return _legend_column(canvas, chart) * columns + pad, rows * canvas.line_height(LEGEND_PT) * 1.15 + 1.5 * pad


def _handle(canvas: _Canvas, mark: Mark, x: float, y: float, width: float) -> None:
    """The legend's sample of ``mark`` in the box ``width`` wide centred vertically on ``y``."""
    half = canvas.px(3.5)
    if isinstance(mark, Bars):
        red, green, blue = (round(255 - (255 - c) * mark.alpha) for c in _rgb(mark.color))  # over white
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


def _corner(canvas: _Canvas, chart: Chart, frame: _Frame) -> tuple[tuple[float, float], float]:
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


def _mark_boxes(chart: Chart, frame: _Frame) -> np.ndarray:
    """Pixel boxes (x0, y0, x1, y1) of what the marks cover, for placing the legend."""
    boxes = []
    for mark in chart.marks:
        if isinstance(mark, Bars):
            values = np.nan_to_num(np.asarray(mark.values, dtype=float))
            width = np.broadcast_to(np.asarray(mark.width, dtype=float), np.shape(mark.at))
            a0, v0 = _points(chart, frame, np.asarray(mark.at) - width / 2, np.zeros_like(values))
            a1, v1 = _points(chart, frame, np.asarray(mark.at) + width / 2, values)
            if chart.value.scale == "log":
                a0, v0 = _points(chart, frame, np.asarray(mark.at) - width / 2, np.full_like(values, 1e-300))
        elif isinstance(mark, Markers | Intervals):
            values = mark.values if isinstance(mark, Markers) else mark.high
            a0, v0 = _points(chart, frame, np.asarray(mark.at) - 0.3, np.asarray(values, dtype=float) * 0.999)
            a1, v1 = _points(chart, frame, np.asarray(mark.at) + 0.3, np.asarray(values, dtype=float))
        elif isinstance(mark, Steps):
            edges = np.asarray(mark.edges, dtype=float)
            a0, v0 = frame.to_x(edges[:-1]), frame.to_y(np.zeros(len(mark.values)))
            a1, v1 = frame.to_x(edges[1:]), frame.to_y(np.asarray(mark.values, dtype=float))
        else:
            continue
        xs, ys = np.stack([a0, a1]), np.stack([v0, v1])
        boxes.append(np.stack([xs.min(0), ys.min(0), xs.max(0), ys.max(0)], axis=1))
    return np.concatenate(boxes) if boxes else np.empty((0, 4))


def _rgb(colour: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` or a name Pillow knows as an RGB triple."""
    from PIL import ImageColor

    rgb = ImageColor.getrgb(colour)
    return rgb[0], rgb[1], rgb[2]
