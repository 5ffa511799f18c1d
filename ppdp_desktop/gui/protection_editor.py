"""The method page's "protect the quasi-identifiers" section: off, or k-anonymity by generalization with
a suppression limit, the risk threshold, the group bound (what a group's statistics may reveal), and each
quasi-identifier's hierarchy (:mod:`~ppdp_desktop.gui.hierarchy_rows`: interval widths, cut points or a
hierarchy file for a numeric one; the taxonomy edited in step 2 or a hierarchy file for any other, with a link
to step 2 and a true description of the built-in levels otherwise), the utility metric, and what to keep of each
quasi-identifier: how fine it stays at least and its weight (:mod:`~ppdp_desktop.gui.keep_rows`), and the criteria
beyond k with local recoding (:mod:`~ppdp_desktop.gui.criteria_rows`).

It edits ``project.protection`` only, and only the keys it has controls for (a project from the command line keeps
its ``search``, population …); the generalization itself runs in the job (the worker).
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QLabel, QSpinBox, QVBoxLayout, QWidget

from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.gui.criteria_rows import CriteriaRows
from ppdp_desktop.gui.hierarchy_rows import HierarchyRow, Imported
from ppdp_desktop.gui.keep_rows import METRIC_CHOICES, KeepRow, Levels
from ppdp_desktop.gui.state import WizardState

ROLES_STEP = 1
#: the criteria that make the job generalize without k (ProtectionSettings.criteria_given)
CRITERIA = ("l_diversity", "entropy_l", "recursive", "t_closeness", "average_risk", "highest_risk")
AUTOMATIC = "automatic: 1/l, else the risk threshold"
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
        self.metric_choice = QComboBox()
        for key, words in METRIC_CHOICES.items():
            self.metric_choice.addItem(words, key)
        self.metric_choice.setToolTip("Among the generalizations that meet k, the one chosen is best by this measure; ties go "
                               "to fewer suppressed records")
        form.addRow("Prefer the solution with:", self.metric_choice)
        self.criteria_title = QLabel()
        self.criteria_title.setWordWrap(True)
        self.criteria = CriteriaRows()
        self.hierarchies = QFormLayout()
        self.keep = QFormLayout()
        for layout in (form, self.hierarchies, self.keep):  # a narrow window: a field goes under its label
            layout.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.metric_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.metric_choice.setMinimumContentsLength(16)
        self.levels = Levels(state)
        self.wanted: dict[str, str] = {}  # the kind of level chosen per column in this session ("10-year bands")
        self._wanted_data: object = None  # the project and data file they were chosen for
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #b71c1c;")
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.criteria_title)
        layout.addWidget(self.criteria)
        layout.addWidget(QLabel("Hierarchy of each quasi-identifier:"))
        layout.addLayout(self.hierarchies)
        self.keep_title = QLabel("What to keep of each quasi-identifier (the generalization never goes coarser):")
        self.keep_title.setWordWrap(True)
        layout.addWidget(self.keep_title)
        layout.addLayout(self.keep)
        layout.addWidget(self.message)
        self.rows: dict[str, HierarchyRow] = {}
        self.keeps: dict[str, KeepRow] = {}
        self.imported: Imported = {}  # hierarchy files taken here, by column
        self.enabled.toggled.connect(self._on_edited)
        self.group_limit.toggled.connect(self._on_edited)
        self.metric_choice.currentIndexChanged.connect(self._on_edited)
        self.criteria.edited.connect(self._on_edited)
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
        self.metric_choice.setCurrentIndex(max(self.metric_choice.findData(settings.metric), 0))
        self.criteria.show_settings(settings)
        sensitive = self.state.project.sensitive
        self.criteria_title.setText(
            "Beyond k (each criterion alone also generalizes the quasi-identifiers), on the sensitive column "
            f"{sensitive!r}:" if sensitive else "Beyond k (each criterion alone also generalizes the quasi-identifiers; "
            "l-diversity and t-closeness need a sensitive column, step 2):")
        while self.hierarchies.rowCount():
            self.hierarchies.removeRow(0)
        while self.keep.rowCount():
            self.keep.removeRow(0)
        self.rows, self.keeps = {}, {}
        self.levels.clear()  # a tree may have been edited in step 2
        session = (id(self.state.project), self.state.project.data_path)  # a kind changed in step 2 keeps it
        if session != self._wanted_data:  # another file or project: its own levels, by number
            self.wanted, self._wanted_data = {}, session
        quasi = self.state.project.columns_with(Role.QUASI_IDENTIFIER) if self.state.dataset is not None else []
        if not quasi:
            self.hierarchies.addRow(QLabel("No quasi-identifier is tagged (step 2)."))
        for name in quasi:
            row = HierarchyRow(self.state, name, settings, self.imported, self._open_editor)
            row.edited.connect(self._on_edited)
            self.hierarchies.addRow(f"{name}:", row)
            self.rows[name] = row
            keep = KeepRow(name)
            keep.show_levels(self.levels.of(name, settings), settings.max_levels.get(name), self.wanted.get(name))
            keep.set_weight(settings.weights.get(name, 1.0))
            keep.edited.connect(self._on_edited)
            self.keep.addRow(f"{name}:", keep)
            self.keeps[name] = keep
        self.keep_title.setVisible(bool(quasi))
        self._filling = False
        shown = {name: level for name, keep in self.keeps.items() if (level := keep.max_level()) is not None}
        if shown != settings.max_levels or set(settings.weights) - set(quasi) or set(settings.min_levels) - set(quasi):
            self._store()  # a column untagged in step 2, or a level its hierarchy no longer has, keeps no bound
        self._update_message()

    @property
    def widths(self):
        """The interval/cut-point field of each numeric quasi-identifier (as a person types into it)."""
        return {name: row.edit for name, row in self.rows.items() if row.edit is not None}

    @property
    def modes(self):
        """The mode (interval widths, cut points, hierarchy file) of each numeric quasi-identifier."""
        return {name: row.mode for name, row in self.rows.items() if row.mode is not None}

    def _open_editor(self, column: str) -> None:
        window = self.window()
        if hasattr(window, "go_to") and self.state.dataset is not None:
            window.go_to(ROLES_STEP)
            window.pages[ROLES_STEP].table.setCurrentCell(list(self.state.dataset.frame.columns).index(column), 0)

    # --- edits ------------------------------------------------------------------------------------
    def _on_edited(self, *_args) -> None:
        if self._filling:
            return
        self._store()
        self._update_message()
        self.changed.emit()

    def _store(self) -> None:
        """Write the controls into ``project.protection``; the levels offered follow the hierarchies as they are now."""
        before = self.state.project.protection_settings()
        intervals, cuts = {}, {}
        for name, row in self.rows.items():
            if levels := row.cuts():
                cuts[name] = levels
            elif widths := row.widths():
                intervals[name] = widths
        self.state.project.protection = {
            **self.state.project.protection,  # keys without a control here (search, population …) stay as they are
            "k": self.k.value() if self.enabled.isChecked() else None,
            "suppression": self.suppression.value() / 100.0,
            "threshold": self.threshold.value() / 100.0,
            "intervals": intervals,
            "cuts": cuts,
            "require_group_bound": self.group_limit.isChecked(),
            "group_bound": self.group_bound.value() / 100.0 if self.group_bound.value() > 0 else None,
            "metric": self.metric_choice.currentData(),
            "min_levels": {name: level for name, level in before.min_levels.items() if name in self.rows},
            **self.criteria.values(),
        }
        settings = self.state.project.protection_settings()
        for name, keep in self.keeps.items():  # new widths or cut points: new levels (a level gone: any level)
            hierarchy = self.levels.of(name, settings)
            if hierarchy is not keep.hierarchy:
                keep.follow(hierarchy)
            if keep.wanted is not None:
                self.wanted[name] = keep.wanted
            else:
                self.wanted.pop(name, None)
        self.state.project.protection.update(
            max_levels={name: level for name, keep in self.keeps.items() if (level := keep.max_level()) is not None},
            weights={name: keep.weight.value() for name, keep in self.keeps.items() if keep.weight.value() != 1.0})

    def problems(self) -> list[str]:
        """What blocks the run, each naming what to change."""
        out = []
        if self.group_limit.isChecked() and not self.state.project.columns_with(Role.QUASI_IDENTIFIER):
            out.append("Limiting what a group reveals needs the quasi-identifiers: tag them in step 2, or untick it.")
        if not self.generalizes():
            return out
        if not self.state.project.columns_with(Role.QUASI_IDENTIFIER):
            out.append("Tag the quasi-identifiers in step 2, or untick the protection and the criteria.")
        method = get_method(self.state.project.method)
        if method.randomizes_quasi:
            out.append(f"{method.title} randomizes the quasi-identifiers itself: untick the protection or choose "
                       "another method.")
        for row in self.rows.values():
            out += row.problems()
        return out

    def generalizes(self) -> bool:
        """Whether the job will generalize the quasi-identifiers: k ticked, or a criterion asked."""
        criteria = self.criteria.values()
        return self.enabled.isChecked() or any(criteria[key] is not None for key in CRITERIA)

    def _update_message(self) -> None:
        self.message.setText(" ".join(self.problems()))
        self.k.setEnabled(self.enabled.isChecked())
        for widget in (self.suppression, self.metric_choice, *self.keeps.values()):
            widget.setEnabled(self.generalizes())

