"""Step 1: load a data file (dialog, drag and drop, or the demo) and preview it."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
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

from ppdp_desktop.core.data.column_stats import ColumnStats, column_stats
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.jobs import load_job
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.table_model import DataFrameModel

FILE_FILTER = "Data files (*.csv *.tsv *.txt *.xlsx *.sav *.zsav *.dta *.parquet *.pq);;All files (*)"


def column_summary(dataset: Dataset, stats: ColumnStats) -> pd.DataFrame:
    """One row per column: kind, missing cells, distinct values (``stats`` come from the worker)."""
    columns = list(dataset.frame.columns)
    return pd.DataFrame(
        {
            "column": columns,
            "kind": [dataset.schema.attributes[c].kind.value for c in columns],
            "missing": [stats.missing[c] for c in columns],
            "distinct values": [stats.distinct[c] for c in columns],
        }
    )


class LoadPage(WizardPage):
    title = "Load data"

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.setAcceptDrops(True)
        self.open_button = QPushButton("Open data file…")
        self.open_button.setToolTip("CSV/TSV/TXT, Excel .xlsx, SPSS .sav, Stata .dta or Parquet")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.demo_button = QPushButton("Use the demo data")
        self.demo_button.setToolTip("20,000 synthetic patients (no real person)")
        self.demo_button.clicked.connect(self.load_demo)
        self.hint = QLabel("Open a file, or drop one here. The file is only read, never changed.")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.preview_model = DataFrameModel()
        self.preview = QTableView()
        self.preview.setModel(self.preview_model)
        self.preview.verticalHeader().setDefaultSectionSize(22)
        self.summary_model = DataFrameModel()
        self.summary = QTableView()
        self.summary.setModel(self.summary_model)
        self.summary.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.demo_button)
        buttons.addWidget(self.hint, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.preview)
        split.addWidget(self.summary)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)
        state.worker.finished.connect(self._on_task_finished)
        state.worker.errored.connect(self._on_task_errored)

    # --- loading ------------------------------------------------------------------------------
    def load(self, path: str | Path, options: dict[str, str] | None = None) -> None:
        """Read ``path`` in the worker; the page shows the result or the error. Unsaved settings made for
        another file are not discarded without asking (however the file was chosen: button, drop, menu)."""
        path = Path(path)
        if not self.state.may_replace_data(path):
            self._demo_preset = False
            return
        options = dict(options or {})
        self._pending = (path, options, getattr(self, "_demo_preset", False))
        self._demo_preset = False
        self.message.setStyleSheet("")
        self.message.setText(f"Reading {path.name}…")

        def job(progress, cancel):
            dataset = load_job(path, options, progress, cancel)
            return dataset, column_stats(dataset)

        self.state.worker.start("load", job)

    def load_demo(self) -> None:
        """Load the demo data with its roles and diagnosis taxonomy already set."""
        self._demo_preset = True
        self.load(resource_path(DEMO_DATA))

    def _on_open_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open data", "", FILE_FILTER)
        if path:
            self.load(path)

    def _on_task_finished(self, name: str, result: object) -> None:
        if name != "load":
            return
        dataset, stats = result
        summary = column_summary(dataset, stats)
        path, options, preset = self._pending
        if preset:
            from ppdp_desktop.core.demo import DEMO_ROLES, demo_taxonomy

            self.state.project.roles.update({c: r.value for c, r in DEMO_ROLES.items()})
            self.state.project.set_taxonomy(demo_taxonomy())
        self.state.set_dataset(dataset, path, options, stats)
        self.preview_model.set_frame(dataset.frame)
        self.summary_model.set_frame(summary)
        missing = int(summary["missing"].sum())
        self.message.setStyleSheet("color: #1b5e20;")
        self.message.setText(
            f"{path.name}: {dataset.n_records:,} records, {dataset.frame.shape[1]} columns, "
            f"{missing:,} missing cells. Next: tell which columns identify people and which are sensitive."
        )
        self.complete_changed.emit()

    def _on_task_errored(self, name: str, message: str, details: str) -> None:
        if name != "load":
            return
        self.message.setStyleSheet("color: #b71c1c;")
        self.message.setText(f"Could not load the file. {message}")

    def is_complete(self) -> bool:
        return self.state.dataset is not None

    # --- drag and drop ---------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802 - Qt API
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 - Qt API
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            self.load(files[0])
            event.acceptProposedAction()
