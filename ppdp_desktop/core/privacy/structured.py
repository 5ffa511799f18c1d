"""Perturbation matrices held by their parameters, never as a dense m x m array (Qt-free).

A retention plan keeps value ``x_j`` with probability ``p_j`` and otherwise releases a uniform draw, so its
matrix is ``P = diag(p) + (1/m) 1 (1 - p)^T`` (uniform perturbation: every ``p_j`` equal). Products with
``P`` and ``P^T`` cost O(m) (times the number of right-hand sides), and so does ``P^{-1} o`` by the
Sherman–Morrison formula — what a 70,000-value diagnosis domain needs (a dense matrix would be 39 GB).
:class:`RetentionMatrix` behaves like the dense array wherever the estimators use one (``@``, ``.T``,
:meth:`solve`), and :meth:`to_dense` gives the dense reference the tests compare it with.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppdp_desktop.core.errors import ParameterError


@dataclass(frozen=True, eq=False)
class RetentionMatrix:
    """``P[i, j] = p_j [i = j] + (1 - p_j) / m``: column ``j`` is where a record holding value ``j`` goes."""

    retention: np.ndarray

    def __post_init__(self) -> None:
        p = np.asarray(self.retention, dtype=float)
        if p.ndim != 1 or not len(p) or not np.all((p >= 0) & (p <= 1)):
            raise ParameterError("A retention matrix needs one retention probability in [0, 1] per value.")
        object.__setattr__(self, "retention", p)

    @property
    def m(self) -> int:
        return len(self.retention)

    @property
    def shape(self) -> tuple[int, int]:
        return self.m, self.m

    @property
    def T(self) -> "_Transposed":  # noqa: N802 - numpy's name
        return _Transposed(self)

    def __matmul__(self, f: np.ndarray) -> np.ndarray:
        """``P f`` for a vector or each column of an ``m x R`` array."""
        f = np.asarray(f, dtype=float)
        p = self.retention if f.ndim == 1 else self.retention[:, None]
        return p * f + ((1.0 - p) * f).sum(axis=0) / self.m

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``P^T r``."""
        r = np.asarray(r, dtype=float)
        p = self.retention if r.ndim == 1 else self.retention[:, None]
        return p * r + (1.0 - p) * r.sum(axis=0) / self.m

    def diagonal(self) -> np.ndarray:
        """``P[i, i]``: the chance a value is released as itself."""
        return self.retention + (1.0 - self.retention) / self.m

    def entry(self, i: int, j: int) -> float:
        return float((1.0 - self.retention[j]) / self.m + (self.retention[j] if i == j else 0.0))

    def solve(self, observed: np.ndarray) -> np.ndarray:
        """``P^{-1} o`` by Sherman–Morrison (``P = D + u v^T``, ``D = diag(p)``, ``u = 1/m``, ``v = 1 - p``)."""
        o = np.asarray(observed, dtype=float)
        p = self.retention if o.ndim == 1 else self.retention[:, None]
        if np.any(self.retention <= 0):
            if np.all(self.retention <= 0) or self.m == 1:
                raise ParameterError("The perturbation matrix is singular: counts cannot be estimated from it.")
            return np.linalg.solve(self.to_dense(), o)  # a value never kept: no closed form, a rare case
        denominator = 1.0 + ((1.0 - self.retention) / (self.m * self.retention)).sum()
        d_inv_o = o / p
        correction = ((1.0 - p) * d_inv_o).sum(axis=0) / denominator
        return d_inv_o - correction / (self.m * p)

    def to_dense(self) -> np.ndarray:
        """The dense matrix: for tests and small domains only."""
        dense = np.tile((1.0 - self.retention) / self.m, (self.m, 1))
        dense[np.diag_indices(self.m)] += self.retention
        return dense

    def __array__(self, dtype=None, copy=None) -> np.ndarray:  # np.asarray(matrix) still works on small domains
        dense = self.to_dense()
        return dense if dtype is None else dense.astype(dtype)


@dataclass(frozen=True)
class _Transposed:
    """``P^T`` of a :class:`RetentionMatrix`, for the estimators' ``matrix.T @ r``."""

    matrix: RetentionMatrix

    def __matmul__(self, r: np.ndarray) -> np.ndarray:
        return self.matrix.rmatvec(r)
