"""dp-microagg sorts whole numbers that fit 16 bits as integers (a radix sort, issue 34): the same order, ties
alike, as sorting the float values, so the same clusters; any other values are sorted as they are."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.methods.dp.numeric import _sort_keys

_values = st.one_of(st.integers(-40000, 40000).map(float), st.sampled_from([0.5, -0.0, 0.0, 26.1, 32767.0, -32768.0]),
                    st.integers(0, 99).map(float))


@settings(max_examples=100, deadline=None)
@given(st.lists(_values, max_size=200))
def test_sorted_as_integers_in_the_order_of_the_floats(values):
    values = np.asarray(values, dtype=np.float64)
    assert np.array_equal(np.argsort(_sort_keys(values), kind="stable"), np.argsort(values, kind="stable"))


def test_whole_numbers_that_fit_become_16_bit_and_others_stay():
    assert _sort_keys(np.array([3.0, 99.0, -0.0])).dtype == np.int16
    assert _sort_keys(np.array([3.0, 26.1])).dtype == np.float64
    assert _sort_keys(np.array([3.0, 40000.0])).dtype == np.float64
    assert _sort_keys(np.array([3.0, np.nan])).dtype == np.float64
