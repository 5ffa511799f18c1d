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


ANY_RETENTION = st.integers(1, 10).flatmap(lambda m: arrays(
    np.float64, m, elements=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0, allow_nan=False))))


@settings(max_examples=300, deadline=None)
@given(ANY_RETENTION, st.data())
def test_amplification_and_posteriors_from_parameters_equal_the_dense_check(retention, data):
    from ppdp_desktop.core.privacy.amplification import (
        amplification, posteriors, retention_amplification, retention_posterior_extremes,
    )

    m = len(retention)
    dense = retention_matrix(retention)
    weights = data.draw(arrays(np.float64, m, elements=st.one_of(st.just(0.0), st.floats(0.0, 1.0))))
    prior = weights / weights.sum() if weights.sum() > 0 else np.full(m, 1.0 / m)
    expected = amplification(dense)
    got = retention_amplification(retention)
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    assert np.allclose(got[np.isfinite(got)], expected[np.isfinite(expected)], rtol=1e-9)
    post = posteriors(dense, prior)
    seen = dense.sum(axis=1) > 0
    largest, smallest = retention_posterior_extremes(retention, prior)
    assert np.allclose(largest, post.max(axis=0), atol=1e-12)
    assert np.allclose(smallest, np.where(seen[:, None], post, np.inf).min(axis=0), atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 30), st.floats(1.2, 20.0), st.data())
def test_the_guarantee_check_says_the_same_of_both_forms(m, theta, data):
    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.privacy.amplification import verify
    from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement  # noqa: F401 - the type checked

    counts = np.asarray(data.draw(st.lists(st.integers(1, 500), min_size=m, max_size=m)), dtype=float)
    prior = counts / counts.sum()
    from ppdp_desktop.core.settings import SensitivitySettings
    from ppdp_desktop.core.data.domain import encode_column
    import pandas as pd

    column = pd.Series(np.repeat([f"v{i}" for i in range(m)], counts.astype(int)))
    domain, _ = encode_column(column, "x", "t")
    requirement = SensitivitySettings(theta=theta).requirement(domain)
    retention = data.draw(arrays(np.float64, m, elements=st.floats(0.0, 1.0, allow_nan=False)))
    values = list(domain.values)
    outcomes = []
    for matrix in (retention_matrix(retention), RetentionMatrix(retention)):
        try:
            report = verify("x", values, matrix, requirement, domain.prior)
            outcomes.append(("ok", report.achieved_gamma, report.max_posterior, report.epsilon_ldp,
                             [b["value"] for b in report.downward_breaches]))
        except PrivacyError as exc:
            outcomes.append(("refused", str(exc).split(":")[0]))
    dense, structured = outcomes
    assert dense[0] == structured[0]
    if dense[0] == "ok":
        assert np.allclose(dense[1], structured[1], rtol=1e-9) and np.allclose(dense[2], structured[2], atol=1e-12)
        assert dense[3] == pytest.approx(structured[3]) and dense[4] == structured[4]
    else:
        assert dense[1] == structured[1]
