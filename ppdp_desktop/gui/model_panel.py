"""The report page's "Does my analysis survive?" box: pick a column, train models in the background, read
the comparison (Qt adapter of :func:`ppdp_desktop.core.evaluation.model_utility.compare_models`)."""
from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.gui.worker import Worker

if TYPE_CHECKING:  # the job's code is imported when a model is fitted, not when the window starts
    from ppdp_desktop.core.jobs import RunOutcome

TASK = "models"
HINT = ("Train a decision tree and a logistic regression on the original and on the release, and test both on "
        "original records they never saw: close figures mean an analysis of the release reaches the same conclusions.")
COEFFICIENT_COLUMNS = ("Term", "Odds ratio, original", "95 % interval", "Odds ratio, release", "95 % interval")


class ModelPanel(QGroupBox):
    """Target column, a button, the comparison's sentences and its odds-ratio table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Does my analysis survive?", parent)
        self._outcome: RunOutcome | None = None
        self.target = QComboBox()
        self.target.setToolTip("The column the models predict (by default the sensitive one)")
        self.button = QPushButton("Compare models")
        self.button.setToolTip(HINT)
        self.button.clicked.connect(self._on_compare)
        self.label = QLabel(HINT)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COEFFICIENT_COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COEFFICIENT_COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setToolTip("The models' coefficients (odds ratios) fitted on the original and on the release, "
                              "side by side: close values mean the analysis survives")
        self.table.setVisible(False)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Predict:"))
        pick.addWidget(self.target, 1)
        pick.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.addLayout(pick)
        layout.addWidget(self.label)
        layout.addWidget(self.table)
        self.worker = Worker(self)  # its own: a comparison never cancels a run or an export
        self.worker.finished.connect(self._on_finished)
        self.worker.errored.connect(self._on_errored)
        self.worker.cancelled.connect(lambda _name: self._set_running(False))

    def set_outcome(self, outcome: RunOutcome | None) -> None:
        """A new run (or none): forget the old comparison; offer the released columns, the sensitive first."""
        self.worker.cancel()
        self._outcome = outcome
        self.target.clear()
        self.table.setVisible(False)
        self.label.setText(HINT)
        if outcome is not None:
            result = outcome.main
            identifiers = set(result.dataset.schema.identifiers)
            columns = [str(c) for c in result.dataset.frame.columns
                       if c not in identifiers and c in result.table.columns]
            self.target.addItems(columns)
            if result.settings.sensitive in columns:
                self.target.setCurrentText(result.settings.sensitive)
        self._set_running(False)  # the button is enabled once there is a column to predict

    def shutdown(self) -> None:
        """Stop a comparison still running (the window is closing)."""
        self.worker.shutdown()

    def _set_running(self, running: bool) -> None:
        self.button.setEnabled(not running and self.target.count() > 0)
        self.target.setEnabled(not running)
        if running:
            self.label.setText("Training the models on the original and on the release …")

    def _on_compare(self) -> None:
        from ppdp_desktop.core.jobs import model_job  # imported already by the run that made the outcome

        target = self.target.currentText()
        if self._outcome is None or not target:
            return
        result = self._outcome.main
        self._set_running(True)
        self.worker.start(TASK, lambda progress, cancel: model_job(result, target, progress, cancel))

    def _on_finished(self, _name: str, comparison) -> None:
        self._set_running(False)
        self.label.setText("<br>".join(html.escape(line) for line in comparison.lines()))
        rows = comparison.coefficient_rows()
        self.table.setVisible(bool(rows))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()

    def _on_errored(self, _name: str, message: str, _details: str) -> None:
        self._set_running(False)
        self.label.setText(html.escape(message))
