"""The read-back's columns unified batch by batch into 1- or 2-byte codes (issue 34's memory) give the categories
and codes of Arrow's unification of every batch at the end, as before, whether a column stays under
COMPACT_VALUES distinct values, passes it in its first batch or in a later one."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ppdp_desktop.core.streaming import readback
from ppdp_desktop.core.streaming.readback import _Column

RNG = np.random.default_rng(34)


def _batches(distinct: int, sizes: list[int]) -> list[pa.DictionaryArray]:
    values = np.array([f"v{i}" for i in RNG.permutation(distinct)], dtype=object)
    return [pa.array(RNG.choice(values, size), type=pa.string()).dictionary_encode() for size in sizes]


def _arrow_at_the_end(batches: list[pa.DictionaryArray]) -> pd.Categorical:
    unified = pa.chunked_array(batches).unify_dictionaries()
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in unified.chunks])
    return pd.Categorical.from_codes(codes, categories=pd.Index(unified.chunk(0).dictionary.to_pylist(), dtype=object))


@pytest.mark.parametrize(("distinct", "limit"), [(3, 1 << 15), (200, 1 << 15), (300, 40), (300, 290), (50, 1)])
def test_columns_as_arrow_unifies_them_at_the_end(monkeypatch, distinct, limit):
    monkeypatch.setattr(readback, "COMPACT_VALUES", limit)
    batches = _batches(distinct, [0, 7, 500, 1, 900, 350])
    column = _Column()
    for batch in batches:
        column.add(batch)
    made, expected = column.categorical(False), _arrow_at_the_end(batches)
    assert list(made.categories) == list(expected.categories)
    assert np.array_equal(made.codes, expected.codes)
    assert made.codes.dtype == expected.codes.dtype
    assert bool(column.chunks) == (distinct > limit)  # compact codes while under the limit


def test_a_column_of_no_batch_is_empty():
    assert len(_Column().categorical(False)) == 0
