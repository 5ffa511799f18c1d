"""Reconstructing the original value counts from a perturbed column (SPEC 3).

``o`` are the observed counts of each released value, ``P`` the published matrix
(``P[j][i] = Pr[x_i -> y_j]``). All estimators take and return counts.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ppdp_desktop.core.errors import ParameterError


def closed_form_uniform(observed: np.ndarray, gamma: float) -> np.ndarray:
    """Thesis Eq. 60 for UP: ``f_i* = ((m - 1 + gamma) o_i - n) / (gamma - 1)``."""
    observed = np.asarray(observed, dtype=float)
    m, n = len(observed), observed.sum()
    return ((m - 1.0 + gamma) * observed - n) / (gamma - 1.0)


def inverse(observed: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Unbiased estimate ``P^{-1} o`` (may leave ``[0, n]``)."""
    try:
        return np.linalg.solve(np.asarray(matrix, dtype=float), np.asarray(observed, dtype=float))
    except np.linalg.LinAlgError as exc:
        raise ParameterError("The perturbation matrix is singular: counts cannot be estimated from it.") from exc


def inverse_covariance(observed: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Covariance of :func:`inverse` given the table: ``P^{-1} Cov(o) P^{-T}``.

    Each record with value ``x_i`` is released as a draw from column ``P_i``, so
    ``Cov(o) = sum_i f_i (diag(P_i) - P_i P_i^T) = diag(P f) - P diag(f) P^T`` (the perturbation's own
    noise, seed 001 Eq. 2 for a fixed table); ``f`` is estimated by the inverse, clipped to be
    non-negative and rescaled to ``n`` so the covariance stays positive semi-definite.
    """
    observed = np.asarray(observed, dtype=float)
    matrix = np.asarray(matrix, dtype=float)
    n = observed.sum()
    m = len(observed)
    if n == 0:
        return np.zeros((m, m))
    f = np.clip(inverse(observed, matrix), 0.0, None)
    f = f * (n / f.sum()) if f.sum() > 0 else np.full(m, n / m)
    cov_o = np.diag(matrix @ f) - (matrix * f[None, :]) @ matrix.T
    inv = np.linalg.inv(matrix)
    return inv @ cov_o @ inv.T


def iterative_bayesian(
    observed: np.ndarray, matrix: np.ndarray, tol: float = 1e-10, max_iter: int = 10_000
) -> np.ndarray:
    """Iterative Bayesian estimate (converges to the MLE and stays in the simplex), vectorized.

    Start from ``f = 1/m``; repeat ``f_i <- sum_j (o_j/n) P[j][i] f_i / sum_k P[j][k] f_k``
    until ``sum |change| < tol``. Returns counts (``n f``).
    """
    observed = np.asarray(observed, dtype=float)
    matrix = np.asarray(matrix, dtype=float)
    n = observed.sum()
    m = len(observed)
    if n == 0:
        return np.zeros(m)
    share = observed / n
    f = np.full(m, 1.0 / m)
    for _ in range(max_iter):
        expected = matrix @ f
        ratio = np.divide(share, expected, out=np.zeros_like(share), where=expected > 0)
        new = f * (matrix.T @ ratio)
        if np.abs(new - f).sum() < tol:
            f = new
            break
        f = new
    return n * f


def iterative_bayesian_many(observed: np.ndarray, matrix: np.ndarray, tol: float = 1e-9,
                            max_iter: int = 5_000) -> np.ndarray:
    """:func:`iterative_bayesian` of every column of ``observed`` (``m x R``) at once; counts ``m x R``."""
    observed = np.asarray(observed, dtype=float)
    matrix = np.asarray(matrix, dtype=float)
    n = observed.sum(axis=0)
    share = np.divide(observed, n, out=np.zeros_like(observed), where=n > 0)
    f = np.full_like(observed, 1.0 / observed.shape[0])
    for _ in range(max_iter):
        expected = matrix @ f
        ratio = np.divide(share, expected, out=np.zeros_like(share), where=expected > 0)
        new = f * (matrix.T @ ratio)
        done = np.abs(new - f).sum(axis=0).max() < tol
        f = new
        if done:
            break
    return f * n


#: redraws of the parametric bootstrap behind the intervals of the estimates
BOOTSTRAP_REPETITIONS = 200
BOOTSTRAP_SEED = 20_261_123  # fixed: the same release always shows the same interval


def bootstrap_replicates(observed: np.ndarray, matrix: np.ndarray, estimator: str = "mle",
                         repetitions: int = BOOTSTRAP_REPETITIONS, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """Estimates (``repetitions x m``) from released counts redrawn with ``matrix`` from the estimate itself
    (a parametric bootstrap): their percentiles are an interval for *that* estimator, which is why the
    shown estimate lies inside its own band."""
    observed = np.asarray(observed, dtype=float)
    n = int(round(observed.sum()))
    if n == 0:
        return np.zeros((repetitions, len(observed)))
    matrix = np.asarray(matrix, dtype=float)
    key = (hashlib.sha256(observed.tobytes() + matrix.tobytes()).hexdigest(), matrix.shape, estimator, repetitions, seed)
    if key not in _REPLICATES:  # the custodian's and the release's report ask for the same counts: draw once
        _REPLICATES[key] = _replicates(observed, n, matrix, estimator, repetitions, seed)
        while len(_REPLICATES) > 8:
            _REPLICATES.pop(next(iter(_REPLICATES)))
    return _REPLICATES[key].copy()


_REPLICATES: dict[tuple, np.ndarray] = {}


def _replicates(observed: np.ndarray, n: int, matrix: np.ndarray, estimator: str, repetitions: int,
                seed: int) -> np.ndarray:
    mle = iterative_bayesian(observed, matrix)
    released = np.clip(np.asarray(matrix, dtype=float) @ (mle / n), 0.0, None)
    released /= released.sum()
    rng = np.random.default_rng(seed)
    redrawn = rng.multinomial(n, released, size=repetitions).T.astype(float)  # m x R
    if estimator == "unbiased":
        return inverse(redrawn, matrix).T
    return iterative_bayesian_many(redrawn, matrix).T


def estimate_with_interval(observed: np.ndarray, matrix: np.ndarray, estimator: str = "mle",
                           level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(estimate, low, high)``: the non-negative MLE (default) or the unbiased inverse, with the central
    ``level`` interval of its bootstrap replicates (widened to hold the estimate, which a percentile
    interval of a skewed estimator can miss by a hair)."""
    estimate = iterative_bayesian(observed, matrix) if estimator == "mle" else inverse(observed, matrix)
    replicates = bootstrap_replicates(observed, matrix, estimator)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(replicates, [tail, 100.0 - tail], axis=0)
    return estimate, np.minimum(low, estimate), np.maximum(high, estimate)
