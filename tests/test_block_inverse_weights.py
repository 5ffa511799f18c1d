"""The cross-fitted guess's weights W[e, t] are gathered from the whole W when the domain is small (issue 34): the
same numbers as computed pair by pair, for dense and Sherman-Morrison blocks alike."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.methods import group_support
from ppdp_desktop.core.privacy.structured import RetentionMatrix


@pytest.mark.parametrize("dense_block", [2000, 1])  # 1: every block of two values or more by Sherman-Morrison
@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=5), st.integers(0, 2**32 - 1))
def test_gathered_weights_are_those_computed_pair_by_pair(dense_block, sizes, seed):
    rng = np.random.default_rng(seed)
    starts = np.cumsum([0, *sizes[:-1]])
    matrix = RetentionMatrix(np.repeat(rng.uniform(0.2, 0.9, len(sizes)), sizes), starts)
    original = group_support.DENSE_BLOCK
    group_support.DENSE_BLOCK = dense_block
    try:
        inverse = group_support.BlockInverse(matrix)
    finally:
        group_support.DENSE_BLOCK = original
    n = matrix.m * matrix.m + 50  # more pairs than the domain has: gathered
    e, t = rng.integers(0, matrix.m, n), rng.integers(0, matrix.m, n)
    gathered = inverse.weights(e, t)
    assert inverse._whole is not None
    assert np.array_equal(gathered, inverse._weights(e, t))
    few = inverse.weights(e[:3], t[:3])  # fewer pairs than the domain: computed
    assert np.array_equal(few, gathered[:3])
