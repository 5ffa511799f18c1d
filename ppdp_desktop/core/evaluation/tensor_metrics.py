"""Seed 001 section V evaluation measures on contingency tensors (SPEC 2.4, evaluation paragraph).

A tensor holds counts (or an estimate of them) over the full contingency table: one axis per
quasi-identifier and the sensitive attribute as the last axis. The measures:

* :func:`kl` and :func:`chi_square` — distances between the true distribution ``pi`` and an
  estimate ``pi_hat`` (both normalized; the estimate's negative cells are clipped to 0 and its
  cells floored at 1e-12 where it is a denominator). Natural logarithm.
* :func:`groupby_relative_error` — mean of ``|act - est| / act`` over the base group-by cells with
  a true count > 0.
* :func:`cube_relative_error` — the same over every cell with true count > 0 of every marginal
  (every subset of axes, the CUBE of all group-bys, including the grand total), pooled.
* :func:`uncertainty_coefficient` and :func:`uncertainty_table` — Theil's U(X|Y) between attribute
  pairs, computed from 2-D marginals.
"""
from __future__ import annotations

from itertools import combinations
from typing import Iterator

import numpy as np

from ppdp_desktop.core.errors import ParameterError

_FLOOR = 1e-12


def _as_distribution(t: np.ndarray, name: str, clip: bool) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    if clip:
        t = np.clip(t, 0.0, None)
    elif (t < 0).any():
        raise ParameterError(f"The {name} tensor has negative counts; a true contingency table cannot.")
    total = t.sum()
    if not total > 0:
        raise ParameterError(f"The {name} tensor sums to {total:g}; it needs a positive total.")
    return t / total


def _check_shapes(a: np.ndarray, b: np.ndarray) -> None:
    if np.shape(a) != np.shape(b):
        raise ParameterError(f"Tensors of different shapes: {np.shape(a)} and {np.shape(b)}.")


def kl(p_tensor: np.ndarray, q_tensor: np.ndarray) -> float:
    """KL(p || q) = sum_{p > 0} p log(p / q); ``p`` the truth, ``q`` the estimate (clipped, floored)."""
    _check_shapes(p_tensor, q_tensor)
    p = _as_distribution(p_tensor, "true", clip=False)
    q = np.maximum(_as_distribution(q_tensor, "estimated", clip=True), _FLOOR)
    pos = p > 0
    return float(np.sum(p[pos] * np.log(p[pos] / q[pos])))


def chi_square(p: np.ndarray, q: np.ndarray) -> float:
    """Chi-square distance sum (p - q)^2 / q of the normalized tensors (q clipped and floored)."""
    _check_shapes(p, q)
    pn = _as_distribution(p, "true", clip=False)
    qn = _as_distribution(q, "estimated", clip=True)
    return float(np.sum((pn - qn) ** 2 / np.maximum(qn, _FLOOR)))


def _relative_errors(true: np.ndarray, est: np.ndarray) -> np.ndarray:
    true = np.asarray(true, dtype=float).ravel()
    est = np.asarray(est, dtype=float).ravel()
    pos = true > 0
    return np.abs(true[pos] - est[pos]) / true[pos]


def groupby_relative_error(true_tensor: np.ndarray, est_tensor: np.ndarray) -> float:
    """Mean of |act - est| / act over the base group-by cells (all cells) with act > 0."""
    _check_shapes(true_tensor, est_tensor)
    err = _relative_errors(true_tensor, est_tensor)
    if err.size == 0:
        raise ParameterError("The true tensor has no cell with a positive count.")
    return float(err.mean())


def cube_marginals(
    true_tensor: np.ndarray, est_tensor: np.ndarray, max_dims: int | None = None
) -> Iterator[tuple[tuple[int, ...], np.ndarray, np.ndarray]]:
    """Every group-by of the CUBE: (kept axes, true marginal, estimated marginal) for every subset of
    at most ``max_dims`` axes (all axes by default), from the empty subset (the grand total) up."""
    _check_shapes(true_tensor, est_tensor)
    t = np.asarray(true_tensor, dtype=float)
    e = np.asarray(est_tensor, dtype=float)
    k = t.ndim
    top = k if max_dims is None else min(int(max_dims), k)
    if top < 0:
        raise ParameterError(f"max_dims must be >= 0; got {max_dims}.")
    for size in range(top + 1):
        for keep in combinations(range(k), size):
            drop = tuple(a for a in range(k) if a not in keep)
            yield keep, t.sum(axis=drop), e.sum(axis=drop)


def cube_relative_error(true_tensor: np.ndarray, est_tensor: np.ndarray, max_dims: int | None = None) -> float:
    """Mean |act - est| / act over all cells with act > 0 of every marginal of the CUBE (pooled);
    ``max_dims`` limits the group-bys to at most that many axes."""
    errs = [_relative_errors(t, e) for _, t, e in cube_marginals(true_tensor, est_tensor, max_dims)]
    allerr = np.concatenate(errs)
    if allerr.size == 0:
        raise ParameterError("The true tensor has no cell with a positive count.")
    return float(allerr.mean())


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-np.sum(p * np.log(p)))


def uncertainty_coefficient(joint_2d: np.ndarray) -> float:
    """U(X|Y) = (H(X) - H(X|Y)) / H(X) with X the rows and Y the columns of a 2-D count table.

    Negative (estimated) counts are clipped to 0. 0 when X is constant (H(X) = 0).
    """
    j = np.asarray(joint_2d, dtype=float)
    if j.ndim != 2:
        raise ParameterError(f"The uncertainty coefficient needs a 2-D table; got {j.ndim} dimensions.")
    pxy = _as_distribution(j, "joint", clip=True)
    hx = _entropy(pxy.sum(axis=1))
    if hx <= _FLOOR:
        return 0.0
    hy = _entropy(pxy.sum(axis=0))
    hx_given_y = _entropy(pxy.ravel()) - hy
    return float(np.clip((hx - hx_given_y) / hx, 0.0, 1.0))


def uncertainty_table(tensor: np.ndarray) -> np.ndarray:
    """k x k table with entry [i, j] = U(axis i | axis j) from the 2-D marginal; diagonal U(X|X)."""
    t = np.asarray(tensor, dtype=float)
    k = t.ndim
    out = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i == j:
                marg = t.sum(axis=tuple(a for a in range(k) if a != i))
                out[i, i] = uncertainty_coefficient(np.diag(marg))
            else:
                drop = tuple(a for a in range(k) if a not in (i, j))
                m2 = t.sum(axis=drop)  # axes in increasing order
                out[i, j] = uncertainty_coefficient(m2 if i < j else m2.T)
    return out
