"""Randomized response over a QI x S contingency tensor: matrices and disclosure risk (SPEC 1.3, 2.4).

Every attribute is an axis of a counts tensor (QI axes first, the sensitive attribute S last).
Kronecker products are never formed: each matrix is applied along its own axis (seed 001 Lemma 2).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ppdp_desktop.core.errors import ParameterError


def rr_matrix(d: int, p: float) -> np.ndarray:
    """The ``d x d`` randomized-response matrix: diagonal ``p``, off-diagonal ``(1-p)/(d-1)``."""
    d = int(d)
    if d < 1:
        raise ParameterError(f"A randomized attribute needs a domain of at least 1 value; got {d}.")
    if d == 1:
        return np.ones((1, 1))
    p = float(p)
    if not (1.0 / d - 1e-12 <= p <= 1.0 + 1e-12):
        raise ParameterError(f"The retention probability p must lie in [1/{d}, 1]; got {p}.")
    q = (1.0 - p) / (d - 1)
    m = np.full((d, d), q)
    np.fill_diagonal(m, p)
    return m


def contingency(codes_list: Sequence[np.ndarray], dims: Sequence[int]) -> np.ndarray:
    """Counts tensor with one axis per attribute (codes ``0..dims[i]-1``), via one ``bincount``."""
    dims = tuple(int(d) for d in dims)
    if len(codes_list) != len(dims):
        raise ParameterError(f"{len(codes_list)} code columns but {len(dims)} domain sizes.")
    cols = [np.asarray(c, dtype=np.int64) for c in codes_list]
    for i, (c, d) in enumerate(zip(cols, dims)):
        if c.size and (c.min() < 0 or c.max() >= d):
            raise ParameterError(f"Attribute {i} has codes outside 0..{d - 1}.")
    flat = np.ravel_multi_index(cols, dims) if cols else np.zeros(0, dtype=np.int64)
    size = int(np.prod(dims)) if dims else 1
    return np.bincount(flat, minlength=size).astype(float).reshape(dims)


def apply_axes(tensor: np.ndarray, matrices: Sequence[np.ndarray | None]) -> np.ndarray:
    """Apply ``matrices[i]`` along axis ``i`` (``None`` = identity): ``(A (x) B) vec X = vec(A X B^T)``."""
    out = np.asarray(tensor, dtype=float)
    if len(matrices) > out.ndim:
        raise ParameterError(f"{len(matrices)} matrices for a tensor with {out.ndim} axes.")
    for axis, m in enumerate(matrices):
        if m is None:
            continue
        out = np.moveaxis(np.tensordot(m, out, axes=([1], [axis])), 0, axis)
    return out


def _safe_inverse(x: np.ndarray) -> np.ndarray:
    w = np.zeros_like(x)
    np.divide(1.0, x, out=w, where=x > 0)
    return w


def reconstruction_probability(prior: np.ndarray, matrices: Sequence[np.ndarray]) -> np.ndarray:
    """Seed 001 Lemma 1, ``R(mu) = pi_mu sum_nu P[nu|mu]^2 / lambda_nu``, ``lambda = P pi``.

    ``prior`` is a tensor with one axis per matrix (``P`` is their Kronecker product); it need not be
    normalized to 1 across the whole tensor as long as it is a distribution (it is normalized here).
    """
    pi = np.asarray(prior, dtype=float)
    total = pi.sum()
    if total <= 0:
        return np.zeros_like(pi)
    pi = pi / total
    lam = apply_axes(pi, matrices)
    w = _safe_inverse(lam)
    return pi * apply_axes(w, [(np.asarray(m) ** 2).T for m in matrices])


def _conditional_s_reconstruction(counts: np.ndarray, p_s_matrix: np.ndarray) -> np.ndarray:
    """``R_S(u|alpha)`` for every ``alpha`` at once (S is the last axis)."""
    row = counts.sum(axis=-1, keepdims=True)
    cond = np.zeros_like(counts)
    np.divide(counts, row, out=cond, where=row > 0)
    lam = cond @ p_s_matrix.T                       # lambda_alpha = P_S pi_{.|alpha}
    w = _safe_inverse(lam)
    return cond * (w @ (p_s_matrix ** 2))           # sum_nu P[nu,u]^2 w_nu


def disclosure_risk(counts: np.ndarray, p_qi: Sequence[float] | None,
                    p_s: float | None) -> np.ndarray:
    """``risk(alpha, u) = R_QI(alpha) * pi_{alpha,u}/pi_alpha * R_S(u|alpha)``; 0 in empty cells."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim < 1:
        raise ParameterError("The contingency tensor needs at least the sensitive axis.")
    dims = counts.shape
    qi_counts = counts.sum(axis=-1)
    cond = np.zeros_like(counts)
    np.divide(counts, qi_counts[..., None], out=cond, where=qi_counts[..., None] > 0)
    risk = cond
    if p_qi is not None:
        if len(p_qi) != len(dims) - 1:
            raise ParameterError(f"{len(p_qi)} QI probabilities for {len(dims) - 1} QI attributes.")
        mats = [rr_matrix(d, p) for d, p in zip(dims[:-1], p_qi)]
        risk = risk * reconstruction_probability(qi_counts, mats)[..., None]
    if p_s is not None:
        risk = risk * _conditional_s_reconstruction(counts, rr_matrix(dims[-1], p_s))
    return np.where(counts > 0, risk, 0.0)


def max_risk(counts: np.ndarray, p_qi: Sequence[float] | None, p_s: float | None) -> float:
    """Largest disclosure risk over the cells that hold data (0 for an empty table)."""
    r = disclosure_risk(counts, p_qi, p_s)
    return float(r.max()) if r.size else 0.0
