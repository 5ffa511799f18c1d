"""Where each record of a loaded table sits in its file: the spreadsheet row or the text line a person finds it on.

A message about records names them as the file shows them, title and header rows counted, blank rows skipped over
as the file has them ("rows 7, 12 and 40 of sheet 'Fälle'", "lines 3 and 9"), not as the n-th record of the table.
:func:`~ppdp_desktop.core.data.loading.load_table` records it (:class:`SourceRows`) for text files and workbooks;
a table made in memory, or read from a format without rows a person counts (Parquet, SPSS, Stata), has none, and
its records are then named by their number, counting the data rows from 1 (:func:`rows_text`).
"""
from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset


@dataclass(frozen=True)
class SourceRows:
    """The file row (from 1) of each record: ``first + i`` for record ``i`` when the records sit on consecutive rows
    (the usual case, kept as two numbers), else ``rows[i]``. ``unit`` is "row" (a worksheet, ``sheet`` its name) or
    "line" (a text file)."""

    unit: str
    first: int = 1
    rows: np.ndarray | None = None
    sheet: str | None = None

    @classmethod
    def of(cls, rows: np.ndarray, unit: str, sheet: str | None = None) -> SourceRows:
        """From each record's file row, kept as its first row when they are consecutive."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) and np.array_equal(rows, rows[0] + np.arange(len(rows))):
            return cls(unit, int(rows[0]), None, sheet)
        return cls(unit, int(rows[0]) if len(rows) else 1, rows, sheet)

    def file_rows(self, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """The file rows of the records at ``positions`` (0-based)."""
        positions = np.asarray(positions, dtype=np.int64)
        return self.rows[positions] if self.rows is not None else self.first + positions

    def take(self, keep: np.ndarray) -> SourceRows:
        """The rows of the records kept (``keep``: a boolean mask over the records, in order)."""
        positions = np.flatnonzero(keep)
        return SourceRows.of(self.file_rows(positions), self.unit, self.sheet)

    def head(self, n: int) -> SourceRows:
        """The rows of the first ``n`` records (a preview)."""
        return self if self.rows is None else SourceRows.of(self.rows[:n], self.unit, self.sheet)

    def words(self, rows: list[int]) -> str:
        """``rows`` (file rows) in words: "rows 7, 12 and 40 of sheet 'Fälle'", "line 9"."""
        listed = _listing([f"{r:,}" for r in rows])
        what = f"{self.unit}{'s' * (len(rows) != 1)} {listed}"
        return f"{what} of sheet {self.sheet!r}" if self.sheet else what


def rows_text(dataset: Dataset, positions: Sequence[int] | np.ndarray, limit: int = 5) -> str:
    """The records at ``positions`` (0-based, in the table) as the file shows them, the first ``limit`` named and the
    rest counted: "rows 7, 12, 19, 33 and 40 of sheet 'Fälle', and 81 more"; without a file's rows, "data rows 3 and
    9 (counting the records from 1)"."""
    positions = np.asarray(positions, dtype=np.int64)
    shown = positions[:limit]
    more = f", and {len(positions) - len(shown):,} more" if len(positions) > len(shown) else ""
    source = dataset.source_rows
    if source is None:
        listed = _listing([f"{p + 1:,}" for p in shown])
        return f"data row{'s' * (len(shown) != 1)} {listed} (counting the records from 1){more}"
    return source.words([int(r) for r in source.file_rows(shown)]) + more


def text_rows(text: str, sep: str, first_line: int, records: int) -> np.ndarray | None:
    """The line (from 1) each record starts on in ``text``, which begins at line ``first_line``: blank lines are
    skipped as the parser skips them, and a quoted value may span lines. None when the count differs from the
    ``records`` the parser read (then no line is named rather than a wrong one)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    starts, previous = [], 0
    try:
        for row in reader:
            if row and any(cell.strip() for cell in row):
                starts.append(first_line + previous)
            previous = reader.line_num
    except csv.Error:
        return None
    return np.asarray(starts, dtype=np.int64) if len(starts) == records else None


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}" if items else ""
