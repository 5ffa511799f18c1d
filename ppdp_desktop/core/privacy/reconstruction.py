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


def as_matrix(matrix):
    """A dense matrix as a float array; a structured one (:mod:`~ppdp_desktop.core.privacy.structured`, with
    ``@``, ``.T`` and ``solve``) as it is, so no estimator makes an m x m array of it."""
    return matrix if hasattr(matrix, "solve") else np.asarray(matrix, dtype=float)


def inverse(observed: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Unbiased estimate ``P^{-1} o`` (may leave ``[0, n]``)."""
    if hasattr(matrix, "solve"):
        return matrix.solve(observed)
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
    until ``sum |change| < tol``. Returns counts (``n f``). The iteration is accelerated by SQUAREM
    (:func:`_em`), which reaches the same fixed point in a fraction of the steps.
    """
    observed = np.asarray(observed, dtype=float)
    if observed.sum() == 0:
        return np.zeros(len(observed))
    return iterative_bayesian_many(observed[:, None], matrix, tol, max_iter)[:, 0]


def iterative_bayesian_many(observed: np.ndarray, matrix: np.ndarray, tol: float = 1e-9,
                            max_iter: int = 5_000) -> np.ndarray:
    """:func:`iterative_bayesian` of every column of ``observed`` (``m x R``) at once; counts ``m x R``."""
    observed = np.asarray(observed, dtype=float)
    matrix = as_matrix(matrix)
    n = observed.sum(axis=0)
    share = np.divide(observed, n, out=np.zeros_like(observed), where=n > 0)
    return _em(share, matrix, tol, max_iter) * n


def _em_step(f: np.ndarray, share: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """One iterative-Bayes (EM) step for every column of ``f``."""
    expected = matrix @ f
    ratio = np.divide(share, expected, out=np.zeros_like(share), where=expected > 0)
    return f * (matrix.T @ ratio)


def _em(share: np.ndarray, matrix: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """The EM fixed point of every column of ``share``, accelerated by SQUAREM (Varadhan and Roland 2008,
    scheme S3): two EM steps give the direction, one extrapolated point is taken when it stays inside the
    simplex (else the plain second step), then one EM step from it. It stops, like plain EM, when one EM
    step changes a column by less than ``tol`` (L1), so the fixed point reached is EM's own. ``max_iter``
    counts EM steps."""
    f = np.full_like(share, 1.0 / share.shape[0])
    steps = 0
    while steps < max_iter:
        f1 = _em_step(f, share, matrix)
        if np.abs(f1 - f).sum(axis=0).max() < tol:
            return f1
        f2 = _em_step(f1, share, matrix)
        r = f1 - f
        v = f2 - f1 - r
        vv = (v * v).sum(axis=0)
        alpha = -np.sqrt(np.divide((r * r).sum(axis=0), vv, out=np.ones_like(vv), where=vv > 0))
        alpha = np.minimum(alpha, -1.0)
        jump = f - 2.0 * alpha * r + alpha * alpha * v
        inside = (jump >= 0.0).all(axis=0) & np.isfinite(jump).all(axis=0)
        jump = np.where(inside, jump, f2)
        jump /= jump.sum(axis=0, keepdims=True)
        f = _em_step(jump, share, matrix)
        steps += 3
        if np.abs(f - jump).sum(axis=0).max() < tol:
            return f
    return f


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
    matrix = as_matrix(matrix)
    parameters = matrix.retention.tobytes() if hasattr(matrix, "retention") else matrix.tobytes()
    key = (hashlib.sha256(observed.tobytes() + parameters).hexdigest(), type(matrix).__name__, matrix.shape,
           estimator, repetitions, seed)
    if key not in _REPLICATES:  # the custodian's and the release's report ask for the same counts: draw once
        _REPLICATES[key] = _replicates(observed, n, matrix, estimator, repetitions, seed)
        while len(_REPLICATES) > 8:
            _REPLICATES.pop(next(iter(_REPLICATES)))
    return _REPLICATES[key].copy()


_REPLICATES: dict[tuple, np.ndarray] = {}


def _replicates(observed: np.ndarray, n: int, matrix: np.ndarray, estimator: str, repetitions: int,
                seed: int) -> np.ndarray:
    mle = iterative_bayesian(observed, matrix)
    released = np.clip(as_matrix(matrix) @ (mle / n), 0.0, None)
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
