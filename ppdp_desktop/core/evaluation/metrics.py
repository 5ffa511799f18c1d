"""Utility and distance measures between original and reconstructed distributions (SPEC 3)."""
from __future__ import annotations

import numpy as np

_EPS = 1e-12


def _shares(counts: np.ndarray) -> np.ndarray:
    counts = np.clip(np.asarray(counts, dtype=float), 0.0, None)
    total = counts.sum()
    return counts / total if total > 0 else counts


def record_utility(prior: np.ndarray, matrix: np.ndarray) -> float:
    """``sum_i (f_i/n) P[i][i]`` (thesis Def. 7): the chance a record is released unchanged (a structured
    matrix gives its diagonal in O(m))."""
    diagonal = matrix.diagonal() if hasattr(matrix, "diagonal") else np.diag(matrix)
    return float(np.dot(prior, diagonal))


def reconstruction_error(actual: np.ndarray, estimate: np.ndarray) -> float:
    """``(1/m) sum |f_i - f_i*| / f_i`` over the values that occur (thesis Def. 2)."""
    actual = np.asarray(actual, dtype=float)
    estimate = np.asarray(estimate, dtype=float)
    present = actual > 0
    return float(np.mean(np.abs(actual[present] - estimate[present]) / actual[present]))


def aggregate_utility(actual: np.ndarray, estimate: np.ndarray) -> float:
    """``1 - (1/m) sum |f_i/n - f_i*/n|`` (seed 000 Def. 2)."""
    actual = np.asarray(actual, dtype=float)
    n = actual.sum()
    return float(1.0 - np.mean(np.abs(actual - np.asarray(estimate, dtype=float)) / n))


def relative_error(actual: float, estimate: float) -> float:
    """``|act - est| / act``."""
    return abs(actual - estimate) / actual


def kl_divergence(actual: np.ndarray, estimate: np.ndarray) -> float:
    """``KL(p || q)`` in nats; negative estimates are clipped to 0 and ``q`` is floored at 1e-12."""
    p, q = _shares(actual), np.maximum(_shares(estimate), _EPS)
    present = p > 0
    return float(np.sum(p[present] * np.log(p[present] / q[present])))


def chi_square(actual: np.ndarray, estimate: np.ndarray) -> float:
    """``sum (p - q)^2 / p`` over the values that occur (the seed 001 distance)."""
    p, q = _shares(actual), _shares(estimate)
    present = p > 0
    return float(np.sum((p[present] - q[present]) ** 2 / p[present]))


def jensen_shannon(actual: np.ndarray, estimate: np.ndarray) -> float:
    """Jensen-Shannon divergence in bits (between 0 and 1)."""
    p, q = _shares(actual), _shares(estimate)
    mix = (p + q) / 2.0

    def part(a: np.ndarray) -> float:
        nz = a > 0
        return float(np.sum(a[nz] * np.log2(a[nz] / mix[nz])))

    return 0.5 * part(p) + 0.5 * part(q)
