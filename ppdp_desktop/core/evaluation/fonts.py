"""The report's font, DejaVu Sans, shipped with the application (``resources/fonts``, with its licence).

Both the figures (:mod:`~ppdp_desktop.core.evaluation.chart_png`) and the PDF use it, so every script it covers
draws and prints alike, and neither needs a plotting library's data folder.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from ppdp_desktop.core.data.resources import resource_path

REGULAR = "DejaVuSans.ttf"
BOLD = "DejaVuSans-Bold.ttf"


def font_file(bold: bool = False) -> Path:
    """The path of the regular or bold font file."""
    return resource_path(f"fonts/{BOLD if bold else REGULAR}")


@lru_cache(maxsize=64)
def pil_font(pixels: int, bold: bool = False) -> Any:
    """The font at ``pixels`` pixels per em, loaded once per size (Pillow's FreeType font)."""
    from PIL import ImageFont

    return ImageFont.truetype(str(font_file(bold)), max(pixels, 1))
