"""The main window (a minimal one until the wizard): open a data file and preview it.

Loading happens through the core loader; errors the user can cause are shown in a dialog.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow, QMessageBox, QTableView, QVBoxLayout, QWidget

from ppdp_desktop import __version__
from ppdp_desktop.core.dataset import Dataset
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.loading import load_table
from ppdp_desktop.gui.table_model import DataFrameModel

FILE_FILTER = "Data files (*.csv *.tsv *.txt *.xlsx *.sav *.zsav *.dta *.parquet *.pq);;All files (*)"


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("PPDP Desktop")
        self.resize(1000, 640)
        self.dataset: Dataset | None = None
        self.model = DataFrameModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.summary = QLabel("Open a data file (File > Open) to begin.")
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        self.setCentralWidget(body)
        self._build_menus()
        self.statusBar().showMessage("Ready")

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        open_action = QAction("&Open data...", self, shortcut=QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self._on_open_requested)
        file_menu.addAction(open_action)
        quit_action = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About", self)
        about.triggered.connect(self._on_about_requested)
        help_menu.addAction(about)

    def _on_open_requested(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open data", "", FILE_FILTER)
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path) -> bool:
        """Load ``path`` and show it; a load error becomes a dialog naming what to change."""
        try:
            dataset = load_table(path)
        except PPDPError as exc:
            QMessageBox.warning(self, "Cannot open the file", str(exc))
            self.statusBar().showMessage(f"Could not open {path.name}")
            return False
        self.show_dataset(dataset)
        return True

    def show_dataset(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self.model.set_frame(dataset.frame)
        kinds = ", ".join(f"{a.name} ({a.kind.value})" for a in dataset.schema.attributes.values())
        missing = int(dataset.frame.isna().sum().sum())
        self.summary.setText(f"{dataset.label}: {dataset.n_records:,} records; missing cells: {missing:,}\n{kinds}")
        self.summary.setWordWrap(True)
        self.statusBar().showMessage(f"Loaded {dataset.label}")

    def _on_about_requested(self) -> None:
        QMessageBox.about(
            self,
            "About PPDP Desktop",
            f"PPDP Desktop {__version__}\nPrivacy-preserving publishing of patient tables. Works offline.",
        )
