"""Issue 29, point 7, in the window: the import options show the encoding detected, and ask (highlighted list,
candidates first, a line as the chosen one reads it, Load held back) when it cannot be told."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QDialogButtonBox  # noqa: E402
from test_encodings import CITIES, CLINIC, GYOR  # noqa: E402


def _dialog(qtbot, window):
    page = window.pages[0]
    qtbot.waitUntil(lambda: page.import_dialog is not None and page.import_dialog.isVisible(), timeout=10_000)
    dialog = page.import_dialog
    qtbot.waitUntil(lambda: dialog.preview_dataset is not None, timeout=10_000)
    _settle(qtbot, dialog)
    return dialog


def _settle(qtbot, dialog) -> None:
    qtbot.waitUntil(lambda: not dialog.timer.isActive() and not dialog.worker.is_running()
                    and "Reading" not in dialog.status.text(), timeout=10_000)


def _load_button(dialog):
    return dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)


def test_a_windows_1250_file_shows_the_encoding_detected_and_loads_with_its_letters(window, qtbot, tmp_path):
    path = tmp_path / "klinika.csv"
    path.write_bytes(CLINIC.encode("cp1250"))
    window.load_data(path)
    dialog = _dialog(qtbot, window)  # not UTF-8: the window asks the user to check the letters
    assert "Encoding: Windows-1250 (Central European), detected" in dialog.encoding_note.text()
    assert dialog.encoding.styleSheet() == ""  # nothing to choose
    assert dialog.preview_dataset.frame["město"].tolist() == CITIES
    qtbot.mouseClick(_load_button(dialog), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    assert window.state.dataset.frame["město"].tolist() == CITIES
    assert "věk" in window.state.dataset.frame.columns


def test_a_file_whose_encoding_cannot_be_told_asks_and_loads_after_a_choice(window, qtbot, tmp_path):
    path = tmp_path / "gyor.csv"
    path.write_bytes(GYOR.encode("cp1250"))
    window.load_data(path)
    dialog = _dialog(qtbot, window)
    assert "cannot be told" in dialog.doubts.text()
    assert dialog.encoding.styleSheet()  # highlighted
    note = dialog.encoding_note.text()
    assert "Győr" in note and "Gyõr" in note and "cannot be told" in note
    offered = [dialog.encoding.itemData(i) for i in (1, 2)]
    assert offered == ["cp1252", "cp1250"]  # the candidates first
    assert not _load_button(dialog).isEnabled()  # no load until the user chooses
    qtbot.wait(QApplication.keyboardInputInterval() + 100)
    dialog.encoding.setFocus()
    qtbot.keyClicks(dialog.encoding, "Windows-1250")  # as a person picks it: typing its name
    assert dialog.encoding.currentData() == "cp1250"
    _settle(qtbot, dialog)
    assert dialog.encoding.styleSheet() == ""
    assert "Győr" in dialog.encoding_note.text()  # a line of the file as Windows-1250 reads it
    assert dialog.preview_dataset.frame["varos"].tolist()[0] == "Győr"
    assert _load_button(dialog).isEnabled()
    qtbot.mouseClick(_load_button(dialog), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    assert window.state.dataset.frame["varos"].tolist() == ["Győr", "Debrecen", "Pécs", "Szeged", "Győr"]
    assert window.state.project.load_options.get("encoding") == "cp1250"


def test_an_ascii_file_loads_without_asking(window, qtbot, tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("id,city\n1,Boston\n2,Paris\n", encoding="ascii")
    window.load_data(path)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    assert window.pages[0].import_dialog is None
    assert Path(window.state.project.data_path).name == "plain.csv"
