"""Utility measures and distances between an original distribution and its estimate from a release.

SPEC 3 (error measures) and seed 001 section V (distances). One definition of each measure, used by every
report and comparison; the divergences are sums of :func:`rel_entr` (scipy's ``rel_entr`` in numpy).

The distances compare the ORIGINAL counts ``f`` (the truth, normalized to shares ``p``) with an ESTIMATE
of them ``f*`` (normalized to ``q``; its negative cells, which an unbiased estimator can give, are clipped
to 0 before normalizing). Any shape is accepted (a count vector or a contingency tensor): cells are
matched position by position.

* :func:`kl_divergence` -- ``KL(p || q) = sum p ln(p / q)`` in nats, ``q`` floored at 1e-12 so that an
  estimate missing a value costs a large finite amount instead of infinity.
* :func:`pearson_chi_square` -- Pearson's chi-square of the estimate against the original shares:
  ``sum (q - p)^2 / p`` over the cells the original has (the expected value of a cell is its original
  share; a cell the original lacks has no Pearson term and is left out -- the estimate's mass there
  still counts, since it is missing from the cells that are summed).
* :func:`jensen_shannon` -- Jensen-Shannon divergence in bits (between 0 and 1), symmetric.
* :func:`reconstruction_error` -- mean of :func:`relative_errors` (thesis Def. 2; seed 001's "average
  relative error" of the base group-by is the same measure on the cells of a contingency table).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.errors import ParameterError

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.structured import RetentionMatrix

#: floor of an estimated share where it is a denominator (KL), so that a missing value costs ~27.6 p_i nats
FLOOR = 1e-12


def as_distribution(counts: np.ndarray, name: str, clip: bool) -> np.ndarray:
    """``counts`` as shares summing to 1, raveled.

    Parameters
    ----------
    counts : array_like
        Counts of any shape.
    name : str
        What the counts are ("original", "estimated"), for the error message.
    clip : bool
        Clip negative counts to 0 (an estimate); else negative counts are refused (an original table).

    Raises
    ------
    ParameterError
        If ``clip`` is false and a count is negative, or if the counts do not sum to a positive total.
    """
    t = np.asarray(counts, dtype=float).ravel()
    if clip:
        t = np.clip(t, 0.0, None)
    elif (t < 0).any():
        raise ParameterError(f"The {name} counts have negative cells; a true count table cannot.")
    total = t.sum()
    if not total > 0:
        raise ParameterError(f"The {name} counts sum to {total:g}; a distribution needs a positive total.")
    return t / total


def _pair(original: np.ndarray, estimate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if np.shape(original) != np.shape(estimate):
        raise ParameterError(f"Counts of different shapes: {np.shape(original)} and {np.shape(estimate)}.")
    return as_distribution(original, "original", clip=False), as_distribution(estimate, "estimated", clip=True)


def record_utility(prior: np.ndarray, matrix: np.ndarray | RetentionMatrix) -> float:
    """``sum_i (f_i/n) P[i][i]`` (thesis Def. 7): the chance a record is released unchanged (a structured
    matrix gives its diagonal in O(m))."""
    diagonal = matrix.diagonal() if hasattr(matrix, "diagonal") else np.diag(matrix)
    return float(np.dot(prior, diagonal))


def relative_errors(actual: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """``|f_i - f_i*| / f_i`` of every cell with ``f_i > 0`` (raveled, in cell order)."""
    actual = np.asarray(actual, dtype=float).ravel()
    estimate = np.asarray(estimate, dtype=float).ravel()
    present = actual > 0
    return np.abs(actual[present] - estimate[present]) / actual[present]


def reconstruction_error(actual: np.ndarray, estimate: np.ndarray) -> float:
    """``(1/m) sum |f_i - f_i*| / f_i`` over the values that occur (thesis Def. 2); NaN when none occurs."""
    errors = relative_errors(actual, estimate)
    return float(errors.mean()) if errors.size else float("nan")


def aggregate_utility(actual: np.ndarray, estimate: np.ndarray) -> float:
    """``1 - (1/m) sum |f_i/n - f_i*/n|`` (seed 000 Def. 2)."""
    actual = np.asarray(actual, dtype=float)
    n = actual.sum()
    return float(1.0 - np.mean(np.abs(actual - np.asarray(estimate, dtype=float)) / n))


def rel_entr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise ``x ln(x / y)``, 0 where ``x = 0 <= y`` and infinite where ``x < 0`` or ``y <= 0 < x`` (NaN
    stays NaN): ``scipy.special.rel_entr`` in numpy, within a few units in the last place of it (numpy's ``log``, not
    the C library's). Not scipy's: importing ``scipy.special`` costs ~0.1 s of CPU that a report paid for this."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    out = np.full(x.shape, np.inf)
    both = (x > 0) & (y > 0)
    out[both] = x[both] * np.log(x[both] / y[both])
    out[(x == 0) & (y >= 0)] = 0.0
    out[np.isnan(x) | np.isnan(y)] = np.nan
    return out


def kl_divergence(original: np.ndarray, estimate: np.ndarray) -> float:
    """Kullback-Leibler divergence ``KL(p || q) = sum_i p_i ln(p_i / q_i)`` of the estimate from the original,
    in nats (0 = identical); ``q`` floored at :data:`FLOOR`.

    Raises
    ------
    ParameterError
        If the shapes differ, the original has negative counts, or either side sums to 0.
    """
    p, q = _pair(original, estimate)
    return float(rel_entr(p, np.maximum(q, FLOOR)).sum())


def pearson_chi_square(original: np.ndarray, estimate: np.ndarray) -> float:
    """Pearson's chi-square of the estimate against the original shares, ``sum_{p_i > 0} (q_i - p_i)^2 / p_i``
    (0 = identical; seed 001's chi-square distance between ``pi`` and ``pi_hat``).

    The original is the expected distribution, so its cells are the denominators: the figure does not
    blow up where the estimate misses a value, and cells the original lacks have no term.

    Raises
    ------
    ParameterError
        If the shapes differ, the original has negative counts, or either side sums to 0.
    """
    p, q = _pair(original, estimate)
    present = p > 0
    return float(np.sum((q[present] - p[present]) ** 2 / p[present]))


def jensen_shannon(first: np.ndarray, second: np.ndarray) -> float:
    """Jensen-Shannon divergence of two count vectors in bits (between 0 and 1; symmetric).

    Negative counts are clipped to 0; a side with no counts at all is the zero vector (so two empty
    histograms are 0 apart and an empty one is 0.5 from any other).
    """
    p, q = _shares(first), _shares(second)
    mix = (p + q) / 2.0
    return float((rel_entr(p, mix).sum() + rel_entr(q, mix).sum()) / (2.0 * np.log(2.0)))


def _shares(counts: np.ndarray) -> np.ndarray:
    counts = np.clip(np.asarray(counts, dtype=float).ravel(), 0.0, None)
    total = counts.sum()
    return counts / total if total > 0 else counts
