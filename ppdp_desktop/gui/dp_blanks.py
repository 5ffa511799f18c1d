"""Blank cells of the columns ticked for differential privacy, where they are chosen (step 4): how many each column
has and where the file holds them (its rows, title and header rows counted), and what to do with them: a value of
their own, leave their records out, or impute (differential privacy's blank handling, through its method, says why each keeps the
guarantee). A column with blank cells needs a choice before the job can run; the release says which was used.
"""
from __future__ import annotations

import weakref
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QWidget

from ppdp_desktop.core.data.blanks import BLANK_LABEL, DROP, IMPUTE, VALUE, blank_mask
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.source_rows import rows_text

CHOOSE = "Choose what to do with them…"
#: choice -> (its words, its tooltip); impute's words depend on the column's kind
WORDS = {
    VALUE: (f"A blank is a value of its own, {BLANK_LABEL!r}",
            "The blank cells become one more value of the column, a leaf under its taxonomy's top, protected like the "
            "others (categorical columns only)"),
    DROP: ("Leave those records out of the release",
           "Each record with a blank cell here is left out of the whole release; epsilon covers the records released. "
           "The release's number of records says how many were left out, so whether a person's cell was blank is not "
           "protected"),
}
IMPUTE_WORDS = {
    True: ("Impute: the middle of the column's range",
           "Each blank cell gets the middle of the range (lo, hi) above: a fixed value chosen without looking at the "
           "records, so epsilon still holds (a mean of the other records would make each blank depend on all of them)"),
    False: ("Impute: the most general label of its taxonomy (any value)",
            "Each blank cell gets the top of the column's taxonomy, which stands for any value: chosen without looking "
            "at the records, so the guarantee is unchanged"),
}


#: counts started ahead (:func:`count_ahead`): (id of the table, column) -> (the table, weakly; the count)
_ahead: dict[tuple[int, str], tuple[weakref.ref, Future]] = {}
_counter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppdp blank cells")


def _count(dataset: Dataset, column: str) -> tuple[int, str]:
    """How many blank cells ``column`` has and their rows in the file, in words."""
    positions = np.flatnonzero(blank_mask(dataset.frame[column]))
    return len(positions), rows_text(dataset, positions) if len(positions) else ""


def count_ahead(dataset: Dataset, column: str) -> None:
    """Start counting ``column``'s blank cells on a thread (pyarrow's kernels let go of the interpreter), e.g. when
    it is tagged sensitive: step 4 shows them for that column by default, and counting a million cells when it
    opens held the window for 15-20 ms of its ~50 (issue 34). Counts of other tables are dropped."""
    key = (id(dataset), column)
    found = _ahead.get(key)
    if found is not None and found[0]() is dataset:
        return
    for other in [k for k, (ref, _f) in _ahead.items() if ref() is not dataset]:
        del _ahead[other]
    _ahead[key] = (weakref.ref(dataset), _counter.submit(_count, dataset, column))


def _counted(dataset: Dataset, column: str) -> tuple[int, str]:
    """The count started ahead for ``column`` of this very table (waiting for its end), else counted now."""
    found = _ahead.get((id(dataset), column))
    if found is not None and found[0]() is dataset:
        return found[1].result()
    return _count(dataset, column)


class BlankChoices(QWidget):
    """One row per ticked column with blank cells: how many and their rows in the file, and a combo box of what to do
    with them (the project's ``blanks``); hidden when no ticked column has any."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.combos: dict[str, QComboBox] = {}
        self.where: dict[str, str] = {}  # column -> "86 blank cells (rows 66, 71, … of sheet 'Fälle')"
        self._found: dict[tuple[int, str], tuple[int, str]] = {}  # (dataset, column) -> (cells, rows in words)
        self.setVisible(False)

    def blanks_of(self, dataset: Dataset, column: str) -> tuple[int, str]:
        """How many blank cells ``column`` has and their rows in the file, in words (counted once per table)."""
        key = (id(dataset), column)
        if key not in self._found:
            self._found[key] = _counted(dataset, column)
        return self._found[key]

    def show_columns(self, dataset: Dataset | None, columns: dict[str, bool], chosen: dict[str, str]) -> None:
        """One row per column of ``columns`` (name -> numeric) that has blank cells, showing ``chosen``."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.combos, self.where = {}, {}
        if dataset is None:
            self._found = {}
        for column, numeric in columns.items():
            cells, rows = self.blanks_of(dataset, column) if dataset is not None else (0, "")
            if not cells:
                continue
            self.where[column] = f"{cells:,} blank cell{'s' * (cells != 1)} ({rows})"
            combo = QComboBox()
            combo.addItem(CHOOSE, None)
            for choice in ((DROP, IMPUTE) if numeric else (VALUE, DROP, IMPUTE)):
                words, tip = IMPUTE_WORDS[numeric] if choice == IMPUTE else WORDS[choice]
                combo.addItem(words, choice)
                combo.setItemData(combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(max(0, combo.findData(chosen.get(column))))
            combo.setToolTip(f"{column} has {self.where[column]}: choose what the release does with them")
            combo.currentIndexChanged.connect(self._on_changed)
            label = QLabel(f"{column}: {self.where[column]}")
            label.setWordWrap(True)
            self.form.addRow(label)
            self.form.addRow("    Blank cells:", combo)
            self.combos[column] = combo
        self.setVisible(bool(self.combos))

    def choices(self) -> dict[str, str]:
        """The choice of each column shown that has one."""
        return {c: combo.currentData() for c, combo in self.combos.items() if combo.currentData() is not None}

    def problems(self) -> list[str]:
        """The columns whose blank cells have no choice yet, each with where they are."""
        return [f"{column} has {self.where[column]}: choose what to do with them under 'Blank cells', or untick it."
                for column, combo in self.combos.items() if combo.currentData() is None]

    def _on_changed(self, _index: int) -> None:
        self.changed.emit()
