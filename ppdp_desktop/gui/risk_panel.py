"""The roles page's live re-identification figure: how many records are the only one with the
quasi-identifiers tagged so far.

Computed off the GUI thread by a worker of its own (so it never cancels a run), a moment after the last
role change (debounced: tagging four columns in a row computes once); a newer request cancels an older one.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.privacy.risk import RiskAnalysis, analyse_risk
from ppdp_desktop.core.privacy.uniqueness import Uniqueness, estimate_uniqueness
from ppdp_desktop.core.privacy.verdict import risk_verdict
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.worker import Worker

DEBOUNCE_MS = 400
COLORS = {"ok": "#1b5e20", "warning": "#8a4b00", "danger": "#b71c1c"}  # the one rule's levels
NONE_TAGGED = ("No quasi-identifier tagged yet: tag the columns someone could know about a person (age, sex, "
               "postcode, admission date) to see how many records they single out.")


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
        self.fraction.valueChanged.connect(lambda _value: self.schedule())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        row = QFormLayout()
        row.addRow("Share of the population in this file:", self.fraction)
        layout.addLayout(row)
        self.worker = Worker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.errored.connect(lambda _name, message, _details: self._show(message, "danger"))
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self._compute)

    def schedule(self) -> None:
        """Recompute a moment after the last change (role, threshold or data)."""
        self.analysis = self.uniqueness = None
        quasi = self._quasi()
        if self.state.dataset is None or not quasi:
            self.worker.cancel()
            self.timer.stop()
            self._show(NONE_TAGGED, "warning")
            return
        self.label.setText(f"Counting the groups of {html.escape(', '.join(quasi))} …")
        self.timer.start()

    def _quasi(self) -> list[str]:
        return self.state.project.columns_with(Role.QUASI_IDENTIFIER)

    def _compute(self) -> None:
        frame, quasi = self.state.dataset.frame, self._quasi()
        protection = self.state.project.protection
        threshold = float(protection.get("threshold") or 0.2)
        k = protection.get("k")  # the k asked on step 4, if any: does the data as it is already meet it?
        fraction = self.fraction.value() / 100.0

        def job(progress, cancel) -> tuple[RiskAnalysis, Uniqueness | None, float]:
            analysis = analyse_risk(frame[quasi], quasi, threshold, k)
            if not fraction:
                return analysis, None, fraction
            sizes = {size: records // size for size, records in analysis.class_size_histogram.items()}
            return analysis, estimate_uniqueness(sizes, fraction), fraction

        self.worker.start("risk", job)

    def _on_finished(self, _name: str, result: tuple[RiskAnalysis, Uniqueness | None, float]) -> None:
        analysis, uniqueness, fraction = result
        if list(analysis.quasi) != self._quasi() or fraction != self.fraction.value() / 100.0:
            return  # the roles or the share changed meanwhile: a newer count is coming
        self.analysis, self.uniqueness = analysis, uniqueness
        lines = analysis.lines()
        verdict = risk_verdict(analysis)  # the one rule, on the data as it is (before any generalization)
        population = f"<br>{html.escape(uniqueness.lines()[0])}" if uniqueness is not None else ""
        self._show(f"<b>Re-identification risk of the data as it is:</b> {html.escape(lines[0])}<br>"
                   f"{html.escape(lines[1])}<br>{html.escape(verdict.text)}{population}", verdict.level)

    def _show(self, text: str, level: str) -> None:
        self.label.setText(text)
        self.label.setStyleSheet(f"color: {COLORS.get(level, COLORS['warning'])};")

    def shutdown(self) -> None:
        self.timer.stop()
        self.worker.shutdown()
