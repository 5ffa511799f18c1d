"""The report's table of the best generalizations of the run's search (ARX's solution view, made readable): the chosen
one first, then the runners-up, each with its quasi-identifiers' levels in words, its suppressed records and its value
of the metric (:func:`~ppdp_desktop.core.generalization.alternatives.alternatives_table`)."""
from __future__ import annotations

from PySide6.QtWidgets import QGroupBox, QHeaderView, QVBoxLayout, QWidget

from ppdp_desktop.core.generalization import Generalization
from ppdp_desktop.core.generalization.alternatives import alternatives_table
from ppdp_desktop.gui.report_widgets import fill, read_only_table

TITLE = "The best generalizations found (the chosen one first)"
NOTE = ("The best generalizations of the same search, best first (lower values of the measure are better). To release "
        "another one, bound the levels in step 4 (\"keep at least as\") or weight a column. Point at a level "
        "to see labels of the column's own values.")


class AlternativesBox(QGroupBox):
    """A small table of the run's best lattice nodes (the report page hides it when the run generalized nothing)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(TITLE, parent)
        self.setToolTip(NOTE)
        self.table = read_only_table([""], "The best generalizations of the same search: what each keeps of every "
                                     "quasi-identifier, the records it suppresses and its value of the measure")
        self.table.horizontalHeader().setStretchLastSection(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addStretch(1)

    def show_generalization(self, generalization: Generalization | None) -> bool:
        """Fill the table from ``generalization.alternatives``; whether there is anything to show."""
        if generalization is None or not generalization.alternatives:
            self.table.setRowCount(0)
            return False
        headings, rows, tips = alternatives_table(generalization.alternatives, generalization.hierarchies,
                                                  generalization.utility.metric)
        self.table.setColumnCount(len(headings))
        self.table.setHorizontalHeaderLabels(headings)
        fill(self.table, rows)
        for r, row in enumerate(tips):
            for c, tip in enumerate(row):
                if tip:
                    self.table.item(r, c).setToolTip(tip)  # the level with labels of the column's own values
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        height = self.table.horizontalHeader().height() + sum(self.table.rowHeight(r) for r in range(len(rows)))
        self.table.setFixedHeight(height + 2 * self.table.frameWidth() + 2 + self.table.horizontalScrollBar().sizeHint().height())
        return True

    def rows(self) -> list[list[str]]:
        """The table's text, row by row (what a person reads)."""
        return [[self.table.item(r, c).text() for c in range(self.table.columnCount())] for r in range(self.table.rowCount())]
