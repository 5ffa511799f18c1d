"""The drawing surface of :mod:`.chart_png`: a palette image with its text layer, and the axes' frame.

A chart has a few flat colours, so it is drawn on a palette image: marks in their exact colours, text smoothed in
16 levels of grey (drawn on a layer of its own and laid on top at the end). Its PNG is a third of an RGB one's
bytes, encoded in a fifth of the time, and a PDF embeds it without expanding it to three bytes a pixel. Sizes are
in points (1/72 inch), turned into pixels at the chart's resolution.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ppdp_desktop.core.evaluation.chart import Chart
from ppdp_desktop.core.evaluation.fonts import pil_font

TEXT_LEVELS = 16  # shades of the text's smoothing (black on white)
TITLE_PT, LABEL_PT, LEGEND_PT, NOTE_PT = 12.0, 10.0, 8.0, 8.0
TICK_PT, PAD_PT, LINE_PT = 3.5, 4.0, 0.8  # tick length, gap between text and what it labels, frame width
EDGE_PT = 7.0  # blank edge around the figure


@dataclass
class Frame:
    """The axes' box in pixels and the maps from data values to pixels along each axis."""

    left: float
    top: float
    right: float
    bottom: float
    to_x: Callable[[np.ndarray], np.ndarray]
    to_y: Callable[[np.ndarray], np.ndarray]


class Canvas:
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
        value = rgb(colour) if isinstance(colour, str) else colour
        if value not in self.index:
            if len(self.colours) == 256:
                raise ValueError("a chart of more than 256 colours")
            self.index[value] = len(self.colours)
            self.colours.append(value)
        return self.index[value]

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


def points(chart: Chart, frame: Frame, at: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (x, y) of marks at ``at`` with ``values``."""
    if chart.horizontal:
        return frame.to_x(values), frame.to_y(at)
    return frame.to_x(at), frame.to_y(values)


def rgb(colour: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` or a name Pillow knows as an RGB triple."""
    from PIL import ImageColor

    rgb = ImageColor.getrgb(colour)
    return rgb[0], rgb[1], rgb[2]
