"""The spreadsheet-formula guard (:func:`~ppdp_desktop.core.data.formats.guard_formulas`): its vectorized test of
which cells to guard agrees with the cell-by-cell rule on any text, whatever holds it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.data.formats import _guard_text, _needs_guard, _unguard_text, guard_formulas

_PIECES = st.sampled_from(["=", "+", "-", "@", "\t", "\r", "'", "a", "1", "é", "€", "😀", " ", ""])
_CELLS = st.one_of(st.none(), st.lists(_PIECES, max_size=4).map("".join), st.text(max_size=6))


def _expected(cells: list) -> np.ndarray:
    return np.array([c is not None and _guard_text(c) != c for c in cells], dtype=bool)


@settings(max_examples=200, deadline=None)
@given(st.lists(_CELLS, max_size=40), st.integers(0, 5))
def test_the_vectorized_test_agrees_with_the_rule_cell_by_cell(cells, cut):
    for dtype in ("str", object):
        series = pd.Series(cells, dtype=dtype)
        assert np.array_equal(_needs_guard(series), _expected(cells))
        sliced = series.iloc[cut:].reset_index(drop=True)  # an Arrow array that starts inside its buffers
        assert np.array_equal(_needs_guard(sliced), _expected(cells[cut:]))
    chunked = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array(
        [pa.array(cells[:cut], pa.large_string()), pa.array(cells[cut:], pa.large_string())])))
    assert np.array_equal(_needs_guard(chunked), _expected(cells))


@settings(max_examples=100, deadline=None)
@given(st.lists(_CELLS, min_size=1, max_size=30))
def test_guarding_then_unguarding_gives_every_cell_back(cells):
    table = pd.DataFrame({"c": pd.Series(cells, dtype="str")})
    guarded, _ = guard_formulas(table)
    back = [None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else _unguard_text(v)
            for v in guarded["c"].tolist()]
    assert back == cells
