"""The window speaks of its own controls, and a compared method that cannot run does not stop the run."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from ppdp_desktop.gui.wording import window_words  # noqa: E402

METHOD_STEP, RUN_STEP = 3, 4


def test_command_line_options_become_window_controls():
    message = window_words("Perturbation partitioning needs one pair for all values: give --rho1 X --rho2 Y.")
    assert "--" not in message and "'The same requirement for every value' on step 3" in message
    assert "--" not in window_words("Randomized response needs the quasi-identifier columns: give --quasi COLS.")
    assert "--" not in window_words("--epsilon must be a number greater than 0; got -1.")


def test_a_compared_method_that_cannot_run_is_named_and_the_chosen_one_runs(window, qtbot):
    window.load_demo()  # the theta rule: partition cannot run with it
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    page.choose("finegrain", compare=["partition"])
    notes = page.notes.text()
    assert "Perturbation partitioning" in notes and "will not be run for comparison" in notes
    assert "'The same requirement for every value' on step 3" in notes and "--rho1" not in notes
    assert page.is_complete()  # the chosen method is fine
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    assert [r.method for r in window.state.outcome.reports] == ["finegrain"]
    summary = window.pages[RUN_STEP].summary_label.text()
    assert "was not run for comparison" in summary and "--" not in summary


def test_the_chosen_method_that_cannot_run_blocks_the_step_in_window_words(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    page.choose("partition")
    assert not page.is_complete()
    assert "step 3" in page.notes.text() and "--" not in page.notes.text()


def test_grading_a_quasi_identifier_decides_its_role(window, qtbot):
    """age is a quasi-identifier; ticking it for grading says what happens and the run goes through."""
    from PySide6.QtCore import Qt

    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    page.choose("personalized")
    editor = page.editors["personalized"]
    item = editor.graded.findItems("age", Qt.MatchFlag.MatchExactly)[0]
    item.setCheckState(Qt.CheckState.Checked)  # as a click on its box does
    assert "age: a quasi-identifier; grading protects it" in editor.note.text()
    settings = window.state.project.settings()
    assert "age" not in settings.quasi and settings.options.graded == ["age"]
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None or bool(window.pages[RUN_STEP].error_label.text()),
                    timeout=120_000)
    assert window.pages[RUN_STEP].error_label.text() == "" and window.state.outcome is not None
