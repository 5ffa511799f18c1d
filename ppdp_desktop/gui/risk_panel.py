"""The roles page's live re-identification figure: how many records are the only one with the
quasi-identifiers tagged so far.

Computed off the GUI thread by a worker of its own (so it never cancels a run), a moment after the last
role change (debounced: tagging four columns in a row computes once); a newer request cancels an older one.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.privacy.risk import RiskAnalysis, analyse_risk
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
        self.label = QLabel(NONE_TAGGED)
        self.label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        self.worker = Worker(self)
        self.worker.finished.connect(self._on_finished)
        self.worker.errored.connect(lambda _name, message, _details: self._show(message, "danger"))
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self._compute)

    def schedule(self) -> None:
        """Recompute a moment after the last change (role, threshold or data)."""
        self.analysis = None
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
        self.worker.start("risk", lambda progress, cancel: analyse_risk(frame[quasi], quasi, threshold, k))

    def _on_finished(self, _name: str, analysis: RiskAnalysis) -> None:
        if list(analysis.quasi) != self._quasi():  # the roles changed meanwhile: a newer count is coming
            return
        self.analysis = analysis
        lines = analysis.lines()
        verdict = risk_verdict(analysis)  # the one rule, on the data as it is (before any generalization)
        self._show(f"<b>Re-identification risk of the data as it is:</b> {html.escape(lines[0])}<br>"
                   f"{html.escape(lines[1])}<br>{html.escape(verdict.text)}", verdict.level)

    def _show(self, text: str, level: str) -> None:
        self.label.setText(text)
        self.label.setStyleSheet(f"color: {COLORS.get(level, COLORS['warning'])};")

    def shutdown(self) -> None:
        self.timer.stop()
        self.worker.shutdown()
