"""A retention matrix held by its parameters equals the dense matrix it stands for (issue 18, point 1)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.perturbation.plan import retention_matrix
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.privacy.structured import RetentionMatrix

_TO_DENSE = RetentionMatrix.to_dense


def _refuse(self):
    raise AssertionError("a dense matrix was built")


RETENTION = st.integers(1, 12).flatmap(
    lambda m: arrays(np.float64, m, elements=st.floats(0.02, 1.0, allow_nan=False)))


@settings(max_examples=200, deadline=None)
@given(RETENTION, st.data())
def test_products_solve_and_entries_equal_the_dense_matrix(retention, data):
    structured, dense = RetentionMatrix(retention), retention_matrix(retention)
    m = len(retention)
    assert np.allclose(structured.to_dense(), dense)
    f = data.draw(arrays(np.float64, m, elements=st.floats(0, 1e6)))
    many = data.draw(arrays(np.float64, (m, 3), elements=st.floats(0, 1e6)))
    assert np.allclose(structured @ f, dense @ f)
    assert np.allclose(structured @ many, dense @ many)
    assert np.allclose(structured.T @ f, dense.T @ f)
    assert np.allclose(structured.T @ many, dense.T @ many)
    assert np.allclose(structured.diagonal(), np.diag(dense))
    i, j = data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, m - 1))
    assert structured.entry(i, j) == pytest.approx(dense[i, j])
    assert np.allclose(structured.solve(f), np.linalg.solve(dense, f), rtol=1e-7, atol=1e-6 * (1 + np.abs(f).max()))


# Identified enough that EM stops near the maximum: where a value is kept with p near 0 the likelihood is flat and
# EM's stopping point (either way) is arbitrary to a few records.
WELL_IDENTIFIED = st.integers(1, 12).flatmap(
    lambda m: arrays(np.float64, m, elements=st.floats(0.3, 1.0, allow_nan=False)))


@settings(max_examples=100, deadline=None)
@given(WELL_IDENTIFIED, st.data())
def test_estimators_give_the_same_counts_either_way(retention, data):
    m = len(retention)
    observed = data.draw(arrays(np.float64, m, elements=st.integers(0, 5000).map(float)))
    structured, dense = RetentionMatrix(retention), retention_matrix(retention)
    expected = reconstruction.iterative_bayesian(observed, dense)
    estimate, low, high = reconstruction.estimate_with_interval(observed, dense)
    structured.__class__.to_dense = _refuse  # the estimators must never build the dense matrix
    try:
        assert np.allclose(reconstruction.iterative_bayesian(observed, structured), expected,
                           atol=1e-6 * (1 + observed.sum()))
        assert np.allclose(reconstruction.inverse(observed, structured), np.linalg.solve(dense, observed),
                           rtol=1e-7, atol=1e-6 * (1 + observed.sum()))
        e2, l2, h2 = reconstruction.estimate_with_interval(observed, structured)
        assert np.allclose(e2, estimate, atol=1e-6 * (1 + observed.sum()))
        # the bootstrap redraws from the estimate: last-bit differences can move a draw where the likelihood is
        # flat (a value kept with p near 0), so the bands agree to a share of n, not to the last digit
        band = 2.0 + 0.05 * observed.sum()  # on a handful of records, one draw more or less
        assert np.allclose(l2, low, atol=band) and np.allclose(h2, high, atol=band)
    finally:
        structured.__class__.to_dense = _TO_DENSE


def test_a_value_never_kept_falls_back_and_all_zero_is_singular():
    retention = np.array([0.0, 0.5, 0.9])
    o = np.array([10.0, 20.0, 30.0])
    assert np.allclose(RetentionMatrix(retention).solve(o), np.linalg.solve(retention_matrix(retention), o))
    with pytest.raises(ParameterError, match="singular"):
        RetentionMatrix(np.zeros(3)).solve(o)
    with pytest.raises(ParameterError):
        RetentionMatrix(np.array([1.5]))


def test_seventy_thousand_values_fit_in_memory():
    m = 70_000
    retention = np.linspace(0.1, 0.9, m)
    matrix = RetentionMatrix(retention)
    true = np.random.default_rng(0).integers(0, 50, m).astype(float)
    assert np.allclose(matrix.solve(matrix @ true), true)
