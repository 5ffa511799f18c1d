"""A partitioned record's entry (its sub-table, its value) is looked up in a dense table of every key when the
keys are few (issue 34): the same entries, and the same -1 for a value outside its sub-table, as the binary
search used for a domain too large for the table."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.methods.partition import blocks as blocks_module
from ppdp_desktop.core.methods.partition.blocks import SubtableBlocks


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 6), st.integers(1, 12), st.integers(0, 200), st.integers(0, 2**32 - 1))
def test_dense_lookup_equals_the_binary_search(n_sub, m, n, seed):
    rng = np.random.default_rng(seed)
    held = rng.random((n_sub, m)) < 0.5
    held[np.arange(n_sub), rng.integers(0, m, n_sub)] = True  # every sub-table holds a value
    counts = held.astype(np.int64) * rng.integers(1, 5, (n_sub, m))
    blocks = SubtableBlocks.from_counts(counts, np.full(n_sub, 0.5))
    subtable, codes = rng.integers(0, n_sub, n), rng.integers(0, m, n)
    dense = blocks.entries(subtable, codes)
    original = blocks_module.DENSE_KEYS
    try:
        blocks_module.DENSE_KEYS = 0  # every lookup by binary search
        searched = blocks.entries(subtable, codes)
    finally:
        blocks_module.DENSE_KEYS = original
    assert np.array_equal(dense, searched)
    inside = dense >= 0
    assert np.array_equal(blocks.values[dense[inside]], codes[inside])
    assert np.array_equal(held[subtable, codes], inside)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 300), st.integers(1, 70000), st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_records_ordered_by_value_then_key_as_lexsort_orders_them(n, m, distinct_keys, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, m, n).astype(np.int64)
    keys = rng.integers(0, distinct_keys, n).astype(np.uint64) * np.uint64(2**40)  # ties among the keys
    expected = np.lexsort((np.arange(n), keys, codes))
    assert np.array_equal(blocks_module._by_value_then_key(codes, keys), expected)
