"""The window speaks of its own controls: a core message refers to a setting by its key and the window names
the control that sets it (a plug-in's own setting by its declared label, with no code in the window); a compared
method that cannot run does not stop the run."""
from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from ppdp_desktop.core.data.dataset import Dataset  # noqa: E402
from ppdp_desktop.core.errors import ParameterError, ReleaseError, phrase, setting_keys, setting_ref  # noqa: E402
from ppdp_desktop.core.methods import get_method, register, unregister  # noqa: E402
from ppdp_desktop.core.release.package import check_destination  # noqa: E402
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings  # noqa: E402
from ppdp_desktop.gui.wording import window_name  # noqa: E402
from ppdp_desktop.gui.worker import describe_error  # noqa: E402
from tests.toy_method import TOY, ToyMethod, ToySettings  # noqa: E402

METHOD_STEP, RUN_STEP = 3, 4
MARK = "\x1f"  # the reference marker of core.errors: never shown


def _window(error: ParameterError) -> str:
    text = error.phrase(window_name)
    assert MARK not in text and "--" not in text, text
    return text


def test_a_real_core_error_names_the_window_control_and_the_command_line_option():
    frame = pd.DataFrame({"zip": ["a", "b"], "dx": ["x", "y"]})
    with pytest.raises(ParameterError) as caught:
        get_method("rr").prepare(Dataset(frame), AnonymizationSettings(sensitive="dx", method="rr"))  # no l
    error = caught.value
    assert "needs --l greater than 1" in str(error)  # the command line's phrasing is str()
    assert error.setting == "l" and setting_keys(error.message) == ["l"]
    assert "on the method page (step 4) greater than 1" in _window(error)


def test_the_sensitivity_rule_and_the_quasi_identifiers_are_named_by_their_steps():
    with pytest.raises(ParameterError) as caught:
        SensitivitySettings().requirement(None)  # no rule at all: checked before the domain is read
    words = _window(caught.value)
    assert "rho1 of 'The same requirement for every value' (step 3)" in words and "theta" in words
    assert "--rho1 X" in str(caught.value) and "--theta T" in str(caught.value)
    frame = pd.DataFrame({"zip": ["a", "b"], "dx": ["x", "y"]})
    with pytest.raises(ParameterError) as caught:
        get_method("rr").prepare(Dataset(frame), AnonymizationSettings(sensitive="dx", method="rr",
                                                                       options=get_method("rr").settings_type(l=2.0)))
    assert "the Quasi-identifier role on step 2" in _window(caught.value) and "--quasi COLS" in str(caught.value)


def test_a_method_setting_out_of_range_names_its_declared_label_on_the_method_page():
    settings = get_method("dp-microagg").settings_type(epsilon=-1.0)
    with pytest.raises(ParameterError) as caught:
        settings.check()
    assert caught.value.setting == "epsilon" and caught.value.value == -1.0
    assert "--epsilon must be" in str(caught.value)
    assert "on the method page (step 4)" in _window(caught.value) and "epsilon" in _window(caught.value).lower()


def test_a_new_plugin_methods_message_comes_through_in_the_windows_words():
    """The toy registers at test time; nothing in the window knows it, yet its parameter is named by its label."""
    register(ToyMethod())
    try:
        with pytest.raises(ParameterError) as caught:
            ToySettings(strength=2.0).check()
        error = caught.value
        assert "--toy-strength must be a number from 0 to 1; got 2.0." == str(error)
        words = _window(error)
        assert words.endswith("on the method page (step 4) must be a number from 0 to 1; got 2.0.")
        assert "strength" in words.lower() and "toy-strength" not in words
        problems = get_method(TOY).precheck(AnonymizationSettings(sensitive="dx", method=TOY,
                                                                  options=ToySettings(strength=2.0)))
        assert problems and setting_keys(problems[0]) == ["toy-strength"]  # kept for each face to phrase
        assert phrase(problems[0], window_name) == words
    finally:
        unregister(TOY)
    assert window_name("toy-strength") == "toy-strength"  # an unknown key is shown as it is


def test_the_worker_and_the_export_check_speak_the_windows_words(tmp_path):
    message, details = describe_error(ParameterError(f"Give them {setting_ref('quasi', 'COLS')}.", setting="quasi"))
    assert message == "Give them the Quasi-identifier role on step 2." and details == ""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x.txt").write_text("not a release")
    with pytest.raises(ReleaseError) as caught:
        check_destination(tmp_path / "out", None, False)
    assert "--out" in str(caught.value) and "--overwrite" in str(caught.value)
    words = _window(caught.value)
    assert "'Release folder' on the export page" in words and "'Overwrite an existing release folder" in words


def test_a_compared_method_that_cannot_run_is_named_and_the_chosen_one_runs(window, qtbot):
    window.load_demo()  # the theta rule: partition cannot run with it
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    page.choose("finegrain", compare=["partition"])
    notes = page.notes.text()
    assert "Perturbation partitioning" in notes and "will not be run for comparison" in notes
    assert "rho1 of 'The same requirement for every value' (step 3)" in notes and "--rho1" not in notes
    assert MARK not in notes
    assert page.is_complete()  # the chosen method is fine
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    assert [r.method for r in window.state.outcome.reports] == ["finegrain"]
    summary = window.pages[RUN_STEP].summary_label.text()
    assert "was not run for comparison" in summary and "--" not in summary and MARK not in summary
    assert "(step 3)" in summary


def test_the_chosen_method_that_cannot_run_blocks_the_step_in_window_words(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    page.choose("partition")
    assert not page.is_complete()
    assert "step 3" in page.notes.text() and "--" not in page.notes.text() and MARK not in page.notes.text()


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
