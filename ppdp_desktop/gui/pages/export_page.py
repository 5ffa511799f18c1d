"""Step 6: write the release folder and seal its key file with a passphrase."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.errors import ParameterError, PPDPError, ReleaseError
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress
from ppdp_desktop.core.release.package import check_destination, key_description, key_parts, release_target
from ppdp_desktop.core.release.package_report import custodian_report_path, custodian_values_path
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.passphrase_widget import PassphraseFields
from ppdp_desktop.gui.signing_fields import SigningFields
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.wording import window_name

JOB = "export"
KEY_SUFFIX = ".ppdpkey"
ERROR_STYLE = "color: #c0392b;"
KEY_SEALED = "It is sealed with a passphrase: keep the key and its passphrase apart from the release."


def export_job(result: Anonymization, folder: str, key_path: str | None, passphrase: str | None, overwrite: bool,
               progress: Progress, cancel: CancelToken, **options: Any) -> Path:
    """:func:`ppdp_desktop.core.jobs.export_job` (the one publish pipeline) with the page's options (``fmt``,
    ``zip_file``, ``bom``, ``reports``, ``signer``, ``project_file``): the release package and its sealed key,
    atomically (a streamed run's outcome: the whole file streamed into the package)."""
    from ppdp_desktop.core.jobs import export_job as core_export

    return core_export(result, folder, key_path, passphrase, overwrite, progress, cancel, **options)


def default_key_path(folder: str) -> str:
    """The key file proposed for a release folder: ``<folder>.ppdpkey`` beside it ("" while the folder
    typed so far has no name, e.g. "/" or "C:\\")."""
    path = Path(folder)
    if not path.name:
        return ""
    return str(path.with_name(path.name + KEY_SUFFIX))


def ledger_line(folder: str) -> str:
    """" Recorded in this computer's release ledger as release n of project P." for the release just published
    (found by its folder), or "" when it is not there."""
    from ppdp_desktop.core.repeat.appdata import ledger_path
    from ppdp_desktop.core.repeat.ledger import Ledger

    if not ledger_path().is_file():
        return ""
    target = str(Path(folder).resolve())
    try:
        with Ledger() as ledger:
            found = [r for r in ledger.releases() if r.folder == target]
    except PPDPError:
        return ""
    if not found:
        return ""
    release = found[-1]
    return (f" Recorded in this computer's release ledger as release {release.ordinal} of project "
            f"'{release.project_id}' (ppdp history lists them).")


def _path_row(edit: QLineEdit, button: QPushButton) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row


class ExportPage(WizardPage):
    """Release folder, data format, key file, overwrite, passphrase, and the Export button.

    The chosen paths go into ``state.project``; the passphrase lives only in its two fields and
    is cleared once the key is sealed. The export runs in ``state.worker`` as job ``"export"``.

    Attributes
    ----------
    error_box : QMessageBox or None
        The non-modal dialog of the last failed export, if any.
    """

    title = "Export"
    help_anchor = "export"  # its section of the user guide (F1)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.error_box: QMessageBox | None = None
        self._exported: str | None = None
        self._running = False
        self._auto_key: str | None = None
        self._job_key = ""

        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText("a new folder for release.csv and release.json")
        self.folder_edit.setToolTip("The new folder that receives the release (the file given to researchers)")
        self.folder_button = QPushButton("Browse…")
        self.folder_button.setToolTip("Choose the release folder")
        self.format_combo = QComboBox()
        self.format_combo.setToolTip("The released data file's format: CSV, Excel, SPSS or Parquet")
        for label, fmt in (("CSV (UTF-8)", "csv"), ("Excel (.xlsx)", "xlsx"), ("SPSS (.sav)", "sav"), ("Parquet", "parquet")):
            self.format_combo.addItem(label, fmt)
        self.bom_check = QCheckBox("UTF-8 with BOM for Excel (recommended)")
        self.bom_check.setChecked(True)
        self.bom_check.setToolTip(
            "Start the CSV with the UTF-8 byte-order mark: Excel needs it to show accented letters (Besançon). "
            "pandas and readr skip it; untick it only for a tool that does not."
        )
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText("outside the release folder")
        self.key_edit.setToolTip("Where the sealed key is written: beside the release, never inside it; keep it "
                                 "away from the recipients")
        self.key_button = QPushButton("Browse…")
        self.key_button.setToolTip("Choose where the key file is written")
        self.overwrite_check = QCheckBox("Overwrite an existing release folder and key file")
        self.overwrite_check.setToolTip("Replace a release folder and key file of the same names (otherwise "
                                        "Export refuses, so nothing is overwritten by mistake)")
        self.passphrase = PassphraseFields()
        self.export_button = QPushButton("Export")
        self.status_label = QLabel()
        self.error_label = QLabel()
        self.error_label.setStyleSheet(ERROR_STYLE)
        self.summary_label = QLabel()
        self.again_label = QLabel()  # this run exported already: another export counts as another release
        self.again_label.setStyleSheet("color: #8a4b00;")
        for label in (self.status_label, self.error_label, self.summary_label, self.again_label):
            label.setWordWrap(True)

        form = QFormLayout()
        form.addRow("Release folder", _path_row(self.folder_edit, self.folder_button))
        form.addRow("Data format", self.format_combo)
        form.addRow("", self.bom_check)
        form.addRow("Key file", _path_row(self.key_edit, self.key_button))
        form.addRow("", self.overwrite_check)
        self.zip_check = QCheckBox("Write one .zip file instead of a folder")
        self.zip_check.setToolTip("Pack the release into one .zip file, easier to send (the key is still "
                                  "written apart)")
        form.addRow("", self.zip_check)
        self.signing = SigningFields()
        form.addRow("Sign with", self.signing)
        self.key_label = QLabel()  # what the key holds, so the user knows why a passphrase is asked
        self.key_label.setWordWrap(True)
        # The page scrolls rather than squeezing its rows: in a small window (800 x 500) every field keeps its
        # height and the signing key's rows stay readable.
        self.body = QWidget()
        layout = QVBoxLayout(self.body)
        layout.addLayout(form)
        layout.addWidget(self.key_label)
        layout.addWidget(self.passphrase)
        layout.addWidget(self.again_label)
        layout.addWidget(self.export_button)
        layout.addWidget(self.status_label)
        layout.addWidget(self.error_label)
        layout.addWidget(self.summary_label)
        layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setWidget(self.body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)

        self.folder_button.clicked.connect(self._browse_folder)
        self.key_button.clicked.connect(self._browse_key)
        self.folder_edit.textChanged.connect(self._folder_changed)
        self.key_edit.textChanged.connect(self._inputs_changed)
        self.overwrite_check.toggled.connect(self._inputs_changed)
        self.format_combo.currentIndexChanged.connect(self._on_format_changed)
        self.passphrase.validity_changed.connect(self._inputs_changed)
        self.signing.changed.connect(self._inputs_changed)
        self.export_button.clicked.connect(self.export)
        state.outcome_changed.connect(self._outcome_changed)
        state.key_passphrase = self.passphrase.passphrase  # the run page opens or makes the project's secret with it
        worker = state.worker
        worker.progress.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.errored.connect(self._on_errored)
        worker.cancelled.connect(self._on_cancelled)
        self._show_key_contents()
        self.refresh()

    # --- page ---------------------------------------------------------------------------------
    def is_complete(self) -> bool:
        """Complete once the current outcome has been exported."""
        return self._exported is not None

    def refresh(self) -> None:
        """Show the project's paths (e.g. of a project just opened) and update the button."""
        folder, key = self.state.project.release_folder or "", self.state.project.key_path or ""
        if key != self.key_edit.text().strip():  # the key first: the folder would propose one
            self.key_edit.setText(key)
        if folder != self.folder_edit.text().strip():
            self.folder_edit.setText(folder)
        self._update_button()

    def reset_for_new_file(self) -> None:
        """Another data file: its own release — paths, format, BOM, zip, overwrite and passphrase back to their
        defaults (the signing key is the custodian's, not the file's: it stays, as step 1 says)."""
        self.folder_edit.clear()
        self.key_edit.clear()
        self._auto_key = None
        self.format_combo.setCurrentIndex(0)  # CSV
        self.bom_check.setChecked(True)
        self.zip_check.setChecked(False)
        self.overwrite_check.setChecked(False)
        self.passphrase.clear()
        self.signing.clear_passphrase()
        for label in (self.status_label, self.error_label, self.summary_label):
            label.clear()

    def can_export(self) -> bool:
        """An outcome exists, both paths are filled, the passphrase is valid and nothing runs."""
        return (
            self.state.outcome is not None
            and bool(self.folder_edit.text().strip())
            and bool(self.key_edit.text().strip())
            and self.passphrase.is_valid()
            and not self._running
        )

    # --- inputs -------------------------------------------------------------------------------
    def _browse_folder(self) -> None:
        start = self.folder_edit.text() or str(Path.home())
        path, _ = QFileDialog.getSaveFileName(self, "Release folder (created by the export)", start)
        if path:
            self.folder_edit.setText(path)

    def _browse_key(self) -> None:
        start = self.key_edit.text() or default_key_path(self.folder_edit.text() or str(Path.home() / "release"))
        path, _ = QFileDialog.getSaveFileName(self, "Key file", start, f"PPDP key files (*{KEY_SUFFIX});;All files (*)")
        if path:
            self.key_edit.setText(path)

    def _folder_changed(self, text: str) -> None:
        """Propose ``<folder>.ppdpkey`` unless the user typed a key path of their own."""
        key = self.key_edit.text()
        if text.strip() and (not key or key == self._auto_key):
            self._auto_key = default_key_path(text.strip())
            self.key_edit.setText(self._auto_key)
        self._inputs_changed()

    def _inputs_changed(self, *_: object) -> None:
        """Keep the project's paths in step with the fields (silently: no signal per keystroke)."""
        self.state.project.release_folder = self.folder_edit.text().strip() or None
        self.state.project.key_path = self.key_edit.text().strip() or None
        self.error_label.clear()
        self._update_button()

    def _on_format_changed(self, *_: object) -> None:
        self.bom_check.setEnabled(self.format_combo.currentData() == "csv")

    def _show_key_contents(self) -> None:
        """Say what the key of the current outcome holds (from its key payload's entries)."""
        outcome = self.state.outcome
        if outcome is None:
            held = "The key file holds what only the custodian may see; what exactly is shown once the job has run."
        else:
            held = key_description(key_parts(outcome.main))
        self.key_label.setText(f"{held} {KEY_SEALED}")

    def _outcome_changed(self) -> None:
        self._show_key_contents()
        self._exported = None
        self.summary_label.clear()
        self._update_button()
        self.complete_changed.emit()

    def _update_button(self) -> None:
        self.passphrase.set_job_names(self.state.project.data_path, self.folder_edit.text().strip(),
                                      self.key_edit.text().strip())  # their words make a passphrase weak
        self.export_button.setEnabled(self.can_export())
        self.again_label.setText(self._again_text())
        self.again_label.setVisible(bool(self.again_label.text()))
        if self.state.outcome is None:
            self.export_button.setToolTip("Run the anonymization (previous step) first.")
        else:
            self.export_button.setToolTip("Write the release and seal its key file with the passphrase")

    def _again_text(self) -> str:
        """Why exporting this run a second time is not like exporting it once (empty when it is not exported)."""
        repeat = getattr(self.state.outcome.main, "repeat", None) if self.state.outcome is not None else None
        if self._exported is None or repeat is None:
            return ""
        return (f"This run is exported already ({self._exported}). Exporting it again records another release of "
                f"project '{repeat.project_id}' in this computer's ledger, with the same records: the next run's "
                "release number counts both (their epsilons are not added twice).")

    # --- export -------------------------------------------------------------------------------
    def export(self) -> bool:
        """Check the destination and start the export job; False (with a message) if refused."""
        passphrase = self.passphrase.passphrase()
        if not self.can_export() or passphrase is None:
            return False
        folder, key = self.folder_edit.text().strip(), self.key_edit.text().strip()
        overwrite = self.overwrite_check.isChecked()
        zip_file = self.zip_check.isChecked()
        bom = self.bom_check.isChecked()
        try:
            check_destination(release_target(folder, zip_file), key, overwrite, [self.state.project.data_path],
                              others={"sign": self.signing.key_edit.text().strip() or None})
        except ReleaseError as exc:  # a file of another kind, or another option's file, is never written over
            self._refuse(exc.phrase(window_name))
            return False
        if self.state.worker.is_running():
            self.error_label.setText("Another job is running; wait for it to finish.")
            return False
        if self.signing.problem():
            self.error_label.setText(self.signing.problem())
            return False
        open_signer = self.signing.opener()
        try:  # the project's rule (require_signing): refused here, before the job, in the window's words
            self.state.project.check_signing(open_signer)
        except ParameterError as exc:
            self._refuse(exc.phrase(window_name))
            return False
        # the project open in the window, when its file holds the settings run (recorded in the provenance)
        project_file = getattr(self.window(), "project_path", None)
        project_file = project_file if self.state.sync_project().is_saved_in(project_file) else None
        self.state.project.release_folder, self.state.project.key_path = folder, key
        self.state.project_changed.emit()  # the chosen paths are saved with the project
        result = self.state.outcome.main
        self.error_label.clear()
        self.summary_label.clear()
        self.status_label.setText("Exporting…")
        self._running, self._job_key = True, key
        self._update_button()
        fmt = self.format_combo.currentData()
        outcome = self.state.outcome
        reports = list(outcome.reports) if outcome is not None else None
        self.state.worker.start(JOB, lambda p, c: export_job(
            result, folder, key, passphrase, overwrite, p, c, fmt=fmt, bom=bom, zip_file=zip_file, reports=reports,
            signer=open_signer() if open_signer else None, project_file=project_file))
        return True

    def _on_progress(self, fraction: float, message: str, *_: object) -> None:
        if self._running and message:
            self.status_label.setText(f"{message} ({fraction:.0%})")

    def _on_finished(self, name: str, result: object) -> None:
        if name != JOB or not self._running:
            return
        self._done()
        folder, key = str(result), self._job_key
        self.passphrase.clear()
        self.signing.clear_passphrase()
        self._exported = folder
        custodian = custodian_report_path(Path(folder), Path(key) if key else None)
        beside = (f" Your report with the original figures (not for the recipient): {custodian}."
                  if custodian.is_file() else "")
        if custodian.is_file() and custodian_values_path(custodian).is_file():
            beside += f" Its full table, one row per value: {custodian_values_path(custodian).name}."
        self.summary_label.setText(
            f"Release written to {folder}; key sealed to {key} — keep the key and its passphrase apart from the "
            f"release.{beside}{ledger_line(folder)}"
        )
        self.state.exported.emit(folder)
        self.complete_changed.emit()

    def _on_errored(self, name: str, message: str, details: str) -> None:
        if name != JOB or not self._running:
            return
        self._done()
        self.error_label.setText(f"Export failed: {message}")  # already in the window's words (worker)
        self._dialog("Export failed", message, details)

    def _refuse(self, message: str) -> None:
        """A refusal before the export starts (the destination, the project's signing rule): said on the page and
        in a dialog, as every refusal of the window is."""
        self.error_label.setText(message)
        self._dialog("Cannot export", message)

    def _dialog(self, title: str, message: str, details: str = "") -> None:
        """One warning dialog at a time, not modal (the page stays usable behind it)."""
        if self.error_box is not None:
            self.error_box.close()
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self)
        if details:
            box.setDetailedText(details)
        box.setModal(False)
        box.show()
        self.error_box = box

    def _on_cancelled(self, name: str) -> None:
        if name == JOB and self._running:
            self._done()
            self.status_label.setText("Export cancelled; nothing was written.")

    def _done(self) -> None:
        self._running = False
        self.status_label.clear()
        self._update_button()

