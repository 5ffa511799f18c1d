"""Step 3's table checks a row as a whole, reads "one pair for every value" from its content, offers a one-click way
back to one pair, and shows whole values (issue 31, points 4, 5 and 9).

Driven as a person does on the demo data (20,000 patients, 41 diagnoses): a cell is clicked, F2 pressed, a number
typed and Tab pressed; the rule's radio button and the reset buttons are clicked; step 4's method card is clicked.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ppdp_desktop.core.data.domain import CategoricalDomain  # noqa: E402
from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.privacy.sensitivity import gamma_of  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402
from ppdp_desktop.gui.sensitivity_model import GAMMA, INVALID, MAX_VALUE_WIDTH, RHO1, RHO2, STATUS  # noqa: E402
from ppdp_desktop.gui.sensitivity_rows import tidy_pairs  # noqa: E402

SENSITIVITY, METHOD = 2, 3
ROW = "Type 2 diabetes"  # 12.9 % of the demo's patients: theta = 3 gives it rho1 0.129, rho2 0.387


@pytest.fixture
def step3(window, qtbot):
    """The demo loaded and step 3 shown: ``(window, page)``."""
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(SENSITIVITY)
    page = window.pages[SENSITIVITY]
    qtbot.waitUntil(lambda: page.model.rowCount() > 0, timeout=10_000)
    return window, page


def _edit(qtbot, view, row: int, column: int, text: str) -> None:
    """Click a cell, press F2, type over what it holds and press Tab, as a person does."""
    index = view.model().index(row, column)
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = QApplication.focusWidget()
    assert editor is not view, "no cell editor opened"
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Tab)


def _click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(min(8, button.width() // 2), button.height() // 2))


def _cell(page, row: int, column: int, role=Qt.ItemDataRole.DisplayRole):
    return page.table.model().index(row, column).data(role)


def _choose_partitioning(window, qtbot):
    """Step 4: click perturbation partitioning's card; the method page."""
    window.go_to(METHOD)
    page = window.pages[METHOD]
    page.scroll.ensureWidgetVisible(page.cards["partition"].choose)
    _click(qtbot, page.cards["partition"].choose)
    assert window.state.project.method == "partition"
    return page


def test_a_row_made_invalid_by_rho1_turns_valid_when_rho2_is_corrected(step3, qtbot):
    """rho1 = 0.5 typed above the row's rho2 (0.387): the cell turns red and the row's gamma and status are dashes
    saying why (not the gamma of the pair still in force). rho2 = 0.8 typed next: the row (0.5, 0.8) is valid, so no
    cell stays red, the pair applied is the one the row shows and gamma is that pair's (4), not a third pair's."""
    window, page = step3
    row = page.model.labels.index(ROW)
    _edit(qtbot, page.table, row, RHO1, "0.5")
    assert _cell(page, row, RHO1) == "0.5"
    assert _cell(page, row, RHO1, Qt.ItemDataRole.BackgroundRole).color() == INVALID
    assert "0 < rho1 < rho2 < 1" in _cell(page, row, RHO1, Qt.ItemDataRole.ToolTipRole)
    assert _cell(page, row, GAMMA) == "—" and _cell(page, row, STATUS) == "—"
    assert "0 < rho1 < rho2 < 1" in _cell(page, row, GAMMA, Qt.ItemDataRole.ToolTipRole)
    assert page.message.text().startswith("Fix the red cells first") and not window.next.isEnabled()
    assert ROW not in window.state.project.pairs
    _edit(qtbot, page.table, row, RHO2, "0.8")
    assert not page.model.invalid
    assert _cell(page, row, RHO1, Qt.ItemDataRole.BackgroundRole) is None
    assert _cell(page, row, RHO2, Qt.ItemDataRole.BackgroundRole) is None
    assert window.state.project.pairs[ROW] == [0.5, 0.8]
    assert (_cell(page, row, RHO1), _cell(page, row, RHO2)) == ("0.5", "0.8")
    assert _cell(page, row, GAMMA) == f"{float(gamma_of(0.5, 0.8)):.3g}" == "4"
    assert _cell(page, row, STATUS) != "—" and "Fix the red cells" not in page.message.text()
    assert page.is_complete() and window.next.isEnabled()


def test_a_red_row_is_checked_again_with_its_new_cells(step3, qtbot):
    """A row stays red while both typed cells make an invalid pair (rho2 = 0.4 below the typed rho1 = 0.5), both
    cells red with the same message; typing rho1 = 0.2 makes (0.2, 0.4), applied, and nothing is red."""
    window, page = step3
    row = page.model.labels.index(ROW)
    _edit(qtbot, page.table, row, RHO1, "0.5")
    _edit(qtbot, page.table, row, RHO2, "0.4")
    assert set(page.model.invalid) == {(row, RHO1), (row, RHO2)}
    assert "rho1=0.5, rho2=0.4" in _cell(page, row, RHO2, Qt.ItemDataRole.ToolTipRole)
    assert ROW not in window.state.project.pairs
    _edit(qtbot, page.table, row, RHO1, "0.2")
    assert not page.model.invalid and window.state.project.pairs[ROW] == [0.2, 0.4]
    assert _cell(page, row, GAMMA) == f"{float(gamma_of(0.2, 0.4)):.3g}"


def test_setting_a_row_back_to_the_common_pair_lets_partitioning_run(step3, qtbot):
    """With "the same requirement for every value" (0.1, 0.3), one row's rho1 is typed as 0.05: partitioning (step
    4) is blocked, naming the value and the table. Typing 0.1 back makes every row the common pair again, and step 4
    then lets partitioning run: the condition is the table's content, not whether a cell was ever edited."""
    window, page = step3
    _click(qtbot, page.rule_pair)
    assert window.state.project.rho1 == pytest.approx(0.1) and window.state.project.rho2 == pytest.approx(0.3)
    row = page.model.labels.index("HIV infection")
    _edit(qtbot, page.table, row, RHO1, "0.05")
    assert window.state.project.pairs == {"HIV infection": [0.05, 0.3]}
    method = _choose_partitioning(window, qtbot)
    assert not method.is_complete() and not window.next.isEnabled()
    assert "'HIV infection'" in method.notes.text() and "the sensitivity table on step 3" in method.notes.text()
    window.go_to(SENSITIVITY)
    _edit(qtbot, page.table, row, RHO1, "0.1")
    assert window.state.project.pairs == {}
    window.go_to(METHOD)
    assert method.is_complete() and window.next.isEnabled() and method.notes.text() == ""


def test_one_click_on_step_3_gives_every_value_one_pair(step3, qtbot):
    """Under the theta rule two rows get pairs of their own; partitioning (step 4) asks for one pair for every value.
    Back on step 3, one click on "Use one pair for every value" ticks that rule with the pair shown, drops the rows'
    own pairs (the button then greys out), and partitioning may run."""
    window, page = step3
    labels = page.model.labels
    _edit(qtbot, page.table, labels.index("HIV infection"), RHO2, "0.008")
    _edit(qtbot, page.table, labels.index(ROW), RHO1, "0.2")
    assert len(window.state.project.pairs) == 2 and page.one_pair.isEnabled()
    method = _choose_partitioning(window, qtbot)
    assert not method.is_complete()
    window.go_to(SENSITIVITY)
    _click(qtbot, page.one_pair)
    project = window.state.project
    assert page.rule_pair.isChecked() and (project.rho1, project.rho2) == (page.rho1.value(), page.rho2.value())
    assert project.pairs == {} and not page.one_pair.isEnabled()
    assert {_cell(page, r, RHO1) for r in range(len(labels))} == {f"{page.rho1.value():.4g}"}
    window.go_to(METHOD)
    assert method.is_complete() and window.next.isEnabled()


def test_one_click_on_step_4_drops_the_values_own_pairs(step3, qtbot):
    """Step 4 itself offers the way out: with one pair chosen on step 3 and a row of its own, partitioning's card is
    blocked and a button names what it drops; one click on it and partitioning may run, and step 3's table shows the
    common pair on that row."""
    window, page = step3
    _click(qtbot, page.rule_pair)
    row = page.model.labels.index(ROW)
    _edit(qtbot, page.table, row, RHO2, "0.5")
    method = _choose_partitioning(window, qtbot)
    assert method.one_pair.isVisible() and "1 value" in method.one_pair.text()
    assert not method.is_complete()
    method.scroll.ensureWidgetVisible(method.one_pair)
    _click(qtbot, method.one_pair)
    assert window.state.project.pairs == {} and method.is_complete() and not method.one_pair.isVisible()
    window.go_to(SENSITIVITY)
    assert _cell(page, row, RHO2) == f"{page.rho2.value():.4g}"


def test_a_table_whose_every_row_holds_one_pair_is_one_pair():
    """Under the theta rule, every value given the same pair of its own is one pair for every value: the project's
    rule becomes that pair and no value keeps a pair of its own. A pair equal to the rule's for its value is dropped,
    one that differs is kept."""
    domain = CategoricalDomain("dx", ("a", "b", "c"), np.array([50.0, 30.0, 20.0]))
    project = Project(theta=3.0, pairs={"a": [0.1, 0.3], "b": [0.1, 0.3], "c": [0.1, 0.3]})
    assert tidy_pairs(project, domain, ["a", "b", "c"])
    assert (project.rho1, project.rho2, project.pairs) == (0.1, 0.3, {})
    project = Project(theta=3.0, rho1=0.1, rho2=0.3, pairs={"a": [0.1, 0.3], "b": [0.05, 0.3]})
    assert not tidy_pairs(project, domain, ["a", "b", "c"])
    assert project.pairs == {"b": [0.05, 0.3]}


def test_the_value_column_shows_every_code_whole(window, qtbot, tmp_path):
    """A sensitive column of 120 short codes and, sorted below the rows on screen, a long one and one longer than the
    column may be: the Value column is as wide as the long code (not cut to "Z9…" by the rows on screen), and the
    longest is cut at the column's limit and shown whole in its tooltip."""
    long_code = "Z99.88 Zustand nach Transplantation"
    longest = "Z99.99 " + " ".join(["sehr lange Bezeichnung"] * 12)
    codes = [f"A{i:02d}" for i in range(120)] + [long_code, longest]
    frame = pd.DataFrame({"fall": range(len(codes) * 5), "dx": codes * 5})
    path = tmp_path / "codes.csv"
    frame.to_csv(path, index=False)
    window.load_data(path)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(1)
    window.pages[1].set_role("dx", Role.SENSITIVE)
    window.go_to(SENSITIVITY)
    page = window.pages[SENSITIVITY]
    qtbot.waitUntil(lambda: page.model.rowCount() == len(codes), timeout=10_000)
    view = page.table
    row = page.model.labels.index(long_code)
    assert view.rowAt(view.viewport().height() - 1) < row  # below the rows on screen
    assert view.columnWidth(0) >= view.fontMetrics().horizontalAdvance(long_code)
    assert view.columnWidth(0) == MAX_VALUE_WIDTH < view.fontMetrics().horizontalAdvance(longest)
    assert longest in _cell(page, page.model.labels.index(longest), 0, Qt.ItemDataRole.ToolTipRole)
