"""Per-record privacy choices for personalized recoding (seed 004, SPEC 4).

``1`` publish the actual value, ``2`` its alias1 (the generalized value), ``3`` its alias2 (an
opaque code). A record's choice comes from a column of the data if one is named, else from a
per-value default, else from one default for all.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text, text_column
from ppdp_desktop.core.errors import InputError, ParameterError, setting_ref

CHOICES = (1, 2, 3)
DEFAULT_CHOICE = 2


def _check_choice(choice: object, where: str) -> int:
    if isinstance(choice, (int, np.integer)) and not isinstance(choice, bool) and int(choice) in CHOICES:
        return int(choice)
    raise ParameterError(f"The choice for {where} must be 1, 2 or 3; got {choice!r}.")


@dataclass(frozen=True)
class ChoiceRule:
    """Where each record's choice comes from (small and public: it holds no per-record data)."""

    column: str | None = None
    per_value: dict[str, int] = field(default_factory=dict)
    default: int = DEFAULT_CHOICE

    def __post_init__(self) -> None:
        _check_choice(self.default, f"every record ({setting_ref('default-choice')})")
        for value, choice in self.per_value.items():
            _check_choice(choice, f"value {value!r}")

    def describe(self) -> str:
        if self.column:
            return f"each record's choice from column {self.column!r}"
        extra = f", {len(self.per_value)} value(s) with their own default" if self.per_value else ""
        return f"default choice {self.default}{extra}"

    def choices(self, frame: pd.DataFrame, attribute: str, source: str = "the data", start: int | None = None
                ) -> np.ndarray:
        """Each record's choice (int8), validated; invalid entries are an error naming the rows.

        ``start``: ``frame`` holds the records from ``start`` on (a chunk), so rows are numbered from there and a
        per-value choice for a value the chunk happens not to hold is fine (the whole table was checked)."""
        if self.column is not None:
            if self.column not in frame.columns:
                raise ParameterError(f"Choice column {self.column!r} is not in {source}.")
            return parse_choice_column(frame[self.column], self.column, source, start or 0)
        out = np.full(len(frame), self.default, dtype=np.int8)
        if self.per_value:
            values = text_column(frame[attribute])
            unknown = sorted(set(self.per_value) - set(values.unique())) if start is None else []
            if unknown:
                raise ParameterError(f"Per-value choice for {unknown[0]!r}, which does not occur in {attribute!r}.")
            mapped = values.map(self.per_value)
            out = np.where(mapped.notna(), mapped.fillna(0).to_numpy(dtype=np.int64), out).astype(np.int8)
        return out


def parse_choice_column(column: pd.Series, name: str, source: str = "the data", first: int = 0) -> np.ndarray:
    """Parse a column of 1/2/3 (numbers or their text); anything else is an error naming the rows (``first``:
    the index of the column's first record in the table)."""
    numbers = pd.to_numeric(column, errors="coerce")
    valid = numbers.isin(CHOICES).to_numpy()
    if not valid.all():
        rows = np.flatnonzero(~valid)
        shown = ", ".join(f"row {first + r + 1} ({label_text(column.iloc[r])!r})" for r in rows[:5])
        more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
        raise InputError(
            f"Choice column {name!r} of {source} must hold 1, 2 or 3 in every row; invalid: {shown}{more}."
        )
    return numbers.to_numpy().astype(np.int8)
