"""Differential privacy's parameters on the method page: the columns to protect, epsilon, k, the
numeric domains, the grid step h each numeric column is released on (:mod:`~ppdp_desktop.gui.dp_grid_steps`) and
the plan figures (epsilon per attribute, noise scales, grid steps), checked live; and the release's layout, linked or
unlinked, with what epsilon covers in each (:mod:`~ppdp_desktop.gui.dp_layout`).

The widget edits the method's settings in the project (``project.options[method]``) only; it computes nothing
heavier than a column's min and max (once per data set) and whether a ticked column holds whole numbers (once per
column), so the GUI thread stays free. The job runs through the worker.
"""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.column_stats import ColumnStats
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.schema import Kind, Role
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.taxonomy.tree import Taxonomy
from ppdp_desktop.gui.dp_blanks import BlankChoices
from ppdp_desktop.gui.dp_grid_steps import GridStepField, PlannedStep, planned_step, step_text
from ppdp_desktop.gui.dp_layout import LayoutChoice

WARNING_STYLE = "QLabel { color: #7a4a00; background: #fff4e0; border: 1px solid #c77800; padding: 4px; }"
ERROR_STYLE = "color: #b71c1c;"
PLAN_STYLE = "color: #1b5e20;"
FROM_DATA = ("Taken from the data: the release will disclose the minimum and maximum of {name}; "
             "enter the true range (e.g. age 0–120)")
FLAT_TAXONOMY = ("{name}: no taxonomy was edited in step 2, so a flat taxonomy will be built from the data "
                 "(disclosing its values).")
EDITED_TAXONOMY = "{name}: uses the taxonomy edited in step 2 ({labels} labels)."
UNPROTECTED = "{name} is tagged sensitive in step 2 but not ticked here: it is released as it is."
LO, HI, SCALE, STEP = 1, 2, 3, 4
DOMAINS_TIP = ("The true range (lo, hi) of each numeric column: one person's value can move at most hi - lo. "
               "Noise scale b = M·Δ/(k·ε) is the typical size of the random shift of a cluster's value; "
               "grid step h is what released values are rounded to (empty: automatic)")


def _number(value: float) -> str:
    return f"{value:g}"


def _scale(value: float) -> str:
    """A noise scale for people: 4.8, 0.012, 39,790."""
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


def declared_taxonomy(taxonomy: Taxonomy | None) -> bool:
    """Whether an edited taxonomy says more than the data's own values (it groups them)."""
    return taxonomy is not None and taxonomy.depth > 1


class DPParameters(QWidget):
    """Columns to protect (checkable), epsilon, k, a lo/hi table of the numeric ones, and what they imply."""

    changed = Signal()

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method = method  # the registry name whose settings this edits (project.options[method])
        self.dp: Any = get_method(method)  # it answers noise_scale, is_whole_numbers and grid_step (window_editor "dp")
        self.options: dict = {}
        self.project: Project | None = None
        self.dataset: Dataset | None = None
        self.taxonomies: dict[str, Taxonomy] = {}
        self.stats: ColumnStats | None = None  # from the load worker: missing cells, numeric (min, max)
        self._whole: dict[str, bool] = {}  # column -> holds whole numbers (computed once per data set)
        self._filling = False
        self.attributes = QListWidget()
        self.attributes.setMaximumHeight(110)
        self.attributes.setToolTip("Each checked column is released as cluster values plus noise; "
                                   "epsilon is split equally between them")
        self.epsilon = QDoubleSpinBox(decimals=3, minimum=0.001, maximum=1000.0, singleStep=0.1, value=1.0)
        self.epsilon.setToolTip("epsilon > 0: the privacy budget; smaller means more protection and more noise")
        self.k = QSpinBox(minimum=1, maximum=10_000_000, value=10)
        self.k.setToolTip("Records per cluster (at least 1, at most the number of records): "
                          "larger k means less noise and coarser values")
        self.domains = QTableWidget(0, 5)
        self.domains.setHorizontalHeaderLabels(["Numeric column", "lo", "hi", "Noise scale b", "Grid step h"])
        self.domains.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.domains.verticalHeader().setVisible(False)
        self.domains.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.domains.setMaximumHeight(130)
        self.domains.setToolTip(DOMAINS_TIP)
        self.warning = QLabel()
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(WARNING_STYLE)
        self.taxonomy_note = QLabel()
        self.taxonomy_note.setWordWrap(True)
        self.plan = QLabel()
        self.plan.setWordWrap(True)
        self.plan.setStyleSheet(PLAN_STYLE)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet(ERROR_STYLE)
        self.layout_choice = LayoutChoice()
        self.blanks = BlankChoices()  # what to do with a ticked column's blank cells, under the columns
        form = QFormLayout()
        form.addRow("Protect these columns:", self.attributes)
        form.addRow(self.blanks)
        form.addRow("epsilon (privacy budget, > 0):", self.epsilon)
        form.addRow("k (records per cluster):", self.k)
        form.addRow(QLabel("Layout:"))  # then the choice across the card: its check boxes need the width
        form.addRow(self.layout_choice)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        intro = QLabel("For each numeric column, its true range (lo, hi) and its grid step h: released values are "
                       "multiples of h, and the noise (discrete Laplace) moves them by whole steps of h. Leave h "
                       "empty for the automatic step.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self.domains)
        for label in (self.warning, self.taxonomy_note, self.plan, self.message):
            layout.addWidget(label)
        self.attributes.itemChanged.connect(self._on_attributes_changed)
        self.epsilon.valueChanged.connect(self._on_edited)
        self.k.valueChanged.connect(self._on_edited)
        self.domains.itemChanged.connect(self._on_domain_edited)
        self.layout_choice.changed.connect(self._on_edited)
        self.blanks.changed.connect(self._on_edited)

    # --- from the state -------------------------------------------------------------------------
    def set_data(self, project: Project, dataset: Dataset | None, taxonomies: dict[str, Taxonomy],
                 stats: ColumnStats | None = None) -> None:
        """Show the project's settings for ``dataset`` (``stats``: its column figures from the load
        worker); unset attributes default to the sensitive column."""
        if dataset is not self.dataset:
            self._whole = {}
        self.project, self.dataset, self.taxonomies, self.stats = project, dataset, taxonomies, stats
        full = project.method_settings(self.method).to_json()  # every key, the suggested values filling gaps
        self.options = project.options.setdefault(self.method, full)
        for key, value in full.items():  # a hand-written project may give only some keys, or nulls
            if self.options.get(key) is None:
                self.options[key] = value
        columns = self.candidates()
        chosen = [c for c in self.options['attributes'] if c in columns]
        if not chosen and project.sensitive in columns:
            chosen = [project.sensitive]
        self.options['attributes'] = chosen
        self._filling = True
        self.attributes.clear()
        for column in columns:
            item = QListWidgetItem(f"{column} ({self.kind_note(column)})")
            item.setData(Qt.ItemDataRole.UserRole, column)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if column in chosen else Qt.CheckState.Unchecked)
            self.attributes.addItem(item)
        self.epsilon.setValue(self.options['epsilon'] if self.options['epsilon'] is not None else self.epsilon.value())
        self.k.setValue(self.options['k'] if self.options['k'] is not None else self.k.value())
        self.layout_choice.show_settings(self.options['layout'], self.options['unprotected'])
        self._show_blanks()
        self._filling = False
        self._fill_domains()
        self._update()

    @property
    def ranges(self) -> dict[str, tuple[float, float]]:
        """Numeric column -> the data's (min, max)."""
        return self.stats.ranges if self.stats is not None else {}

    def is_numeric(self, column: str) -> bool:
        """Numbers, unless step 2 gave the column a grouped taxonomy (then the job treats it as categories)."""
        kind = self.dataset.schema.attributes[column].kind if self.dataset is not None else None
        return kind is Kind.NUMERIC and not declared_taxonomy(self.taxonomies.get(column))

    def kind_note(self, column: str) -> str:
        """How the job treats ``column``, in words true of it: a postcode or a date is not "categorical"."""
        kind = self.dataset.schema.attributes[column].kind if self.dataset is not None else None
        if self.is_numeric(column) or kind in (None, Kind.CATEGORICAL):
            return "numeric" if self.is_numeric(column) else "categorical"
        if kind is Kind.NUMERIC:
            return "numeric, as the groups of its taxonomy"
        return f"{kind.label}, as categories"

    def candidates(self) -> list[str]:
        """Columns one may protect: all but the identifiers (which are removed anyway)."""
        if self.dataset is None or self.project is None:
            return []
        return [c for c in self.dataset.frame.columns if self.project.roles.get(c) != Role.IDENTIFIER.value]

    # --- reading the widgets -------------------------------------------------------------------------
    def chosen(self) -> list[str]:
        items = [self.attributes.item(i) for i in range(self.attributes.count())]
        return [i.data(Qt.ItemDataRole.UserRole) for i in items if i.checkState() == Qt.CheckState.Checked]

    def numeric_chosen(self) -> list[str]:
        return [c for c in self.chosen() if self.is_numeric(c)]

    def domain_row(self, column: str) -> int:
        for row in range(self.domains.rowCount()):
            if self.domains.item(row, 0).text() == column:
                return row
        raise KeyError(column)

    def set_domain(self, column: str, lo: float, hi: float) -> None:
        """Type a domain into the table, as the user would."""
        row = self.domain_row(column)
        self.domains.item(row, LO).setText(_number(lo))
        self.domains.item(row, HI).setText(_number(hi))

    def check(self, column: str, on: bool = True) -> None:
        """Tick or untick a column to protect, as the user would."""
        for i in range(self.attributes.count()):
            item = self.attributes.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == column:
                item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def grid_field(self, column: str) -> GridStepField:
        """The grid step field of a chosen numeric column."""
        return self.domains.cellWidget(self.domain_row(column), STEP)

    def is_whole(self, column: str) -> bool:
        """Whether the job treats the column as whole numbers (its grid step must then be whole)."""
        if column not in self._whole:
            self._whole[column] = self.dp.is_whole_numbers(self.dataset.frame[column])
        return self._whole[column]

    def planned_step(self, column: str) -> PlannedStep | None:
        """The grid step the job will use for ``column`` (typed or automatic); None while its domain is not usable."""
        lo, hi = self.typed_domain(column)
        if lo is None or hi is None or not hi > lo:
            return None
        return planned_step(self.dp, column, self.grid_field(column).text(), lo, hi, self.is_whole(column), len(self.chosen()),
                            self.k.value(), self.epsilon.value())

    def typed_domain(self, column: str) -> tuple[float | None, float | None]:
        row = self.domain_row(column)
        return tuple(_parse(self.domains.item(row, c).text()) for c in (LO, HI))

    # --- edits --------------------------------------------------------------------------------
    def _fill_domains(self) -> None:
        """One row per chosen numeric column: the declared domain, else the data's min and max."""
        self._filling = True
        self.domains.setRowCount(0)
        for column in self.numeric_chosen():
            declared = self.options['domains'].get(column)
            lo, hi = declared if declared is not None else self.ranges.get(column, (math.nan, math.nan))
            row = self.domains.rowCount()
            self.domains.insertRow(row)
            name = QTableWidgetItem(column)
            name.setFlags(name.flags() & ~Qt.ItemFlag.ItemIsEditable)
            scale = QTableWidgetItem("")
            scale.setFlags(scale.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.domains.setItem(row, 0, name)
            self.domains.setItem(row, LO, QTableWidgetItem(_number(lo)))
            self.domains.setItem(row, HI, QTableWidgetItem(_number(hi)))
            self.domains.setItem(row, SCALE, scale)
            declared_step = self.options['grids'].get(column)
            field = GridStepField(column, step_text(declared_step) if declared_step is not None else "")
            field.textEdited.connect(self._on_edited)  # the user's typing only (not setText)
            self.domains.setCellWidget(row, STEP, field)
        self._filling = False

    def _show_blanks(self) -> None:
        """A row of choices per ticked column with blank cells, showing the project's choices."""
        self.blanks.blockSignals(True)
        self.blanks.show_columns(self.dataset, {c: self.is_numeric(c) for c in self.chosen()},
                                 dict(self.options.get('blanks') or {}))
        self.blanks.blockSignals(False)

    def _on_attributes_changed(self, _item: QListWidgetItem) -> None:
        if self._filling or self.project is None:
            return
        self.options['attributes'] = self.chosen()
        self.options['blanks'] = {**(self.options.get('blanks') or {}), **self.blanks.choices()}
        self._show_blanks()
        self._store_domains()
        self._fill_domains()
        self._on_edited()

    def _on_domain_edited(self, item: QTableWidgetItem) -> None:
        if self._filling or self.project is None or item.column() not in (LO, HI):
            return
        self._on_edited()

    def _store_domains(self) -> None:
        """Keep a domain only when the user changed it from the data's min and max (else it is from the data),
        and a grid step only when one is typed (else the job takes the automatic one)."""
        domains = {c: v for c, v in self.options['domains'].items()
                   if c in self.options['attributes'] and self.is_numeric(c)}
        for row in range(self.domains.rowCount()):
            column = self.domains.item(row, 0).text()
            lo, hi = self.typed_domain(column)
            if column not in self.options['attributes']:
                continue
            if lo is None or hi is None or (lo, hi) == self.ranges.get(column):
                domains.pop(column, None)
            else:
                domains[column] = [lo, hi]
        self.options['domains'] = domains
        grids = {}
        for row in range(self.domains.rowCount()):
            column = self.domains.item(row, 0).text()
            step = _parse(self.domains.cellWidget(row, STEP).text())
            if column in self.options['attributes'] and step is not None and step > 0:
                grids[column] = step  # a bad step (0, text) is not stored; problems() names it
        self.options['grids'] = grids

    def _on_edited(self, *_args) -> None:
        if self._filling or self.project is None:
            return
        self.options['epsilon'] = self.epsilon.value()
        self.options['k'] = self.k.value()
        self.options['layout'] = self.layout_choice.layout_value
        self.options['unprotected'] = self.layout_choice.unprotected_value
        self.options['blanks'] = self.blanks.choices()
        self._store_domains()
        self._update()
        self.changed.emit()

    # --- what it means -------------------------------------------------------------------------
    def problems(self) -> list[str]:
        """What blocks the step, each naming what to change."""
        if self.dataset is None:
            return ["Load a data file first."]
        out = []
        chosen = self.chosen()
        n = len(self.dataset.frame)
        if not chosen:
            out.append("Tick at least one column to protect.")
        if self.k.value() > n:
            out.append(f"k = {self.k.value()} is more than the {n} records: lower k to at most {n}.")
        unlinked = self.layout_choice.problem(self.left_out())
        if unlinked:
            out.append(unlinked)
        out += self.blanks.problems()
        chosen_blanks = self.blanks.choices()
        for column in self.numeric_chosen():
            lo, hi = self.typed_domain(column)
            missing = column in self.blanks.combos and column not in chosen_blanks  # blanks with no choice yet
            if lo is None or hi is None:
                out.append(f"The domain of {column} needs two numbers: type lo and hi.")
            elif lo >= hi:
                out.append(f"The domain of {column} needs lo < hi: lower lo or raise hi (now {_number(lo)} to {_number(hi)}).")
            elif column in self.ranges:
                low, high = self.ranges[column]
                if low < lo or high > hi:
                    out.append(f"{column} has values from {_number(low)} to {_number(high)}, outside {_number(lo)} "
                               f"to {_number(hi)}: widen its domain.")
            planned = self.planned_step(column) if not missing else None
            if planned is not None and planned.problem:
                out.append(planned.problem)
        return out

    def left_out(self) -> list[str]:
        """The columns an unlinked release leaves out (or refuses): neither ticked nor identifiers."""
        chosen = set(self.chosen())
        return [c for c in self.candidates() if c not in chosen]

    def from_data(self) -> list[str]:
        """Chosen numeric columns whose domain is still the data's min and max."""
        return [c for c in self.numeric_chosen() if c not in self.options['domains']]

    def _update(self) -> None:
        chosen = self.chosen()
        m = len(chosen)
        self.layout_choice.update_scope(self.left_out())
        epsilon, k = self.epsilon.value(), self.k.value()
        self._filling = True
        scales, steps = [], []
        for column in self.numeric_chosen():
            lo, hi = self.typed_domain(column)
            ok = lo is not None and hi is not None and hi > lo
            scale = self.dp.noise_scale(hi - lo, m, k, epsilon) if ok else None
            self.domains.item(self.domain_row(column), SCALE).setText(_scale(scale) if ok else "—")
            if ok:
                scales.append(f"{column} {_scale(scale)}")
            planned = self.planned_step(column)
            field = self.grid_field(column)
            if planned is not None and planned.automatic:
                field.show_automatic(planned.step)
            elif planned is None or planned.step is None:
                field.show_automatic(None)
            if planned is not None and planned.step is not None:
                steps.append(f"{column} {step_text(planned.step)} ({'automatic' if planned.automatic else 'yours'})")
        self._filling = False
        warnings = [FROM_DATA.format(name=c) for c in self.from_data()]
        self.warning.setText("\n".join(warnings))
        self.warning.setVisible(bool(warnings))
        notes = []
        sensitive = self.project.sensitive
        if sensitive is not None and sensitive not in chosen:
            notes.append(UNPROTECTED.format(name=sensitive))
        for column in chosen:
            if not self.is_numeric(column):
                taxonomy = self.taxonomies.get(column)
                notes.append(EDITED_TAXONOMY.format(name=column, labels=len(taxonomy) - 1) if declared_taxonomy(taxonomy)
                             else FLAT_TAXONOMY.format(name=column))
        self.taxonomy_note.setText("\n".join(notes))
        self.taxonomy_note.setVisible(bool(notes))
        if m:
            text = f"epsilon per column: {epsilon:g} / {m} = {epsilon / m:.4g}"
            if scales:
                text += (f". Noise: discrete Laplace on a grid of step h, one shared draw per cluster, of typical size "
                         f"b = M·Δ/(k·ε): {', '.join(scales)}")
            if steps:
                text += f". Released values are multiples of the grid step h: {', '.join(steps)}"
            self.plan.setText(text + ".")
        self.plan.setVisible(bool(m))
        problems = self.problems()
        self.message.setText("\n".join(problems))
        self.message.setVisible(bool(problems))


def _parse(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None
