"""A stray mouse wheel never changes a setting: over an unfocused combo or spin box it scrolls the page."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

METHOD_STEP = 3


def _wheel(widget, steps: int = -3) -> None:
    """Roll the mouse wheel over the middle of ``widget`` (negative: towards the user, scrolling down)."""
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_wheel_over_the_method_page_scrolls_and_changes_nothing(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    randomize = page.editors["rr"].randomize
    page.scroll.ensureWidgetVisible(randomize)
    qtbot.wait(50)
    before, scrolled = randomize.currentIndex(), page.scroll.verticalScrollBar().value()
    window.next.setFocus()
    _wheel(randomize)
    _wheel(page.protection.threshold)
    assert randomize.currentIndex() == before and window.state.project.method_settings("rr").randomize == "both"
    assert page.protection.threshold.value() == 20.0
    assert page.scroll.verticalScrollBar().value() != scrolled  # the page scrolled instead


def test_wheel_changes_a_focused_box(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    threshold = page.protection.threshold
    page.scroll.ensureWidgetVisible(threshold)
    qtbot.mouseClick(threshold.lineEdit(), Qt.MouseButton.LeftButton)
    assert threshold.hasFocus() and threshold.focusPolicy() == Qt.FocusPolicy.StrongFocus
    _wheel(threshold, steps=1)
    assert threshold.value() != 20.0  # once clicked into, the wheel is the user's intent


def test_wheel_over_a_box_tabbed_into_scrolls_the_page(window, qtbot):
    """Leaving a field with Tab puts the focus on the next box; the wheel that follows, meant for the page, must not
    change it (seen under Xvfb: typing age's widths, Tab, then scrolling turned "keep age at least as" to 5-year
    bands). A box the keyboard reached changes with the arrow keys; the wheel needs a click first."""
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    threshold = page.protection.threshold
    page.scroll.ensureWidgetVisible(threshold)
    before = page.protection.suppression  # the box before the threshold in the tab order
    qtbot.mouseClick(before.lineEdit(), Qt.MouseButton.LeftButton)
    for _ in range(20):  # Tab until the threshold box has the focus, as a person would
        if threshold.hasFocus():
            break
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert threshold.hasFocus()
    scrolled = page.scroll.verticalScrollBar().value()
    _wheel(threshold)
    assert threshold.value() == 20.0 and page.scroll.verticalScrollBar().value() != scrolled
    qtbot.keyClick(threshold, Qt.Key.Key_Up)
    assert threshold.value() != 20.0  # the keys still change it
