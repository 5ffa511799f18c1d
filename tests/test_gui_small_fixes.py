"""Small fixes from a clinician's day: every taxonomy action visible at the default size, the byte-order
mark box and what the key holds on the Export page, and a one-line message when Linux lacks Qt's xcb
libraries."""
from __future__ import annotations

import codecs
import json

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QRect, Qt  # noqa: E402
from PySide6.QtWidgets import QToolButton  # noqa: E402

from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path  # noqa: E402
from ppdp_desktop.core.jobs import RunOutcome, run_job  # noqa: E402
from ppdp_desktop.core.progress import CancelToken, no_progress  # noqa: E402
from ppdp_desktop.gui import (
    app,  # noqa: E402
    main_window,  # noqa: E402
)
from ppdp_desktop.gui.pages.export_page import ExportPage  # noqa: E402
from ppdp_desktop.gui.state import WizardState  # noqa: E402
from ppdp_desktop.gui.taxonomy_editor import TaxonomyEditor  # noqa: E402

PASSPHRASE = "correct horse battery staple"
ROLES = {"patient_id": "identifier", "name": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier",
         "postcode": "quasi-identifier", "diagnosis": "sensitive"}
TIMEOUT = 30_000
SEED = "the random seed (to reproduce and audit this release)"
PSEUDONYMS = "the pseudonym map (to find a patient from a released record)"
ALIASES = "the meaning of every alias and code"


# --- B: the taxonomy editor's actions at the default window size ------------------------------------
def test_every_taxonomy_action_is_visible_at_the_default_window_size(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=TIMEOUT)
    window.resize(1200, 760)  # the window's size on a 1366x768 screen (a smaller screen gets a smaller window)
    qtbot.wait(50)
    assert (window.width(), window.height()) == (1200, 760)
    window.go_to(1)
    roles = window.pages[1]
    roles.table.setCurrentCell(list(window.state.dataset.frame.columns).index("diagnosis"), 0)
    editor = roles.editor
    qtbot.waitUntil(lambda: editor.isEnabled() and editor.taxonomy() is not None)
    actions = [editor.add_child_action, editor.add_sibling_action, editor.rename_action, editor.delete_action,
               editor.undo_action, editor.redo_action, editor.build_action, editor.import_action,
               editor.export_action]
    area = editor.rect()
    for action in actions:
        buttons = [b for b in editor.findChildren(QToolButton) if b.defaultAction() is action and b.isVisible()]
        assert buttons, f"{action.text()!r} has no visible button (hidden behind an overflow)"
        corner = buttons[0].mapTo(editor, buttons[0].rect().topLeft())
        assert area.contains(QRect(corner, buttons[0].size())), f"{action.text()!r} is cut off at {corner}"
    overflow = [b for b in editor.findChildren(QToolButton) if b.isVisible() and b.defaultAction() not in actions]
    assert overflow == []  # no "»" button
    qtbot.mouseClick(editor.button_for(editor.build_action), Qt.MouseButton.LeftButton)  # reachable by a click
    assert editor.undo_action.isEnabled() and editor.taxonomy().root.children[0].is_leaf
    undo = editor.button_for(editor.undo_action)  # keeps its short label and place; the tooltip names the edit
    assert undo.text() == "Undo" and "flat taxonomy" in undo.toolTip()
    qtbot.wait(50)
    assert area.contains(QRect(undo.mapTo(editor, undo.rect().topLeft()), undo.size()))


def test_the_toolbar_wraps_when_the_editor_is_narrow(qtbot):
    editor = TaxonomyEditor()
    qtbot.addWidget(editor)
    editor.resize(260, 400)
    editor.show()
    qtbot.waitExposed(editor)
    tops = {editor.button_for(a).mapTo(editor, editor.button_for(a).rect().topLeft()).y()
            for a in (editor.add_child_action, editor.undo_action, editor.build_action)}
    assert len(tops) == 3  # three rows, one per group, nothing hidden


# --- A and D: the Export page -----------------------------------------------------------------------
def _outcome(method: str, **project) -> RunOutcome:
    state = WizardState()
    path = resource_path(DEMO_DATA)
    state.set_dataset(load_table(path), path)
    state.project.roles.update(ROLES)
    state.project.method = method
    for name, value in project.items():
        setattr(state.project, name, value)
    settings = state.project.settings()
    if settings.options is not None and hasattr(settings.options, "taxonomy_path"):
        settings.options.taxonomy_path = str(resource_path(DEMO_TAXONOMY))
    return run_job(state.dataset, [settings], no_progress, CancelToken())


@pytest.fixture(scope="module")
def finegrain(qapp) -> RunOutcome:
    return _outcome("finegrain")


@pytest.fixture(scope="module")
def personalized(qapp) -> RunOutcome:
    return _outcome("personalized", value_choices={"Leukaemia": 3, "Hypertension": 1})


@pytest.fixture
def state(qtbot):
    state = WizardState()
    yield state
    state.worker.shutdown()


@pytest.fixture
def page(qtbot, state) -> ExportPage:
    page = ExportPage(state)
    qtbot.addWidget(page)
    page.show()
    return page


def test_the_page_says_what_the_key_holds_for_the_finished_job(page, state, finegrain, personalized):
    assert page.key_label.isVisible() and "once the job has run" in page.key_label.text()
    state.set_outcome(finegrain)
    text = page.key_label.text()
    assert SEED in text and PSEUDONYMS in text and ALIASES not in text
    assert "passphrase" in text and "apart from the release" in text
    state.set_outcome(personalized)
    text = page.key_label.text()
    assert SEED in text and PSEUDONYMS in text and ALIASES in text


def _export(qtbot, page, state, folder) -> None:
    page.folder_edit.setText(str(folder))
    page.passphrase.first.setText(PASSPHRASE)
    page.passphrase.second.setText(PASSPHRASE)
    with qtbot.waitSignal(state.exported, timeout=TIMEOUT):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)


def test_csv_byte_order_mark_is_on_by_default_and_can_be_left_out(qtbot, page, state, finegrain, tmp_path):
    state.set_outcome(finegrain)
    assert page.bom_check.isVisible() and page.bom_check.isChecked() and page.bom_check.isEnabled()
    assert page.bom_check.text() == "UTF-8 with BOM for Excel (recommended)"
    _export(qtbot, page, state, tmp_path / "marked")
    assert (tmp_path / "marked" / "release.csv").read_bytes().startswith(codecs.BOM_UTF8)
    state.set_outcome(finegrain)
    qtbot.mouseClick(page.bom_check, Qt.MouseButton.LeftButton)
    assert not page.bom_check.isChecked()
    _export(qtbot, page, state, tmp_path / "plain")
    assert (tmp_path / "plain" / "release.csv").read_bytes().startswith(b'"pseudonym"')
    meta = json.loads((tmp_path / "plain" / "release.json").read_text(encoding="utf-8"))
    assert meta["csv"]["encoding"] == "utf-8"


def test_the_byte_order_mark_box_is_for_csv_only(page):
    page.format_combo.setCurrentIndex(page.format_combo.findData("parquet"))
    assert not page.bom_check.isEnabled()
    page.format_combo.setCurrentIndex(page.format_combo.findData("csv"))
    assert page.bom_check.isEnabled()


# --- C: Qt's xcb libraries on Linux ------------------------------------------------------------------
@pytest.fixture
def no_xcb_cursor(monkeypatch):
    """A system where the loader finds every library but libxcb-cursor."""
    monkeypatch.setattr(app, "find_library", lambda name: None if name == "xcb-cursor" else f"lib{name}.so")
    monkeypatch.setattr(app, "_loadable", lambda soname: False)


@pytest.mark.parametrize("environ", [{"DISPLAY": ":0"}, {"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"},
                                     {"WAYLAND_DISPLAY": "wayland-0", "QT_QPA_PLATFORM": "xcb"}],
                         ids=["x11", "xcb asked", "xcb asked on wayland"])
def test_missing_xcb_cursor_is_named_with_the_package_to_install(no_xcb_cursor, environ):
    message = app.xcb_problem(environ, "linux")
    assert message is not None and "\n" not in message
    assert "libxcb-cursor.so.0" in message and "libxcb-icccm" not in message.split("install")[0]
    assert "sudo apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in message


@pytest.mark.parametrize("environ, platform", [
    ({"DISPLAY": ":0"}, "win32"),
    ({"DISPLAY": ":0"}, "darwin"),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux"),
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux"),  # Qt may pick Wayland, which needs none
    ({"QT_QPA_PLATFORM": "wayland"}, "linux"),
    ({}, "linux"),  # no display at all: Qt's own message says so
], ids=["windows", "macos", "offscreen", "wayland session", "wayland asked", "no display"])
def test_no_message_where_xcb_is_not_used(no_xcb_cursor, environ, platform):
    assert app.xcb_problem(environ, platform) is None


def test_no_message_when_the_libraries_are_there(monkeypatch):
    monkeypatch.setattr(app, "find_library", lambda name: None)  # e.g. no ldconfig: the loader still finds it
    monkeypatch.setattr(app, "_loadable", lambda soname: True)
    assert app.xcb_problem({"DISPLAY": ":0"}, "linux") is None


def test_the_window_does_not_start_qt_without_xcb_cursor(no_xcb_cursor, monkeypatch, capsys):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(app.sys, "platform", "linux")
    def started(*_args):
        raise AssertionError("the window was built: Qt would have aborted")

    monkeypatch.setattr(main_window, "MainWindow", started)
    assert app.main([]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sudo apt-get install libxcb-cursor0" in err[0]
