"""The ledger's digest of a record's released quasi-identifier class (issue 34): generalized columns held as
categories are hashed through their categories' text, with the very digests of hashing every cell's text (the
ledger compares them across releases, so they must never change); a missing cell takes the cell-by-cell way."""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.repetition import class_digests

_labels = st.one_of(st.sampled_from(["*", "30-34", "F", "M", "021**", "", "ä", "1", "3"]), st.integers(-3, 40))


def _cell_by_cell(frame: pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(frame.astype("string"), index=False).to_numpy(dtype=np.uint64)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(_labels, min_size=1, max_size=5, unique=True), min_size=1, max_size=3),
       st.integers(0, 60), st.booleans(), st.integers(0, 2**32 - 1))
def test_digests_of_categories_are_those_of_every_cell(domains, n, missing, seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"q{i}": pd.Categorical(pd.Series(domain, dtype=object).iloc[rng.integers(0, len(domain), n)]
                                                  .to_numpy()) for i, domain in enumerate(domains)})
    if missing and n:
        frame.iloc[int(rng.integers(0, n)), 0] = np.nan
    assert np.array_equal(class_digests(frame), _cell_by_cell(frame))


def test_a_frame_of_text_is_hashed_cell_by_cell():
    frame = pd.DataFrame({"ward": ["a", "b", None], "age": [3, 4, 5]})
    assert np.array_equal(class_digests(frame), _cell_by_cell(frame))
