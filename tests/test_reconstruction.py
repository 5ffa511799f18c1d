"""Estimators: closed form, inverse, iterative Bayesian; Monte-Carlo unbiasedness and coverage."""
from __future__ import annotations

import numpy as np
import pytest

from ppdp_desktop.core.methods.perturbation.plan import perturb_codes, retention_matrix
from ppdp_desktop.core.methods.perturbation.uniform import uniform_retention
from ppdp_desktop.core.privacy import reconstruction as rec


def test_closed_form_equals_inverse_for_uniform():
    """The product's one estimator, ``P^{-1} o``, is the thesis' closed form for UP (Eq. 60, SPEC 3):
    ``f_i* = ((m - 1 + gamma) o_i - n) / (gamma - 1)``, written out here as the oracle."""
    gamma, m = 4.0, 6
    matrix = retention_matrix(np.full(m, uniform_retention(gamma, m)))
    observed = np.array([120.0, 80, 60, 30, 7, 3])
    closed_form = ((m - 1.0 + gamma) * observed - observed.sum()) / (gamma - 1.0)
    np.testing.assert_allclose(rec.inverse(observed, matrix), closed_form, rtol=1e-12)


def test_iterative_bayesian_is_exact_without_noise_and_stays_in_simplex():
    truth = np.array([500.0, 300, 150, 50])
    matrix = retention_matrix(np.array([0.6, 0.5, 0.3, 0.2]))
    expected = matrix @ truth
    np.testing.assert_allclose(rec.iterative_bayesian(expected, matrix, tol=1e-13), truth, rtol=1e-5)
    noisy = np.array([10.0, 0, 0, 200])
    estimate = rec.iterative_bayesian(noisy, matrix)
    assert np.all(estimate >= 0) and estimate.sum() == pytest.approx(210.0)


def test_monte_carlo_inverse_is_unbiased_and_covariance_is_right():
    """Perturb the same table 400 times: the mean estimate is within 4 standard errors of the truth,
    and the predicted standard deviation matches the empirical one within 15 %."""
    rng = np.random.default_rng(2024)
    counts = np.array([4000, 2500, 1500, 1000, 600, 400])
    codes = np.repeat(np.arange(len(counts)), counts).astype(np.int32)
    retention = np.array([0.55, 0.5, 0.45, 0.4, 0.3, 0.25])
    matrix = retention_matrix(retention)
    estimates, predicted_sd = [], []
    for _ in range(400):
        observed = np.bincount(perturb_codes(codes, retention, rng), minlength=len(counts))
        estimates.append(rec.inverse(observed, matrix))
        predicted_sd.append(np.sqrt(np.diag(rec.inverse_covariance(observed, matrix))))
    estimates = np.array(estimates)
    standard_error = estimates.std(axis=0, ddof=1) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - counts) < 4 * standard_error)
    ratio = np.mean(predicted_sd, axis=0) / estimates.std(axis=0, ddof=1)
    assert np.all((ratio > 0.85) & (ratio < 1.15)), ratio


def test_perturbation_keeps_the_stated_retention_rate():
    rng = np.random.default_rng(5)
    m, n = 10, 400_000
    codes = rng.integers(0, m, n).astype(np.int32)
    retention = np.linspace(0.1, 0.9, m)
    out = perturb_codes(codes, retention, rng)
    matrix = retention_matrix(retention)
    for value in (0, 5, 9):
        kept = np.mean(out[codes == value] == value)
        size = np.sum(codes == value)
        sd = np.sqrt(matrix[value, value] * (1 - matrix[value, value]) / size)
        assert abs(kept - matrix[value, value]) < 5 * sd
    # Off-diagonal moves are uniform.
    moved = out[(codes == 0) & (out != 0)]
    frequencies = np.bincount(moved, minlength=m)[1:] / len(moved)
    np.testing.assert_allclose(frequencies, 1 / m / (1 - matrix[0, 0]) * (1 - retention[0]) / 1, rtol=0.08)


def test_singular_matrix_is_a_clear_error():
    from ppdp_desktop.core.errors import ParameterError

    with pytest.raises(ParameterError, match="singular"):
        rec.inverse(np.array([1.0, 2.0]), np.full((2, 2), 0.5))
