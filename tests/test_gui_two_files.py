"""A clinician's day: settings made for one file never leak into the next one (issue 15, point 1)."""
from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ppdp_desktop.core.data.released import read_release  # noqa: E402
from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.release.analysis import verify_release  # noqa: E402
from ppdp_desktop.gui.sensitivity_model import CHOICE, RHO2  # noqa: E402

ROLES_STEP, SENSITIVITY_STEP, METHOD_STEP, RUN_STEP, EXPORT_STEP = 1, 2, 3, 4, 6
PASSPHRASE = "correct horse battery staple 13"


def _second_file(tmp_path):
    frame = pd.DataFrame({
        "mrn": [f"M{i:05d}" for i in range(600)],
        "ward": [f"W{i % 7}" for i in range(600)],
        "condition": [["Flu", "Asthma", "Stroke", "Gout", "Angina", "Colitis"][i % 6] for i in range(600)],
    })
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    return path


def _edit(qtbot, view, row: int, column: int, text: str) -> None:
    """Click a cell of the table, press F2, type a value and Tab on, as a person does."""
    index = view.model().index(row, column)
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = QApplication.focusWidget()
    assert editor is not view, "no cell editor opened"
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)  # Tab commits and moves on, as in a spreadsheet


def test_a_second_file_starts_from_clean_settings(window, qtbot, tmp_path):
    window.load_demo()  # file A, with a per-value pair and a per-value choice set on step 3
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(SENSITIVITY_STEP)
    page = window.pages[SENSITIVITY_STEP]
    first = page.model.labels[0]
    _edit(qtbot, page.table, 0, RHO2, "0.05")
    _edit(qtbot, page.table, 0, CHOICE, "3")
    assert window.state.project.pairs.get(first) and window.state.project.value_choices.get(first) == 3
    window.load_data(_second_file(tmp_path))  # file B: other columns, other values
    qtbot.waitUntil(lambda: window.state.dataset is not None and "ward" in window.state.dataset.frame.columns,
                    timeout=30_000)
    project = window.state.project
    assert project.pairs == {} and project.value_choices == {} and project.taxonomies == {}
    assert set(project.roles) == {"mrn", "ward", "condition"}
    window.go_to(ROLES_STEP)
    roles = window.pages[ROLES_STEP]
    assert "occupation" not in roles.editor_box.title() and "diagnosis" not in roles.editor_box.title()
    roles.set_role("condition", Role.SENSITIVE)
    roles.set_role("mrn", Role.IDENTIFIER)
    window.go_to(SENSITIVITY_STEP)
    assert not window.pages[SENSITIVITY_STEP].model.invalid and window.pages[SENSITIVITY_STEP].is_complete()
    window.go_to(METHOD_STEP)
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None or bool(window.pages[RUN_STEP].error_label.text()),
                    timeout=120_000)
    assert window.pages[RUN_STEP].error_label.text() == ""
    window.go_to(EXPORT_STEP)
    export = window.pages[EXPORT_STEP]
    export.folder_edit.setText(str(tmp_path / "release"))
    export.passphrase.first.setText(PASSPHRASE)
    export.passphrase.second.setText(PASSPHRASE)
    export.export()
    qtbot.waitUntil(lambda: (tmp_path / "release" / "SHA256SUMS").is_file(), timeout=60_000)
    assert verify_release(read_release(tmp_path / "release"))


def test_changing_the_sensitive_column_forgets_its_per_value_settings(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(SENSITIVITY_STEP)
    page = window.pages[SENSITIVITY_STEP]
    _edit(qtbot, page.table, 0, RHO2, "0.05")
    assert window.state.project.pairs
    window.go_to(ROLES_STEP)
    window.pages[ROLES_STEP].set_role("postcode", Role.SENSITIVE)
    assert window.state.project.pairs == {} and window.state.project.value_choices == {}
    window.go_to(SENSITIVITY_STEP)
    assert not window.pages[SENSITIVITY_STEP].model.invalid


def test_the_demo_after_another_file_keeps_its_preset(window, qtbot, tmp_path):
    window.load_data(_second_file(tmp_path))
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.load_demo()
    qtbot.waitUntil(lambda: "diagnosis" in window.state.dataset.frame.columns, timeout=30_000)
    assert window.state.project.sensitive == "diagnosis" and "diagnosis" in window.state.project.taxonomies
    assert "the demo data's own roles and diagnosis taxonomy are set again" in window.pages[0].message.text()


def test_reopening_the_project_keeps_its_settings(window, qtbot, tmp_path):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.state.project.pairs["Asthma"] = [0.01, 0.05]
    assert window.save_project(tmp_path / "p.ppdp")
    window.load_data(_second_file(tmp_path))
    qtbot.waitUntil(lambda: "ward" in window.state.dataset.frame.columns, timeout=30_000)
    assert window.open_project(tmp_path / "p.ppdp")
    qtbot.waitUntil(lambda: "diagnosis" in window.state.dataset.frame.columns, timeout=30_000)
    assert window.state.project.pairs == {"Asthma": [0.01, 0.05]}


def test_unsaved_settings_are_not_discarded_without_asking(window, qtbot, tmp_path, monkeypatch):
    from ppdp_desktop.gui import main_window as main_window_module

    asked = []

    def answer(no_or_yes):
        def question(*args, **kwargs):  # the modal question cannot be clicked offscreen: answer it
            asked.append(args[2])
            return no_or_yes
        return question

    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert not window.state.dirty  # nothing to lose yet
    window.go_to(ROLES_STEP)
    window.pages[ROLES_STEP].set_role("admission_year", Role.QUASI_IDENTIFIER)
    assert window.state.dirty
    Button = main_window_module.QMessageBox.StandardButton
    monkeypatch.setattr(main_window_module.QMessageBox, "question", answer(Button.No))
    window.load_data(_second_file(tmp_path))
    assert len(asked) == 1 and "ward.csv" in asked[0]
    assert "diagnosis" in window.state.dataset.frame.columns  # kept: the user said no
    assert window.state.project.roles["admission_year"] == Role.QUASI_IDENTIFIER.value
    assert window.save_project(tmp_path / "p.ppdp") and not window.state.dirty
    window.load_data(_second_file(tmp_path))  # saved: no question
    qtbot.waitUntil(lambda: "ward" in window.state.dataset.frame.columns, timeout=30_000)
    assert len(asked) == 1
    window.pages[ROLES_STEP].set_role("ward", Role.QUASI_IDENTIFIER)  # unsaved again
    monkeypatch.setattr(main_window_module.QMessageBox, "question", answer(Button.Yes))
    window.pages[0].load_demo()  # the load page's own button asks too, once
    qtbot.waitUntil(lambda: "diagnosis" in window.state.dataset.frame.columns, timeout=30_000)
    assert len(asked) == 2
