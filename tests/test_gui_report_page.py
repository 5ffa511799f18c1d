"""The report page, offscreen: summaries, the per-value table, figure tabs and the comparison table."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QLabel  # noqa: E402

from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.core.jobs import run_job  # noqa: E402
from ppdp_desktop.core.progress import CancelToken, no_progress  # noqa: E402
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings  # noqa: E402
from ppdp_desktop.gui.pages.report_page import EMPTY_TEXT, ReportPage  # noqa: E402
from ppdp_desktop.gui.state import WizardState  # noqa: E402


@pytest.fixture(scope="module")
def outcome():
    dataset = load_table(resource_path(DEMO_DATA))
    settings = [
        AnonymizationSettings("diagnosis", method=method, identifiers=["patient_id", "name"],
                              sensitivity=SensitivitySettings(theta=3), seed=11)
        for method in ("finegrain", "uniform")
    ]
    return run_job(dataset, settings, no_progress, CancelToken())


def _images(page: ReportPage) -> list[QLabel]:
    return [page.tabs.widget(i).widget() for i in range(page.tabs.count())]


def test_empty_page_asks_for_a_run(qtbot):
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    assert not page.is_complete()
    assert page.empty_label.text() == EMPTY_TEXT
    assert page.content.isHidden() and not page.empty_label.isHidden()


def test_page_shows_the_reports(qtbot, outcome):
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    with qtbot.waitSignal(page.complete_changed, timeout=1000):
        state.set_outcome(outcome)
    assert page.is_complete()
    assert page.empty_label.isHidden() and not page.content.isHidden()
    assert "verified" in page.privacy_label.text()
    assert "epsilon" in page.privacy_label.text()
    assert "record utility" in page.utility_label.text()
    main = outcome.reports[0]
    assert page.value_table.rowCount() == len(main.values)
    assert page.value_table.item(0, 0).text() == main.values[0]
    images = _images(page)
    assert page.tabs.count() == len(main.figures) == 3
    assert set(main.images) == set(main.figures)  # drawn by the job in the worker, before the page shows them
    assert all(isinstance(i, QLabel) and not i.pixmap().isNull() for i in images)
    brief = page.brief_label.text()
    assert "What was released" in brief and "What the release is good for" in brief
    assert "Sensitive values (diagnosis): protected, checked before the release was written" in brief
    assert outcome.pages[0].released[0] in brief
    assert not page.comparison_box.isHidden()
    assert page.comparison_table.rowCount() == 2
    assert page.comparison_table.item(0, 0).text() == "Fine-grain perturbation"
    assert page.comparison_table.item(1, 0).text() == "Uniform perturbation"


def test_switching_report_and_clearing(qtbot, outcome):
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    state.set_outcome(outcome)
    page.report_choice.setCurrentIndex(1)
    assert page.utility_label.text().startswith("<b>Uniform perturbation</b>")
    page.refresh()  # showing the page again keeps the chosen report
    assert page.report_choice.currentIndex() == 1
    state.set_outcome(None)
    assert not page.is_complete()
    assert page.content.isHidden() and not page.empty_label.isHidden()


def test_personalized_says_no_formal_guarantee(qtbot):
    from ppdp_desktop.core.data.resources import DEMO_TAXONOMY
    from ppdp_desktop.core.methods.personalized.settings import RecodingSettings

    dataset = load_table(resource_path(DEMO_DATA))
    recoding = RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)), graded=["income"])
    settings = AnonymizationSettings("diagnosis", method="personalized", identifiers=["patient_id", "name"],
                                     options=recoding, seed=3)
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    state.set_outcome(run_job(dataset, [settings], no_progress, CancelToken()))
    assert "No formal privacy guarantee" in page.privacy_label.text()
    assert page.comparison_box.isHidden()  # one report: nothing to compare
    assert page.value_table.horizontalHeaderItem(0).text() == "Published as"
    assert page.value_table.rowCount() == 3
    assert page.tabs.count() == 2


def test_does_my_analysis_survive_runs_in_the_background(qtbot, outcome):
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    state.set_outcome(outcome)
    assert page.models.target.currentText() == "diagnosis"  # the sensitive column by default
    page.models.target.setCurrentText("sex")
    assert page.models.button.isEnabled()
    with qtbot.waitSignal(page.models.worker.finished, timeout=60_000):
        qtbot.mouseClick(page.models.button, Qt.MouseButton.LeftButton)
        assert not page.models.button.isEnabled()  # one comparison at a time
    assert "A decision tree predicting sex is right for" in page.models.label.text()
    assert not page.models.table.isHidden() and page.models.table.rowCount() > 0
    assert page.models.button.isEnabled()
    state.set_outcome(None)  # a new outcome forgets the old comparison
    assert page.models.target.count() == 0
    page.shutdown()
