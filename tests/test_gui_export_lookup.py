"""The Export page and the Reverse lookup dialog, driven offscreen with pytest-qt."""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path  # noqa: E402
from ppdp_desktop.core.errors import ReleaseError  # noqa: E402
from ppdp_desktop.core.jobs import RunOutcome, run_job  # noqa: E402
from ppdp_desktop.core.progress import CancelToken, no_progress  # noqa: E402
from ppdp_desktop.core.release import passphrase_policy  # noqa: E402
from ppdp_desktop.core.release.analysis import verify_release  # noqa: E402
from ppdp_desktop.core.release.decoded import column_name  # noqa: E402
from ppdp_desktop.core.release.lookup import ONE_OF  # noqa: E402
from ppdp_desktop.core.release.package import CHECKSUMS_FILE, read_release, write_checksums, write_release  # noqa: E402
from ppdp_desktop.gui.lookup_dialog import LookupDialog  # noqa: E402
from ppdp_desktop.gui.pages import export_page  # noqa: E402
from ppdp_desktop.gui.pages.export_page import ExportPage  # noqa: E402
from ppdp_desktop.gui.passphrase_widget import PassphraseFields  # noqa: E402
from ppdp_desktop.gui.state import WizardState  # noqa: E402

PASSPHRASE = "correct horse battery staple"
ROLES = {"patient_id": "identifier", "name": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier",
         "postcode": "quasi-identifier", "diagnosis": "sensitive"}
RARE = {"Leukaemia": 3, "Lung cancer": 3, "Hypertension": 1}  # opaque codes (alias2) and one value as is
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def outcome(qapp) -> RunOutcome:
    """The personalized method on the demo data, set up through the wizard state."""
    state = WizardState()
    path = resource_path(DEMO_DATA)
    state.set_dataset(load_table(path), path)
    state.project.roles.update(ROLES)
    state.project.method = "personalized"
    state.project.value_choices = dict(RARE)
    state.project.options["personalized"] = {"graded": ["income"]}
    settings = state.project.settings()
    settings.options.taxonomy_path = str(resource_path(DEMO_TAXONOMY))
    return run_job(state.dataset, [settings], no_progress, CancelToken())


@pytest.fixture
def state(qtbot, outcome) -> WizardState:
    state = WizardState()
    state.set_outcome(outcome)
    yield state
    state.worker.shutdown()


@pytest.fixture
def page(qtbot, state) -> ExportPage:
    page = ExportPage(state)
    qtbot.addWidget(page)
    return page


@pytest.fixture(scope="module")
def release(outcome, tmp_path_factory):
    """A release and its key written once for the lookup tests."""
    base = tmp_path_factory.mktemp("lookup")
    folder, key = base / "release", base / "release.ppdpkey"
    write_release(outcome.main, folder, key_path=key, passphrase=PASSPHRASE)
    return folder, key


def fill(page: ExportPage, folder, key=None, passphrase: str = PASSPHRASE, repeat: str | None = None) -> None:
    page.folder_edit.setText(str(folder))
    if key is not None:
        page.key_edit.setText(str(key))
    page.passphrase.first.setText(passphrase)
    page.passphrase.second.setText(passphrase if repeat is None else repeat)


# --- passphrase fields ----------------------------------------------------------------------------
def test_passphrase_fields_validity_strength_and_messages(qtbot):
    fields = PassphraseFields()
    qtbot.addWidget(fields)
    assert fields.passphrase() is None and fields.message.text() == ""
    assert fields.first.echoMode() == fields.first.EchoMode.Password
    with qtbot.waitSignal(fields.validity_changed) as blocker:
        fields.first.setText("short")
        assert "at least 8" in fields.message.text() and fields.strength_label.text().startswith("too short")
        fields.first.setText(PASSPHRASE)
        assert fields.strength_label.text() in {"good (3 of 4)", "strong (4 of 4)"} and fields.strength_bar.value() >= 3
        assert "again" in fields.message.text()
        fields.second.setText(PASSPHRASE[:-1] + "X")
        assert "differ" in fields.message.text() and fields.passphrase() is None
        fields.second.setText(PASSPHRASE)
    assert blocker.args == [True]
    assert fields.passphrase() == PASSPHRASE and fields.message.text() == ""
    seen = []
    fields.validity_changed.connect(seen.append)
    fields.clear()
    assert seen == [False] and fields.passphrase() is None and fields.strength_label.text() == ""


def test_passphrase_strength_word_comes_from_core(qtbot):
    fields = PassphraseFields()
    qtbot.addWidget(fields)
    fields.first.setText("whatever")
    found = passphrase_policy.assess("whatever")
    assert fields.strength_label.text() == f"{found.word} ({found.score} of 4)"
    assert fields.strength_bar.value() == found.score and fields.feedback_label.text() == found.feedback() != ""


# --- export -----------------------------------------------------------------------------------------
def test_export_writes_a_verifiable_release_and_key(qtbot, page, state, tmp_path):
    assert page.title == "Export" and not page.is_complete()
    assert page.format_combo.count() == 4 and page.format_combo.currentText() == "CSV (UTF-8)"
    folder = tmp_path / "release"
    fill(page, folder)
    assert page.key_edit.text() == str(tmp_path / "release.ppdpkey")  # proposed beside the folder
    assert page.export_button.isEnabled()
    with qtbot.waitSignal(state.exported, timeout=TIMEOUT) as blocker, qtbot.waitSignal(page.complete_changed):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert blocker.args == [str(folder)]
    key = tmp_path / "release.ppdpkey"
    assert folder.is_dir() and key.is_file()
    lines = verify_release(read_release(folder))
    assert lines[0].startswith("checksums")
    assert str(folder) in page.summary_label.text() and str(key) in page.summary_label.text()
    assert "apart from the release" in page.summary_label.text()
    assert page.is_complete() and page.error_label.text() == ""
    assert state.project.release_folder == str(folder) and state.project.key_path == str(key)
    assert PASSPHRASE not in json.dumps(state.project.to_json())
    assert page.passphrase.first.text() == "" and not page.export_button.isEnabled()  # passphrase not kept
    state.set_outcome(state.outcome)  # a new outcome must be exported again
    assert not page.is_complete() and page.summary_label.text() == ""


def test_key_inside_the_release_folder_is_refused(qtbot, page, state, tmp_path):
    folder = tmp_path / "release"
    fill(page, folder, folder / "release.ppdpkey")
    assert page.export_button.isEnabled()
    started = []
    state.worker.started.connect(started.append)
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert "inside the release folder" in page.error_label.text()
    assert "--" not in page.error_label.text()  # worded for the page, not the command line
    assert "c0392b" in page.error_label.styleSheet()
    assert started == [] and not folder.exists() and not page.is_complete()
    page.key_edit.setText(str(tmp_path / "elsewhere.ppdpkey"))  # editing clears the message
    assert page.error_label.text() == ""


def test_existing_release_refused_unless_overwrite(qtbot, page, state, tmp_path):
    folder = tmp_path / "release"
    folder.mkdir()
    fill(page, folder)
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert "already exists" in page.error_label.text() and "Overwrite" in page.error_label.text()
    page.overwrite_check.setChecked(True)
    with qtbot.waitSignal(state.exported, timeout=TIMEOUT):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert (folder / "release.json").is_file() and (tmp_path / "release.ppdpkey").is_file()


def test_export_disabled_until_everything_is_ready(qtbot, state, tmp_path):
    empty = WizardState()
    page = ExportPage(empty)
    qtbot.addWidget(page)
    fill(page, tmp_path / "release")
    assert not page.export_button.isEnabled()  # no outcome yet
    empty.set_outcome(state.outcome)
    assert page.export_button.isEnabled()
    page.passphrase.second.setText(PASSPHRASE + "!")
    assert not page.export_button.isEnabled()  # mismatched passphrases
    assert "differ" in page.passphrase.message.text()
    fill(page, tmp_path / "release", passphrase="short")
    assert not page.export_button.isEnabled()  # too short
    fill(page, tmp_path / "release")
    page.key_edit.setText("")
    assert not page.export_button.isEnabled()  # no key path
    assert not page.export()


def test_typed_key_path_is_kept_when_the_folder_changes(qtbot, page, tmp_path):
    page.folder_edit.setText(str(tmp_path / "a"))
    assert page.key_edit.text() == str(tmp_path / "a.ppdpkey")
    page.folder_edit.setText(str(tmp_path / "b"))
    assert page.key_edit.text() == str(tmp_path / "b.ppdpkey")  # the proposal follows the folder
    page.key_edit.setText(str(tmp_path / "mine.ppdpkey"))
    page.folder_edit.setText(str(tmp_path / "c"))
    assert page.key_edit.text() == str(tmp_path / "mine.ppdpkey")


def test_refresh_reads_the_project_paths(qtbot, state, tmp_path):
    state.project.release_folder = str(tmp_path / "r")
    state.project.key_path = str(tmp_path / "k.ppdpkey")
    page = ExportPage(state)
    qtbot.addWidget(page)
    assert page.folder_edit.text() == str(tmp_path / "r") and page.key_edit.text() == str(tmp_path / "k.ppdpkey")
    assert state.project.release_folder == str(tmp_path / "r") and state.project.key_path == str(tmp_path / "k.ppdpkey")
    page.folder_edit.setText(str(tmp_path / "typed"))  # the project follows the fields
    assert state.project.release_folder == str(tmp_path / "typed")
    state.project.release_folder, state.project.key_path = str(tmp_path / "opened"), None  # a project opened
    page.refresh()
    assert page.folder_edit.text() == str(tmp_path / "opened")
    assert page.key_edit.text() == str(tmp_path / "opened.ppdpkey")


def test_export_failure_is_inline_and_a_non_modal_box(qtbot, page, state, tmp_path, monkeypatch):
    def failing(*args, **kwargs):
        raise ReleaseError("The disk is full.")

    monkeypatch.setattr(export_page, "export_job", failing)
    fill(page, tmp_path / "release")
    with qtbot.waitSignal(state.worker.errored, timeout=TIMEOUT):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert "The disk is full." in page.error_label.text()
    assert page.error_box is not None and page.error_box.isVisible() and not page.error_box.isModal()
    assert "The disk is full." in page.error_box.text()
    assert not page.is_complete() and page.export_button.isEnabled()  # the user can try again
    page.error_box.close()


# --- reverse lookup ------------------------------------------------------------------------------------
def open_dialog(qtbot, dialog: LookupDialog, passphrase: str) -> None:
    dialog.passphrase_edit.setText(passphrase)
    qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.open_button.isEnabled(), timeout=TIMEOUT)


@pytest.fixture
def dialog(qtbot, state, release) -> LookupDialog:
    folder, key = release
    dialog = LookupDialog(state.worker, str(folder), str(key))
    qtbot.addWidget(dialog)
    return dialog


def test_lookup_decodes_values_and_pseudonyms(qtbot, dialog, release, outcome):
    assert not dialog.tabs.isEnabled()
    open_dialog(qtbot, dialog, PASSPHRASE)
    assert dialog.ring is not None and dialog.tabs.isEnabled(), dialog.message.text()
    assert dialog.passphrase_edit.text() == ""
    items = [dialog.attribute_combo.itemText(i) for i in range(dialog.attribute_combo.count())]
    assert items == ["diagnosis", "income"]
    aliases = dialog.ring.payload["aliases"]["diagnosis"]
    code, original = next((a, v) for a, v in aliases["alias2"].items() if v == "Leukaemia")
    dialog.attribute_combo.setCurrentText("diagnosis")
    dialog.value_edit.setText(code)
    dialog.decode_value()
    assert dialog.value_result.text() == "Leukaemia"
    dialog.value_edit.setText("Cardiovascular")  # a shared generalization (alias1)
    dialog.decode_value()
    assert dialog.value_result.text().startswith("one of: ") and "Stroke" in dialog.value_result.text()
    dialog.value_edit.setText("No such value")
    dialog.decode_value()
    assert "neither a value nor an alias" in dialog.message.text() and "c0392b" in dialog.message.styleSheet()
    table = read_release(release[0]).table
    pseudonym = table["pseudonym"].iloc[0]
    dialog.pseudonym_edit.setText(pseudonym)
    dialog.decode_pseudonym()
    shown = {dialog.pseudonym_table.item(r, 0).text(): dialog.pseudonym_table.item(r, 1).text()
             for r in range(dialog.pseudonym_table.rowCount())}
    row = outcome.main.dataset.frame.set_index("patient_id").loc[shown["patient_id"]]
    assert shown["name"] == row["name"] and shown["diagnosis"] == row["diagnosis"]
    what = {dialog.pseudonym_table.item(r, 0).text(): dialog.pseudonym_table.item(r, 2).text()
            for r in range(dialog.pseudonym_table.rowCount())}
    assert what["diagnosis"] == "original, decoded with the key" and what["name"] == "original, from the key"
    assert dialog.message.text() == ""
    dialog.pseudonym_edit.setText("Rnope")
    dialog.decode_pseudonym()
    assert "not in this release" in dialog.message.text() and dialog.pseudonym_table.rowCount() == 0


def test_lookup_decodes_a_results_file(qtbot, dialog, release, tmp_path):
    open_dialog(qtbot, dialog, PASSPHRASE)
    table = read_release(release[0]).table.head(50)
    source, out = tmp_path / "results.csv", tmp_path / "decoded.csv"
    table.to_csv(source, index=False)
    dialog.file_edit.setText(str(source))
    dialog.out_edit.setText(str(out))
    qtbot.mouseClick(dialog.file_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.file_button.isEnabled(), timeout=TIMEOUT)
    assert "Decoded 50 rows" in dialog.file_result.text(), dialog.message.text()
    decoded = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert "diagnosis [original, decoded with the key]" in decoded.columns  # each header says what it is
    assert "header says what it is" in dialog.file_result.text()
    decoded = decoded.rename(columns=column_name)
    assert {"patient_id", "name"} <= set(decoded.columns) and len(decoded) == 50
    assert not decoded["diagnosis"].str.contains(ONE_OF, regex=False).any()  # exact via the pseudonyms
    qtbot.mouseClick(dialog.file_button, Qt.MouseButton.LeftButton)  # the output exists now
    assert "already exists" in dialog.message.text()


def test_wrong_passphrase_is_inline_and_the_dialog_stays_usable(qtbot, dialog):
    open_dialog(qtbot, dialog, "not the passphrase")
    assert "Wrong passphrase" in dialog.message.text() and "c0392b" in dialog.message.styleSheet()
    assert dialog.ring is None and not dialog.tabs.isEnabled() and dialog.isEnabled()
    open_dialog(qtbot, dialog, PASSPHRASE)
    assert dialog.ring is not None and dialog.message.text() == ""


def test_lookup_without_worker_and_bad_inputs(qtbot, release, tmp_path):
    folder, key = release
    dialog = LookupDialog()
    qtbot.addWidget(dialog)
    dialog.open_key()
    assert "Enter the release folder" in dialog.message.text()
    dialog.folder_edit.setText(str(tmp_path))
    dialog.key_edit.setText(str(key))
    dialog.passphrase_edit.setText(PASSPHRASE)
    dialog.open_key()
    assert "is not a release" in dialog.message.text()
    dialog.folder_edit.setText(str(folder))
    dialog.key_edit.setText(str(folder / "release.json"))
    dialog.passphrase_edit.setText(PASSPHRASE)
    dialog.open_key()
    assert "not a PPDP key file" in dialog.message.text()
    dialog.key_edit.setText(str(key))
    dialog.passphrase_edit.setText(PASSPHRASE)
    dialog.open_key()  # direct call (no worker)
    assert dialog.ring is not None and dialog.tabs.isEnabled()
    dialog.attribute_combo.setCurrentText("income")
    dialog.value_edit.setText("1.2")
    dialog.decode_value()
    assert dialog.value_result.text() != "" and dialog.message.text() == ""


def test_another_releases_key_is_refused_inline(qtbot, release, tmp_path):
    folder, key = release
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    meta = other / "release.json"
    meta.write_text(meta.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # another manifest
    (other / CHECKSUMS_FILE).unlink()
    write_checksums(other)
    dialog = LookupDialog(None, str(other), str(key))
    qtbot.addWidget(dialog)
    dialog.passphrase_edit.setText(PASSPHRASE)
    dialog.open_key()
    assert "belongs to another release" in dialog.message.text() and dialog.ring is None


def test_enter_in_a_field_runs_its_action_only(qtbot, monkeypatch, tmp_path):
    """Enter in the passphrase or pseudonym field must not also open a folder chooser (issue 15, point 7)."""
    from ppdp_desktop.gui import lookup_dialog

    opened = []

    class RecordingFileDialog:  # a file chooser cannot be answered offscreen: record that one would open
        @staticmethod
        def getExistingDirectory(*args, **kwargs):
            opened.append("folder")
            return ""

        @staticmethod
        def getOpenFileName(*args, **kwargs):
            opened.append("open")
            return "", ""

    monkeypatch.setattr(lookup_dialog, "QFileDialog", RecordingFileDialog)
    dialog = LookupDialog(release_folder=str(tmp_path / "none"), key_path=str(tmp_path / "none.ppdpkey"))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.passphrase_edit.setFocus()
    qtbot.keyClicks(dialog.passphrase_edit, "wrong")
    qtbot.keyClick(dialog.passphrase_edit, Qt.Key.Key_Return)
    assert opened == []
    assert dialog.message.text()  # the lookup ran and said what is wrong
    dialog.tabs.setEnabled(True)
    dialog.tabs.setCurrentIndex(1)
    dialog.pseudonym_edit.setFocus()
    qtbot.keyClicks(dialog.pseudonym_edit, "R0000")
    qtbot.keyClick(dialog.pseudonym_edit, Qt.Key.Key_Enter)
    assert opened == []
