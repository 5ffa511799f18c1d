"""The whole wizard with the keyboard only: Tab to move, Space to press, typing into fields, Alt+Right
for Next (issue 15: a keyboard-only run through the whole wizard)."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ppdp_desktop.core.data.released import read_release  # noqa: E402
from ppdp_desktop.core.release.analysis import verify_release  # noqa: E402

PASSPHRASE = "correct horse battery staple 11"
RUN_STEP, EXPORT_STEP = 4, 6


def tab_to(qtbot, window, widget, presses: int = 80) -> None:
    """Press Tab until ``widget`` has the keyboard focus, as a person would."""
    for _ in range(presses):
        if QApplication.focusWidget() is widget:
            return
        qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Tab)
    raise AssertionError(f"Tab never reached {widget!r}")


def next_step(qtbot, window) -> None:
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)


def test_keyboard_only_from_the_demo_data_to_an_exported_release(window, qtbot, tmp_path):
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    load = window.pages[0]
    tab_to(qtbot, window, load.demo_button)
    qtbot.keyClick(load.demo_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    for step in (1, 2, 3, RUN_STEP):
        next_step(qtbot, window)
        qtbot.waitUntil(lambda s=step: window.stack.currentIndex() == s, timeout=5_000)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    for step in (RUN_STEP + 1, EXPORT_STEP):
        next_step(qtbot, window)
        qtbot.waitUntil(lambda s=step: window.stack.currentIndex() == s, timeout=5_000)
    export = window.pages[EXPORT_STEP]
    tab_to(qtbot, window, export.folder_edit)
    qtbot.keyClicks(export.folder_edit, str(tmp_path / "release"))
    assert export.key_edit.text() == str(tmp_path / "release.ppdpkey")
    tab_to(qtbot, window, export.passphrase.first)
    qtbot.keyClicks(export.passphrase.first, PASSPHRASE)
    tab_to(qtbot, window, export.passphrase.second)
    qtbot.keyClicks(export.passphrase.second, PASSPHRASE)
    tab_to(qtbot, window, export.export_button)
    qtbot.keyClick(export.export_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: (tmp_path / "release" / "SHA256SUMS").is_file(), timeout=60_000)
    assert verify_release(read_release(tmp_path / "release"))
    assert (tmp_path / "release.ppdpkey").is_file()
