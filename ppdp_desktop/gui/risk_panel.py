"""The roles page's live re-identification figure: how many records are the only one with the
quasi-identifiers tagged so far, and, when the custodian states them, the population uniques estimated from the
share of the population the file holds and the journalist risk against a population table (a CSV chosen with
the button; one that does not fit is refused in a dialog naming the file, the line and the value). Both are kept
in the project's protection settings, so the release states them too (release.json, the report).

Computed off the GUI thread by a worker of its own (so it never cancels a run), a moment after the last
role change (debounced: tagging four columns in a row computes once); a newer request cancels an older one.
"""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.privacy.journalist import JournalistRisk, journalist_risk, read_population
from ppdp_desktop.core.privacy.risk import RiskAnalysis, analyse_risk
from ppdp_desktop.core.privacy.uniqueness import Uniqueness, estimate_uniqueness
from ppdp_desktop.core.privacy.verdict import risk_verdict
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.worker import Worker

DEBOUNCE_MS = 400
COLORS = {"ok": "#1b5e20", "warning": "#8a4b00", "danger": "#b71c1c"}  # the one rule's levels
NONE_TAGGED = ("No quasi-identifier tagged yet: tag the columns someone could know about a person (age, sex, "
               "postcode, admission date) to see how many records they single out.")
NO_TABLE = "none (journalist risk not measured)"
TABLE_FILTER = "Population table (*.csv *.txt);;All files (*)"


class RiskPanel(QWidget):
    """A label kept up to date with the risk of the tagged quasi-identifiers (``analysis`` when known)."""

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.analysis: RiskAnalysis | None = None
        self.uniqueness: Uniqueness | None = None
        self.label = QLabel(NONE_TAGGED)
        self.label.setWordWrap(True)
        self.fraction = QDoubleSpinBox()  # the share of the population the file holds: population uniques estimated
        self.fraction.setRange(0.0, 100.0)
        self.fraction.setDecimals(2)
        self.fraction.setSuffix(" %")
        self.fraction.setSpecialValueText("not stated")
        self.fraction.setToolTip("The share of the population this file holds (e.g. 1 % for a 1 % sample). When "
                                 "stated, the figure also estimates how many people in the population are the only "
                                 "one with their quasi-identifiers (Pitman, Zayatz or SNB model, as ARX chooses).")
        self.fraction.valueChanged.connect(self._on_fraction)
        self.population: str | None = None  # the population table's path (kept in the project's protection)
        self.journalist: JournalistRisk | None = None
        self._fresh = False  # a table just chosen: one that does not fit is refused in a dialog
        self.table_name = QLabel(NO_TABLE)
        self.table_name.setWordWrap(True)  # a long path wraps rather than widening the page
        self.choose_table = QPushButton("Population table…")
        self.choose_table.setToolTip("A CSV counting the people of the population per combination of the "
                                     "quasi-identifiers (each quasi-identifier and 'count', e.g. from a census): the "
                                     "journalist risk, 1 / the number of people sharing a record's quasi-identifiers, "
                                     "for someone who does not know whether a person is in this file.")
        self.choose_table.clicked.connect(self.choose_population)
        self.forget_table = QPushButton("Remove")
        self.forget_table.setToolTip("Measure no journalist risk (the release states none)")
        self.forget_table.clicked.connect(lambda: self._set_population(None))
        table_row = QHBoxLayout()  # under the table's name: a narrow window keeps the whole row
        table_row.addWidget(self.choose_table)
        table_row.addWidget(self.forget_table)
        table_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        row = QFormLayout()
        row.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a narrow window: the field under its label
        share = QLabel("Share of the population in this file:")
        share.setWordWrap(True)
        share.setBuddy(self.fraction)
        row.addRow(share, self.fraction)
        row.addRow("Population table:", self.table_name)
        row.addRow(table_row)
        layout.addLayout(row)
        self._show_table()
        self.worker = Worker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.errored.connect(self._on_error)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self._compute)

    def schedule(self) -> None:
        """Recompute a moment after the last change (role, threshold, share, population table or data)."""
        self._from_project()
        self.analysis = self.uniqueness = self.journalist = None
        quasi = self._quasi()
        if self.state.dataset is None or not quasi:
            self.worker.cancel()
            self.timer.stop()
            self._show(NONE_TAGGED, "warning")
            return
        self.label.setText(f"Counting the groups of {html.escape(', '.join(quasi))} …")
        self.timer.start()

    # --- the population, kept in the project's protection settings ------------------------------------
    def _from_project(self) -> None:
        """The share and the table as the project holds them (a project opened, a file loaded)."""
        protection = self.state.project.protection
        fraction = protection.get("sampling_fraction")
        percent = 100.0 * float(fraction) if fraction else 0.0
        if abs(percent - self.fraction.value()) > 1e-9:
            self.fraction.blockSignals(True)
            self.fraction.setValue(percent)
            self.fraction.blockSignals(False)
        if (protection.get("population") or None) != self.population:
            self.population = protection.get("population") or None
            self._show_table()

    def _store(self, key: str, value: object) -> None:
        self.state.project.protection = {**self.state.project.protection, key: value}

    def _on_fraction(self, value: float) -> None:
        self._store("sampling_fraction", value / 100.0 if value else None)
        self.schedule()

    def choose_population(self) -> None:
        """Ask for a population table; its journalist risk appears beside the sample's, or a dialog says why not."""
        path, _ = QFileDialog.getOpenFileName(self, "Population table", "", TABLE_FILTER)
        if path:
            self._fresh = True
            self._set_population(path)

    def _set_population(self, path: str | None) -> None:
        self.population = path
        self._store("population", path)
        self._show_table()
        self.schedule()

    def _show_table(self) -> None:
        self.table_name.setText(Path(self.population).name if self.population else NO_TABLE)
        self.table_name.setToolTip(self.population or "")
        self.forget_table.setEnabled(bool(self.population))

    def _on_error(self, _name: str, message: str, _details: str) -> None:
        if self._fresh and self.population:
            self._fresh = False
            self._set_population(None)  # a table that does not fit is not kept
            QMessageBox.warning(self, "This population table does not fit", message)
            return
        self._show(message, "danger")

    def _quasi(self) -> list[str]:
        return self.state.project.columns_with(Role.QUASI_IDENTIFIER)

    def _compute(self) -> None:
        frame, quasi = self.state.dataset.frame, self._quasi()
        protection = self.state.project.protection
        threshold = float(protection.get("threshold") or 0.2)
        k = protection.get("k")  # the k asked on step 4, if any: does the data as it is already meet it?
        fraction = self.fraction.value() / 100.0
        population = self.population

        def job(progress, cancel) -> tuple[RiskAnalysis, Uniqueness | None, JournalistRisk | None, float, str | None]:
            analysis = analyse_risk(frame[quasi], quasi, threshold, k)
            uniqueness = journalist = None
            if fraction:
                sizes = {size: records // size for size, records in analysis.class_size_histogram.items()}
                uniqueness = estimate_uniqueness(sizes, fraction)
            if population:
                journalist = journalist_risk(frame[quasi], quasi, read_population(population, quasi), threshold)
            return analysis, uniqueness, journalist, fraction, population

        self.worker.start("risk", job)

    def _on_finished(self, _name: str, result) -> None:
        analysis, uniqueness, journalist, fraction, population = result
        if (list(analysis.quasi) != self._quasi() or fraction != self.fraction.value() / 100.0
                or population != self.population):
            return  # the roles, the share or the table changed meanwhile: a newer count is coming
        self._fresh = False
        self.analysis, self.uniqueness, self.journalist = analysis, uniqueness, journalist
        lines = analysis.lines()
        verdict = risk_verdict(analysis)  # the one rule, on the data as it is (before any generalization)
        extra = [*(uniqueness.lines() if uniqueness is not None else []),
                 *(journalist.lines() if journalist is not None else [])]
        population_text = "".join(f"<br>{html.escape(line)}" for line in extra)
        self._show(f"<b>Re-identification risk of the data as it is:</b> {html.escape(lines[0])}<br>"
                   f"{html.escape(lines[1])}<br>{html.escape(verdict.text)}{population_text}", verdict.level)

    def _show(self, text: str, level: str) -> None:
        self.label.setText(text)
        self.label.setStyleSheet(f"color: {COLORS.get(level, COLORS['warning'])};")

    def shutdown(self) -> None:
        self.timer.stop()
        self.worker.shutdown()
