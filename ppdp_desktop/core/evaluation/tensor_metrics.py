"""Seed 001 section V evaluation measures on contingency tensors (SPEC 2.4, evaluation paragraph).

A tensor holds counts (or an estimate of them) over the full contingency table: one axis per
quasi-identifier and the sensitive attribute as the last axis. The measures:

* the distances between the true distribution ``pi`` and an estimate ``pi_hat`` are those of
  :mod:`~ppdp_desktop.core.evaluation.metrics` (:func:`~ppdp_desktop.core.evaluation.metrics.kl_divergence`,
  :func:`~ppdp_desktop.core.evaluation.metrics.pearson_chi_square`), which take tensors as they are.
* :func:`groupby_relative_error` — mean of ``|act - est| / act`` over the base group-by cells with
  a true count > 0.
* :func:`cube_relative_error` — the same over every cell with true count > 0 of every marginal
  (every subset of axes, the CUBE of all group-bys, including the grand total), pooled.
* :func:`uncertainty_coefficient` and :func:`uncertainty_table` — Theil's U(X|Y) between attribute
  pairs, computed from 2-D marginals.
"""
from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation.metrics import FLOOR, as_distribution, relative_errors


def _check_shapes(a: np.ndarray, b: np.ndarray) -> None:
    if np.shape(a) != np.shape(b):
        raise ParameterError(f"Tensors of different shapes: {np.shape(a)} and {np.shape(b)}.")


def groupby_relative_error(true_tensor: np.ndarray, est_tensor: np.ndarray) -> float:
    """Mean of |act - est| / act over the base group-by cells (all cells) with act > 0."""
    _check_shapes(true_tensor, est_tensor)
    err = relative_errors(true_tensor, est_tensor)
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
    errs = [relative_errors(t, e) for _, t, e in cube_marginals(true_tensor, est_tensor, max_dims)]
    allerr = np.concatenate(errs)
    if allerr.size == 0:
        raise ParameterError("The true tensor has no cell with a positive count.")
    return float(allerr.mean())


def uncertainty_coefficient(joint_2d: np.ndarray) -> float:
    """U(X|Y) = (H(X) - H(X|Y)) / H(X) with X the rows and Y the columns of a 2-D count table.

    Negative (estimated) counts are clipped to 0. 0 when X is constant (H(X) = 0).
    """
    from scipy.stats import entropy  # here: importing scipy.stats takes ~1 s, and rr's release checks import this module

    j = np.asarray(joint_2d, dtype=float)
    if j.ndim != 2:
        raise ParameterError(f"The uncertainty coefficient needs a 2-D table; got {j.ndim} dimensions.")
    pxy = as_distribution(j, "joint", clip=True).reshape(j.shape)
    hx = float(entropy(pxy.sum(axis=1)))
    if hx <= FLOOR:
        return 0.0
    hy = float(entropy(pxy.sum(axis=0)))
    hx_given_y = float(entropy(pxy.ravel())) - hy
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
