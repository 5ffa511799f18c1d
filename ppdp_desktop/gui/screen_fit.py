"""Window and dialog sizes that fit the user's screen (an 800x600 laptop included)."""
from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QWidget


def fit_to_screen(widget: QWidget, width: int, height: int, margin: int = 60) -> QSize:
    """Resize ``widget`` to ``width`` x ``height``, or less where its screen's free area is smaller (``margin``
    pixels kept for the frame and the task bar), and return the size given. A dialog opened larger than the screen
    hides its buttons off the edge."""
    screen = widget.screen() if widget.screen() is not None else None
    if screen is not None:
        area = screen.availableGeometry()
        width, height = min(width, area.width() - margin), min(height, area.height() - margin)
    widget.resize(width, height)
    return QSize(width, height)
