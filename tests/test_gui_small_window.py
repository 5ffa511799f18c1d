"""The window at 800 x 500 (issue 31 point 9): the report's Privacy and Utility panes scroll to their last line
(the re-identification verdict included) and the export page keeps its "Sign with" rows readable, scrolling
instead of squeezing them. Driven as a person does: Next to the report, a click on its tab, the mouse wheel."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QScrollArea, QWidget  # noqa: E402

RUN_STEP, REPORT_STEP, EXPORT_STEP = 4, 5, 6
SMALL = (800, 500)


def _wheel(widget: QWidget, steps: int = -3) -> None:
    """Roll the mouse wheel over the middle of ``widget`` (negative: towards the user, scrolling down)."""
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def _next(qtbot, window) -> None:
    qtbot.waitUntil(window.next.isEnabled, timeout=120_000)
    qtbot.mouseClick(window.next, Qt.MouseButton.LeftButton)


def _to_report(qtbot, window) -> None:
    """The demo (its roles preset), then Next to the run (it starts by itself) and Next to the report."""
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    while window.stack.currentIndex() < RUN_STEP:
        _next(qtbot, window)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    _next(qtbot, window)
    assert window.stack.currentIndex() == REPORT_STEP


def _small(qtbot, window) -> None:
    """Make the window 800 x 500, or as narrow as it goes (the narrower, the taller the wrapped text)."""
    window.resize(*SMALL)
    width = max(SMALL[0], window.minimumSizeHint().width())
    qtbot.wait(100)
    assert window.width() == width
    assert window.height() == SMALL[1], (f"the window cannot be {SMALL[1]} px high: the page needs "
                                         f"{window.stack.currentWidget().minimumSizeHint().height()} px (it does not scroll)")
    qtbot.wait(50)  # the layouts settle


def _scroll_area_of(widget: QWidget) -> QScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    return parent


def _whole(label: QLabel) -> bool:
    """The label is as tall as its text needs at its width: no line of it is cut off."""
    return label.height() >= label.heightForWidth(label.width())


def _within(widget: QWidget, area: QScrollArea) -> bool:
    """``widget`` lies wholly inside the visible part of ``area``."""
    top = widget.mapTo(area.viewport(), QPoint(0, 0)).y()
    return top >= 0 and top + widget.height() <= area.viewport().height()


def _wheel_to_end(qtbot, area: QScrollArea) -> None:
    bar = area.verticalScrollBar()
    for _ in range(100):
        if bar.value() == bar.maximum():
            return
        _wheel(area.viewport())
        qtbot.wait(5)
    raise AssertionError("the wheel did not reach the end")


def test_report_panes_scroll_to_their_last_line_in_a_small_window(window, qtbot):
    _to_report(qtbot, window)
    page = window.pages[REPORT_STEP]
    _small(qtbot, window)
    bar = page.sections.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())  # "Privacy and utility"
    assert page.sections.currentIndex() == 1
    qtbot.wait(50)
    text = page.privacy_label.text()
    assert "Re-identification:" in text and text.index("In plain words") < text.index("Sensitive values")
    for label in (page.privacy_label, page.utility_label):
        assert _whole(label), f"{label.height()} px shown of {label.heightForWidth(label.width())}"
        area = _scroll_area_of(label)
        assert area is not None and area.isVisible()
        assert area.verticalScrollBar().maximum() > 0  # at 800 x 500 the pane is shorter than its text: it scrolls
        _wheel_to_end(qtbot, area)
        bottom = label.mapTo(area.viewport(), QPoint(0, label.height())).y()
        assert bottom <= area.viewport().height()  # the last line (the re-identification figures) is on screen
    # the per-value table below the summaries keeps some rows too
    assert page.value_table.isVisible() and page.value_table.viewport().height() >= 3 * page.value_table.rowHeight(0)
    # "What a group reveals": its sentences scroll above its table, none cut
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(page.sections.indexOf(page.groups)).center())
    qtbot.wait(50)
    text = page.groups.text
    assert _whole(text) and _whole(page.groups.meaning)
    area = _scroll_area_of(text)
    assert area is not None
    _wheel_to_end(qtbot, area)
    assert text.mapTo(area.viewport(), QPoint(0, text.height())).y() <= area.viewport().height()


def test_export_page_keeps_the_sign_with_rows_readable_in_a_small_window(window, qtbot, tmp_path):
    _to_report(qtbot, window)
    _next(qtbot, window)
    export = window.pages[EXPORT_STEP]
    assert window.stack.currentIndex() == EXPORT_STEP
    _small(qtbot, window)
    signing = export.signing
    for field in (export.folder_edit, export.key_edit, signing.key_edit, signing.passphrase_edit):
        assert field.height() >= field.minimumSizeHint().height(), f"{field.placeholderText()!r} is squeezed"
    assert _whole(signing.hint) and _whole(export.key_label)
    area = _scroll_area_of(export.export_button)
    assert area is not None and area.verticalScrollBar().maximum() > 0  # the page scrolls instead
    # the signing key's field is on screen as the page opens: the person clicks it and types a path; the wheel
    # then brings the passphrase and the Export button into view
    assert area.verticalScrollBar().value() == 0 and _within(signing.key_edit, area)
    qtbot.mouseClick(signing.key_edit, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(signing.key_edit, str(tmp_path / "me.ppdpsign"))
    assert isinstance(QApplication.focusWidget(), QLineEdit) and signing.key_edit.text().endswith("me.ppdpsign")
    _wheel_to_end(qtbot, area)
    assert _within(export.export_button, area) and _within(export.passphrase, area)
