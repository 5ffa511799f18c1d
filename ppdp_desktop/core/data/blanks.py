"""Blank cells of a column and what a job does with them: a value of their own, their records left out, or a value
put in (imputed); the chosen treatment is applied to the table before the job and kept with it, so that the release
can say which was used (:class:`BlankTreatment`, :func:`treat_blanks`).

Which treatment suits which column, and which value is put in, is the method's business
(differential privacy's, through its method's ``job_dataset`` hook); this module only finds blanks and applies
a decision, the same way to the table of a job and to an original table compared with its release later.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.errors import ParameterError

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset

VALUE, DROP, IMPUTE = "value", "drop", "impute"
#: what can be done with a column's blank cells: a value of their own, their records left out, a value put in
CHOICES = (VALUE, DROP, IMPUTE)
#: the label blanks get as a value of their own (another one if the column holds it: :func:`free_label`)
BLANK_LABEL = "(blank)"


def blank_mask(column: pd.Series) -> np.ndarray:
    """Which cells are blank: missing (an empty cell, NaN) or text of spaces only.

    A text column is looked at by pyarrow first (:func:`_space_first`): only cells that are empty or start with
    a space can be blank, and only those few are read in Python (the step-4 page asks this of every column
    as it opens: 1.8 s on the interface thread for a 1M-row file, read cell by cell)."""
    missing = column.isna().to_numpy(dtype=bool)
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return missing
    if isinstance(column.dtype, pd.CategoricalDtype):  # dictionary codes: each distinct value asked once
        categories = pd.Series(column.cat.categories, dtype=object)
        blank_value = np.append((text_column(categories).str.strip() == "").to_numpy(dtype=bool), True)
        return blank_value[column.cat.codes.to_numpy()] | missing  # code -1 (missing) picks the last, True
    candidates = _space_first(column)
    if candidates is None:
        return missing | (text_column(column).str.strip() == "").to_numpy(dtype=bool)
    positions = np.flatnonzero(candidates & ~missing)
    blank = missing.copy()
    if len(positions):
        values = column.iloc[positions]
        blank[positions] = (text_column(values).str.strip() == "").to_numpy(dtype=bool)
    return blank


def _space_first(column: pd.Series) -> np.ndarray | None:
    """For a column of text only: the cells that are empty or whose first character is a space (``str.isspace``,
    so exactly Python's idea of one), a superset of the blank ones; None for any other column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (pd.api.types.is_string_dtype(column) and not isinstance(column.dtype, pd.CategoricalDtype)):
        return None
    try:
        text = pa.array(column.array, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed objects: not text only
        return None
    if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
        return None
    first = pc.utf8_slice_codeunits(text, 0, 1)
    spaces = [c for c in pc.unique(first).drop_null().to_pylist() if c == "" or c.isspace()]
    if not spaces:
        return np.zeros(len(column), dtype=bool)
    return pc.is_in(first, value_set=pa.array(spaces, type=first.type)).fill_null(False).to_numpy(zero_copy_only=False)


def free_label(taken: set[str], label: str = BLANK_LABEL) -> str:
    """``label``, or ``label`` with a number when a value of the column already reads so: "(blank 2)"."""
    found, number = label, 1
    while found in taken:
        number += 1
        found = f"{label[:-1]} {number})" if label.endswith(")") else f"{label} {number}"
    return found


@dataclass(frozen=True)
class BlankTreatment:
    """What was done with the blank cells of ``column``: their number (``cells``), the ``choice`` (one of
    :data:`CHOICES`) and, for a value of their own or an imputed value, the value they became (``fill``);
    ``why`` says how that value was chosen."""

    column: str
    choice: str
    cells: int
    fill: Any = None
    why: str = ""

    def __post_init__(self) -> None:
        if self.choice not in CHOICES:
            raise ParameterError(f"Blank cells of {self.column!r}: {self.choice!r} is not one of {', '.join(CHOICES)}.",
                                 setting="blanks", value=self.choice, column=self.column,
                                 allowed="one of " + ", ".join(CHOICES))

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"column": self.column, "choice": self.choice, "cells": self.cells}
        if self.choice != DROP:
            entry["fill"] = self.fill.item() if isinstance(self.fill, np.generic) else self.fill
        if self.why:
            entry["why"] = self.why
        return entry

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> BlankTreatment:
        return cls(str(entry["column"]), str(entry["choice"]), int(entry.get("cells", 0)), entry.get("fill"),
                   str(entry.get("why", "")))

    def sentence(self) -> str:
        """What was done, in words (the release's statement and the report)."""
        cells = f"{self.cells:,} blank cell{'s' * (self.cells != 1)}"
        if self.choice == DROP:
            return (f"{self.column!r}: the {self.cells:,} record{'s' * (self.cells != 1)} with a blank cell here "
                    "were left out of the release")
        if self.choice == VALUE:
            return f"{self.column!r}: {cells} kept as a value of their own, {self.fill!r}"
        return f"{self.column!r}: {cells} imputed as {self.fill!r}" + (f" ({self.why})" if self.why else "")


def treat_frame(frame: pd.DataFrame, treatments: list[BlankTreatment]) -> tuple[pd.DataFrame, np.ndarray]:
    """``frame`` with each treatment applied (blank cells filled) and the mask of the records kept (those without a
    blank in a column whose blanks leave their record out); the records are not removed here."""
    frame = frame.copy(deep=False)
    keep = np.ones(len(frame), dtype=bool)
    for t in treatments:
        if t.column not in frame.columns:
            continue
        blank = blank_mask(frame[t.column])
        if t.choice == DROP:
            keep &= ~blank
        elif blank.any():
            column = frame[t.column]
            if pd.api.types.is_numeric_dtype(column):
                values = column.to_numpy(dtype=np.float64, copy=True)
                values[blank] = float(t.fill)
                frame[t.column] = pd.Series(values, index=frame.index, name=t.column)
            else:
                filled = column.astype(object).to_numpy(copy=True)
                filled[blank] = str(t.fill)
                frame[t.column] = pd.Series(filled, index=frame.index, name=t.column, dtype=object)
    return frame, keep


def treat_blanks(dataset: Dataset, treatments: list[BlankTreatment]) -> Dataset:
    """The table a job works on: ``dataset`` with its blank cells treated (filled, or their records left out, the
    others keeping their order and their rows in the file), the treatments kept with it (``blank_cells``)."""
    if not treatments:
        return dataset
    frame, keep = treat_frame(dataset.frame, treatments)
    rows = dataset.source_rows
    if not keep.all():
        frame = frame.loc[keep].reset_index(drop=True)
        rows = rows.take(keep) if rows is not None else None
    if len(frame) == 0:
        left = ", ".join(repr(t.column) for t in treatments if t.choice == DROP)
        raise ParameterError(f"Every record of {dataset.label} has a blank cell in {left}: leaving those records out "
                             "leaves none; choose another way for their blank cells.", setting="blanks")
    return replace(dataset, frame=frame, source_rows=rows, blank_cells=tuple(treatments))
