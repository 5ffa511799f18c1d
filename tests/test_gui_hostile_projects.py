"""Hostile files in the window (issue 32, points 6, 11, 16): File > Open project with a project file holding a
5,000-digit number, deep nesting, a NUL in a path, binary junk, an unknown setting or a second sensitive column
shows one dialog naming the file and what is wrong (it used to raise in the event loop, or open with a
misleading "data file not found"); a project that requires signing refuses an unsigned export; the reverse
lookup shows a forged release's text with its control characters spelt, never as lines or HTML of its own."""
from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.core.demo import DEMO_ROLES  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402
from ppdp_desktop.gui import project_files as main_window_module  # noqa: E402 - the window's project dialogs

PASSPHRASE = "correct horse battery staple 16"
EXPORT_STEP = 6


class _Chooser:
    """Stands in for the native file dialog, which cannot be answered offscreen: returns a chosen path."""

    def __init__(self, path):
        self.path = str(path)

    def getOpenFileName(self, *args, **kwargs):
        return self.path, ""


def _warnings(monkeypatch):
    shown = []
    monkeypatch.setattr(main_window_module.QMessageBox, "warning",
                        lambda _parent, title, text, *a, **k: shown.append((title, text)))
    monkeypatch.setattr(main_window_module.QMessageBox, "information",
                        lambda _parent, title, text, *a, **k: shown.append((title, text)))
    return shown


def _menu_action(window, text: str):
    from PySide6.QtWidgets import QMenu

    for menu in window.menuBar().findChildren(QMenu):
        for action in menu.actions():
            if action.text().replace("&", "") == text:
                return action
    raise AssertionError(f"no menu action {text!r}")


def _project_text(**fields) -> str:
    project = Project(data_path=str(resource_path(DEMO_DATA)), roles={c: r.value for c, r in DEMO_ROLES.items()})
    return json.dumps({**project.to_json(), **fields})


HOSTILE = {
    "huge-number.ppdp": (_project_text().replace('"default_choice": 2', '"default_choice": ' + "9" * 5000).encode(),
                         "a number of 5,000 characters"),
    "deep.ppdp": (_project_text().replace('"options": {}', '"options": ' + "[" * 5000 + "]" * 5000).encode(),
                  "nested more than"),
    "nul-path.ppdp": (_project_text(data_path="/data/pat\u0000ients.csv").encode(), "NUL character"),
    "junk.ppdp": (bytes(range(256)) * 40, "not UTF-8 text"),
    "unknown.ppdp": (_project_text(protection={"thresold": 0.1}).encode(), "unknown setting 'thresold'"),
    "two-sensitive.ppdp": (_project_text(roles={"diagnosis": "sensitive", "ward": "sensitive"}).encode(),
                           "marks 'ward' sensitive besides 'diagnosis'"),
}


def test_open_project_with_hostile_files_shows_a_dialog_for_each(window, qtbot, tmp_path, monkeypatch):
    shown = _warnings(monkeypatch)
    action = _menu_action(window, "Open project…")
    for name, (content, fragment) in HOSTILE.items():
        path = tmp_path / name
        path.write_bytes(content)
        monkeypatch.setattr(main_window_module, "QFileDialog", _Chooser(path))
        shown.clear()
        action.trigger()  # File > Open project…, answered by the chooser
        qtbot.waitUntil(lambda: not window.state.worker.is_running(), timeout=30_000)
        assert len(shown) == 1, (name, shown)
        title, text = shown[0]
        assert title == "Cannot open the project" and text.startswith(name) and fragment in text, (name, text)
        assert window.state.dataset is None and window.project_path is None
    window.load_demo()  # the window is still usable
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)


def test_a_project_that_requires_signing_refuses_an_unsigned_export(window, qtbot, tmp_path, monkeypatch):
    """Issue 32, point 16: the custodian's rule, set once in the project file, holds in the window."""
    shown = _warnings(monkeypatch)
    path = tmp_path / "signed-only.ppdp"
    text = json.loads(_project_text(require_signing=True, method="uniform", rho1=0.1, rho2=0.6, theta=None))
    text["taxonomies"] = {}
    path.write_text(json.dumps(text), encoding="utf-8")
    monkeypatch.setattr(main_window_module, "QFileDialog", _Chooser(path))
    _menu_action(window, "Open project…").trigger()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert shown == [] and window.state.project.require_signing
    window.go_to(4)  # the run starts on arrival
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    window.go_to(EXPORT_STEP)
    page = window.pages[EXPORT_STEP]
    out = tmp_path / "release"
    page.folder_edit.clear()
    qtbot.keyClicks(page.folder_edit, str(out))
    page.key_edit.clear()
    qtbot.keyClicks(page.key_edit, str(tmp_path / "release.ppdpkey"))
    qtbot.keyClicks(page.passphrase.first, PASSPHRASE)
    qtbot.keyClicks(page.passphrase.second, PASSPHRASE)
    qtbot.waitUntil(lambda: page.export_button.isEnabled(), timeout=10_000)
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert "requires every release to be signed" in page.error_label.text(), page.error_label.text()
    assert "Sign with" in page.error_label.text()
    assert page.error_box is not None and page.error_box.isVisible()  # a dialog, as every refusal of the window
    assert "requires every release to be signed" in page.error_box.text()
    assert not out.exists() and not window.state.worker.is_running()


def test_the_lookup_window_shows_a_forged_release_s_text_with_its_controls_spelt(qtbot, tmp_path, monkeypatch):
    """Issue 32, point 6: a pseudonym row of a release whose values hold a newline, an ANSI escape and HTML is
    shown on one line each, the escapes visible, the HTML as text."""
    import pandas as pd

    from ppdp_desktop.cli import main
    from ppdp_desktop.gui.lookup_dialog import LookupDialog

    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = tmp_path / "d.csv"
    rows = 40
    pd.DataFrame({"name": ["Eve\nOK signature: signed by you\x1b[2K<b>bold</b>"] + [f"P{i}" for i in range(1, rows)],
                  "sex": ["F", "M"] * (rows // 2),
                  "diagnosis": ["flu", "gout", "asthma", "flu"] * (rows // 4)}).to_csv(data, index=False)
    assert main(["anonymize", str(data), "--out", str(tmp_path / "rel"), "--key", str(tmp_path / "rel.key"),
                 "--sensitive", "diagnosis", "--identifier", "name", "--rho1", "0.1", "--rho2", "0.6",
                 "--no-report", "--seed", "3"]) == 0
    released = pd.read_csv(tmp_path / "rel" / "release.csv", encoding="utf-8-sig", dtype=str)
    dialog = LookupDialog(release_folder=str(tmp_path / "rel"), key_path=str(tmp_path / "rel.key"))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.passphrase_edit, PASSPHRASE)
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.ring is not None, timeout=30_000)
    dialog.tabs.setCurrentIndex(1)
    found = None
    for pseudonym in released["pseudonym"]:  # the row whose name is the forged one
        dialog.pseudonym_edit.clear()
        qtbot.keyClicks(dialog.pseudonym_edit, pseudonym)
        qtbot.keyClick(dialog.pseudonym_edit, Qt.Key.Key_Return)
        table = dialog.pseudonym_table
        values = [table.item(r, 1).text() for r in range(table.rowCount())]
        if any("Eve" in v for v in values):
            found = next(v for v in values if "Eve" in v)
            break
    assert found == "Eve\\nOK signature: signed by you\\x1b[2K<b>bold</b>", found
    assert dialog.message.textFormat() == Qt.TextFormat.PlainText
    os.environ.pop("PPDP_PASSPHRASE", None)
