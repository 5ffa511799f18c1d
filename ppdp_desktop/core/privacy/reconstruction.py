"""Reconstructing the original value counts from a perturbed column (SPEC 3).

``o`` are the observed counts of each released value, ``P`` the published matrix
(``P[j][i] = Pr[x_i -> y_j]``). All estimators take and return counts.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.structured import RetentionMatrix


def as_matrix(matrix):
    """A dense matrix as a float array; a structured one (:mod:`~ppdp_desktop.core.privacy.structured`, with
    ``@``, ``.T`` and ``solve``) as it is, so no estimator makes an m x m array of it."""
    return matrix if hasattr(matrix, "solve") else np.asarray(matrix, dtype=float)


def inverse(observed: np.ndarray, matrix: np.ndarray | RetentionMatrix) -> np.ndarray:
    """Unbiased estimate ``P^{-1} o`` (may leave ``[0, n]``)."""
    if hasattr(matrix, "solve"):
        return matrix.solve(observed)
    try:
        return np.linalg.solve(np.asarray(matrix, dtype=float), np.asarray(observed, dtype=float))
    except np.linalg.LinAlgError as exc:
        raise ParameterError("The perturbation matrix is singular: counts cannot be estimated from it.") from exc


def inverse_covariance(observed: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Covariance of :func:`inverse` given the table: ``P^{-1} Cov(o) P^{-T}`` (an m x m array: for small
    domains and the tests; the reports use the bootstrap).

    Each record with value ``x_i`` is released as a draw from column ``P_i``, so
    ``Cov(o) = sum_i f_i (diag(P_i) - P_i P_i^T) = diag(P f) - P diag(f) P^T`` (the perturbation's own
    noise, seed 001 Eq. 2 for a fixed table); ``f`` is estimated by the inverse, clipped to be
    non-negative and rescaled to ``n`` so the covariance stays positive semi-definite.
    """
    observed = np.asarray(observed, dtype=float)
    matrix = as_matrix(matrix)
    n = observed.sum()
    m = len(observed)
    if n == 0:
        return np.zeros((m, m))
    f = np.clip(inverse(observed, matrix), 0.0, None)
    f = f * (n / f.sum()) if f.sum() > 0 else np.full(m, n / m)
    scaled = (matrix @ np.diag(f)) if hasattr(matrix, "solve") else matrix * f[None, :]
    cov_o = np.diag(matrix @ f) - (matrix @ scaled.T).T if hasattr(matrix, "solve") else np.diag(matrix @ f) - scaled @ matrix.T
    left = inverse(cov_o, matrix)  # P^{-1} Cov(o)
    return inverse(left.T, matrix).T  # ... P^{-T}, by two solves instead of an inverse


def iterative_bayesian(
    observed: np.ndarray, matrix: np.ndarray | RetentionMatrix, tol: float = 1e-10, max_iter: int = 10_000
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


def iterative_bayesian_many(observed: np.ndarray, matrix: np.ndarray | RetentionMatrix, tol: float = 1e-9,
                            max_iter: int = 5_000) -> np.ndarray:
    """:func:`iterative_bayesian` of every column of ``observed`` (``m x R``) at once; counts ``m x R``."""
    observed = np.asarray(observed, dtype=float)
    matrix = as_matrix(matrix)
    if isinstance(matrix, RetentionMatrix) and matrix.block_uniform:  # one retention per block: the fixed point in closed form
        return matrix.mle(observed)
    n = observed.sum(axis=0)
    share = np.divide(observed, n, out=np.zeros_like(observed), where=n > 0)
    return _em(share, matrix, tol, max_iter) * n


def _em_step(f: np.ndarray, share: np.ndarray, matrix: np.ndarray | RetentionMatrix) -> np.ndarray:
    """One iterative-Bayes (EM) step for every column of ``f``."""
    expected = matrix @ f
    ratio = np.divide(share, expected, out=np.zeros_like(share), where=expected > 0)
    return f * (matrix.T @ ratio)


def _em(share: np.ndarray, matrix: np.ndarray | RetentionMatrix, tol: float, max_iter: int) -> np.ndarray:
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
#: replicates are redrawn and estimated this many cells (values x replicates) at a time, so a 70,000-value
#: domain needs a few megabytes of working memory rather than a gigabyte
CHUNK_CELLS = 1_000_000


def _key(observed: np.ndarray, matrix, *extra: object) -> tuple:
    """What identifies a request: the released counts, the matrix's parameters and the options."""
    parameters = (matrix.retention.tobytes() + matrix.starts.tobytes()) if hasattr(matrix, "retention") else matrix.tobytes()
    return (hashlib.sha256(observed.tobytes() + parameters).hexdigest(), type(matrix).__name__, matrix.shape, *extra)


def bootstrap_replicates(observed: np.ndarray, matrix: np.ndarray | RetentionMatrix, estimator: str = "mle",
                         repetitions: int = BOOTSTRAP_REPETITIONS, seed: int = BOOTSTRAP_SEED,
                         groups: np.ndarray | None = None, n_groups: int | None = None) -> np.ndarray:
    """Estimates (``repetitions x m``) from released counts redrawn with ``matrix`` from the estimate itself
    (a parametric bootstrap): their percentiles are an interval for *that* estimator, which is why the
    shown estimate lies inside its own band. A block-diagonal matrix (perturbation partitioning) redraws each
    block with its own number of records, which the release publishes. With ``groups`` (an output index per
    row of ``matrix``, e.g. the value a sub-table's entry stands for) each replicate is summed by group into
    ``n_groups`` columns as it is made."""
    observed = np.asarray(observed, dtype=float)
    width = len(observed) if groups is None else _group_count(n_groups)
    if int(round(observed.sum())) == 0:
        return np.zeros((repetitions, width))
    return _replicates(observed, as_matrix(matrix), estimator, repetitions, seed, groups, width)


def _replicates(observed: np.ndarray, matrix, estimator: str, repetitions: int, seed: int,
                groups: np.ndarray | None, width: int) -> np.ndarray:
    mle = iterative_bayesian(observed, matrix)
    released = np.clip(matrix @ mle, 0.0, None)
    starts = getattr(matrix, "starts", np.zeros(1, dtype=np.int64))
    ends = np.append(starts[1:], len(observed))
    totals = np.add.reduceat(observed, starts).round().astype(np.int64)  # records per block, as published
    rng = np.random.default_rng(seed)
    out = np.empty((repetitions, width))
    step = max(1, CHUNK_CELLS // len(observed))
    for first in range(0, repetitions, step):
        count = min(step, repetitions - first)
        redrawn = np.zeros((len(observed), count))  # m x count
        for start, end, total in zip(starts, ends, totals):
            if total == 0:
                continue
            probs = released[start:end] / released[start:end].sum()
            redrawn[start:end] = multinomial(rng, total, probs, count).T
        estimates = (inverse(redrawn, matrix) if estimator == "unbiased" else iterative_bayesian_many(redrawn, matrix)).T
        out[first:first + count] = estimates if groups is None else sum_by_group(estimates, groups, width)
    return out


def _group_count(n_groups: int | None) -> int:
    """``n_groups`` as an int: given with ``groups``, it is the number of output columns."""
    if n_groups is None:
        raise TypeError("groups need n_groups, the number of groups")
    return int(n_groups)


def sum_by_group(x: np.ndarray, groups: np.ndarray, width: int) -> np.ndarray:
    """Sum the last axis of ``x`` by ``groups`` into ``width`` columns."""
    if x.ndim == 1:
        return np.bincount(groups, weights=x, minlength=width)
    rows = np.repeat(np.arange(x.shape[0]), x.shape[1])
    return np.bincount(rows * width + np.tile(groups, x.shape[0]), weights=x.ravel(),
                       minlength=x.shape[0] * width).reshape(x.shape[0], width)


#: from this many values on, multinomial redraws go through Poisson draws (below, numpy's own sampler)
POISSONIZED_FROM = 256


def multinomial(rng: np.random.Generator, total: int, probs: np.ndarray, size: int) -> np.ndarray:
    """``size`` exact multinomial(``total``, ``probs``) draws (``size x m``).

    numpy draws one binomial per value, 1.7 s for 200 draws over 70,000 values. On a large domain this draws
    independent Poisson(``lam p_j``) counts with ``lam = total - 3 sqrt(total)`` instead: given their sum
    ``S <= total`` they are multinomial(``S``, ``p``), so ``total - S`` more categorical draws make them exactly
    multinomial(``total``, ``p``); a draw with ``S > total`` (about one in a thousand) is drawn again."""
    m = len(probs)
    if m < POISSONIZED_FROM or total < 100:
        return rng.multinomial(total, probs, size=size)
    lam = total - 3.0 * np.sqrt(total)
    counts = rng.poisson(lam * probs, size=(size, m))
    over = counts.sum(axis=1) > total
    while over.any():
        counts[over] = rng.poisson(lam * probs, size=(int(over.sum()), m))
        over = counts.sum(axis=1) > total
    rest = total - counts.sum(axis=1)
    cdf = np.cumsum(probs)
    cdf /= cdf[-1]
    picks = np.minimum(np.searchsorted(cdf, rng.random(int(rest.sum())), side="right"), m - 1)
    rows = np.repeat(np.arange(size), rest)
    counts += np.bincount(rows * m + picks, minlength=size * m).reshape(size, m)
    return counts


def percentile_band(replicates: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The central ``level`` interval of each column of ``replicates``, a block of columns at a time (the
    percentile sorts a copy: a block keeps that copy small on a large domain)."""
    tail = (1.0 - level) / 2.0 * 100.0
    m = replicates.shape[1]
    low, high = np.empty(m), np.empty(m)
    step = max(1, CHUNK_CELLS // max(1, replicates.shape[0]))
    for first in range(0, m, step):
        low[first:first + step], high[first:first + step] = np.percentile(
            replicates[:, first:first + step], [tail, 100.0 - tail], axis=0)
    return low, high


def estimate_with_interval(observed: np.ndarray, matrix: np.ndarray | RetentionMatrix, estimator: str = "mle",
                           level: float = 0.95, groups: np.ndarray | None = None,
                           n_groups: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(estimate, low, high)``: the non-negative MLE (default) or the unbiased inverse, with the central
    ``level`` interval of its bootstrap replicates (widened to hold the estimate, which a percentile
    interval of a skewed estimator can miss by a hair). With ``groups``, estimates and replicates are summed
    by group (sub-table entries by value) before the interval is taken. The custodian's report and the
    report inside the release ask for the same counts: the second request is answered from memory."""
    observed = np.asarray(observed, dtype=float)
    matrix = as_matrix(matrix)
    grouping = b"" if groups is None else np.asarray(groups, dtype=np.int64).tobytes() + str(n_groups).encode()
    key = _key(observed, matrix, estimator, level, BOOTSTRAP_REPETITIONS, BOOTSTRAP_SEED,
               hashlib.sha256(grouping).hexdigest())
    if key not in _ESTIMATES:
        estimate = iterative_bayesian(observed, matrix) if estimator == "mle" else inverse(observed, matrix)
        if groups is not None:
            estimate = sum_by_group(estimate, np.asarray(groups, dtype=np.int64), _group_count(n_groups))
        replicates = bootstrap_replicates(observed, matrix, estimator, groups=groups, n_groups=n_groups)
        low, high = percentile_band(replicates, level)
        _ESTIMATES[key] = (estimate, np.minimum(low, estimate), np.maximum(high, estimate))
        while len(_ESTIMATES) > 8:
            _ESTIMATES.pop(next(iter(_ESTIMATES)))
    estimate, low, high = _ESTIMATES[key]
    return estimate.copy(), low.copy(), high.copy()


_ESTIMATES: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
