"""Step 5a: run the chosen method (and those it is compared with) in the background.

The page only starts :func:`ppdp_desktop.core.jobs.run_job` through the state's worker and shows
what the worker reports: progress, stage, time left, and at the end a summary, an error or a
cancellation. The GUI thread never waits for the job.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QProgressBar, QPushButton, QVBoxLayout, QWidget

from ppdp_desktop.core.errors import ParameterError, phrase
from ppdp_desktop.core.jobs import RunOutcome, run_job
from ppdp_desktop.core.methods import get_method

# run_job imports the report module (and matplotlib) lazily; importing it here, on the GUI thread at
# start-up, keeps that import (C extensions hold the GIL) out of the first run.
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.gui.figure_images import decode_figures
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.wording import window_name

TASK = "run"
RunJob = Callable[..., RunOutcome]  # run_job(dataset, settings, progress, cancel)


def format_eta(seconds: float) -> str:
    """``"about 12 s left"``, ``"about 3 min left"``, or ``""`` when unknown."""
    if not math.isfinite(seconds):
        return ""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s left"
    return f"about {round(seconds / 60)} min left"


def run_settings(state: WizardState) -> list[AnonymizationSettings]:
    """The chosen method's settings first, then one per compared method.

    Raises
    ------
    ParameterError : nothing is loaded, no column is sensitive, or a setting is inconsistent.
    """
    if state.dataset is None:
        raise ParameterError("Load a data file (step 1) before running.")
    project = state.sync_project()
    taxonomies = dict(state.taxonomies)
    settings = [project.settings(taxonomies=taxonomies, seed=state.seed)]
    settings += [project.settings(method=m, taxonomies=taxonomies, seed=state.seed)
                 for m in project.compare if m != project.method]
    return settings


class RunPage(WizardPage):
    """Run button, progress bar (0..1000), stage and time-left labels, Cancel, and a summary."""

    title = "Run"
    help_anchor = "run"  # its section of the user guide (F1)

    def __init__(self, state: WizardState, parent: QWidget | None = None, job: RunJob = run_job) -> None:
        super().__init__(state, parent)
        self._job = job
        self._started_at = 0.0
        self._records = 0
        self._running = False
        self.error_box: QMessageBox | None = None

        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.run_button.setToolTip("Anonymize the data again with the chosen method and settings (the run checks the "
                                   "guarantee before anything is shown)")
        self.cancel_button.setToolTip("Stop the run: nothing is written and your settings stay")
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setTextVisible(False)
        self.stage_label = QLabel("Press Run to anonymize the data with the chosen method.")
        self.eta_label = QLabel("")
        self.summary_label = QLabel("")
        self.summary_label.setWordWrap(True)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b00020;")

        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        status = QHBoxLayout()
        status.addWidget(self.stage_label, 1)
        status.addWidget(self.eta_label)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_bar)
        layout.addLayout(status)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.error_label)
        layout.addStretch(1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        worker = state.worker
        worker.started.connect(self._on_task_started)
        worker.progress.connect(self._on_progress_changed)
        worker.finished.connect(self._on_task_finished)
        worker.errored.connect(self._on_task_errored)
        worker.cancelled.connect(self._on_task_cancelled)

    # --- WizardPage -----------------------------------------------------------------------
    def is_complete(self) -> bool:
        return self.state.outcome is not None

    def refresh(self) -> None:
        self._set_running(self._running)

    # --- actions --------------------------------------------------------------------------
    def start(self) -> None:
        """Build the settings on the GUI thread (fast), then run the job in the worker."""
        try:
            settings = run_settings(self.state)
        except ParameterError as exc:
            self._show_error(str(exc), "")
            return
        dataset, job = self.state.dataset, self._job
        self._records = dataset.n_records

        def run(progress, cancel):
            outcome = job(dataset, settings, progress, cancel)
            return outcome, decode_figures(outcome)  # decoded here too: the report page only shows them

        self.state.worker.start(TASK, run)

    def _on_cancel_clicked(self) -> None:
        if self._running:
            self.stage_label.setText("Cancelling…")
            self.cancel_button.setEnabled(False)
            self.state.worker.cancel()

    # --- worker signals (GUI thread) ------------------------------------------------------
    def _on_task_started(self, name: str) -> None:
        if name != TASK:
            return
        self._started_at = time.monotonic()
        self.progress_bar.setValue(0)
        self.stage_label.setText("Starting…")
        self.eta_label.setText("")
        self.summary_label.setText("")
        self.error_label.setText("")
        self._set_running(True)

    def _on_progress_changed(self, fraction: float, stage: str, eta: float) -> None:
        if not self._running:
            return
        self.progress_bar.setValue(round(1000 * fraction))
        if stage:
            self.stage_label.setText(stage)
        self.eta_label.setText(format_eta(eta))

    def _on_task_finished(self, name: str, result: object) -> None:
        if name != TASK:
            return
        outcome, images = result  # type: ignore[misc]
        self._set_running(False)
        self.progress_bar.setValue(1000)
        self.stage_label.setText("Done")
        self.summary_label.setText(self._summary(outcome))
        self.state.set_outcome(outcome, images)
        self.complete_changed.emit()

    def _on_task_errored(self, name: str, message: str, details: str) -> None:
        if name != TASK:
            return
        self._set_running(False)
        self.stage_label.setText("Stopped by an error.")
        self._show_error(message, details)

    def _on_task_cancelled(self, name: str) -> None:
        if name != TASK:
            return
        self._set_running(False)
        self.progress_bar.setValue(0)
        self.stage_label.setText("Cancelled; nothing was changed.")

    # --- helpers --------------------------------------------------------------------------
    def _set_running(self, running: bool) -> None:
        self._running = running
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if not running:
            self.eta_label.setText("")

    def _summary(self, outcome: object) -> str:
        seconds = time.monotonic() - self._started_at
        results = getattr(outcome, "results", [])
        methods = [r.settings.method for r in results] or ["the method"]
        compared = f" (compared with {', '.join(methods[1:])})" if len(methods) > 1 else ""
        released = getattr(results[0], "n_released", None) if results else None  # a streamed run: every record
        records = self._records if released is None else released
        text = f"Done: {methods[0]}{compared} on {records:,} records in {seconds:.1f} s; see the report."
        if released is not None and released > len(results[0].table):
            text += (f"\nThe file was streamed: the report measures a random sample of {len(results[0].table):,} "
                     "records; Export reads the whole file again and writes every record.")
        for name, why in getattr(outcome, "skipped", []):
            text += f"\n{get_method(name).title} was not run for comparison: {phrase(why, window_name)}"
        return text

    def _show_error(self, message: str, details: str) -> None:
        """A red line on the page and a non-modal warning dialog; the window stays usable."""
        self.error_label.setText(message)
        if self.error_box is not None:
            self.error_box.close()
            self.error_box.deleteLater()
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Cannot run")
        box.setText(message)
        if details:
            box.setDetailedText(details)
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        self.error_box = box
        box.open()
