"""Blank cells found without reading a text column cell by cell (issue 34: no stall; step 4 asks it of every
column as it opens, on the interface thread): the same cells as Python's ``str.strip`` finds, every kind of
space included, and only the cells that can be blank read in Python."""
from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.data import blanks, domain


def _by_python(column: pd.Series) -> np.ndarray:
    """The definition: missing, or text that strips to nothing (every cell read in Python)."""
    return np.array([v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or domain.label_text(v).strip() == ""
                     for v in column.astype(object)], dtype=bool)


@pytest.mark.parametrize("dtype", ["str", object, "category"])
def test_the_blank_cells_are_those_python_strips_to_nothing(dtype):
    rng = random.Random(34)
    pieces = [" ", "\t", "\u00a0", "\u2003", "\x1c", "\u200b", "\n", "a", "ä", "x y", ""]
    for _ in range(200):
        values = [None if rng.random() < 0.1 else "".join(rng.choice(pieces) for _ in range(rng.randint(0, 3)))
                  for _ in range(rng.randint(1, 30))]
        column = pd.Series(values, dtype=dtype)
        assert blanks.blank_mask(column).tolist() == _by_python(column).tolist(), values


def test_mixed_numbers_and_dates_are_still_found():
    mixed = pd.Series(["a", 3, None, " ", 2.0], dtype=object)
    assert blanks.blank_mask(mixed).tolist() == [False, False, True, True, False]
    dates = pd.Series(pd.to_datetime(["2020-01-01", None]))
    assert blanks.blank_mask(dates).tolist() == [False, True]


def test_only_the_cells_that_can_be_blank_are_read_in_python(monkeypatch):
    ids = pd.Series([f"P{i:06d}" for i in range(20_000)], dtype="str")
    ids[[11, 500]] = ["   ", "\u00a0 x"]
    ids[7] = None
    read = []
    real = domain.label_text
    monkeypatch.setattr(domain, "label_text", lambda value: read.append(value) or real(value))
    assert np.flatnonzero(blanks.blank_mask(ids)).tolist() == [7, 11]
    assert len(read) <= 2  # the two cells that start with a space, not 20,000


def test_blank_mask_of_dictionary_codes_is_that_of_the_text():
    """A loaded column of repeating text is a categorical (issue 34): its blanks are asked per distinct value and
    must be those of the same column as text (missing cells, spaces only)."""
    from ppdp_desktop.core.data.blanks import blank_mask

    text = pd.Series(["a", " ", None, "b", "  ", "a", "", None] * 3, dtype="str")
    coded = text.astype("category")
    assert blank_mask(coded).tolist() == blank_mask(text).tolist()
    assert blank_mask(coded).sum() == 15
    assert blank_mask(pd.Series(pd.Categorical([None, None]))).tolist() == [True, True]
