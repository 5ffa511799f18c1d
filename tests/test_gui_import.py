"""Real columns (issue 15, points 3 and 4): the import options open when a file is unclear and are always
reachable, their preview follows every option, and a column's kind can be changed on step 2 without
losing the settings or the exact text ("02134" stays "02134")."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QDialogButtonBox  # noqa: E402

from ppdp_desktop.core.data.schema import Kind, Role  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402

DATA = Path(__file__).parent / "data"
ROLES_STEP = 1


def _zip_file(tmp_path: Path) -> Path:
    path = tmp_path / "zips.csv"
    rows = [f"{i:03d},{['02134', '47602', '02139'][i % 3]},{20 + i % 50},{['flu', 'asthma', 'gout'][i % 3]}"
            for i in range(90)]
    path.write_text("PatientID,ZIPCode,age,diagnosis\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def _german_file(tmp_path: Path) -> Path:
    path = tmp_path / "export.csv"
    path.write_text("Export vom 01.03.2024\n\nFall;Gewicht;Ort\n1;70,5;Köln\n2;82;Bonn\n3;90,25;Köln\n",
                    encoding="utf-8")
    return path


def _dialog(qtbot, page):
    qtbot.waitUntil(lambda: page.import_dialog is not None and page.import_dialog.isVisible(), timeout=10_000)
    dialog = page.import_dialog
    qtbot.waitUntil(lambda: dialog.preview_dataset is not None, timeout=10_000)
    return dialog


def _settle(qtbot, dialog) -> None:
    """Wait until the preview has been read with the options on screen."""
    qtbot.waitUntil(lambda: not dialog.timer.isActive() and not dialog.worker.is_running()
                    and "Reading" not in dialog.status.text(), timeout=10_000)


def _click_ok(qtbot, dialog) -> None:
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)


def _choose(qtbot, combo, text: str) -> None:
    """Pick an entry of a combo box with the keyboard, as a person does: focus it and type its first letters
    (after a pause, as Qt joins keys typed in quick succession into one search)."""
    qtbot.wait(QApplication.keyboardInputInterval() + 100)
    combo.setFocus()
    qtbot.keyClicks(combo, text)
    assert combo.currentText().lower().startswith(text.lower()), combo.currentText()


def test_a_clear_file_loads_without_asking(window, qtbot, tmp_path):
    window.load_data(_zip_file(tmp_path))
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    assert window.pages[0].import_dialog is None
    dataset = window.state.dataset
    assert dataset.frame["ZIPCode"].tolist()[:3] == ["02134", "47602", "02139"]
    assert dataset.schema.attributes["ZIPCode"].kind is Kind.TEXT
    assert dataset.schema.attributes["age"].kind is Kind.NUMERIC
    summary = window.pages[0].summary_model.frame
    assert summary.set_index("column").loc["ZIPCode", "kind"] == "code / free text"


def test_an_unclear_file_opens_the_import_options_with_a_live_preview(window, qtbot, tmp_path):
    page = window.pages[0]
    window.load_data(_german_file(tmp_path))
    dialog = _dialog(qtbot, page)
    assert "title" in dialog.doubts.text() and "decimal comma" in dialog.doubts.text()
    assert dialog.preview_dataset.frame["Gewicht"].tolist() == [70.5, 82.0, 90.25]  # as suggested
    _choose(qtbot, dialog.decimal, "Point")  # the user disagrees: the preview follows
    _settle(qtbot, dialog)
    assert dialog.preview_dataset.frame["Gewicht"].tolist() == ["70,5", "82", "90,25"]
    _choose(qtbot, dialog.decimal, "Comma")
    _settle(qtbot, dialog)
    assert dialog.preview_dataset.frame["Gewicht"].tolist()[0] == 70.5
    dialog.header_row.setFocus()
    qtbot.keyClick(dialog.header_row, Qt.Key.Key_Down)  # header row 1: the title is no header for 3 columns
    _settle(qtbot, dialog)
    assert "line 3 has 3 fields but the header has 1" in dialog.status.text()
    assert "--sep" not in dialog.status.text()  # the window's words
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    qtbot.keyClick(dialog.header_row, Qt.Key.Key_Up)
    _settle(qtbot, dialog)
    assert list(dialog.preview_dataset.frame.columns) == ["Fall", "Gewicht", "Ort"]
    row = list(dialog.preview_dataset.frame.columns).index("Fall")
    assert dialog.preview_dataset.schema.attributes["Fall"].kind is Kind.NUMERIC  # guessed
    _choose(qtbot, dialog.kind_table.cellWidget(row, 1), "code")  # a case number is a code
    _settle(qtbot, dialog)
    assert dialog.preview_dataset.schema.attributes["Fall"].kind is Kind.TEXT
    _click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    dataset = window.state.dataset
    assert dataset.frame["Gewicht"].tolist() == [70.5, 82.0, 90.25]
    assert dataset.frame["Fall"].tolist() == ["1", "2", "3"]
    assert dataset.frame["Ort"].tolist() == ["Köln", "Bonn", "Köln"]
    assert window.state.project.load_options == {"decimal": ",", "header_row": 2, "kinds": {"Fall": "text"}}


def test_an_xls_workbook_asks_for_its_sheet(window, qtbot):
    page = window.pages[0]
    window.load_data(DATA / "clinic.xls")
    dialog = _dialog(qtbot, page)
    assert "2 sheets" in dialog.doubts.text()
    assert dialog.sheet.isVisible() and not dialog.delimiter.isVisible()
    _choose(qtbot, dialog.sheet, "notes")
    dialog.header_row.setFocus()
    qtbot.keyClick(dialog.header_row, Qt.Key.Key_Down)  # the notes sheet has its names in row 1
    _settle(qtbot, dialog)
    assert list(dialog.preview_dataset.frame.columns) == ["note"]
    _choose(qtbot, dialog.sheet, "patients")
    dialog.header_row.setFocus()
    qtbot.keyClick(dialog.header_row, Qt.Key.Key_Up)
    _settle(qtbot, dialog)
    assert "ZIPCode" in dialog.preview_dataset.frame.columns
    _click_ok(qtbot, dialog)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    assert window.state.dataset.frame["ZIPCode"].tolist() == ["02134", "47602", "02139"]
    assert window.state.project.load_options == {"sheet": "patients", "header_row": 2}


def test_import_options_stay_reachable_for_the_file_in_use(window, qtbot, tmp_path):
    page = window.pages[0]
    window.load_data(_zip_file(tmp_path))
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    qtbot.mouseClick(page.options_button, Qt.MouseButton.LeftButton)
    dialog = _dialog(qtbot, page)
    assert dialog.doubts.isHidden()
    row = list(dialog.preview_dataset.frame.columns).index("ZIPCode")
    assert dialog.kind_table.cellWidget(row, 1).currentData() == "text"
    _choose(qtbot, dialog.kind_table.cellWidget(row, 1), "numeric")
    _settle(qtbot, dialog)
    assert dialog.preview_dataset.frame["ZIPCode"].tolist()[0] == 2134
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)
    assert window.state.dataset.frame["ZIPCode"].tolist()[0] == "02134"  # cancel changes nothing


def test_a_kind_changed_on_step_two_reads_the_file_again_and_keeps_the_settings(window, qtbot, tmp_path):
    data = _zip_file(tmp_path)
    window.load_data(data)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    window.go_to(ROLES_STEP)
    page = window.pages[ROLES_STEP]
    page.set_role("diagnosis", Role.SENSITIVE)
    page.set_role("ZIPCode", Role.QUASI_IDENTIFIER)
    row = list(window.state.dataset.frame.columns).index("ZIPCode")
    combo = page.table.cellWidget(row, 1)
    assert combo.currentData() == "text"
    _choose(qtbot, combo, "numeric")
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["ZIPCode"].kind is Kind.NUMERIC, timeout=10_000)
    assert window.state.dataset.frame["ZIPCode"].tolist()[0] == 2134
    assert window.state.project.roles["diagnosis"] == "sensitive"  # the settings stay
    assert window.state.project.roles["ZIPCode"] == "quasi-identifier"
    assert window.state.dirty
    combo = page.table.cellWidget(row, 1)
    _choose(qtbot, combo, "code")
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["ZIPCode"].kind is Kind.TEXT, timeout=10_000)
    assert window.state.dataset.frame["ZIPCode"].tolist()[0] == "02134"  # read again: the exact text
    # a kind the values do not fit: said in words on the page, nothing changes
    row = list(window.state.dataset.frame.columns).index("diagnosis")
    _choose(qtbot, page.table.cellWidget(row, 1), "numeric")
    qtbot.waitUntil(lambda: "was not changed" in page.status.text(), timeout=10_000)
    assert "'flu'" in page.status.text()
    assert window.state.dataset.schema.attributes["diagnosis"].kind is Kind.CATEGORICAL
    assert page.table.cellWidget(row, 1).currentData() == "categorical"
    # the project remembers the kinds, and a saved project reads the file the same way
    project_path = tmp_path / "p.ppdp"
    assert window.save_project(project_path)
    project = Project.load(project_path)
    assert project.load_options["kinds"] == {"ZIPCode": "text"}


def test_a_text_quasi_identifier_gets_a_taxonomy(window, qtbot, tmp_path):
    window.load_data(_zip_file(tmp_path))
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    window.go_to(ROLES_STEP)
    page = window.pages[ROLES_STEP]
    page.set_role("ZIPCode", Role.QUASI_IDENTIFIER)
    row = list(window.state.dataset.frame.columns).index("ZIPCode")
    page.table.setCurrentCell(row, 0)
    assert page.editor.isEnabled()
    assert "ZIPCode" in page.editor_box.title()
    assert set(pd.Series(page.editor.taxonomy().leaf_labels())) == {"02134", "47602", "02139"}


def test_tagging_a_number_column_identifier_reads_it_as_text(window, qtbot, tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text("case,dx\n007,flu\n12,gout\n7,flu\n", encoding="utf-8")
    window.load_data(path)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=10_000)
    assert window.state.dataset.schema.attributes["case"].kind is Kind.TEXT  # a leading zero: a code already
    path.write_text("number,dx\n100,flu\n12,gout\n7,flu\n", encoding="utf-8")
    window.load_data(path)
    qtbot.waitUntil(lambda: window.state.dataset is not None and "number" in window.state.dataset.frame, timeout=10_000)
    assert window.state.dataset.schema.attributes["number"].kind is Kind.NUMERIC
    window.go_to(ROLES_STEP)
    window.pages[ROLES_STEP].set_role("number", Role.IDENTIFIER)
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["number"].kind is Kind.TEXT, timeout=10_000)
    assert window.state.project.roles["number"] == "identifier"
    assert window.state.project.load_options["kinds"] == {"number": "text"}
