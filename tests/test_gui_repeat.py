"""Repeated releases in the window (issue 30), driven as a person does: the Run page's "Repeated releases" box
(the project's name in the ledger, who a patient is, the custodian secret and its passphrase, the budget), the
sentences after the run, the export recorded in the release ledger, a wrong passphrase and a budget refusal.

Real files throughout: a small CSV of the demo patients, a project file, this test's own application-data folder
(PPDP_DATA_DIR: the ledger and the secrets), the real window offscreen."""
from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, QSettings, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402
from ppdp_desktop.core.release.custodian_secret import create_secret, secret_path  # noqa: E402
from ppdp_desktop.core.repeat.ledger import Ledger  # noqa: E402
from ppdp_desktop.gui.main_window import MainWindow  # noqa: E402
from ppdp_desktop.gui.pages import run_page  # noqa: E402
from ppdp_desktop.gui.repeat_box import FIRST_FRESH, FRESH  # noqa: E402

PASSPHRASE = "correct horse battery staple"
PROJECT = "monthly"
ROLES = {"patient_id": "identifier", "name": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier",
         "postcode": "quasi-identifier", "diagnosis": "sensitive"}
RUN, REPORT, EXPORT = 4, 5, 6
TIMEOUT = 30_000
N = 300


@pytest.fixture(autouse=True)
def own_data_dir(tmp_path, monkeypatch):
    """This test's own ledger and custodian secrets."""
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "appdata"))


@pytest.fixture
def project_file(tmp_path):
    """A project (fine-grain on the demo patients' first records) saved as ``monthly.json`` beside its data."""
    data = tmp_path / "patients.csv"
    pd.read_csv(resource_path(DEMO_DATA), dtype=str).head(N).to_csv(data, index=False)
    path = tmp_path / f"{PROJECT}.json"
    Project(data_path=str(data), roles=dict(ROLES), method="finegrain").save(path)
    return path


def open_project(window, qtbot, path) -> None:
    assert window.open_project(path)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=TIMEOUT)


def click_step(window, qtbot, index: int) -> None:
    """Click step ``index`` in the list of steps, as a person does."""
    steps = window.steps
    qtbot.mouseClick(steps.viewport(), Qt.MouseButton.LeftButton, pos=steps.visualItemRect(steps.item(index)).center())
    assert window.stack.currentIndex() == index


def wait_idle(window, qtbot) -> None:
    qtbot.waitUntil(lambda: not window.state.worker.is_running(), timeout=TIMEOUT)


def run(window, qtbot) -> None:
    """Press Run and wait for the run to end (finished or refused)."""
    page = window.pages[RUN]
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    wait_idle(window, qtbot)


def type_into(qtbot, edit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def export(window, qtbot, folder) -> None:
    click_step(window, qtbot, EXPORT)
    page = window.pages[EXPORT]
    type_into(qtbot, page.folder_edit, str(folder))
    type_into(qtbot, page.passphrase.first, PASSPHRASE)
    type_into(qtbot, page.passphrase.second, PASSPHRASE)
    assert page.export_button.isEnabled()
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: f"Release written to {folder};" in page.summary_label.text(), timeout=TIMEOUT)


def ledger_rows(project: str = PROJECT):
    with Ledger() as ledger:
        return ledger.releases(project)


def shown_error(page) -> QMessageBox:
    return page.error_box


def test_first_release_makes_the_secret_and_its_ledger_row_and_the_second_is_release_2(window, qtbot, project_file,
                                                                                       tmp_path):
    open_project(window, qtbot, project_file)
    click_step(window, qtbot, RUN)
    page, box = window.pages[RUN], window.pages[RUN].repeat_box
    wait_idle(window, qtbot)  # no secret yet, nothing to open: the run starts as the page opens
    assert box.project_edit.text() == PROJECT and window.state.project.project_id is None  # the project file's name
    assert box.identity_label.text() == "their identifier columns (patient_id, name)"
    assert "No custodian secret for this project on this computer yet" in box.secret_label.text()
    assert not box.passphrase_edit.isVisible() and box.new_passphrase.isVisible() and not box.reason_edit.isVisible()
    assert FIRST_FRESH in box.note_label.text() and "this run would be its first" in box.note_label.text()
    assert "This is release 1 of project 'monthly'" in page.repeat_label.text()
    assert not window.state.outcome.main.repeat.persistent  # fresh draws, as the box said
    assert not secret_path(PROJECT).exists()

    type_into(qtbot, box.new_passphrase.first, PASSPHRASE)
    type_into(qtbot, box.new_passphrase.second, PASSPHRASE)
    assert "Run makes the project's custodian secret" in box.note_label.text()
    run(window, qtbot)
    assert secret_path(PROJECT).is_file()
    repeat = window.state.outcome.main.repeat
    assert repeat.persistent and repeat.project_id == PROJECT and repeat.cumulative.ordinal == 1
    assert page.repeat_label.text().startswith("\n".join(repeat.sentences()))
    assert "Made the custodian secret of project 'monthly' at " in page.repeat_label.text()
    assert "This is release 1 of project 'monthly'" in page.repeat_label.text()
    assert box.passphrase_edit.isVisible() and "kept on this computer" in box.secret_label.text()
    click_step(window, qtbot, REPORT)
    brief = window.pages[REPORT].brief_label.text()
    assert "Among the project&#x27;s releases" in brief or "Among the project's releases" in brief
    assert "release 1 of project" in brief

    export(window, qtbot, tmp_path / "release-1")
    rows = ledger_rows()
    assert [(r.ordinal, r.persistent, r.folder) for r in rows] == [(1, True, str((tmp_path / "release-1").resolve()))]
    block = json.loads((tmp_path / "release-1" / "release.json").read_text(encoding="utf-8"))["repeated_release"]
    assert block["project"] == PROJECT and block["persistent_randomness"] is True
    assert "as release 1 of project 'monthly'" in window.pages[EXPORT].summary_label.text()
    assert box.passphrase_edit.text() == "" and box.new_passphrase.first.text() == ""  # cleared once exported

    # next month: the secret is there, so the page waits for its passphrase; release 2 draws as release 1 did
    window.state.set_outcome(None)
    click_step(window, qtbot, RUN)
    assert not window.state.worker.is_running() and window.state.outcome is None
    assert "Type the passphrase of the custodian secret of project 'monthly'" in page.stage_label.text()
    assert "this run would be release 2" in box.note_label.text()
    type_into(qtbot, box.passphrase_edit, PASSPHRASE)
    run(window, qtbot)
    second = window.state.outcome.main.repeat
    assert second.persistent and second.cumulative.ordinal == 2
    assert "This is release 2 of project 'monthly', after one earlier release" in page.repeat_label.text()
    assert f"{N} records are unchanged, drawn as before" in page.repeat_label.text()
    first = pd.read_csv(tmp_path / "release-1" / "release.csv", dtype=str)
    again = window.state.outcome.main.table
    assert sorted(first["diagnosis"]) == sorted(again["diagnosis"].astype(str))  # the same released values


def test_a_wrong_passphrase_shows_the_dialog_and_runs_nothing(window, qtbot, project_file, monkeypatch):
    create_secret(PROJECT, PASSPHRASE)
    calls = []

    def counted(*args):
        calls.append(args)
        return run_page.run_job(*args)

    open_project(window, qtbot, project_file)
    page = window.pages[RUN]
    page._job = counted
    click_step(window, qtbot, RUN)
    assert not window.state.worker.is_running() and window.state.outcome is None  # waits for the passphrase
    assert page.repeat_box.passphrase_edit.isVisible() and page.repeat_box.passphrase_edit.hasFocus()
    type_into(qtbot, page.repeat_box.passphrase_edit, "not the passphrase")
    run(window, qtbot)
    qtbot.waitUntil(lambda: shown_error(page) is not None and shown_error(page).isVisible(), timeout=TIMEOUT)
    box = shown_error(page)
    assert box.windowTitle() == run_page.SECRET_REFUSED
    assert box.text().startswith("Wrong passphrase") and "Nothing was run" in box.text()
    assert calls == [] and window.state.outcome is None and not window.next.isEnabled()
    box.close()
    type_into(qtbot, page.repeat_box.passphrase_edit, PASSPHRASE)  # the right one runs
    run(window, qtbot)
    assert len(calls) == 1 and window.state.outcome.main.repeat.persistent


def test_a_budget_refusal_shows_the_dialog_and_nothing_is_written(window, qtbot, project_file, tmp_path):
    open_project(window, qtbot, project_file)
    click_step(window, qtbot, RUN)
    wait_idle(window, qtbot)
    page, box = window.pages[RUN], window.pages[RUN].repeat_box
    assert window.state.outcome is not None and box.budget_spin.text() == "off"
    box.budget_spin.setFocus()
    box.budget_spin.selectAll()
    qtbot.keyClicks(box.budget_spin, "0.5")
    assert box.budget() == 0.5 and window.state.project.budget == 0.5
    assert window.state.outcome is None  # the result of the run before no longer matches the budget
    run(window, qtbot)
    qtbot.waitUntil(lambda: shown_error(page) is not None and shown_error(page).isVisible(), timeout=TIMEOUT)
    dialog = shown_error(page)
    assert dialog.windowTitle() == run_page.OVER_BUDGET
    assert "above the project's budget of 0.5" in dialog.text()
    assert "'Budget' in 'Repeated releases' on the Run page (step 5)" in dialog.text() and "--" not in dialog.text()
    assert window.state.outcome is None and not window.next.isEnabled()
    assert not (tmp_path / "appdata" / "ledger.sqlite3").exists() or ledger_rows() == []  # nothing written
    assert box.reason_edit.isVisible()  # now needed: a reason lets it go past
    dialog.close()
    type_into(qtbot, box.reason_edit, "approved by the data protection officer")
    run(window, qtbot)
    assert window.state.outcome is not None
    assert "above the project's budget of 0.5" in page.repeat_label.text()
    export(window, qtbot, tmp_path / "release")
    (row,) = ledger_rows()
    assert row.budget == 0.5 and row.override_reason == "approved by the data protection officer"


def _wheel(widget, steps: int) -> None:
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_project_file_keeps_the_name_and_the_budget(window, qtbot, project_file, tmp_path):
    open_project(window, qtbot, project_file)
    click_step(window, qtbot, RUN)
    wait_idle(window, qtbot)
    box = window.pages[RUN].repeat_box
    window.next.setFocus()
    _wheel(box.budget_spin, 3)  # a stray wheel changes nothing
    assert box.budget() is None and window.state.project.budget is None
    type_into(qtbot, box.project_edit, "cardiology monthly")
    assert window.state.project.project_id == "cardiology monthly"
    qtbot.mouseClick(box.budget_spin.lineEdit(), Qt.MouseButton.LeftButton)
    box.budget_spin.selectAll()
    qtbot.keyClicks(box.budget_spin, "4")
    assert window.state.project.budget == 4.0
    saved = tmp_path / "saved.json"
    assert window.save_project(saved)
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["project_id"] == "cardiology monthly" and data["budget"] == 4.0
    other = MainWindow(QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(other)
    other.show()
    try:
        open_project(other, qtbot, saved)
        other.pages[RUN].refresh()
        shown = other.pages[RUN].repeat_box
        assert shown.project_id() == "cardiology monthly" and shown.budget() == 4.0
    finally:
        other.state.worker.shutdown()
        other.pages[1].risk.shutdown()


def test_without_a_project_file_the_name_run_is_kept_in_the_project(window, qtbot, tmp_path):
    """The data file's name is the project's until a project file is saved: it is written into the project at the
    run, so that saving it under another name later does not start a new project in the ledger."""
    data = tmp_path / "ward.csv"
    pd.read_csv(resource_path(DEMO_DATA), dtype=str).head(200).to_csv(data, index=False)
    window.state.project = Project(roles=dict(ROLES), method="finegrain")
    window.load_data(data, {})
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=TIMEOUT)
    window.state.project.roles.update(ROLES)
    click_step(window, qtbot, RUN)
    wait_idle(window, qtbot)
    assert window.pages[RUN].repeat_box.project_id() == "ward"
    assert window.state.outcome.main.repeat.project_id == "ward" and window.state.project.project_id == "ward"
    saved = tmp_path / "renamed.json"
    assert window.save_project(saved)
    assert json.loads(saved.read_text(encoding="utf-8"))["project_id"] == "ward"


def test_without_a_passphrase_the_run_is_fresh_and_the_export_pages_passphrase_opens_the_secret(window, qtbot,
                                                                                                 project_file):
    create_secret(PROJECT, PASSPHRASE)
    open_project(window, qtbot, project_file)
    click_step(window, qtbot, RUN)
    page, box = window.pages[RUN], window.pages[RUN].repeat_box
    assert window.state.outcome is None and FRESH in box.note_label.text()
    run(window, qtbot)  # Run with the field empty: it runs, with fresh draws, and says so
    assert window.state.outcome is not None and not window.state.outcome.main.repeat.persistent
    assert "This run drew without the project's custodian secret (fresh draws): type its passphrase" \
        in page.repeat_label.text()
    click_step(window, qtbot, EXPORT)
    export_page = window.pages[EXPORT]
    type_into(qtbot, export_page.passphrase.first, PASSPHRASE)
    type_into(qtbot, export_page.passphrase.second, PASSPHRASE)
    click_step(window, qtbot, RUN)
    assert "(the one typed on the export page)" in box.note_label.text()
    run(window, qtbot)
    assert window.state.outcome.main.repeat.persistent  # the key's passphrase opened the project's secret
    assert "fresh draws" not in page.repeat_label.text()


def test_a_new_passphrase_that_cannot_seal_is_refused_before_anything_runs(qtbot, tmp_path):
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.gui.pages.run_page import RunPage
    from ppdp_desktop.gui.state import WizardState

    state = WizardState()
    state.set_dataset(Dataset(pd.read_csv(resource_path(DEMO_DATA), dtype=str).head(50)), None)
    state.project.roles.update(ROLES)
    page = RunPage(state)
    qtbot.addWidget(page)
    page.show()
    box = page.repeat_box
    assert box.project_id() == "project" and box.new_passphrase.isVisible()
    type_into(qtbot, box.new_passphrase.first, "password1")
    type_into(qtbot, box.new_passphrase.second, "password1")
    assert "Run waits for a passphrase that can seal the secret" in box.note_label.text()
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    assert page.error_box is not None and page.error_box.windowTitle() == run_page.CANNOT_RUN
    assert "The new custodian secret's passphrase (Repeated releases): The passphrase is" in page.error_box.text()
    assert not state.worker.is_running() and state.outcome is None and not secret_path("project").exists()
    state.worker.shutdown()


def test_exporting_one_run_twice_is_said_before_it_is_done(window, qtbot, project_file, tmp_path):
    """The ledger records each export as a release (ordinals 1 and 2, the same records): the window says so before
    the second export (the epsilons are not added twice: the same draws count once)."""
    open_project(window, qtbot, project_file)
    click_step(window, qtbot, RUN)
    wait_idle(window, qtbot)
    export(window, qtbot, tmp_path / "first")
    page = window.pages[EXPORT]
    assert not page.again_label.isVisible()
    type_into(qtbot, page.folder_edit, str(tmp_path / "again"))
    assert page.again_label.isVisible() and "This run is exported already" in page.again_label.text()
    export(window, qtbot, tmp_path / "again")
    rows = ledger_rows()
    assert [r.ordinal for r in rows] == [1, 2]
    assert rows[0].records().draws.tolist() == rows[1].records().draws.tolist()


def test_a_streamed_run_says_its_release_number_and_its_export_is_recorded(window, qtbot, project_file, tmp_path,
                                                                            monkeypatch):
    """A file larger than memory is streamed: the Run page still says which release of the project it is, and the
    export (which streams the whole file again) records it in the ledger."""
    monkeypatch.setenv("PPDP_AVAILABLE_MEMORY", "1000")  # as if the file took more than a third of it
    open_project(window, qtbot, project_file)
    click_step(window, qtbot, RUN)
    box = window.pages[RUN].repeat_box
    wait_idle(window, qtbot)
    type_into(qtbot, box.new_passphrase.first, PASSPHRASE)
    type_into(qtbot, box.new_passphrase.second, PASSPHRASE)
    run(window, qtbot)
    main = window.state.outcome.main
    assert type(main).__name__ == "SampledAnonymization" and main.repeat is not None and main.repeat.persistent
    assert "This is release 1 of project 'monthly'" in window.pages[RUN].repeat_label.text()
    export(window, qtbot, tmp_path / "streamed")
    (row,) = ledger_rows()
    assert row.persistent and row.n_records == N


def test_without_an_identifier_column_the_box_names_the_columns_released_unchanged(qtbot):
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.gui.pages.run_page import RunPage
    from ppdp_desktop.gui.state import WizardState

    state = WizardState()
    frame = pd.read_csv(resource_path(DEMO_DATA), dtype=str).head(20)[["age", "sex", "postcode", "diagnosis"]]
    state.set_dataset(Dataset(frame), None)
    state.project.roles.update({"diagnosis": "sensitive", "age": "quasi-identifier"})
    page = RunPage(state)
    qtbot.addWidget(page)
    assert page.repeat_box.identity_label.text() == (
        "the columns released unchanged (no identifier column is tagged: two patients alike in all of them count as "
        "one): age, sex, postcode")
    state.worker.shutdown()


def _pseudonyms(outcome) -> dict[str, str]:
    main = outcome.main
    return dict(zip(main.pseudonym_map["patient_id"], main.table[main.pseudonym_column], strict=True))


def test_stable_pseudonyms_are_the_projects_choice_kept_in_the_ledger(window, qtbot, project_file, tmp_path):
    create_secret(PROJECT, PASSPHRASE)
    open_project(window, qtbot, project_file)
    click_step(window, qtbot, RUN)
    box = window.pages[RUN].repeat_box
    assert box.stable_check.isEnabled() and not box.stable_check.isChecked()  # fresh, unless the project chose
    type_into(qtbot, box.passphrase_edit, PASSPHRASE)
    qtbot.mouseClick(box.stable_check, Qt.MouseButton.LeftButton, pos=QPoint(8, box.stable_check.height() // 2))
    assert box.stable_check.isChecked()
    run(window, qtbot)
    assert window.state.outcome.main.repeat.stable_pseudonyms
    first = _pseudonyms(window.state.outcome)
    export(window, qtbot, tmp_path / "release")
    assert ledger_rows()[0].stable_pseudonyms
    other = MainWindow(QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(other)
    other.show()
    try:  # next month: the choice comes back from the ledger, and each patient keeps their pseudonym
        open_project(other, qtbot, project_file)
        click_step(other, qtbot, RUN)
        shown = other.pages[RUN].repeat_box
        assert shown.stable_check.isChecked()
        type_into(qtbot, shown.passphrase_edit, PASSPHRASE)
        run(other, qtbot)
        assert _pseudonyms(other.state.outcome) == first
    finally:
        other.state.worker.shutdown()
        other.pages[1].risk.shutdown()
