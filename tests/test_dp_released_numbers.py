"""dp-microagg's check of a released numeric column read back as categories of text parses each distinct text
once (issue 34): the same numbers, and the same refusal naming the same cell, as parsing every cell."""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.methods.dp.release import released_numbers


def _parsed(column: pd.Series) -> np.ndarray | str:
    try:
        return released_numbers(LoadedRelease(".", {}, pd.DataFrame({"a": column})), "a")
    except ReleaseError as exc:
        return str(exc)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["26.5", "3", "-0.25", "1e3", " 7", "x", "", "inf", "12345678901234567890", "0.1"]),
                min_size=1, max_size=40))
def test_released_numbers_of_categories_are_those_of_the_text(cells):
    as_text, as_categories = _parsed(pd.Series(cells, dtype=object)), _parsed(pd.Series(pd.Categorical(cells)))
    if isinstance(as_text, str):
        assert as_categories == as_text
    else:
        assert isinstance(as_categories, np.ndarray) and np.array_equal(as_categories, as_text)


def test_a_missing_category_cell_is_refused():
    column = pd.Series(pd.Categorical(["1.5", None, "2"]))
    assert "data row 2" in str(_parsed(column))
