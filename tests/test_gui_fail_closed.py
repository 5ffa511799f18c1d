"""Every error reaches a dialog (issue 16, point 8): the report page shows a partition run, and a
malformed project file is refused in a dialog naming the field, with the window still usable."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")

from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.core.jobs import run_job  # noqa: E402
from ppdp_desktop.core.progress import CancelToken, no_progress  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings  # noqa: E402
from ppdp_desktop.gui import main_window as main_window_module  # noqa: E402
from ppdp_desktop.gui.pages.report_page import ReportPage  # noqa: E402
from ppdp_desktop.gui.state import WizardState  # noqa: E402


def test_the_report_page_shows_a_partition_run(qtbot):
    dataset = load_table(resource_path(DEMO_DATA))
    settings = AnonymizationSettings("diagnosis", method="partition", identifiers=["patient_id", "name"],
                                     sensitivity=SensitivitySettings(rho1=0.1, rho2=0.5), seed=3)
    outcome = run_job(dataset, [settings], no_progress, CancelToken())
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    state.set_outcome(outcome)  # used to raise TypeError: partition has no retention per value
    assert page.value_table.rowCount() == len(outcome.reports[0].values)
    retention_column = [page.value_table.horizontalHeaderItem(c).text() for c in
                        range(page.value_table.columnCount())].index("Retention p") \
        if any(page.value_table.horizontalHeaderItem(c).text() == "Retention p"
               for c in range(page.value_table.columnCount())) else None
    if retention_column is not None:
        assert page.value_table.item(0, retention_column).text() == "-"


def _project(tmp_path, **fields):
    data = {**Project().to_json(), **fields}
    path = tmp_path / "p.ppdp"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("fields, named", [
    ({"roles": "age=sensitive"}, "'roles'"),
    ({"theta": "abc"}, "'theta'"),
    ({"pairs": "x"}, "'pairs'"),
    ({"options": {"personalized": {"categories": "many"}}}, "'options.personalized'"),
    ({"method": "magic"}, "'method'"),
    ({"default_choice": 7}, "'default_choice'"),
    ({"taxonomies": {"diagnosis": "flat"}}, "'taxonomies'"),
])
def test_a_malformed_project_is_refused_in_a_dialog_naming_the_field(window, qtbot, tmp_path, monkeypatch,
                                                                     fields, named):
    shown = []
    monkeypatch.setattr(main_window_module.QMessageBox, "warning",
                        lambda _parent, title, text, *a, **k: shown.append((title, text)))
    assert not window.open_project(_project(tmp_path, **fields))
    assert len(shown) == 1 and named in shown[0][1] and "p.ppdp" in shown[0][1]
    window.load_demo()  # the window is still usable
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert "Reading" not in window.pages[0].message.text()


def test_an_exception_escaping_a_slot_reaches_a_dialog(window, monkeypatch):
    import sys

    from ppdp_desktop.gui import app

    shown = []
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    monkeypatch.setattr(app.QMessageBox if hasattr(app, "QMessageBox") else __import__(
        "PySide6.QtWidgets", fromlist=["QMessageBox"]).QMessageBox, "critical",
        lambda _parent, title, text, *a, **k: shown.append((title, text)))
    app.install_error_dialog(window)
    try:
        raise TypeError("'NoneType' object is not subscriptable")
    except TypeError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    assert shown and "Unexpected error: TypeError" in shown[0][1] and "stays usable" in shown[0][1]
