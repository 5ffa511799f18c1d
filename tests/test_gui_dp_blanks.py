"""Differential privacy on a column with blank cells (issue 31, point 6): step 4 says how many blank cells a ticked
column has and on which rows of the spreadsheet (title and header rows counted), offers what to do with them where
the column is ticked, blocks Next until one is chosen, and the release says which was used.

Driven as a person does on the clinical export (.xlsx with a title row; "Station" has 86 blank cells): the file
opened (its import options accepted), the column ticked with a click and Space, the choice made with the keyboard in
its combo box, the run started by going to step 5, the release exported.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")

from clinical_data import BLANK_COLUMN, BLANKS, write_clinical_xlsx  # noqa: E402
from openpyxl import load_workbook  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtWidgets import QDialogButtonBox  # noqa: E402

from ppdp_desktop.core.data.schema import Role  # noqa: E402

ROLES, SENSITIVITY, METHOD, RUN, EXPORT = 1, 2, 3, 4, 6
PASSPHRASE = "correct horse battery staple 31"


@pytest.fixture(scope="module")
def clinical(tmp_path_factory):
    """The clinical export and the sheet rows (as Excel numbers them) whose Station cell is blank, read with openpyxl."""
    path = write_clinical_xlsx(tmp_path_factory.mktemp("clinical") / "klinik.xlsx", 5000)
    sheet = load_workbook(path, read_only=True).worksheets[0]
    header = [c.value for c in next(sheet.iter_rows(min_row=2, max_row=2))]
    column = header.index(BLANK_COLUMN)
    rows = [r[0].row for r in sheet.iter_rows(min_row=3) if r[column].value in (None, "")]
    assert len(rows) == BLANKS
    return path, rows


def _open(window, qtbot, path):
    """Open the file as a person does: its first look shows the import options (a title row), accepted with OK."""
    window.load_data(path)
    page = window.pages[0]
    qtbot.waitUntil(lambda: window.state.dataset is not None
                    or (page.import_dialog is not None and page.import_dialog.isVisible()), timeout=30_000)
    if window.state.dataset is None:
        qtbot.mouseClick(page.import_dialog.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert BLANK_COLUMN in window.state.dataset.frame.columns


def _tick(qtbot, dp, column: str) -> None:
    """Click the column's line in "Protect these columns" and press Space, as a person ticks it."""
    items = dp.attributes
    item = next(items.item(i) for i in range(items.count()) if items.item(i).data(Qt.ItemDataRole.UserRole) == column)
    items.scrollToItem(item)
    qtbot.mouseClick(items.viewport(), Qt.MouseButton.LeftButton, pos=items.visualItemRect(item).center())
    qtbot.keyClick(items, Qt.Key.Key_Space)
    assert column in dp.chosen()


def _choose(qtbot, combo, choice: str) -> None:
    """Pick an entry of a combo box with the arrow keys, as a person does from the keyboard."""
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Home)
    for _ in range(combo.count()):
        if combo.currentData() == choice:
            return
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    assert combo.currentData() == choice


def _dp_with_station(window, qtbot, clinical):
    """The clinical file open, its ICD-10 diagnosis sensitive and patient number an identifier, dp-microagg chosen on
    step 4 with Station ticked: ``(method page, dp parameters)``."""
    _open(window, qtbot, clinical[0])
    window.go_to(ROLES)
    roles = window.pages[ROLES]
    roles.set_role("Patienten-Nr.", Role.IDENTIFIER)
    roles.set_role("Hauptdiagnose (ICD-10)", Role.SENSITIVE)
    window.go_to(SENSITIVITY)  # through step 3, as Next goes
    window.go_to(METHOD)
    assert window.stack.currentIndex() == METHOD
    page = window.pages[METHOD]
    page.scroll.ensureWidgetVisible(page.cards["dp-microagg"].choose)
    choose = page.cards["dp-microagg"].choose
    qtbot.mouseClick(choose, Qt.MouseButton.LeftButton, pos=QPoint(8, choose.height() // 2))
    assert window.state.project.method == "dp-microagg"
    dp = page.editors["dp-microagg"].parameters
    _tick(qtbot, dp, BLANK_COLUMN)
    return page, dp


def test_step_4_names_the_blank_cells_by_their_spreadsheet_rows_and_blocks_until_chosen(window, qtbot, clinical):
    """Ticking Station shows its 86 blank cells with the first five sheet rows openpyxl finds blank (title row 1 and
    header row 2 counted, not data rows), and the choices a categorical column has; Next stays off until one is
    chosen, and the page's message names the column and the rows."""
    page, dp = _dp_with_station(window, qtbot, clinical)
    rows = clinical[1]
    where = (f"{BLANKS} blank cells (rows {', '.join(map(str, rows[:4]))} and {rows[4]} of sheet 'Fälle', "
             f"and {BLANKS - 5} more)")
    assert dp.blanks.isVisible() and dp.blanks.where[BLANK_COLUMN] == where
    combo = dp.blanks.combos[BLANK_COLUMN]
    assert [combo.itemData(i) for i in range(combo.count())] == [None, "value", "drop", "impute"]
    assert f"{BLANK_COLUMN} has {where}" in dp.message.text()
    assert not page.is_complete() and not window.next.isEnabled()
    _choose(qtbot, combo, "drop")
    assert window.state.project.options["dp-microagg"]["blanks"] == {BLANK_COLUMN: "drop"}
    assert page.is_complete() and window.next.isEnabled() and BLANK_COLUMN not in dp.message.text()


@pytest.mark.parametrize("choice, released, sentence", [
    ("value", 5000, f"'{BLANK_COLUMN}': {BLANKS} blank cells kept as a value of their own, '(blank)'"),
    ("drop", 5000 - BLANKS, f"'{BLANK_COLUMN}': the {BLANKS} records with a blank cell here were left out"),
    ("impute", 5000, f"'{BLANK_COLUMN}': {BLANKS} blank cells imputed as '*' (the most general label of its taxonomy"),
])
def test_each_choice_runs_and_the_plan_says_which_was_used(window, qtbot, clinical, choice, released, sentence):
    """Each choice lets the job run (it failed with "fill or remove them" before): a value of its own keeps every
    record, leaving records out releases the 4,914 without a blank, imputing keeps every record; the plan the report
    and the release show says which was used."""
    page, dp = _dp_with_station(window, qtbot, clinical)
    _choose(qtbot, dp.blanks.combos[BLANK_COLUMN], choice)
    assert page.is_complete()
    window.go_to(RUN)
    run = window.pages[RUN]
    qtbot.waitUntil(lambda: window.state.outcome is not None or bool(run.error_label.text()), timeout=120_000)
    assert run.error_label.text() == ""
    result = window.state.outcome.main
    assert len(result.table) == released and result.guarantee["verified"]
    assert any(sentence in line for line in result.plan.describe())
    station = set(result.table[BLANK_COLUMN].astype(str))
    assert ("(blank)" in station or choice != "value") and "nan" not in station and "" not in station


def test_the_release_says_what_was_done_with_the_blank_cells(window, qtbot, clinical, tmp_path):
    """Exported after "a blank is a value of its own": release.json records the choice and the number of cells,
    the taxonomy it publishes holds '(blank)', and README.txt says it in words."""
    page, dp = _dp_with_station(window, qtbot, clinical)
    _choose(qtbot, dp.blanks.combos[BLANK_COLUMN], "value")
    window.go_to(RUN)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    window.go_to(EXPORT)
    export = window.pages[EXPORT]
    export.folder_edit.setText(str(tmp_path / "release"))
    export.passphrase.first.setText(PASSPHRASE)
    export.passphrase.second.setText(PASSPHRASE)
    export.export()
    qtbot.waitUntil(lambda: (tmp_path / "release" / "SHA256SUMS").is_file(), timeout=60_000)
    meta = json.loads((tmp_path / "release" / "release.json").read_text(encoding="utf-8"))
    entry = next(e for e in meta["protected"] if e["attribute"] == BLANK_COLUMN)
    assert entry["blanks"] == {"column": BLANK_COLUMN, "choice": "value", "cells": BLANKS, "fill": "(blank)"}
    assert meta["parameters"]["blanks"] == {BLANK_COLUMN: "value"}
    assert "(blank)" in json.dumps(entry["taxonomy"])
    readme = (tmp_path / "release" / "README.txt").read_text(encoding="utf-8")
    assert f"Blank cells: '{BLANK_COLUMN}': {BLANKS} blank cells kept as a value of their own, '(blank)'." in readme
