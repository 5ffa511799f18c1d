"""Per-column figures of a loaded table, computed once, in the worker, when the table is loaded.

The load page shows them (missing cells, distinct values) and the differential-privacy parameters
use them (each numeric column's min and max, and its missing cells) without scanning the table again
on the GUI thread.
"""
from __future__ import annotations

from dataclasses import dataclass

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.schema import Kind


@dataclass(frozen=True)
class ColumnStats:
    """Missing cells and distinct values of every column; ``(min, max)`` of numeric columns with a value."""

    missing: dict[str, int]
    distinct: dict[str, int]
    ranges: dict[str, tuple[float, float]]


def column_stats(dataset: Dataset) -> ColumnStats:
    """The figures of ``dataset`` (vectorized by pandas; missing values skipped in min and max)."""
    frame = dataset.frame
    numeric = [c for c in frame.columns if dataset.schema.attributes[c].kind is Kind.NUMERIC]
    low, high = frame[numeric].min(), frame[numeric].max()
    return ColumnStats(
        missing={c: int(v) for c, v in frame.isna().sum().items()},
        distinct={c: int(frame[c].nunique(dropna=True)) for c in frame.columns},
        ranges={c: (float(low[c]), float(high[c])) for c in numeric if low[c] == low[c]},  # NaN: no value
    )
