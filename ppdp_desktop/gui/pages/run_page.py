"""Step 5a: run the chosen method (and those it is compared with) in the background.

The page only starts :func:`ppdp_desktop.core.jobs.run_job` through the state's worker and shows
what the worker reports: progress, stage, time left, and at the end a summary, an error or a
cancellation. The GUI thread never waits for the job.

Above the Run button, the "Repeated releases" box (:mod:`ppdp_desktop.gui.repeat_box`, issue 30) says which project
of the release ledger the release belongs to and takes the custodian secret's passphrase and the project's budget;
the worker opens (or makes) the secret before the run, so a wrong passphrase runs nothing, and a release past the
budget is refused before anything is written. After the run the page says, in sentences, what this release is among
the project's releases.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.errors import KeyFileError, ParameterError, PrivacyError, phrase
from ppdp_desktop.core.jobs import RunOutcome, run_job
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.release.custodian_secret import secret_exists

# run_job imports the report module (and its figures) lazily; importing it here, on the GUI thread at
# start-up, keeps that import (C extensions hold the GIL) out of the first run.
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.gui.figure_images import decode_figures
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.repeat_box import TITLE as REPEAT_TITLE
from ppdp_desktop.gui.repeat_box import RepeatBox, RepeatRequest
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.wording import window_name

TASK = "run"
CANNOT_RUN = "Cannot run"
SECRET_REFUSED = "Cannot open the custodian secret"
OVER_BUDGET = "Over the project's budget"
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


def repeat_text(outcome: object) -> str:
    """The chosen method's release among its project's releases, in sentences (empty when the run had none)."""
    results = getattr(outcome, "results", None) or []
    repeat = getattr(results[0], "repeat", None) if results else None
    if repeat is None:
        return ""
    lines = repeat.custodian_lines() + [f"Warning: {w}" for w in repeat.warnings]
    if repeat.override_reason and repeat.cumulative.over_budget:
        lines.append(f"Published past the budget for this reason, which the ledger keeps: {repeat.override_reason}")
    if results[0].settings.repeat.keys is None:
        ask = ("type its passphrase in '{}' and press Run" if secret_exists(repeat.project_id) else
               "type a new passphrase in '{}' and press Run to make the project's custodian secret")
        lines.append(f"This run drew without the project's custodian secret (fresh draws): {ask.format(REPEAT_TITLE)}, "
                     "so that an unchanged patient keeps the same released values in every release.")
    return "\n".join(lines)


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
        self._failed: dict[str, str] = {}  # why the last run stopped: "secret", "budget" or nothing said
        self._request: RepeatRequest | None = None
        self.error_box: QMessageBox | None = None
        self.repeat_box = RepeatBox(state)

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
        self.repeat_label = QLabel("")  # this release among the project's releases, after the run
        self.repeat_label.setWordWrap(True)
        self.repeat_label.setAccessibleName(REPEAT_TITLE)
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
        body = QWidget()  # scrolls on a small screen: the box and the sentences after a run can be long
        layout = QVBoxLayout(body)
        layout.addWidget(self.repeat_box)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_bar)
        layout.addLayout(status)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.repeat_label)
        layout.addWidget(self.error_label)
        layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        worker = state.worker
        worker.started.connect(self._on_task_started)
        worker.progress.connect(self._on_progress_changed)
        worker.finished.connect(self._on_task_finished)
        worker.errored.connect(self._on_task_errored)
        worker.cancelled.connect(self._on_task_cancelled)
        self.repeat_box.changed.connect(self._on_repeat_changed)
        self.repeat_box.passphrase_edit.returnPressed.connect(self._on_return_in_passphrase)
        state.exported.connect(lambda _folder: self.repeat_box.clear_passphrases())

    # --- WizardPage -----------------------------------------------------------------------
    def is_complete(self) -> bool:
        return self.state.outcome is not None

    def refresh(self) -> None:
        self._set_running(self._running)
        self.repeat_box.refresh()

    def reset_for_new_file(self) -> None:
        """Another data file: no word of the previous file's run stays, nor the custodian secret's passphrase."""
        self.progress_bar.setValue(0)
        self.stage_label.setText("Press Run to anonymize the data with the chosen method.")
        for label in (self.eta_label, self.summary_label, self.repeat_label, self.error_label):
            label.setText("")
        self.repeat_box.clear_passphrases()

    # --- actions --------------------------------------------------------------------------
    def start_automatically(self) -> bool:
        """Start as the page opens, unless the project's custodian secret is here and no passphrase is at hand
        to open it: then the page waits for it (or for Run: fresh draws)."""
        if self.repeat_box.needs_passphrase():
            without = ("Run goes on without the project's custodian secret" if self.repeat_box.draws_nothing() else
                       "this release's draws are fresh")
            self.stage_label.setText(f"Type the passphrase of the custodian secret of project "
                                     f"'{self.repeat_box.project_id()}', then press Run (without it, {without}).")
            self.repeat_box.passphrase_edit.setFocus()
            return False
        self.start()
        return True

    def start(self) -> None:
        """Build the settings on the GUI thread (fast), then open the project's custodian secret and run the job
        in the worker."""
        try:
            settings = run_settings(self.state)
            request = self.repeat_box.request()
        except ParameterError as exc:
            self._show_error(exc.phrase(window_name), "")
            return
        dataset, job = self.state.dataset, self._job
        self._records = dataset.n_records
        failed: dict[str, str] = {}
        self._failed, self._request = failed, request

        def run(progress, cancel):
            try:  # the secret first: a wrong passphrase runs nothing
                settings[0].repeat = request.settings(progress)
            except KeyFileError:
                failed["why"] = "secret"
                raise
            cancel.check()
            try:
                outcome = job(dataset, settings, progress, cancel)
            except PrivacyError as exc:
                if exc.setting == "budget":  # refused before anything is written
                    failed["why"] = "budget"
                raise
            return outcome, decode_figures(outcome)  # decoded here too: the report page only shows them

        self.state.worker.start(TASK, run)

    def _on_return_in_passphrase(self) -> None:
        """Enter in the secret's passphrase field runs, as Run would."""
        if not self._running and not self.state.worker.is_running():
            self.start()

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
        self.repeat_label.setText("")
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
        self.repeat_label.setText(repeat_text(outcome))
        self.repeat_box.ran(released=True)
        self.state.set_outcome(outcome, images)
        self.complete_changed.emit()

    def _on_task_errored(self, name: str, message: str, details: str) -> None:
        if name != TASK:
            return
        self._set_running(False)
        self.repeat_box.ran()  # the secret may have been made before the refusal
        why = self._failed.get("why")
        if why == "secret":
            request = self._request
            where = (f"The passphrase typed on the export page does not open it: type the secret's own passphrase in "
                     f"'{REPEAT_TITLE}'." if request is not None and request.from_export else
                     f"Type its passphrase again in '{REPEAT_TITLE}', or empty the field to run with fresh draws.")
            self.stage_label.setText("Nothing was run: the custodian secret did not open.")
            self._show_error(f"{message.rstrip('.')}.\n\nNothing was run. {where}", details, SECRET_REFUSED)
            return
        if why == "budget":
            self.repeat_box.refused_for_budget()
            self.stage_label.setText("Refused: over the project's budget; nothing was written.")
            self._show_error(message, details, OVER_BUDGET)
            return
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

    def _on_repeat_changed(self) -> None:
        """The project's name, budget or choice of pseudonyms changed: a result run under the old ones is not
        exported under the new."""
        outcome = self.state.outcome
        if outcome is None or self._running:
            return
        ran, box = outcome.main.settings.repeat, self.repeat_box
        if (ran.project_id, ran.budget, ran.stable_pseudonyms) == (box.project_id(), box.budget(),
                                                                   box.stable_pseudonyms()):
            return
        self.state.set_outcome(None)
        self.summary_label.setText("")
        self.repeat_label.setText("")
        self.progress_bar.setValue(0)
        self.stage_label.setText("The project's name, budget or pseudonyms changed: press Run to run again with them.")
        self.complete_changed.emit()

    def _show_error(self, message: str, details: str, title: str = CANNOT_RUN) -> None:
        """A red line on the page and a non-modal warning dialog; the window stays usable."""
        self.error_label.setText(message)
        if self.error_box is not None:
            self.error_box.close()
            self.error_box.deleteLater()
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(title)
        box.setText(message)
        if details:
            box.setDetailedText(details)
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        self.error_box = box
        box.open()
