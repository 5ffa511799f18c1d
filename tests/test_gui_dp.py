"""Differential privacy (dp-microagg) in the wizard on the demo data: choose it, pick columns, set
epsilon, k and a domain, run through the worker, read the report; warnings, blocking and the project."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSettings

from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.project import Project
from ppdp_desktop.gui.dp_parameters import FROM_DATA
from ppdp_desktop.gui.main_window import MainWindow

METHOD_STEP, RUN_STEP, REPORT_STEP = 3, 4, 5


def _dp_page(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    assert window.stack.currentIndex() == METHOD_STEP
    page = window.pages[METHOD_STEP]
    page.choose("dp-microagg")
    return page, page.editors["dp-microagg"].parameters


def test_dp_run_from_the_wizard(window, qtbot):
    page, dp = _dp_page(window, qtbot)
    project = window.state.project
    assert project.method == "dp-microagg"
    assert dp.chosen() == ["diagnosis"]  # the column tagged sensitive in step 2 is the default
    assert "edited in step 2" in dp.taxonomy_note.text()  # the demo's diagnosis taxonomy is used
    dp.check("diagnosis", False)
    dp.check("age")
    dp.check("income")
    assert project.options["dp-microagg"]["attributes"] == ["age", "income"]
    assert "diagnosis is tagged sensitive in step 2 but not ticked" in dp.taxonomy_note.text()
    # untouched domains come from the data: a visible warning names each column
    assert dp.warning.isVisible() and FROM_DATA.format(name="age") in dp.warning.text()
    assert "income" in dp.warning.text()
    dp.epsilon.setValue(2.0)
    dp.k.setValue(25)
    dp.set_domain("age", 0, 120)
    dp.set_domain("income", 0, 500_000)
    assert not dp.warning.isVisible()
    assert project.options["dp-microagg"]["domains"] == {"age": [0.0, 120.0], "income": [0.0, 500000.0]}
    assert (project.options["dp-microagg"]["epsilon"], project.options["dp-microagg"]["k"]) == (2.0, 25)
    # the plan figures: epsilon / M and M * Delta / (k * epsilon)
    assert "1" in dp.plan.text() and "age 4.8" in dp.plan.text()
    assert dp.domains.item(dp.domain_row("age"), 3).text() == "4.8"
    assert page.is_complete() and window.next.isEnabled()
    window.go_to(RUN_STEP)  # starts the run in the worker
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    result = window.state.outcome.main
    assert result.settings.method == "dp-microagg" and result.guarantee["verified"]
    assert result.settings.options.domains == {"age": (0.0, 120.0), "income": (0.0, 500000.0)}
    n = len(result.table)
    for column in ("age", "income"):
        released = result.table[column].to_numpy()
        assert len(np.unique(released)) <= n // 25 + 1  # one shared value per cluster of k records
        assert released.min() >= 0
    released = result.table["diagnosis"].astype(object).tolist()  # held as codes (a categorical), the same text
    assert released == result.dataset.frame["diagnosis"].take(result.order).astype(object).tolist()
    # The report page for dp-microagg is built by another change; it must at least show the run.
    window.go_to(REPORT_STEP)
    assert window.stack.currentIndex() == REPORT_STEP
    assert window.pages[REPORT_STEP].privacy_label.text()


def test_invalid_dp_input_blocks_the_step(window, qtbot):
    page, dp = _dp_page(window, qtbot)
    dp.check("diagnosis", False)
    assert not page.is_complete() and not window.next.isEnabled()
    assert "Tick at least one column" in dp.message.text()
    dp.check("age")
    assert page.is_complete() and window.next.isEnabled()
    dp.set_domain("age", 50, 50)
    assert not page.is_complete() and not window.next.isEnabled()
    assert dp.message.isVisible() and "domain of age needs lo < hi" in dp.message.text()
    assert not window.reachable(RUN_STEP)
    dp.set_domain("age", 10, 120)  # data below 10: the core would refuse it, so the page does
    assert not page.is_complete() and "widen its domain" in dp.message.text()
    dp.set_domain("age", 0, 120)
    assert page.is_complete() and window.next.isEnabled() and not dp.message.isVisible()
    n = len(window.state.dataset.frame)
    dp.k.setValue(n + 1)
    assert not page.is_complete() and f"at most {n}" in dp.message.text()
    dp.k.setValue(10)
    assert page.is_complete()
    # The other methods keep their behaviour: the dp card's problems only block when dp is used.
    dp.check("age", False)
    page.choose("finegrain")
    assert page.is_complete()
    page.choose("finegrain", compare=["dp-microagg"])
    assert not page.is_complete()


def test_warning_shows_for_data_domain_and_goes_after_editing(window, qtbot):
    _page, dp = _dp_page(window, qtbot)
    dp.check("age")
    low, high = dp.ranges["age"]
    row = dp.domain_row("age")
    assert (dp.domains.item(row, 1).text(), dp.domains.item(row, 2).text()) == (f"{low:g}", f"{high:g}")
    assert dp.warning.isVisible() and "age" in dp.warning.text()
    assert "age" not in window.state.project.options["dp-microagg"]["domains"]  # left as is: the core takes it from the data
    dp.set_domain("age", low, 120)
    assert not dp.warning.isVisible()
    dp.set_domain("age", low, high)  # back to the data's min and max: disclosed again
    assert dp.warning.isVisible() and "age" not in window.state.project.options["dp-microagg"]["domains"]


def test_no_sensitive_column_needed_and_project_round_trip(window, qtbot, tmp_path):
    page, dp = _dp_page(window, qtbot)
    dp.check("income")
    dp.set_domain("income", 0, 500_000)
    dp.k.setValue(15)
    roles = window.pages[1]
    window.go_to(1)
    roles.set_role("diagnosis", Role.INSENSITIVE)
    assert window.state.project.sensitive is None
    assert roles.is_complete() and window.pages[2].is_complete()  # no sensitive column, no pairs
    window.go_to(METHOD_STEP)
    assert dp.chosen() == ["diagnosis", "income"] and page.is_complete()
    path = tmp_path / "dp.ppdp.json"
    assert window.save_project(path)
    loaded = Project.load(path)
    assert loaded.method == "dp-microagg" and loaded.options["dp-microagg"]["attributes"] == ["diagnosis", "income"]
    assert loaded.options["dp-microagg"]["domains"] == {"income": [0.0, 500000.0]} and loaded.options["dp-microagg"]["k"] == 15
    settings = loaded.settings()
    assert settings.sensitive == "" and settings.options.attributes == ["diagnosis", "income"]
    assert "diagnosis" in settings.taxonomies  # the edited demo taxonomy goes with it
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    assert window.state.outcome.main.guarantee["verified"]


def test_screenshot_of_the_dp_card(window, qtbot, tmp_path):
    from ppdp_desktop.gui.screenshots import grab_dp_method

    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    path = grab_dp_method(window, tmp_path / "method-dp.png")
    assert path.stat().st_size > 10_000
    dp = window.pages[METHOD_STEP].editors["dp-microagg"].parameters
    assert dp.chosen() == ["age", "income"] and "income" in dp.warning.text() and dp.warning.isVisible()


def test_a_saved_dp_project_reopens_with_its_settings(window, qtbot, tmp_path):
    _page, dp = _dp_page(window, qtbot)
    dp.check("age")
    dp.set_domain("age", 0, 110)
    dp.epsilon.setValue(0.5)
    path = tmp_path / "dp.ppdp.json"
    assert window.save_project(path)
    other = MainWindow(QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(other)
    try:
        assert other.open_project(path)
        qtbot.waitUntil(lambda: other.state.dataset is not None, timeout=30_000)
        other.go_to(METHOD_STEP)
        page = other.pages[METHOD_STEP]
        assert page.cards["dp-microagg"].choose.isChecked()
        parameters = page.editors["dp-microagg"].parameters
        assert parameters.chosen() == ["age", "diagnosis"] and parameters.epsilon.value() == 0.5
        assert page.editors["dp-microagg"].parameters.typed_domain("age") == (0.0, 110.0) and page.is_complete()
    finally:
        other.state.worker.shutdown()


def _box(check_box):
    """Where a user clicks a check box: on its square (the widget may be wider than its text)."""
    from PySide6.QtCore import QPoint

    return QPoint(8, check_box.height() // 2)


def test_unlinked_columns_by_clicks_release_only_the_ticked_columns(window, qtbot):
    """The layout by clicks: linked says what epsilon leaves out; unlinked blocks on an unticked column, names it,
    and with "leave out" ticked releases the ticked columns only, with no pseudonyms, as epsilon-DP outright."""
    from PySide6.QtCore import Qt

    from ppdp_desktop.core.methods.dp.claim import FULL_KIND

    page, dp = _dp_page(window, qtbot)
    project = window.state.project
    choice = dp.layout_choice
    dp.check("diagnosis", False)
    dp.check("age")
    dp.check("income")
    dp.set_domain("age", 0, 120)
    dp.set_domain("income", 0, 500_000)
    assert page.is_complete() and "Not the rows" in choice.scope.text() and not choice.drop.isEnabled()
    qtbot.mouseClick(choice.unlinked, Qt.MouseButton.LeftButton, pos=_box(choice.unlinked))
    assert choice.unlinked.isChecked() and project.options["dp-microagg"]["layout"] == "unlinked"
    assert "the whole release, rows included" in choice.scope.text() and choice.drop.isEnabled()
    left_out = dp.left_out()
    assert "sex" in left_out and "diagnosis" in left_out and "patient_id" not in left_out  # identifiers are removed
    assert not page.is_complete() and dp.message.isVisible()
    assert all(c in dp.message.text() for c in left_out) and "Leave out the columns" in dp.message.text()
    qtbot.mouseClick(choice.drop, Qt.MouseButton.LeftButton, pos=_box(choice.drop))
    assert project.options["dp-microagg"]["unprotected"] == "drop" and "Left out of the release: " in choice.scope.text()
    assert page.is_complete() and window.next.isEnabled()
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    result = window.state.outcome.main
    assert list(result.table.columns) == ["age", "income"] and not result.has_pseudonyms
    assert result.guarantee["kind"] == FULL_KIND and result.guarantee["row_level"]
    window.go_to(REPORT_STEP)
    assert "epsilon-differential privacy of the whole release" in window.pages[REPORT_STEP].privacy_label.text()
