"""Every error reaches a dialog (issue 16, point 8), driven through the window as a person would: a
partition run shows its report; a malformed project file is refused in a dialog naming the field and the
window stays usable; step 1 never stays at "Reading …"; an exception escaping a slot is shown in a dialog."""
from __future__ import annotations

import json
import shutil
import sys

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton  # noqa: E402

from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.core.demo import DEMO_ROLES, demo_taxonomy  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402
from ppdp_desktop.gui import app  # noqa: E402
from ppdp_desktop.gui import main_window as main_window_module  # noqa: E402
from ppdp_desktop.gui.pages.report_page import VALUE_COLUMNS  # noqa: E402


def _wait_idle(qtbot, window, timeout=60_000):
    qtbot.waitUntil(lambda: not window.state.worker.is_running(), timeout=timeout)


def _load_demo(qtbot, window):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)


def _warnings(monkeypatch):
    shown = []
    monkeypatch.setattr(main_window_module.QMessageBox, "warning",
                        lambda _parent, title, text, *a, **k: shown.append((title, text)))
    return shown


def test_a_partition_run_shows_its_report_and_its_project_opens_again(window, qtbot, tmp_path, monkeypatch):
    _load_demo(qtbot, window)
    window.go_to(2)
    window.pages[2].rule_pair.setChecked(True)  # partition needs one (rho1, rho2) pair for all values
    window.go_to(3)
    window.pages[3].choose("partition")
    window.go_to(4)  # the run starts on arrival
    assert window.stack.currentIndex() == 4
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)  # used to raise a TypeError here
    window.go_to(5)
    assert window.stack.currentIndex() == 5
    report, table = window.state.outcome.reports[0], window.pages[5].value_table
    assert report.method == "partition" and report.retention is None
    assert table.rowCount() == len(report.values) > 0
    retention = list(VALUE_COLUMNS).index("Retention p")
    assert {table.item(r, retention).text() for r in range(table.rowCount())} == {"-"}
    # The project the window saves for this run opens again without a refusal.
    shown = _warnings(monkeypatch)
    assert window.save_project(tmp_path / "partition.ppdp.json")
    assert window.open_project(tmp_path / "partition.ppdp.json") and shown == []
    assert window.state.project.method == "partition"


def _project(tmp_path, **fields):
    project = Project(data_path=str(resource_path(DEMO_DATA)), roles={c: r.value for c, r in DEMO_ROLES.items()})
    project.set_taxonomy(demo_taxonomy())
    path = tmp_path / "p.ppdp"
    path.write_text(json.dumps({**project.to_json(), **fields}), encoding="utf-8")
    return path


@pytest.mark.parametrize("fields, named", [
    # the four, which raised in the event loop
    ({"roles": "age=sensitive"}, "'roles'"),
    ({"theta": "abc"}, "'theta'"),
    ({"pairs": "x"}, "'pairs'"),
    ({"options": {"personalized": {"categories": "many"}}}, "'options.personalized.categories'"),
    # found alongside them: each raised in a slot or left step 1 at "Reading …"
    ({"taxonomies": {"diagnosis": {"root": {"label": "*", "children": "x"}}}}, "'taxonomies.diagnosis'"),
    ({"taxonomies": {"diagnosis": {}}}, "'taxonomies.diagnosis'"),
    ({"protection": {"k": "ten"}}, "'protection.k'"),
    ({"protection": {"threshold": "x"}}, "'protection.threshold'"),
    ({"protection": {"intervals": "x"}}, "'protection.intervals'"),
    ({"options": {"dp-microagg": {"attributes": 5}}}, "'options.dp-microagg.attributes'"),
    ({"pairs": {"Asthma": [2, 0.1]}}, "'pairs'"),
    ({"load_options": {"sep": 5}}, "'load_options.sep'"),
    ({"method": None}, "'method'"),
    ({"rho1": 0.5}, "'rho2'"),
])
def test_a_malformed_project_is_refused_in_a_dialog_naming_the_field(window, qtbot, tmp_path, monkeypatch,
                                                                     fields, named):
    shown = _warnings(monkeypatch)
    window.open_project(_project(tmp_path, **fields))
    _wait_idle(qtbot, window)
    for index in range(len(window.pages)):  # walk the wizard: nothing raises in a slot
        window.go_to(index)
        _wait_idle(qtbot, window)
    assert len(shown) == 1, shown
    title, text = shown[0]
    assert title == "Cannot open the project" and text.startswith(f"p.ppdp: field {named}"), text
    assert window.state.dataset is None and window.project_path is None
    _load_demo(qtbot, window)  # the window is still usable
    assert "Reading" not in window.pages[0].message.text()


def test_a_read_replaced_by_a_run_does_not_stay_at_reading(window, qtbot, tmp_path):
    _load_demo(qtbot, window)
    other = tmp_path / "patients-copy.csv"
    shutil.copy(resource_path(DEMO_DATA), other)
    page = window.pages[0]
    page.load(other)
    assert page.message.text() == "Reading patients-copy.csv…"
    window.go_to(4)
    window.pages[4].run_button.click()  # the run takes the worker: the read is cancelled
    _wait_idle(qtbot, window, 120_000)
    assert page.message.text().startswith("Reading patients-copy.csv was stopped before it finished")
    assert window.state.project.data_path == str(resource_path(DEMO_DATA))  # the data in use stays


def test_a_kind_refused_on_step_2_does_not_leave_step_1_at_reading(window, qtbot):
    _load_demo(qtbot, window)
    window.go_to(1)
    roles = window.pages[1]
    row = list(window.state.dataset.frame.columns).index("diagnosis")
    combo = roles.table.cellWidget(row, 1)
    qtbot.wait(QApplication.keyboardInputInterval() + 100)
    combo.setFocus()
    qtbot.keyClicks(combo, "numeric")  # a kind the values do not fit: the file is read again, and refused
    qtbot.waitUntil(lambda: "was not changed" in roles.status.text(), timeout=30_000)
    window.go_to(0)
    assert "Reading" not in window.pages[0].message.text()
    assert "the data in use stays as it was" in window.pages[0].message.text()


def test_a_failure_taking_the_read_data_is_said_on_step_1(window, qtbot, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise RuntimeError("the data could not be taken")

    monkeypatch.setattr(window.state, "set_dataset", refuse)
    with qtbot.captureExceptions() as escaped:  # the window's error dialog shows it outside tests
        window.load_demo()
        _wait_idle(qtbot, window)
    assert [type(e[1]) for e in escaped] == [RuntimeError]
    text = window.pages[0].message.text()
    assert text.startswith("Could not load the file.") and "the data could not be taken" in text


def test_an_exception_escaping_a_slot_reaches_a_dialog(window, qtbot, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda _parent, title, text, *a, **k: shown.append((title, text)))
    button = QPushButton("boom", window)
    retention = None
    button.clicked.connect(lambda: retention[0])  # a TypeError in a slot, as the report page had
    captured = sys.excepthook  # pytest-qt's, which fails a test on an exception in a slot
    app.install_error_dialog(window)
    try:
        button.click()
        button.click()
    finally:
        sys.excepthook = captured
    assert len(shown) == 2
    title, text = shown[0]
    assert title == "Something went wrong" and text.startswith("Unexpected error: TypeError")
    _load_demo(qtbot, window)  # the window stays usable


def test_a_dp_project_with_only_some_keys_opens(window, qtbot, tmp_path):
    import json as _json

    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path

    path = tmp_path / "dp.ppdp"
    path.write_text(_json.dumps({"format": "ppdp-project", "version": 4, "data_path": str(resource_path(DEMO_DATA)),
                                 "method": "dp-microagg", "options": {"dp-microagg": {"attributes": ["age"]}}}),
                    encoding="utf-8")
    assert window.open_project(path)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(3)  # the method page shows the dp editor with the missing keys filled in
    options = window.state.project.options["dp-microagg"]
    assert options["attributes"] == ["age"] and options["epsilon"] is not None and options["k"] is not None
