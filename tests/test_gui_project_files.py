"""A project belongs to its data file (issue 31, point 3): after another file, Ctrl+S asks where instead of writing
over the first file's project; saving over another data file's project asks first; Save as proposes a name made
from the data file in use; Open project never advises a save that would write over the project being opened."""
from __future__ import annotations

import re
import shutil

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402
from tests.clinical_data import write_clinical_xlsx  # noqa: E402
from tests.conftest import shared_adult  # noqa: E402
from tests.window_files import Questions, dialogs, loaded, menu_action, open_data, press  # noqa: E402

Button = QMessageBox.StandardButton
ROLES_STEP = 1
SAVE_AS = (Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)


@pytest.fixture
def files(tmp_path):
    """adult.csv and the clinical export, side by side in a folder of the user's."""
    adult = tmp_path / "adult.csv"
    shutil.copy(shared_adult(), adult)
    return adult, write_clinical_xlsx(tmp_path / "clinical.xlsx", n=400)


def _saved_adult_project(qtbot, window, chooser, adult):
    """adult.csv opened and its project saved with Ctrl+S as adult.ppdp.json (the name proposed)."""
    open_data(qtbot, window, chooser, adult)
    assert "untitled project" in window.windowTitle()
    chooser.path = str(adult.with_name("adult.ppdp.json"))
    press(qtbot, window, Qt.Key.Key_S)
    assert chooser.proposed[-1] == chooser.path  # a name made from the data file, beside it
    assert window.project_path == chooser.path and window.windowTitle().startswith("adult.ppdp.json")
    return adult.with_name("adult.ppdp.json")


def test_ctrl_s_after_another_file_asks_where_and_keeps_the_first_files_project(window, qtbot, files, monkeypatch):
    adult, clinical = files
    chooser = dialogs(monkeypatch)
    questions = Questions(monkeypatch, Button.Yes)
    project = _saved_adult_project(qtbot, window, chooser, adult)
    open_data(qtbot, window, chooser, clinical)
    assert window.project_path is None and "untitled project" in window.windowTitle()
    asked = len(chooser.proposed)
    chooser.path = ""  # the user closes the dialog without choosing
    press(qtbot, window, Qt.Key.Key_S)
    assert len(chooser.proposed) == asked + 1, "Ctrl+S wrote without asking where"
    assert chooser.proposed[-1] == str(clinical.with_name("clinical.ppdp.json"))  # from the new file, not adult's
    assert Project.load(project).data_path == str(adult)  # adult's project is untouched
    chooser.path = str(clinical.with_name("clinical.ppdp.json"))
    press(qtbot, window, Qt.Key.Key_S)
    assert Project.load(clinical.with_name("clinical.ppdp.json")).data_path == str(clinical)
    assert Project.load(project).data_path == str(adult) and questions.asked == []


def test_saving_over_another_data_files_project_asks_first(window, qtbot, files, monkeypatch):
    adult, clinical = files
    chooser = dialogs(monkeypatch)
    questions = Questions(monkeypatch, Button.Cancel)
    project = _saved_adult_project(qtbot, window, chooser, adult)
    before = project.read_text(encoding="utf-8")
    open_data(qtbot, window, chooser, clinical)
    chooser.path = str(project)  # Save as, and the user picks adult's project
    press(qtbot, window, *SAVE_AS)
    assert chooser.proposed[-1] == str(clinical.with_name("clinical.ppdp.json"))
    assert len(questions.asked) == 1
    title, text = questions.asked[0]
    assert "adult.ppdp.json is the project of adult.csv" in text and "clinical.xlsx" in text
    assert project.read_text(encoding="utf-8") == before and window.project_path is None  # Cancel kept it
    questions.answer = Button.Save
    press(qtbot, window, *SAVE_AS)
    assert len(questions.asked) == 2 and Project.load(project).data_path == str(clinical)
    assert window.project_path == str(project)
    press(qtbot, window, Qt.Key.Key_S)  # now clinical's own project: Ctrl+S writes it without a question
    assert len(questions.asked) == 2


def _advice(text: str) -> list[str]:
    """The menu entries a question tells the user to use."""
    return re.findall(r"File > Save project(?: as…)?", text)


def test_open_project_never_advises_a_save_over_the_project_being_opened(window, qtbot, files, monkeypatch):
    adult, clinical = files
    chooser = dialogs(monkeypatch)
    questions = Questions(monkeypatch, Button.Cancel)
    project = _saved_adult_project(qtbot, window, chooser, adult)
    window.go_to(ROLES_STEP)
    window.pages[ROLES_STEP].set_role("age", Role.QUASI_IDENTIFIER)  # unsaved
    chooser.path = str(project)
    menu_action(window, "Open &project…").trigger()  # the same project again
    (_title, text), = questions.asked
    assert _advice(text) == ["File > Save project as…"], text  # Save would write into the project being opened
    assert window.state.project.roles["age"] == Role.QUASI_IDENTIFIER.value  # Cancel: nothing changed
    questions.answer = Button.Yes  # clinical.xlsx opened with unsaved settings: an untitled project
    open_data(qtbot, window, chooser, clinical)
    window.go_to(ROLES_STEP)
    window.pages[ROLES_STEP].set_role("PLZ", Role.QUASI_IDENTIFIER)
    questions.answer = Button.Cancel
    chooser.path = str(project)
    menu_action(window, "Open &project…").trigger()
    _title, text = questions.asked[-1]
    assert _advice(text) == ["File > Save project as…"] and "not adult.ppdp.json" in text, text
    assert loaded(window, clinical) and window.project_path is None
    questions.answer = Button.Yes
    menu_action(window, "Open &project…").trigger()
    qtbot.waitUntil(lambda: loaded(window, adult), timeout=60_000)
    assert window.project_path == str(project) and window.state.project.roles.get("age") == Role.INSENSITIVE.value
    assert Project.load(project).data_path == str(adult)
