"""Step 1: load a data file (dialog, drag and drop, or the demo) and preview it."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.project import Project
from ppdp_desktop.gui.load_progress import LoadProgress
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.state import KIND_CANCELLED, WizardState, same_file
from ppdp_desktop.gui.table_model import DataFrameModel
from ppdp_desktop.gui.worker import describe_error

# The readers (numpy, pandas, pyarrow), the import options and step 1's words about a read are imported when a file
# is opened: the window shows this page before any of them is needed (issue 34).
if TYPE_CHECKING:
    from ppdp_desktop.core.data.column_stats import ColumnStats
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.inspection import FileFacts
    from ppdp_desktop.gui.import_dialog import ImportDialog

ERROR_STYLE = "color: #b71c1c;"
FILE_FILTER = "Data files (*.csv *.tsv *.txt *.xlsx *.xls *.sav *.zsav *.dta *.parquet *.pq);;All files (*)"
READS = ("inspect", "load")  # the worker's tasks that read a file (a first look, then the read)


class _Pending(NamedTuple):
    """A read under way: the file, its options, whether the demo's preset applies, and the project it opens with."""

    path: Path
    options: dict[str, object]
    preset: bool = False
    project: Project | None = None
    project_path: str | None = None


class LoadPage(WizardPage):
    title = "Load data"
    help_anchor = "load"  # its section of the user guide (F1)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.setAcceptDrops(True)
        self.open_button = QPushButton("Open data file…")
        self.open_button.setToolTip("CSV/TSV/TXT, Excel .xlsx/.xls, SPSS .sav, Stata .dta or Parquet")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.demo_button = QPushButton("Use the demo data")
        self.demo_button.setToolTip("20,000 synthetic patients (no real person)")
        self.demo_button.clicked.connect(self.load_demo)
        self.options_button = QPushButton("Import options…")
        self.options_button.setToolTip("How the file is read: sheet, delimiter, encoding, decimal mark, header row "
                                       "and the kind of each column, with a preview")
        self.options_button.clicked.connect(self._on_options_clicked)
        self.import_dialog: ImportDialog | None = None
        self.hint = QLabel("Open a file, or drop one here. The file is only read, never changed.")
        self.hint.setWordWrap(True)  # whole at 800 px wide
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.preview_model = DataFrameModel()
        self.preview = QTableView()
        self.preview.setModel(self.preview_model)
        self.preview.verticalHeader().setDefaultSectionSize(22)
        self.preview.setToolTip("The first records exactly as read from the file (it is never changed). "
                                "If columns look wrong, use Import options.")
        self.summary_model = DataFrameModel()
        self.summary = QTableView()
        self.summary.setModel(self.summary_model)
        self.summary.setToolTip("Every column, how it is read (its kind) and how many cells are missing; "
                                "a kind can be changed on the next step")
        self.summary.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.demo_button)
        buttons.addWidget(self.options_button)
        buttons.addWidget(self.hint, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.preview)
        split.addWidget(self.summary)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        self.progress = LoadProgress()
        self.progress.cancel_clicked.connect(self.cancel_loading)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)
        state.reload_requested.connect(self.reload)
        self._reloading = False
        self._reading: str | None = None  # the task reading a file now ("inspect" or "load"), if any
        self._stopped_by_user = False
        state.worker.finished.connect(self._on_task_finished)
        state.worker.errored.connect(self._on_task_errored)
        state.worker.cancelled.connect(self._on_task_cancelled)
        state.worker.progress.connect(self._on_progress)

    # --- loading ------------------------------------------------------------------------------
    def open_file(self, path: str | Path, always_ask: bool = False) -> None:
        """A file the user chose (button, drop, menu, recent files): take a first look in the worker, then load
        it straight away, or show the import options when the look is unsure (or ``always_ask``)."""
        path = Path(path)
        if not self.state.may_replace_data(path):
            return
        self._look(path, always_ask, None)

    def _look(self, path: Path, always_ask: bool, options: dict[str, object] | None) -> None:
        self._looking = (path, always_ask, options)

        def job(progress, cancel):
            from ppdp_desktop.core.data.inspection import inspect_file  # the readers: on the worker's thread

            return inspect_file(path)

        self.state.worker.start("inspect", job)
        self._began("inspect", f"Looking at {path.name}")  # after start(), which reports the task it replaces

    def _on_inspected(self, facts: FileFacts) -> None:
        path, always_ask, options = self._looking
        if facts.unsure or always_ask:
            self.show_import_options(facts, options)
        else:
            self.load(path, facts.options, confirmed=True)

    def show_import_options(self, facts: FileFacts, options: dict[str, object] | None = None, error: str = "") -> None:
        """The import options dialog for ``facts.path``; OK loads the file with the options chosen."""
        from ppdp_desktop.gui.import_dialog import ImportDialog

        dialog = ImportDialog(facts, options, self, error=error)
        dialog.accepted.connect(lambda: self.load(facts.path, dialog.options(), confirmed=True))
        self.import_dialog = dialog
        self.message.setText(f"Choose how {facts.path.name} is read, then Load.")
        dialog.open()

    def _on_options_clicked(self) -> None:
        """The options of the file in use, or of a file to choose."""
        current = self.state.project.data_path
        if current and self.state.dataset is not None and Path(current).is_file():
            self._look(Path(current), True, dict(self.state.project.load_options))  # in the worker, as any look
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open data with import options", "", FILE_FILTER)
        if path:
            self.open_file(path, always_ask=True)

    def reload(self, options: dict[str, object]) -> None:
        """Read the file in use again with other options (a column's kind changed on step 2); the settings
        made for it stay."""
        if self.state.project.data_path:
            self._reloading = True
            self.load(self.state.project.data_path, options, confirmed=True)

    def load(self, path: str | Path, options: dict[str, object] | None = None, confirmed: bool = False,
             project: Project | None = None, project_path: str | None = None) -> None:
        """Read ``path`` in the worker; the page shows the result or the error. Unsaved settings made for
        another file are not discarded without asking (however the file was chosen: button, drop, menu).
        With ``project`` (opened from ``project_path``), the data comes with that project's settings; until the
        read has finished, the data and project in use stay (Cancel keeps them)."""
        path = Path(path)
        if not confirmed and not self.state.may_replace_data(path):
            self._demo_preset = False
            return
        options = dict(options or {})
        self._pending = _Pending(path, options, getattr(self, "_demo_preset", False), project, project_path)
        self._demo_preset = False

        def job(progress, cancel):
            from ppdp_desktop.core.data.column_stats import column_stats
            from ppdp_desktop.core.jobs import load_job  # the job's code: not before the window is shown

            dataset = load_job(path, options, progress, cancel)
            cancel.check()
            progress(1.0, f"Counting the values of {path.name}")
            return dataset, column_stats(dataset)

        self.state.worker.start("load", job)
        self._began("load", f"Reading {path.name}")  # after start(), which reports the task it replaces

    def _began(self, task: str, what: str) -> None:
        """A read started: the progress row with Cancel, and the steps wait (:meth:`loading`)."""
        self._reading, self._stopped_by_user = task, False
        self.progress.begin()
        self._say("", f"{what}…")
        self.complete_changed.emit()

    def _ended(self, task: str) -> bool:
        """The worker reported the end of ``task``: True if it was this page's read (the row goes away)."""
        if task != self._reading:
            return False
        self._reading = None
        self.progress.end()
        self.complete_changed.emit()
        return True

    def _on_progress(self, fraction: float, *_: object) -> None:
        if self._reading is not None:
            self.progress.report(fraction)

    def loading(self) -> bool:
        """Whether a file is being read (a first look or the read itself): the steps after this one wait."""
        return self._reading is not None

    def cancel_loading(self) -> None:
        """Cancel: stop waiting for the read now; the data and project in use, if any, stay as they were."""
        if self._reading is not None:
            self._stopped_by_user = True
            self.state.worker.abandon()  # reports ``cancelled`` at once; the thread's late result is dropped

    def load_demo(self) -> None:
        """Load the demo data with its roles and diagnosis taxonomy already set."""
        self._demo_preset = True
        self.load(resource_path(DEMO_DATA))

    def _on_open_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open data", "", FILE_FILTER)
        if path:
            self.open_file(path)

    def _on_task_finished(self, name: str, result: object) -> None:
        if name in READS:
            self._ended(name)
        if name == "inspect":
            self._on_inspected(result)
            return
        if name != "load":
            return
        try:
            self._show_loaded(*result)
        except Exception as exc:  # a bug: the page never stays at "Reading …"; the window's error dialog says why
            self._say(ERROR_STYLE, f"Could not load the file. {describe_error(exc)[0]}")
            raise

    def _show_loaded(self, dataset: Dataset, stats: ColumnStats) -> None:
        from ppdp_desktop.gui.load_words import column_summary, loaded_text

        summary = column_summary(dataset, stats)
        path, options, preset, project, project_path = self._pending
        # another file replaced the data in use: a new, untitled project (WizardState.set_dataset), said below
        afresh = self.state.dataset is not None and project is None and not same_file(path, self.state.project.data_path)
        if preset:
            from ppdp_desktop.core.demo import DEMO_ROLES, demo_taxonomy

            self.state.project.roles.update({c: r.value for c, r in DEMO_ROLES.items()})
            self.state.project.set_taxonomy(demo_taxonomy())
        # False: the user cancelled a kind change that would lose settings
        if not self.state.set_dataset(dataset, path, options, stats, project=project, project_path=project_path):
            self._refuse_reload(KIND_CANCELLED)
            return
        if self._reloading:  # a kind changed on step 2: a setting of the project, not yet saved
            self._reloading = False
            self.state.dirty = True
        self.preview_model.set_frame(dataset.frame)
        self.summary_model.set_frame(summary)
        self.message.setStyleSheet("color: #1b5e20;")
        self.message.setText(loaded_text(path, dataset, summary, project_path if project is not None else None, afresh))
        self.complete_changed.emit()

    def _on_task_errored(self, name: str, message: str, details: str) -> None:
        if name in READS:
            self._ended(name)
        if name == "inspect":  # a text file or workbook that cannot be read as sniffed: let the user choose
            from ppdp_desktop.core.data.inspection import FileFacts
            from ppdp_desktop.core.data.loading import FORMATS

            path, _always, options = self._looking
            fmt = FORMATS.get(path.suffix.lower())
            if fmt in ("csv", "xlsx", "xls") and path.is_file():
                self.show_import_options(FileFacts(path, fmt), options, error=message)
                return
            name = "load"
        if name != "load":
            return
        if self._reloading:  # the data in use stays as it was
            self._refuse_reload(message)
            return
        self._say(ERROR_STYLE, f"Could not load the file. {message}{self._not_opened()}")

    def _not_opened(self) -> str:
        """What a failed or stopped read of a project's data file means for the project (empty otherwise)."""
        pending = getattr(self, "_pending", None)
        if pending is None or pending.project is None or not pending.project_path:
            return ""
        return f" The project {Path(pending.project_path).name} was not opened."

    def _on_task_cancelled(self, name: str) -> None:
        """A first look or a read replaced by another task (a run started meanwhile): say so, never stay at
        "Reading …"; the data in use, if any, stays."""
        if name not in READS:
            return
        self._ended(name)
        path = self._looking[0] if name == "inspect" else self._pending.path
        if name == "load" and self._reloading:
            self._refuse_reload(f"Reading {path.name} again was stopped before it finished; choose the kind again.")
            return
        in_use = (Path(self.state.project.data_path or "").name or "the table") if self.state.dataset is not None else None
        style = "" if self._stopped_by_user else ERROR_STYLE  # asked for, not an error
        from ppdp_desktop.gui.load_words import stopped_text

        self._say(style, stopped_text(path, in_use, self._stopped_by_user) + (self._not_opened() if name == "load" else ""))

    def _refuse_reload(self, message: str) -> None:
        """A kind changed on step 2 could not be read: step 2 says why; the data in use stays."""
        self._reloading = False
        self._say("", f"{self._pending.path.name}: the column kinds were not changed; the data in use stays as it was.")
        self.state.kind_refused.emit(message)

    def _say(self, style: str, text: str) -> None:
        self.message.setStyleSheet(style)
        self.message.setText(text)

    def is_complete(self) -> bool:
        return self.state.dataset is not None and not self.loading()

    # --- drag and drop ---------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt API
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt API
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            self.open_file(files[0])
            event.acceptProposedAction()
