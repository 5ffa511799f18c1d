"""No setting changes under a stray mouse wheel: a combo box or spin box takes wheel events only once it
was clicked (it has the focus, given by the mouse); otherwise the wheel scrolls the page it sits on.

The usual Qt idiom (``Qt.StrongFocus`` and ignoring the wheel without focus), applied to every such
widget of the application by one event filter, so widgets added later are covered too, made stricter: a box
the keyboard tabbed into does not take the wheel either. Leaving a field with Tab lands the focus on the next
box, and the next turn of the wheel, meant to scroll the page, changed that box's setting (seen under Xvfb:
"keep age at least as" turned to 5-year bands). Arrow keys still change a tabbed-into box.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget

GUARDED = (QComboBox, QAbstractSpinBox)
_CLICKED = "ppdpFocusedByMouse"  # a dynamic property: the box's focus came from a click
_WATCHED = frozenset((QEvent.Type.Polish, QEvent.Type.FocusIn, QEvent.Type.Wheel))


class WheelGuard(QObject):
    """Application-wide event filter: a wheel over an unfocused combo/spin box scrolls its page instead."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        # Every event of the interface thread passes here: one look at its type lets all but three through
        # at once (reading the type three times made the filter a tenth of the window's start-up).
        kind = event.type()
        if kind not in _WATCHED or not isinstance(watched, GUARDED):
            return False
        if kind == QEvent.Type.Polish:
            watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel alone never gives it focus
        elif kind == QEvent.Type.FocusIn:
            watched.setProperty(_CLICKED, event.reason() == Qt.FocusReason.MouseFocusReason)  # type: ignore[attr-defined]
        elif not (watched.hasFocus() and watched.property(_CLICKED)):  # a wheel over a box not clicked into
            area = _scroll_area(watched)
            if area is not None:
                QCoreApplication.sendEvent(area.verticalScrollBar(), event)
            return True  # the value stays as it is
        return False


def _scroll_area(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


_guard: WheelGuard | None = None


def install() -> None:
    """Install the guard on the running application (once)."""
    global _guard
    app = QApplication.instance()
    if app is not None and _guard is None:
        _guard = WheelGuard(app)
        app.installEventFilter(_guard)
