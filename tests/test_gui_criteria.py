"""Step 4's privacy criteria (issue 33): a clinician asks "k >= 5 and distinct 3-diversity on occupation" with
generalization only, runs it to the export page and gets a release that verifies; the criteria follow the project
(saved, reopened) and go when another file is loaded; a stray wheel changes none of them; an edit in step 4 keeps the
project's other keys (search, lowest levels, sampling fraction, criteria set on the command line)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")

from conftest import shared_adult  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from test_gui_hierarchy_files import to_step_four  # noqa: E402
from test_gui_kind_change import adult_subset, choose, load  # noqa: E402
from test_gui_wheel import _wheel  # noqa: E402
from window_files import export_release  # noqa: E402

from ppdp_desktop.core.data.released import read_release  # noqa: E402
from ppdp_desktop.core.release.analysis import verify_release  # noqa: E402

ROLES_STEP, SENSITIVITY_STEP, METHOD_STEP, RUN_STEP, REPORT_STEP, EXPORT_STEP = 1, 2, 3, 4, 5, 6
QUASI = ["age", "sex", "race", "marital-status"]
PASSPHRASE = "correct horse battery staple 9"


def _click(qtbot, widget) -> None:
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=QPoint(8, widget.height() // 2))


def _type(qtbot, spin, text: str) -> None:
    """Select a spin box's text and type ``text``, then Tab out, as a person does."""
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Tab)


def _generalization_only(qtbot, window):
    page = window.pages[METHOD_STEP]
    card = page.cards["generalization"]
    page.scroll.ensureWidgetVisible(card.choose)
    _click(qtbot, card.choose)
    assert window.state.project.method == "generalization"
    return page


def test_k_five_and_distinct_three_diversity_run_to_a_release_that_verifies(window, qtbot, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 3000))
    section = to_step_four(window, "occupation", QUASI)
    page = _generalization_only(qtbot, window)
    section = page.protection
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    criteria = section.criteria
    assert "'occupation'" in section.criteria_title.text()
    page.scroll.ensureWidgetVisible(criteria.l_kind)
    assert not criteria.l_value.isEnabled()
    choose(qtbot, criteria.l_kind, "distinct")
    assert criteria.l_value.isEnabled() and not criteria.c_value.isVisible()
    _type(qtbot, criteria.l_value, "3")
    protection = window.state.project.protection
    assert protection["k"] == 5 and protection["l_diversity"] == 3 and protection["entropy_l"] is None
    assert page.is_complete()
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    generalization = window.state.outcome.main.reidentification.generalization
    assert generalization.criteria is not None and generalization.criteria.distinct_l == 3
    window.go_to(REPORT_STEP)
    export_release(qtbot, window, tmp_path / "release", PASSPHRASE, EXPORT_STEP)
    checks = verify_release(read_release(tmp_path / "release"))
    assert any(line.startswith("generalization only: nothing randomized") for line in checks)
    meta = json.loads((tmp_path / "release" / "release.json").read_text(encoding="utf-8"))
    asked = meta["reidentification"]["generalization"]["criteria"]
    assert asked["k"] == 5 and asked["distinct_l"] == 3


def test_the_criteria_follow_the_project_resist_the_wheel_and_go_with_another_file(window, qtbot, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 1500))
    section = to_step_four(window, "occupation", QUASI)
    criteria = section.criteria
    window.pages[METHOD_STEP].scroll.ensureWidgetVisible(criteria.local)
    window.next.setFocus()
    for widget in (criteria.l_kind, criteria.distance, criteria.average):  # a stray wheel changes nothing
        _wheel(widget)
    assert criteria.l_kind.currentIndex() == 0 and criteria.distance.currentIndex() == 0
    assert window.state.project.protection.get("l_diversity") is None
    choose(qtbot, criteria.l_kind, "recursive")
    assert criteria.c_value.isVisible()
    _type(qtbot, criteria.c_value, "2.5")
    _type(qtbot, criteria.l_value, "2")
    _click(qtbot, criteria.t_on)
    _type(qtbot, criteria.t_value, "0.3")
    choose(qtbot, criteria.distance, "hierarchical")
    _click(qtbot, criteria.highest_on)
    _type(qtbot, criteria.highest, "10")
    _click(qtbot, criteria.local)
    settings = window.state.project.protection_settings()
    assert settings.recursive == [2.5, 2] and settings.t_closeness == 0.3 and settings.t_distance == "hierarchical"
    assert settings.highest_risk == pytest.approx(0.1) and settings.average_risk is None and settings.local_recoding
    project = tmp_path / "adult.ppdp.json"
    assert window.save_project(project)
    assert window.open_project(project)
    qtbot.waitUntil(lambda: window.state.dataset is not None and not window.state.worker.is_running(), timeout=30_000)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    again = window.pages[METHOD_STEP].protection.criteria
    assert again.l_kind.currentData() == "recursive" and again.c_value.value() == 2.5 and again.l_value.value() == 2
    assert again.t_on.isChecked() and again.t_value.value() == 0.3 and again.distance.currentData() == "hierarchical"
    assert again.highest_on.isChecked() and again.highest.value() == 10.0 and not again.average_on.isChecked()
    assert again.local.isChecked()
    other = tmp_path / "other" / "adult.csv"
    other.parent.mkdir()
    lines = shared_adult().read_text(encoding="utf-8").splitlines()
    other.write_text("\n".join([lines[0], *lines[5001:6501]]) + "\n", encoding="utf-8")
    load(qtbot, window, other)
    assert not window.state.project.protection_settings().criteria_given
    criteria = to_step_four(window, "occupation", QUASI).criteria
    assert criteria.l_kind.currentData() is None and not criteria.t_on.isChecked() and not criteria.local.isChecked()
    assert not criteria.highest_on.isChecked()


def test_an_edit_in_step_four_keeps_the_keys_it_has_no_control_for(window, qtbot, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 1500))
    to_step_four(window, "occupation", QUASI)
    project = tmp_path / "adult.ppdp.json"
    assert window.save_project(project)
    data = json.loads(project.read_text(encoding="utf-8"))
    data["protection"].update(search="heuristic", min_levels={"age": 1}, sampling_fraction=0.01, l_diversity=3,
                              average_risk=0.05, local_recoding=True)  # e.g. written by the command line
    project.write_text(json.dumps(data), encoding="utf-8")
    assert window.open_project(project)
    qtbot.waitUntil(lambda: window.state.dataset is not None and not window.state.worker.is_running(), timeout=30_000)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    section = window.pages[METHOD_STEP].protection
    window.pages[METHOD_STEP].scroll.ensureWidgetVisible(section.k)
    _type(qtbot, section.k, "7")
    assert window.state.project.protection["k"] == 7
    assert window.save_project(project)
    saved = json.loads(project.read_text(encoding="utf-8"))["protection"]
    assert saved["k"] == 7 and saved["search"] == "heuristic" and saved["min_levels"] == {"age": 1}
    assert saved["sampling_fraction"] == 0.01 and saved["l_diversity"] == 3 and saved["average_risk"] == 0.05
    assert saved["local_recoding"] is True


def test_hierarchical_t_closeness_without_a_sensitive_taxonomy_is_refused_in_a_dialog(window, qtbot, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 1500))
    section = to_step_four(window, "occupation", QUASI)
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    criteria = section.criteria
    window.pages[METHOD_STEP].scroll.ensureWidgetVisible(criteria.t_on)
    _click(qtbot, criteria.t_on)
    choose(qtbot, criteria.distance, "hierarchical")
    assert "needs a taxonomy of the sensitive column with groups" in criteria.t_note.text()
    assert window.state.project.protection["t_distance"] == "hierarchical"
    window.go_to(RUN_STEP)
    run = window.pages[RUN_STEP]
    qtbot.waitUntil(lambda: run.error_box is not None and run.error_box.isVisible(), timeout=120_000)
    assert "taxonomy" in run.error_box.text() and "occupation" in run.error_box.text(), run.error_box.text()
    assert window.state.outcome is None
