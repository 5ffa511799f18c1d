"""Helpers for the window's file tests (issue 31): the file dialogs and questions answered as a person would, a data
file opened with File > Open data… (through the import options when the first look is unsure), keys pressed."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from ppdp_desktop.gui import project_files
from ppdp_desktop.gui.pages import load_page

TIMEOUT = 60_000


class Chooser:
    """Stands in for the native file dialogs, which cannot be answered offscreen: returns the path set in
    :attr:`path` and records where each dialog proposed to start (``proposed``)."""

    def __init__(self, path: str | Path = "") -> None:
        self.path, self.proposed = str(path), []

    def _chosen(self, *args, **kwargs) -> tuple[str, str]:
        self.proposed.append(args[2] if len(args) > 2 else kwargs.get("dir", ""))
        return self.path, ""

    getOpenFileName = getSaveFileName = _chosen  # noqa: N815 - Qt's names


class Questions:
    """Answers the window's questions (QMessageBox.question) with :attr:`answer` and records (title, text)."""

    def __init__(self, monkeypatch, answer: QMessageBox.StandardButton = QMessageBox.StandardButton.Cancel) -> None:
        self.answer, self.asked = answer, []
        monkeypatch.setattr(QMessageBox, "question", self._ask)

    def _ask(self, _parent, title, text, *args, **kwargs):
        self.asked.append((title, text))
        return self.answer


def dialogs(monkeypatch) -> Chooser:
    """One chooser behind every file dialog of step 1 and of the project menu entries."""
    chooser = Chooser()
    monkeypatch.setattr(load_page, "QFileDialog", chooser)
    monkeypatch.setattr(project_files, "QFileDialog", chooser)
    return chooser


def press(qtbot, window, key: Qt.Key, modifiers=Qt.KeyboardModifier.ControlModifier) -> None:
    """A shortcut pressed in the window (Ctrl+S, Ctrl+Shift+S ...)."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5_000)
    qtbot.keyClick(QApplication.focusWidget() or window, key, modifiers)


def menu_action(window, text: str):
    """The File menu's entry called ``text`` ("Open &project…")."""
    return next(a for a in window.menuBar().actions()[0].menu().actions() if a.text() == text)


def loaded(window, path: Path) -> bool:
    data = window.state.project.data_path
    return window.state.dataset is not None and data is not None and Path(data).resolve() == Path(path).resolve()


def open_data(qtbot, window, chooser: Chooser, path: Path) -> None:
    """Click "Open data file…" on step 1, choose ``path``, press Load in the import options if they open, and wait
    until the file is the data in use."""
    window.go_to(0)
    page = window.pages[0]
    chooser.path = str(path)
    page.import_dialog = None
    qtbot.mouseClick(page.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: loaded(window, path) or (page.import_dialog is not None and page.import_dialog.isVisible()),
                    timeout=TIMEOUT)
    if not loaded(window, path):
        dialog = page.import_dialog
        ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        qtbot.waitUntil(ok.isEnabled, timeout=TIMEOUT)
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: loaded(window, path), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not window.state.worker.is_running(), timeout=TIMEOUT)


def export_release(qtbot, window, folder: Path, passphrase: str, step: int = 6) -> None:
    """Step 7: a release folder and a key beside it, the passphrase typed twice, Export, and wait for the file."""
    window.go_to(step)
    export = window.pages[step]
    export.folder_edit.setText(str(folder))
    export.key_edit.setText(str(folder.with_suffix(".ppdpkey")))
    export.passphrase.first.setText(passphrase)
    export.passphrase.second.setText(passphrase)
    export.export()
    qtbot.waitUntil(lambda: (folder / "release.csv").is_file(), timeout=TIMEOUT)
