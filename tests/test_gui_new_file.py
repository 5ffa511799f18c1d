"""State from the previous file (issue 31, point 8): a second file starts every choice at its default and says so;
a read shows its progress with a Cancel that keeps the file (and project) in use; the steps wait while a file is
read."""
from __future__ import annotations

import threading

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtWidgets import QCheckBox, QMessageBox, QRadioButton, QScrollArea  # noqa: E402

from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.methods import DEFAULT_METHOD  # noqa: E402
from ppdp_desktop.core.project import Project  # noqa: E402
from tests.clinical_data import write_clinical_xlsx  # noqa: E402
from tests.window_files import Questions, dialogs, loaded, menu_action, open_data, press  # noqa: E402

ROLES_STEP, SENSITIVITY_STEP, METHOD_STEP, RUN_STEP, EXPORT_STEP = 1, 2, 3, 4, 6
Button = QMessageBox.StandardButton


def _ward_file(tmp_path, name: str = "ward.csv"):
    frame = pd.DataFrame({
        "mrn": [f"M{i:05d}" for i in range(600)],
        "ward": [f"W{i % 7}" for i in range(600)],
        "condition": [["Flu", "Asthma", "Stroke", "Gout", "Angina", "Colitis"][i % 6] for i in range(600)],
    })
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def _click(qtbot, widget) -> None:
    """Scroll ``widget`` into view (a click lands on what is on screen there), then click it."""
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    if parent is not None:
        parent.ensureWidgetVisible(widget)
    box = isinstance(widget, (QCheckBox, QRadioButton))  # only its mark and its words take the click
    qtbot.mouseClick(widget, Qt.MouseButton.LeftButton, pos=QPoint(8, widget.height() // 2) if box else widget.rect().center())


def _click_step(qtbot, window, index: int) -> None:
    """Click step ``index`` in the list of steps, as a person does."""
    steps = window.steps
    qtbot.mouseClick(steps.viewport(), Qt.MouseButton.LeftButton, pos=steps.visualItemRect(steps.item(index)).center())
    assert window.stack.currentIndex() == index


def test_a_second_file_starts_every_choice_at_its_default_and_says_so(window, qtbot, tmp_path, monkeypatch):
    chooser = dialogs(monkeypatch)
    Questions(monkeypatch, Button.Yes)  # "discard the settings made for ward.csv?": yes
    open_data(qtbot, window, chooser, _ward_file(tmp_path))
    roles = window.pages[ROLES_STEP]
    _click_step(qtbot, window, ROLES_STEP)
    roles.set_role("condition", Role.SENSITIVE)
    roles.set_role("mrn", Role.IDENTIFIER)
    roles.set_role("ward", Role.QUASI_IDENTIFIER)
    _click_step(qtbot, window, SENSITIVITY_STEP)
    _click(qtbot, window.pages[SENSITIVITY_STEP].rule_pair)  # the same requirement for every value
    _click_step(qtbot, window, METHOD_STEP)
    method = window.pages[METHOD_STEP]
    _click(qtbot, method.cards["uniform"].choose)
    _click(qtbot, method.protection.enabled)  # k-anonymity, k = 10
    qtbot.keyClick(method.protection.k, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(method.protection.k, "10")
    _click_step(qtbot, window, RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None or bool(window.pages[RUN_STEP].error_label.text()),
                    timeout=120_000)
    assert window.state.outcome is not None, window.pages[RUN_STEP].error_label.text()
    _click_step(qtbot, window, EXPORT_STEP)
    export = window.pages[EXPORT_STEP]
    export.format_combo.setFocus()
    qtbot.keyClick(export.format_combo, Qt.Key.Key_Down)  # Excel
    _click(qtbot, export.overwrite_check)
    project = window.state.project
    assert (project.method, project.rho1, project.protection_settings().k) == ("uniform", 0.1, 10)
    assert export.format_combo.currentData() == "xlsx" and export.overwrite_check.isChecked()

    open_data(qtbot, window, chooser, write_clinical_xlsx(tmp_path / "clinical.xlsx", n=300))  # the second file
    message = window.pages[0].message.text()
    assert "Settings start afresh" in message and "only the signing key" in message, message
    assert "untitled project" in window.windowTitle()
    project = window.state.project
    assert (project.method, project.rho1, project.protection_settings().k) == (DEFAULT_METHOD, None, None)
    _click_step(qtbot, window, ROLES_STEP)
    roles.set_role("Hauptdiagnose (ICD-10)", Role.SENSITIVE)
    _click_step(qtbot, window, SENSITIVITY_STEP)
    assert window.pages[SENSITIVITY_STEP].rule_theta.isChecked()
    _click_step(qtbot, window, METHOD_STEP)
    assert method.cards[DEFAULT_METHOD].choose.isChecked() and not method.cards["uniform"].choose.isChecked()
    assert not method.protection.enabled.isChecked() and method.protection.k.value() == 5
    assert export.format_combo.currentData() == "csv" and not export.overwrite_check.isChecked()
    assert export.folder_edit.text() == "" and window.pages[RUN_STEP].summary_label.text() == ""


class SlowReads:
    """From :meth:`start` on, every read of a whole file waits at a gate until the test opens it (a large file,
    without a clock): ``began`` is set once a read waits."""

    def __init__(self, monkeypatch) -> None:
        self.gate, self.began, self._monkeypatch = threading.Event(), threading.Event(), monkeypatch

    def start(self) -> None:
        from ppdp_desktop.core import jobs  # the load page imports load_job from it when a read starts

        real = jobs.load_job

        def slow(path, options, progress, cancel):
            self.began.set()
            self.gate.wait(60)
            return real(path, options, progress, cancel)

        self._monkeypatch.setattr(jobs, "load_job", slow)


@pytest.fixture
def slow_reads(window, monkeypatch):
    reads = SlowReads(monkeypatch)
    yield reads
    reads.gate.set()  # before the window's worker is shut down


def test_a_read_shows_progress_and_cancel_keeps_the_file_in_use(window, qtbot, tmp_path, monkeypatch, slow_reads):
    chooser = dialogs(monkeypatch)
    first, second = _ward_file(tmp_path), _ward_file(tmp_path, "other.csv")
    open_data(qtbot, window, chooser, first)
    assert window.next.isEnabled()
    page = window.pages[0]
    slow_reads.start()
    try:
        chooser.path = str(second)
        _click(qtbot, page.open_button)
        qtbot.waitUntil(slow_reads.began.is_set, timeout=30_000)
        qtbot.waitUntil(page.progress.isVisible, timeout=5_000)
        assert page.progress.cancel_button.isEnabled() and page.message.text() == "Reading other.csv…"
        assert not window.next.isEnabled() and not window.steps.isEnabled()
        press(qtbot, window, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)  # Next: the steps wait
        assert window.stack.currentIndex() == 0
        _click(qtbot, page.progress.cancel_button)
        assert not page.progress.isVisible() and not page.loading()
        assert "Cancelled" in page.message.text() and "ward.csv" in page.message.text(), page.message.text()
        assert loaded(window, first) and window.next.isEnabled() and window.steps.isEnabled()
    finally:
        slow_reads.gate.set()
    assert window.state.worker.wait(30_000)
    qtbot.wait(200)  # the abandoned read's late result arrives, and is dropped
    assert loaded(window, first) and "mrn" in window.state.dataset.frame.columns
    _click(qtbot, window.next)
    assert window.stack.currentIndex() == ROLES_STEP  # the file in use is usable


def test_cancelling_the_read_of_a_project_keeps_the_project_in_use(window, qtbot, tmp_path, monkeypatch, slow_reads):
    chooser = dialogs(monkeypatch)
    first, second = _ward_file(tmp_path), _ward_file(tmp_path, "other.csv")
    open_data(qtbot, window, chooser, first)
    chooser.path = str(tmp_path / "ward.ppdp.json")
    press(qtbot, window, Qt.Key.Key_S)
    assert window.project_path == chooser.path
    other = tmp_path / "other.ppdp.json"
    Project(data_path=str(second), method="rr").save(other)
    slow_reads.start()
    try:
        chooser.path = str(other)
        menu_action(window, "Open &project…").trigger()
        qtbot.waitUntil(slow_reads.began.is_set, timeout=30_000)
        _click(qtbot, window.pages[0].progress.cancel_button)
        assert "other.ppdp.json was not opened" in window.pages[0].message.text()
        assert window.project_path == str(tmp_path / "ward.ppdp.json") and window.state.project.method == DEFAULT_METHOD
        assert loaded(window, first)
    finally:
        slow_reads.gate.set()
    assert window.state.worker.wait(30_000)
    qtbot.wait(200)
    assert loaded(window, first) and window.state.project.method == DEFAULT_METHOD
