"""Window and dialog sizes that fit the user's screen (an 800x600 laptop included)."""
from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QTabWidget, QToolButton, QWidget

#: what a tab bar's scroll buttons (shown when its tabs do not fit a small window) say on hover
SCROLL_TIPS = {"ScrollLeftButton": "Show the tabs to the left", "ScrollRightButton": "Show more tabs to the right"}


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


def name_tab_scroll_buttons(tabs: QTabWidget) -> None:
    """Give a tab widget's scroll buttons a tooltip: in a small window its tabs do not fit and Qt shows two arrows
    that otherwise say nothing."""
    for button in tabs.tabBar().findChildren(QToolButton):
        tip = SCROLL_TIPS.get(button.objectName())
        if tip:
            button.setToolTip(tip)
