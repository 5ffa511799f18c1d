"""Step 4's "keep at least as" per quasi-identifier, the metric and the weights, and the report's table of the best
generalizations (issue 33): a clinician keeps age in 10-year bands with the mouse and the keys, runs, reads what it
cost and the runners-up, saves and reopens the project, and loads another file."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from conftest import shared_adult  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from test_gui_hierarchy_files import to_step_four  # noqa: E402
from test_gui_kind_change import adult_subset, answer_question, choose, kind_combo, load  # noqa: E402
from test_gui_wheel import _wheel  # noqa: E402

from ppdp_desktop.core.data.schema import Kind, Role  # noqa: E402
from ppdp_desktop.gui.pages.roles_page import CHANGE_KIND  # noqa: E402

ROLES_STEP, SENSITIVITY_STEP, METHOD_STEP, RUN_STEP, REPORT_STEP = 1, 2, 3, 4, 5
QUASI = ["age", "race", "marital-status", "native-country"]  # on these 4,000 records the plain optimum releases age as *


def test_keep_age_in_ten_year_bands_run_report_save_reopen_and_a_new_file(window, qtbot, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 4000))
    section = to_step_four(window, "occupation", QUASI)
    keep = section.keeps["age"]
    assert keep.level.currentText() == "any level (give its hierarchy first)" and not keep.level.isEnabled()
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    offered = [keep.level.itemText(i) for i in range(keep.level.count())]
    assert offered[0] == "any level" and offered[1].startswith("exact values (")
    assert offered[2].startswith("5-year bands (") and offered[3].startswith("10-year bands (") and len(offered) == 5
    example = offered[3].split("(")[1].split(", ")[0]  # a band of the column's own values, e.g. 30-39
    low, high = map(int, example.split("-"))
    assert high - low == 9 and low % 10 == 0
    # a stray wheel over the combo changes nothing; the mouse and the keys do
    section.window().next.setFocus()
    _wheel(keep.level)
    assert keep.level.currentIndex() == 0 and not window.state.project.protection.get("max_levels")
    choose(qtbot, keep.level, "10-year bands")
    assert window.state.project.protection["max_levels"] == {"age": 2}
    choose(qtbot, section.metric_choice, "fewest generalization steps")
    assert window.state.project.protection["metric"] == "precision"
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    main = window.state.outcome.main
    generalization = main.reidentification.generalization
    assert generalization.levels["age"] == 2 and generalization.cost is not None
    released = set(main.table["age"].astype(str)) - {"*"}
    assert released and released <= set(generalization.hierarchies["age"].labels(2))
    assert all(int(b) - int(a) == 9 for a, b in (label.split("-") for label in released))  # 10-year bands
    window.go_to(REPORT_STEP)
    report = window.pages[REPORT_STEP]
    text = report.privacy_label.text()
    assert "Levels allowed: age 0-2." in text and "What these choices cost: precision loss" in text
    assert "levels age 4," in text  # the best node without the choice releases age as *
    assert "age (quasi-identifier): generalized to coarser categories (level 2 of 4 of its hierarchy: 10-year bands)." \
        in report.brief_label.text()
    # the runners-up of the same search, in words, next to the chosen one
    report.sections.setCurrentIndex(1)
    assert report.alternatives_area.isVisible()
    rows = report.alternatives.rows()
    headings = [report.alternatives.table.horizontalHeaderItem(c).text() for c in range(report.alternatives.table.columnCount())]
    assert headings == ["", "Suppressed records", "Precision loss", *QUASI]
    assert 2 <= len(rows) <= 5 and rows[0][0] == "chosen" and rows[1][0] == "2."
    assert rows[0][3] == "10-year bands" and rows[0][1] == f"{generalization.suppressed:,}"
    assert report.alternatives.table.item(0, 3).toolTip().startswith("age: 10-year bands (")  # with labels of age
    assert all(row[3] in ("exact values", "5-year bands", "10-year bands") for row in rows)  # within the bound
    assert [float(row[2]) for row in rows] == sorted(float(row[2]) for row in rows)
    # saved with the project and shown again
    project = tmp_path / "adult.ppdp.json"
    assert window.save_project(project)
    assert window.open_project(project)
    qtbot.waitUntil(lambda: window.state.dataset is not None and not window.state.worker.is_running(), timeout=30_000)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    again = window.pages[METHOD_STEP].protection
    assert again.keeps["age"].level.currentText().startswith("10-year bands (")
    assert again.metric_choice.currentData() == "precision"
    assert window.state.project.protection_settings().max_levels == {"age": 2}
    # another file: the choice is gone
    other = tmp_path / "other" / "adult.csv"
    other.parent.mkdir()
    lines = shared_adult().read_text(encoding="utf-8").splitlines()
    other.write_text("\n".join([lines[0], *lines[5001:8001]]) + "\n", encoding="utf-8")
    load(qtbot, window, other)
    assert window.state.project.protection_settings().max_levels == {}
    section = to_step_four(window, "occupation", QUASI)
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    assert section.keeps["age"].level.currentText() == "any level"
    assert window.state.project.protection_settings().max_levels == {}


def test_a_weight_keeps_a_column_finer_and_follows_the_hierarchy(window, qtbot, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 4000))
    section = to_step_four(window, "occupation", QUASI)
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    choose(qtbot, section.keeps["age"].level, "5-year bands")
    weight = section.keeps["race"].weight
    weight.setFocus()
    weight.selectAll()
    qtbot.keyClicks(weight, "3")
    qtbot.keyClick(weight, Qt.Key.Key_Tab)
    protection = window.state.project.protection
    assert protection["weights"] == {"race": 3.0} and protection["max_levels"] == {"age": 1}
    # other levels: the 5-year bands are gone, so is the bound (never another level in its place unasked)
    widths = section.widths["age"]
    widths.selectAll()
    qtbot.keyClicks(widths, "10")
    offered = [section.keeps["age"].level.itemText(i) for i in range(section.keeps["age"].level.count())]
    assert len(offered) == 3 and offered[2].startswith("10-year bands (")
    assert section.keeps["age"].level.currentText() == "any level" and window.state.project.protection["max_levels"] == {}
    widths.selectAll()
    qtbot.keyClicks(widths, "5,20")  # the 5-year bands are back, and so is the choice (kept while typing "5,2")
    assert section.keeps["age"].level.currentText().startswith("5-year bands (")
    assert window.state.project.protection["max_levels"] == {"age": 1}
    # age read as categorical (step 2) loses its widths, and with them the bound on its levels
    window.go_to(ROLES_STEP)
    seen: list[str] = []
    answer_question(qtbot, CHANGE_KIND, seen)  # "its interval widths 5,20 (step 4) …": yes
    choose(qtbot, kind_combo(window.pages[ROLES_STEP], "age"), "categorical")
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["age"].kind is Kind.CATEGORICAL, timeout=30_000)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    assert len(seen) == 1 and "interval widths 5,20" in seen[0]
    assert window.state.project.protection_settings().max_levels == {}
    assert window.pages[METHOD_STEP].protection.keeps["age"].level.currentText() == "any level"
    # untagging a column drops its weight
    window.go_to(ROLES_STEP)
    window.pages[ROLES_STEP].set_role("race", Role.INSENSITIVE)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    assert "race" not in window.state.project.protection_settings().weights


@pytest.fixture(autouse=True)
def _adult_present():
    shared_adult()  # skipped (or failed in CI) without the shared data
