"""The method page's "protect the quasi-identifiers" section: off, or k-anonymity by generalization with
a suppression limit, the risk threshold, the group bound (what a group's statistics may reveal), and each
quasi-identifier's hierarchy (interval widths for a numeric one; the taxonomy edited in step 2 for a
categorical one, with a link to it).

It edits ``project.protection`` only; the generalization itself runs in the job (the worker).
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.schema import Kind, Role
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.gui.state import WizardState

ROLES_STEP = 1
WIDTHS, CUTS = "interval widths", "cut points"
AUTOMATIC = "automatic: 1/l, else the risk threshold"
PLACEHOLDERS = {WIDTHS: "finest first, e.g. 5,10,20", CUTS: "per level, finest first, levels separated by /: 18,40,65/40"}
INTRO = ("Every method protects the sensitive column; the quasi-identifiers (age, sex, postcode …) are released "
         "as they are unless you protect them here: they are then generalized (age to 10-year bands, postcode to "
         "its district …) just enough that every record shares them with at least k − 1 others.")


class ProtectionSection(QGroupBox):
    """k, the suppression limit, the risk threshold and the hierarchy of each quasi-identifier."""

    changed = Signal()

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__("Protect the quasi-identifiers (re-identification)", parent)
        self.state = state
        self._filling = False
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        self.enabled = QCheckBox("Generalize the quasi-identifiers to k-anonymity")
        self.enabled.setToolTip("Coarsen age, postcode … (e.g. to 10-year bands, a district) just enough that nobody "
                                "is alone with their quasi-identifiers in the release")
        self.k = QSpinBox(minimum=2, maximum=1_000_000, value=5)
        self.k.setToolTip("Every released record shares its quasi-identifiers with at least k − 1 others")
        self.suppression = QDoubleSpinBox(decimals=1, minimum=0.0, maximum=50.0, singleStep=0.5, value=5.0, suffix=" %")
        self.suppression.setToolTip("Records that would need too much generalization are suppressed instead: their "
                                    "quasi-identifiers become *. At most this share of the records.")
        self.threshold = QDoubleSpinBox(decimals=0, minimum=1.0, maximum=100.0, singleStep=5.0, value=20.0, suffix=" %")
        self.threshold.setToolTip("A record whose chance of being re-identified is above this counts as at risk")
        self.group_limit = QCheckBox("Limit what a group reveals")
        self.group_limit.setToolTip("Refuse the release unless, in every group of records sharing their "
                                    "quasi-identifiers, no sensitive value is held by more than the group bound — "
                                    "checked exactly on the original data before anything is written. Otherwise "
                                    "anyone who knows a person's quasi-identifiers may guess their value more often.")
        self.group_bound = QDoubleSpinBox(decimals=0, minimum=0.0, maximum=100.0, singleStep=5.0, value=0.0, suffix=" %")
        self.group_bound.setSpecialValueText(AUTOMATIC)
        self.group_bound.setToolTip("The largest share of one sensitive value allowed in a group (the report compares "
                                    "every group with it); at 0: 1/l for randomized response, else the risk threshold")
        form = QFormLayout()
        form.addRow(self.enabled)
        form.addRow("k (smallest group):", self.k)
        form.addRow("Suppress at most:", self.suppression)
        form.addRow("Risk threshold:", self.threshold)
        form.addRow(self.group_limit)
        form.addRow("Group bound:", self.group_bound)
        self.hierarchies = QFormLayout()
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b71c1c;")
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(QLabel("Hierarchy of each quasi-identifier:"))
        layout.addLayout(self.hierarchies)
        layout.addWidget(self.message)
        self.widths: dict[str, QLineEdit] = {}
        self.modes: dict[str, QComboBox] = {}
        self.enabled.toggled.connect(self._on_edited)
        self.group_limit.toggled.connect(self._on_edited)
        for spin in (self.k, self.suppression, self.threshold, self.group_bound):
            spin.valueChanged.connect(self._on_edited)

    # --- from the state -------------------------------------------------------------------------
    def refresh(self) -> None:
        settings = self.state.project.protection_settings()
        self._filling = True
        self.enabled.setChecked(settings.k is not None)
        self.k.setValue(settings.k or 5)
        self.suppression.setValue(100.0 * settings.suppression)
        self.threshold.setValue(100.0 * settings.threshold)
        self.group_limit.setChecked(bool(settings.require_group_bound))
        self.group_bound.setValue(100.0 * settings.group_bound if settings.group_bound is not None else 0.0)
        while self.hierarchies.rowCount():
            self.hierarchies.removeRow(0)
        self.widths, self.modes = {}, {}
        dataset = self.state.dataset
        quasi = self.state.project.columns_with(Role.QUASI_IDENTIFIER)
        if not quasi:
            self.hierarchies.addRow(QLabel("No quasi-identifier is tagged (step 2)."))
        for name in quasi:
            kind = dataset.schema.attributes[name].kind if dataset is not None else None
            if kind is Kind.NUMERIC:
                self.hierarchies.addRow(f"{name}:", self._interval_row(name, settings))
            else:
                self.hierarchies.addRow(f"{name}:", self._taxonomy_note(name))
        self._filling = False
        self._update_message()

    def _interval_row(self, name: str, settings) -> QWidget:
        """Interval widths (5,10,20: bands of 5, then 10, then 20) or cut points per level (18,40,65/40)."""
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        mode = QComboBox()
        mode.addItems([WIDTHS, CUTS])
        mode.setToolTip(f"How {name!r} is coarsened: into bands of equal width, or at cut points you choose")
        edit = QLineEdit()
        edit.setToolTip("Finest level first. Widths: 5,10,20 (bands of 5, then 10, then 20). Cut points: 18,40,65 "
                        "(levels separated by /). A numeric quasi-identifier needs one of them.")
        if name in settings.cuts:
            mode.setCurrentText(CUTS)
            edit.setText("/".join(",".join(f"{c:g}" for c in level) for level in settings.cuts[name]))
        else:
            edit.setText(",".join(f"{w:g}" for w in settings.intervals.get(name, [])))
        edit.setPlaceholderText(PLACEHOLDERS[mode.currentText()])
        mode.currentTextChanged.connect(lambda text, e=edit: (e.setPlaceholderText(PLACEHOLDERS[text]), self._on_edited()))
        edit.textChanged.connect(self._on_edited)
        layout.addWidget(mode)
        layout.addWidget(edit, 1)
        self.widths[name] = edit
        self.modes[name] = mode
        return row

    def _taxonomy_note(self, name: str) -> QLabel:
        taxonomy = self.state.taxonomies.get(name)
        if taxonomy is not None and taxonomy.depth > 1:
            text = f"its taxonomy from step 2 ({taxonomy.depth} levels)"
        else:
            text = "no taxonomy yet: codes of digits lose a digit per level, other values are kept or suppressed"
        label = QLabel(f"{text} — <a href='{name}'>edit it in step 2</a>")
        label.setWordWrap(True)
        label.linkActivated.connect(self._open_editor)
        return label

    def _open_editor(self, column: str) -> None:
        window = self.window()
        if hasattr(window, "go_to") and self.state.dataset is not None:
            window.go_to(ROLES_STEP)
            window.pages[ROLES_STEP].table.setCurrentCell(list(self.state.dataset.frame.columns).index(column), 0)

    # --- edits ------------------------------------------------------------------------------------
    def _on_edited(self, *_args) -> None:
        if self._filling:
            return
        intervals, cuts = {}, {}
        for name, edit in self.widths.items():
            if self.modes[name].currentText() == CUTS:
                levels = _cuts(edit.text())
                if levels:
                    cuts[name] = levels
            elif widths := _widths(edit.text()):
                intervals[name] = widths
        self.state.project.protection = {
            "k": self.k.value() if self.enabled.isChecked() else None,
            "suppression": self.suppression.value() / 100.0,
            "threshold": self.threshold.value() / 100.0,
            "intervals": intervals,
            "cuts": cuts,
            "require_group_bound": self.group_limit.isChecked(),
            "group_bound": self.group_bound.value() / 100.0 if self.group_bound.value() > 0 else None,
        }
        self._update_message()
        self.changed.emit()

    def problems(self) -> list[str]:
        """What blocks the run, each naming what to change."""
        out = []
        if self.group_limit.isChecked() and not self.state.project.columns_with(Role.QUASI_IDENTIFIER):
            out.append("Limiting what a group reveals needs the quasi-identifiers: tag them in step 2, or untick it.")
        if not self.enabled.isChecked():
            return out
        if not self.state.project.columns_with(Role.QUASI_IDENTIFIER):
            out.append("Tag the quasi-identifiers in step 2, or untick the protection.")
        method = get_method(self.state.project.method)
        if method.randomizes_quasi:
            out.append(f"{method.title} randomizes the quasi-identifiers itself: untick the protection or choose "
                       "another method.")
        for name, edit in self.widths.items():
            text, cuts = edit.text().strip(), self.modes[name].currentText() == CUTS
            if not text:
                out.append(f"Give interval widths for {name} (e.g. 5,10,20) or its cut points (e.g. 18,40,65/40).")
            elif cuts and _cuts(text) is None:
                out.append(f"The cut points of {name} must be numbers separated by commas, levels by '/', e.g. 18,40,65/40.")
            elif not cuts and _widths(text) is None:
                out.append(f"The widths of {name} must be numbers separated by commas, e.g. 5,10,20.")
        return out

    def _update_message(self) -> None:
        self.message.setText(" ".join(self.problems()))
        for widget in (self.k, self.suppression):
            widget.setEnabled(self.enabled.isChecked())


def _cuts(text: str) -> list[list[float]] | None:
    try:
        levels = [[float(c) for c in level.split(",") if c.strip()] for level in text.split("/") if level.strip()]
    except ValueError:
        return None
    return levels if levels and all(levels) else None


def _widths(text: str) -> list[float] | None:
    try:
        values = [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
    except ValueError:
        return None
    return values if values and all(v > 0 for v in values) else None
