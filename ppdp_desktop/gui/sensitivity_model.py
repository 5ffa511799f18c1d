"""The per-value sensitivity table: frequency, (rho1, rho2), gamma, retention and status, updated live.

Edits are checked row by row (:mod:`~ppdp_desktop.gui.sensitivity_rows`): a rho1 or rho2 typed in is read with
the row's other cell as it shows, and the pair is applied only when it is valid; until then the typed cells keep their
text, marked red with a tooltip saying what is allowed, and the row's gamma, status and retention show a dash. The
project keeps a value's own pair only where it differs from the rule's. The status column says, by the reports' own rule
(:func:`~ppdp_desktop.core.report.values.planned_statuses`), whether a value's bound covers it: a value held by
more than its rho1 of the records is not covered (marked amber, with a tooltip saying why).
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTableView

from ppdp_desktop.core.data.domain import CategoricalDomain, label_text
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import REGISTRY, Method, get_method
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.report.values import NOT_COVERED, planned_statuses
from ppdp_desktop.gui.sensitivity_rows import TypedRows, tidy_pairs
from ppdp_desktop.gui.wording import window_name

_Index = QModelIndex | QPersistentModelIndex
#: the fixed columns; then one per registered method with a retention column (``Method.retention_header``)
HEADERS = ["Value", "Records", "Frequency", "rho1 (prior)", "rho2 (posterior)", "Status", "gamma", "Default choice"]
RHO1, RHO2, STATUS, GAMMA, CHOICE = 3, 4, 5, 6, 7
KEEPS = len(HEADERS)  # the first retention column
TOOLTIPS = {
    RHO1: "rho1: how likely an observer may already think a record has this value (prior)",
    RHO2: "rho2: the most an observer may believe it after seeing the release (posterior); above rho1",
    GAMMA: "gamma: how much a released value may amplify belief in this value (from rho1 and rho2)",
    CHOICE: "personalized recoding: 1 publish the value, 2 its generalized alias, 3 an opaque code",
    STATUS: "whether the value's (rho1, rho2) bound covers it: a value held by more than its rho1 of the records is "
            "not covered (the bound speaks of a belief of at most rho1 before the release); the reports say the same",
}
INVALID = QColor("#ffcdd2")
OUTSIDE = QColor("#ffe0b2")  # amber: a value its bound does not cover
NOT_APPLICABLE = "—"
#: the widest the Value column is made (pixels): a longer value is cut with "…" and shown whole in its tooltip
MAX_VALUE_WIDTH = 360


#: the roles :meth:`SensitivityModel.data` answers (as numbers: a set lookup, no enum made per call)
_ROLES = frozenset(int(r.value) for r in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole,
                                          Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.BackgroundRole))

class SensitivityModel(QAbstractTableModel):
    """Adapts a domain and the project's sensitivity choices; emits ``validity_changed``."""

    validity_changed = Signal(bool)
    #: the table's rows came to hold one pair for every value: the project's rule is now that pair
    rule_changed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.domain: CategoricalDomain | None = None
        self.project = Project()
        self.labels: list[str] = []
        self.invalid: dict[tuple[int, int], tuple[str, str]] = {}  # red cells: (text shown, what is wrong)
        self.typed = TypedRows(RHO1, RHO2)  # rho1/rho2 typed into rows whose pair is not valid yet
        self.requirement: SensitivityRequirement | None = None
        self.keepers: list[Method] = []  # the methods whose retention step 3 shows, one column each
        self.kept: list[np.ndarray] = []  # each one's retention per value (nan: not computed)
        self.status = np.zeros(0, dtype=object)  # each value's status, or "—" where the method uses no pair
        self.error = ""

    def set_domain(self, domain: CategoricalDomain | None, project: Project) -> None:
        self.beginResetModel()
        self.domain, self.project = domain, project
        self.keepers = [m for m in REGISTRY.values() if m.retention_header]
        self.labels = [label_text(v) for v in domain.values] if domain is not None else []
        self.invalid = {}
        self.typed.clear()
        self._recompute()
        self.endResetModel()

    def reset_pairs(self) -> None:
        """Back to the rule for every value: drop each value's own pair and whatever was typed and not applied."""
        self.project.pairs.clear()
        self.typed.clear()
        self.invalid = {k: v for k, v in self.invalid.items() if k[1] == CHOICE}
        self.refresh()

    # --- computing ---------------------------------------------------------------------------------
    def _recompute(self) -> None:
        self.error = ""
        if self.domain is None:  # no sensitive column (yet, or in a new file): nothing of the previous one stays
            self.requirement, self.kept, self.status = None, [], np.zeros(0, dtype=object)
            return
        settings = self.project.settings().sensitivity if self.project.sensitive else None
        self.status = np.full(self.domain.m, NOT_APPLICABLE, dtype=object)
        try:
            self.requirement = settings.requirement(self.domain)
        except ParameterError as exc:
            self.requirement, self.error = None, exc.phrase(window_name)
            self.kept = [np.full(self.domain.m, np.nan) for _ in self.keepers]
            return
        if self.uses_pairs():
            self.status = planned_statuses(self.domain.counts, self.requirement.rho1, self.requirement.rho2)
        gamma = self.requirement.gamma
        if np.isfinite(gamma).any():
            self.kept = [m.planned_retention(self.domain.prior, gamma) for m in self.keepers]
        else:
            self.kept = [np.ones(self.domain.m) for _ in self.keepers]
            self.error = "No value needs protection with these settings: lower theta or set pairs."

    def refresh(self) -> None:
        """Recompute after the rule changed (theta or the common pair); rows with typed text are checked again
        against the cells they now show."""
        self._recompute()
        applied = [self._check_row(row) for row in list(self.typed.typed)]
        if any(applied):
            self._recompute()
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1))
        self.validity_changed.emit(self.is_valid())

    def is_valid(self) -> bool:
        return not self.invalid and self.requirement is not None

    def one_pair(self) -> bool:
        """Whether the table holds one pair for every value (the rule is one pair and no value has its own)."""
        return self.project.rho1 is not None and not self.project.pairs and not self.typed.typed

    def row_problem(self, row: int) -> str:
        """What is wrong with the pair a row's cells show ("" when it is applied)."""
        bad = self.invalid.get((row, RHO1)) or self.invalid.get((row, RHO2))
        return bad[1] if bad else ""

    def uses_pairs(self) -> bool:
        """Whether the project's method (step 4) guarantees the (rho1, rho2) bound of this table."""
        return get_method(self.project.method).bounds_per_value

    def not_covered(self) -> list[str]:
        """The values the bound does not cover (held by more than their rho1 of the records), as labels."""
        return [self.labels[i] or "(missing)" for i in np.flatnonzero(self.status == NOT_COVERED)]

    # --- Qt model ---------------------------------------------------------------------------------
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() or self.domain is None else self.domain.m

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else KEEPS + len(self.keepers)

    def _tooltip(self, col: int) -> str | None:
        if col >= KEEPS:
            title = self.keepers[col - KEEPS].title
            return f"probability that a record with this value is released unchanged with {title[:1].lower()}{title[1:]}"
        return TOOLTIPS.get(col)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return HEADERS[section] if section < KEEPS else self.keepers[section - KEEPS].retention_header
            if role == Qt.ItemDataRole.ToolTipRole:
                return self._tooltip(section)
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = super().flags(index)
        return base | Qt.ItemFlag.ItemIsEditable if index.column() in (RHO1, RHO2, CHOICE) else base

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if role not in _ROLES or not index.isValid() or self.domain is None:
            return None  # the other roles first and at once: a paint asks each cell for ten (issue 34)
        row, col = index.row(), index.column()
        bad = self.invalid.get((row, col))
        # a row whose typed pair is not valid has no gamma, status or retention to show: a dash says so
        problem = self.row_problem(row) if col in (GAMMA, STATUS) or col >= KEEPS else ""
        outside = col == STATUS and self.status[row] == NOT_COVERED and not problem
        if role == Qt.ItemDataRole.BackgroundRole and (bad or outside):
            return QBrush(INVALID if bad else OUTSIDE)
        if role == Qt.ItemDataRole.ToolTipRole:
            if bad or problem:
                return bad[1] if bad else f"Not computed until the row's pair is valid: {problem}"
            if col == 0:
                return f"{self.labels[row] or '(missing)'}: {int(self.domain.counts[row]):,} record(s)"
            return self._status_tip(row) if col == STATUS else self._tooltip(col)
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return None
        if bad:
            return bad[0]
        if problem:
            return NOT_APPLICABLE
        typed = self.typed.text(row, col) if col in (RHO1, RHO2) else None
        return typed if typed is not None else self._cell(row, col)

    def _cell(self, row: int, col: int) -> str:
        label = self.labels[row]
        if col == 0:
            return label or "(missing)"
        if col == 1:
            return f"{int(self.domain.counts[row]):,}"
        if col == 2:
            return f"{self.domain.prior[row]:.2%}"
        req = self.requirement
        if col == STATUS:
            return str(self.status[row])
        if col in (RHO1, RHO2, GAMMA):
            if req is None or np.isnan(req.rho1[row]):
                return "no concern" if col != GAMMA else "—"
            return f"{[req.rho1, req.rho2][col - RHO1][row]:.4g}" if col != GAMMA else f"{req.gamma[row]:.3g}"
        if col >= KEEPS:
            value = self.kept[col - KEEPS][row]
            return "—" if np.isnan(value) else f"{value + (1 - value) / self.domain.m:.1%}"
        return str(self.project.value_choices.get(label, self.project.default_choice))

    def _status_tip(self, row: int) -> str:
        """The status cell's tooltip: for a value its bound does not cover, why, with this value's figures."""
        if self.status[row] == NOT_APPLICABLE:
            method = get_method(self.project.method)
            return f"{method.title} (the method chosen in step 4) does not use these (rho1, rho2) pairs."
        if self.status[row] != NOT_COVERED:
            return TOOLTIPS[STATUS]
        label = self.labels[row] or "(missing)"
        return (f"{label!r} is held by {self.domain.prior[row]:.2%} of the records, more than its rho1 of "
                f"{self.requirement.rho1[row]:.4g}: the bound promises that a belief of at most rho1 cannot rise above "
                "rho2, so it says nothing about this value (anyone who knows how common it is already believes more). "
                "The reports call it 'not covered by its bound'.")

    def setData(self, index: _Index, value, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        row, col, text = index.row(), index.column(), str(value).strip()
        if col == CHOICE:
            if text in {"1", "2", "3"}:
                self.project.value_choices[self.labels[row]] = int(text)
                self.invalid.pop((row, col), None)
            else:
                self.invalid[(row, col)] = (text, f"The choice must be 1, 2 or 3; got {text!r}.")
        elif col in (RHO1, RHO2):
            self.typed.type(row, col, text)  # checked with the row's other cell by refresh()
        else:
            return False
        self.refresh()
        return True

    def _shown_pair(self, row: int) -> tuple[float, float] | None:
        """The pair in force for a row (None for a value without a privacy concern, or while the rule is unusable)."""
        req = self.requirement
        if req is None or np.isnan(req.rho1[row]):
            return None
        return float(req.rho1[row]), float(req.rho2[row])

    def _check_row(self, row: int) -> bool:
        """Read the row's pair from its cells as shown; apply it when valid (True), else mark the typed cells red."""
        for col in (RHO1, RHO2):
            self.invalid.pop((row, col), None)
        typed = dict(self.typed.typed.get(row, {}))
        if not typed or self.domain is None:
            return False
        label = self.labels[row]
        check = self.typed.check(row, label, self._shown_pair(row), self.project.theta or 3.0)
        if check.pair is None:
            for col, text in typed.items():
                self.invalid[(row, col)] = (text, check.message)
            return False
        self.typed.clear(row)
        self.project.pairs[label] = [check.pair[0], check.pair[1]]
        if tidy_pairs(self.project, self.domain, self.labels):
            self.rule_changed.emit()
        return True


def fit_value_column(view: QTableView, labels: list[str]) -> None:
    """Make the Value column as wide as its widest value, measured over every value (not only the rows on screen, as
    the other columns are), up to :data:`MAX_VALUE_WIDTH`: codes such as "M16.1" are shown whole."""
    longest = sorted((label or "(missing)" for label in labels), key=len, reverse=True)[:200]  # thousands of values
    metrics = view.fontMetrics()
    widest = max((metrics.horizontalAdvance(text) for text in longest), default=0)
    padding = 2 * (view.style().pixelMetric(view.style().PixelMetric.PM_FocusFrameHMargin, None, view) + 1) + 8
    header = view.horizontalHeader().sectionSizeHint(0)
    view.setColumnWidth(0, min(max(widest + padding, header), MAX_VALUE_WIDTH))
