"""The report's figures as images ready for the window, decoded off the GUI thread.

The run job draws each figure once as PNG (Pillow, in the worker: :meth:`MethodReport.render_images`). Decoding a
PNG is work too: a 1,125 x 1,530 px figure takes 25-30 ms, and Qt's own reader (``QPixmap.loadFromData``,
``QImage.fromData``) holds the interpreter lock meanwhile, so it stalls the GUI thread from any thread. Pillow
(which draws the PNG too) releases the lock while it decodes; the worker decodes every
figure with it right after the run, and the report page only wraps the images in pixmaps.
"""
from __future__ import annotations

import io
from typing import Any

from PySide6.QtGui import QImage

#: ``(index of the report in the outcome, figure name) -> image``
FigureImages = dict[tuple[int, str], QImage]


def decode_png(png: bytes) -> QImage:
    """``png`` as a QImage, decoded by Pillow (the interpreter lock released while it decodes)."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        rgba = image.convert("RGBA")
    raw = rgba.tobytes()
    # QImage over ``raw`` would point into a Python buffer; the copy owns its pixels.
    return QImage(raw, rgba.width, rgba.height, 4 * rgba.width, QImage.Format.Format_RGBA8888).copy()


def decode_figures(outcome: Any) -> FigureImages:
    """Every figure of every report of a run outcome, decoded (the worker calls this after the run).
    An outcome without reports (a job of a test) has none."""
    images: FigureImages = {}
    for index, report in enumerate(getattr(outcome, "reports", None) or []):
        for name in report.figures:
            images[(index, name)] = decode_png(report.image(name))
    return images
