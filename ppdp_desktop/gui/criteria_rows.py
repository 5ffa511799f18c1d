"""Step 4's privacy criteria beyond k (issue 33): l-diversity (distinct, entropy or recursive (c,l)) and t-closeness of
the sensitive column, the average and highest prosecutor risk, and local recoding (``ProtectionSettings``).

Each criterion alone makes the job generalize the quasi-identifiers (k = 1 when k is not ticked); the job checks every
one on the released table before writing (:mod:`~ppdp_desktop.core.generalization.check_criteria`). This widget only
edits the keys it owns (:data:`OWNED`); the section stores them with the rest.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QWidget

from ppdp_desktop.core.settings import ProtectionSettings
from ppdp_desktop.gui.wrap_button import WrapCheckBox

#: the project keys this widget sets
OWNED = ("l_diversity", "entropy_l", "recursive", "t_closeness", "t_distance", "average_risk", "highest_risk",
         "local_recoding")
#: the kinds of l-diversity in plain words, in the order shown (None: not asked)
L_KINDS: dict[str | None, str] = {
    None: "not asked",
    "distinct": "distinct l-diversity",
    "entropy": "entropy l-diversity",
    "recursive": "recursive (c,l)-diversity",
}
DISTANCES = {
    "equal": "equal (all values equally far apart)",
    "hierarchical": "hierarchical (sensitive taxonomy)",
}
HOMOGENEOUS = ("Someone who knows a person's quasi-identifiers (age, sex, postcode …) finds the group they are in; if "
               "every record of that group has the same sensitive value, they learn it without knowing which record "
               "is the person's.")
SKEWED = ("Someone who knows a person's quasi-identifiers finds their group; if the group's sensitive values are "
          "far more often one value (or close values) than in the whole table, they learn that the person probably "
          "has it.")
HIERARCHICAL_NOTE = ("Hierarchical needs a taxonomy of the sensitive column with groups (step 2); without one the "
                     "run is refused and says why.")


def _spin(decimals: int, low: float, high: float, step: float, value: float, suffix: str = "") -> QDoubleSpinBox:
    return QDoubleSpinBox(decimals=decimals, minimum=low, maximum=high, singleStep=step, value=value, suffix=suffix)


class CriteriaRows(QWidget):
    """The criteria's controls, as rows of one form; ``edited`` on every change a person makes."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._filling = False
        self.l_kind = QComboBox()
        for key, words in L_KINDS.items():
            self.l_kind.addItem(words, key)
        self.l_kind.setToolTip(f"l-diversity of the sensitive column. It protects against this: {HOMOGENEOUS} "
                               "Distinct: every released group holds at least l different values; entropy: its values "
                               "are spread at least as evenly as l equally frequent ones; recursive (c,l): its most "
                               "frequent value is not dominant.")
        self.l_value = _spin(0, 2.0, 1_000_000.0, 1.0, 3.0)
        self.l_value.setPrefix("l = ")
        self.l_value.setToolTip("distinct: every group has at least l different sensitive values; entropy: the "
                                "entropy of a group's values is at least log(l); recursive: with c, below")
        self.c_value = _spin(1, 0.1, 1000.0, 0.5, 3.0)
        self.c_value.setPrefix("c = ")
        self.c_value.setToolTip("recursive (c,l): in every group the most frequent value is rarer than c times the "
                                "values from the l-th most frequent on together")
        l_row = QHBoxLayout()
        l_row.setContentsMargins(0, 0, 0, 0)
        for widget in (self.l_kind, self.l_value, self.c_value):
            l_row.addWidget(widget)
        l_row.addStretch(1)
        self.t_on = WrapCheckBox("Keep every group's sensitive values close to the whole table's (t-closeness)")
        self.t_on.setToolTip(f"t-closeness of the sensitive column. It protects against this: {SKEWED}")
        self.t_value = _spin(2, 0.01, 1.0, 0.05, 0.2)
        self.t_value.setPrefix("t = ")
        self.t_value.setToolTip("The largest distance (earth mover's) between a group's sensitive values and the whole "
                                "table's: smaller is safer and needs coarser quasi-identifiers")
        self.distance = QComboBox()
        for box in (self.l_kind, self.distance):  # elided in a narrow window, whole in the list
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(14)
        for key, words in DISTANCES.items():
            self.distance.addItem(words, key)
        self.distance.setToolTip("How far apart two sensitive values are: all equally far, or as far as their lowest "
                                 "common group in the sensitive column's taxonomy. " + HIERARCHICAL_NOTE)
        t_row = QHBoxLayout()
        t_row.setContentsMargins(0, 0, 0, 0)
        t_row.addWidget(self.t_value)
        t_row.addWidget(self.distance, 1)
        self.t_note = QLabel(HIERARCHICAL_NOTE)
        self.t_note.setWordWrap(True)
        self.average_on = QCheckBox("Average re-identification risk at most")
        self.average_on.setToolTip("Someone who knows a person's quasi-identifiers and picks a record of their group "
                                   "at random is right with chance 1 / the group's size; on average over the released "
                                   "records at most this")
        self.average = _spin(1, 0.1, 100.0, 1.0, 5.0, " %")
        self.highest_on = QCheckBox("Highest re-identification risk at most")
        self.highest_on.setToolTip("No released record may be re-identified by its quasi-identifiers with a chance "
                                   "above this (1 / its group's size)")
        self.highest = _spin(1, 0.1, 100.0, 1.0, 20.0, " %")
        self.local = WrapCheckBox("Local recoding (keep outlying records, suppress single cells)")
        self.local.setToolTip("Records that would be suppressed whole are released at coarser levels, or with one "
                              "quasi-identifier cell as *, where their group then meets k and the criteria above; "
                              "never more records suppressed than without it (greedy, checked like the rest)")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow("Diverse sensitive values:", l_row)
        form.addRow(self.t_on)
        form.addRow("Distance:", t_row)
        form.addRow(self.t_note)
        form.addRow(self.average_on, self.average)
        form.addRow(self.highest_on, self.highest)
        form.addRow(self.local)
        for box in (self.l_kind, self.distance):
            box.currentIndexChanged.connect(self._on_edited)
        for spin in (self.l_value, self.c_value, self.t_value, self.average, self.highest):
            spin.valueChanged.connect(self._on_edited)
        for check in (self.t_on, self.average_on, self.highest_on, self.local):
            check.toggled.connect(self._on_edited)
        self._enable()

    def show_settings(self, settings: ProtectionSettings) -> None:
        """Show the project's criteria (no ``edited``)."""
        self._filling = True
        kind = ("recursive" if settings.recursive is not None else "entropy" if settings.entropy_l is not None
                else "distinct" if settings.l_diversity is not None else None)
        self.l_kind.setCurrentIndex(self.l_kind.findData(kind))
        self._decimals(kind)
        if kind == "recursive" and settings.recursive is not None:
            self.c_value.setValue(float(settings.recursive[0]))
            self.l_value.setValue(float(settings.recursive[1]))
        elif kind is not None:
            self.l_value.setValue(float(settings.entropy_l if kind == "entropy" else settings.l_diversity))  # type: ignore[arg-type]
        self.t_on.setChecked(settings.t_closeness is not None)
        if settings.t_closeness is not None:
            self.t_value.setValue(float(settings.t_closeness))
        self.distance.setCurrentIndex(max(self.distance.findData(settings.t_distance), 0))
        for check, spin, value in ((self.average_on, self.average, settings.average_risk),
                                   (self.highest_on, self.highest, settings.highest_risk)):
            check.setChecked(value is not None)
            if value is not None:
                spin.setValue(100.0 * float(value))
        self.local.setChecked(bool(settings.local_recoding))
        self._filling = False
        self._enable()

    def values(self) -> dict[str, Any]:
        """The keys of :data:`OWNED` as the controls say (None: not asked)."""
        kind = self.l_kind.currentData()
        l_value = self.l_value.value()
        return {
            "l_diversity": int(l_value) if kind == "distinct" else None,
            "entropy_l": l_value if kind == "entropy" else None,
            "recursive": [self.c_value.value(), int(l_value)] if kind == "recursive" else None,
            "t_closeness": self.t_value.value() if self.t_on.isChecked() else None,
            "t_distance": self.distance.currentData(),
            "average_risk": self.average.value() / 100.0 if self.average_on.isChecked() else None,
            "highest_risk": self.highest.value() / 100.0 if self.highest_on.isChecked() else None,
            "local_recoding": self.local.isChecked(),
        }

    def _decimals(self, kind: str | None) -> None:
        """Entropy's l may be any number from 1; distinct and recursive l are whole numbers from 2."""
        self.l_value.setDecimals(2 if kind == "entropy" else 0)
        self.l_value.setMinimum(1.0 if kind == "entropy" else 2.0)

    def _on_edited(self, *_args: object) -> None:
        if self._filling:
            return
        self._filling = True
        self._decimals(self.l_kind.currentData())
        self._filling = False
        self._enable()
        self.edited.emit()

    def _enable(self) -> None:
        kind = self.l_kind.currentData()
        self.l_value.setEnabled(kind is not None)
        self.c_value.setVisible(kind == "recursive")
        for widget in (self.t_value, self.distance):
            widget.setEnabled(self.t_on.isChecked())
        self.average.setEnabled(self.average_on.isChecked())
        self.highest.setEnabled(self.highest_on.isChecked())
