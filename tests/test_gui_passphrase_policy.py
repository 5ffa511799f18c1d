"""The Export page refuses a weak passphrase as the CLI does (zxcvbn, the core's rule), driven by keys and clicks:
the rating and zxcvbn's feedback in words, Export disabled until "Use this weak passphrase anyway" is ticked."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.core.jobs import RunOutcome, run_job  # noqa: E402
from ppdp_desktop.core.progress import CancelToken, no_progress  # noqa: E402
from ppdp_desktop.core.release import keyfile  # noqa: E402
from ppdp_desktop.gui.pages.export_page import ExportPage  # noqa: E402
from ppdp_desktop.gui.passphrase_widget import WEAK_OVERRIDE  # noqa: E402
from ppdp_desktop.gui.state import WizardState  # noqa: E402

WEAK = "Password123!"
STRONG = "vanilla orbit kettle quorum"
ROLES = {"patient_id": "identifier", "name": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier",
         "postcode": "quasi-identifier", "diagnosis": "sensitive"}
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def outcome(qapp) -> RunOutcome:
    state = WizardState()
    path = resource_path(DEMO_DATA)
    state.set_dataset(load_table(path), path)
    state.project.roles.update(ROLES)
    return run_job(state.dataset, [state.project.settings()], no_progress, CancelToken())


@pytest.fixture
def state(qtbot, outcome) -> WizardState:
    state = WizardState()
    state.set_outcome(outcome)
    yield state
    state.worker.shutdown()


@pytest.fixture
def page(qtbot, state, tmp_path) -> ExportPage:
    page = ExportPage(state)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    qtbot.keyClicks(page.folder_edit, str(tmp_path / "release"))
    return page


def type_passphrase(qtbot, page: ExportPage, text: str) -> None:
    for edit in (page.passphrase.first, page.passphrase.second):
        edit.clear()
        qtbot.keyClicks(edit, text)


def test_a_weak_passphrase_disables_export_until_the_override_is_ticked(qtbot, page, state, tmp_path):
    fields = page.passphrase
    assert not fields.weak_check.isVisible()
    type_passphrase(qtbot, page, WEAK)
    assert fields.strength_label.text() == "weak (1 of 4)" and fields.strength_bar.value() == 1
    assert "commonly used password" in fields.feedback_label.text()
    assert "Add another word or two" in fields.feedback_label.text()
    assert "weak (1 of 4)" in fields.message.text() and WEAK_OVERRIDE in fields.message.text()
    assert fields.weak_check.isVisible() and fields.weak_check.text() == WEAK_OVERRIDE
    assert not page.export_button.isEnabled()
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)  # disabled: nothing happens
    assert not (tmp_path / "release").exists()

    qtbot.mouseClick(fields.weak_check, Qt.MouseButton.LeftButton)
    assert fields.weak_check.isChecked() and fields.message.text() == "" and page.export_button.isEnabled()
    with qtbot.waitSignal(state.exported, timeout=TIMEOUT):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    key = tmp_path / "release.ppdpkey"
    assert keyfile.open_key(key, WEAK, keyfile.read_header(key).manifest_sha256)


def test_a_strong_passphrase_needs_no_override(qtbot, page):
    type_passphrase(qtbot, page, STRONG)
    fields = page.passphrase
    assert fields.strength_label.text() in {"good (3 of 4)", "strong (4 of 4)"}
    assert not fields.weak_check.isVisible() and fields.message.text() == ""
    assert page.export_button.isEnabled()


def test_the_override_does_not_carry_over_to_another_passphrase(qtbot, page):
    fields = page.passphrase
    type_passphrase(qtbot, page, WEAK)
    qtbot.mouseClick(fields.weak_check, Qt.MouseButton.LeftButton)
    assert page.export_button.isEnabled()
    qtbot.keyClicks(fields.first, "x")  # a different passphrase: the tick is gone, and they differ
    assert not fields.weak_check.isChecked() and not page.export_button.isEnabled()
    qtbot.keyClicks(fields.second, "x")
    assert not page.export_button.isEnabled() and WEAK_OVERRIDE in fields.message.text()


def test_the_release_folders_name_counts_as_weak(qtbot, page, tmp_path):
    page.folder_edit.clear()
    qtbot.keyClicks(page.folder_edit, str(tmp_path / "mirabeau_cohort"))
    type_passphrase(qtbot, page, "mirabeau_cohort")  # strong on its own, not beside a folder of that name
    assert page.passphrase.strength_label.text() == "very weak (0 of 4)"
    assert page.passphrase.weak_check.isVisible() and not page.export_button.isEnabled()


def test_too_short_offers_no_override(qtbot, page):
    type_passphrase(qtbot, page, "xK#9q")
    assert page.passphrase.strength_label.text().startswith("too short")
    assert not page.passphrase.weak_check.isVisible() and "at least 8" in page.passphrase.message.text()
    assert not page.export_button.isEnabled()
