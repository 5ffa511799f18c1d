"""Files in the window: Recent files, Save and Save as, and a half-typed release folder."""
from __future__ import annotations

import shutil

import pytest

pytest.importorskip("PySide6")


from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.gui import project_files  # noqa: E402
from ppdp_desktop.gui.pages import load_page  # noqa: E402

EXPORT_STEP = 6


class _Chooser:
    """Stands in for the native file dialog, which cannot be answered offscreen: returns a chosen path."""

    def __init__(self, path):
        self.path, self.calls = str(path), 0

    def getOpenFileName(self, *args, **kwargs):
        self.calls += 1
        return self.path, ""

    def getSaveFileName(self, *args, **kwargs):
        self.calls += 1
        return self.path, ""


def test_a_file_opened_through_the_open_dialog_joins_recent_files(window, qtbot, tmp_path, monkeypatch):
    data = tmp_path / "patients.csv"
    shutil.copy(resource_path(DEMO_DATA), data)
    monkeypatch.setattr(load_page, "QFileDialog", _Chooser(data))
    window._on_open_data()  # File > Open data…
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert window.recent_files()[0] == str(data.resolve())
    assert [a.text() for a in window.recent_menu.actions()] == [str(data.resolve())]


def test_the_demo_data_does_not_join_recent_files(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert window.recent_files() == []


def test_save_writes_the_project_in_use_and_save_as_asks(window, qtbot, tmp_path, monkeypatch):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    first = _Chooser(tmp_path / "first.ppdp.json")
    monkeypatch.setattr(project_files, "QFileDialog", first)
    window._on_save_project()  # no project file yet: asks where
    assert first.calls == 1 and (tmp_path / "first.ppdp.json").is_file()
    (tmp_path / "first.ppdp.json").unlink()
    window._on_save_project()  # Ctrl+S again: the same file, no question
    assert first.calls == 1 and (tmp_path / "first.ppdp.json").is_file()
    second = _Chooser(tmp_path / "second.ppdp.json")
    monkeypatch.setattr(project_files, "QFileDialog", second)
    window._on_save_project_as()
    assert second.calls == 1 and (tmp_path / "second.ppdp.json").is_file()
    assert window.project_path == str(tmp_path / "second.ppdp.json")
    shortcuts = {a.text(): a.shortcut().toString() for a in window.menuBar().actions()[0].menu().actions()}
    assert shortcuts["Save project &as…"] and shortcuts["&Save project"] == "Ctrl+S"


def test_typing_a_release_folder_from_the_root_is_no_error(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    page = window.pages[EXPORT_STEP]
    page.folder_edit.setFocus()
    qtbot.keyClicks(page.folder_edit, "/")  # raised ValueError in a slot before
    assert page.key_edit.text() == ""
    qtbot.keyClicks(page.folder_edit, "tmp/release")
    assert page.key_edit.text() == "/tmp/release.ppdpkey"
