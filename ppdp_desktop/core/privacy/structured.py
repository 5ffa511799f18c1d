"""Perturbation matrices held by their parameters, never as a dense m x m array (Qt-free).

A retention plan keeps value ``x_j`` with probability ``p_j`` and otherwise releases a uniform draw over the
values of its *block*: the whole domain for uniform and fine-grain perturbation (one block), a sub-table's own
values for perturbation partitioning (one block per sub-table, the matrix block-diagonal). Within block ``b``
of ``m_b`` values, ``P = diag(p) + (1/m_b) 1 (1 - p)^T``. Products with ``P`` and ``P^T`` cost O(m) (times the
number of right-hand sides), and so does ``P^{-1} o`` by the Sherman–Morrison formula per block — what a
70,000-value diagnosis domain needs (a dense matrix would be 39 GB). Where every block keeps its values with
one retention (uniform perturbation, every sub-table of a partition) the maximum-likelihood counts have a
closed form too (:meth:`RetentionMatrix.mle`), where iterative Bayes would need thousands of steps.
:class:`RetentionMatrix` behaves like the dense array wherever the estimators use one (``@``, ``.T``,
:meth:`solve`), and :meth:`to_dense` gives the dense reference the tests compare it with.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ppdp_desktop.core.errors import ParameterError

#: the largest domain :meth:`RetentionMatrix.to_dense` builds (5,000 values: 200 MB)
DENSE_LIMIT = 5000


@dataclass(frozen=True, eq=False, init=False)
class RetentionMatrix:
    """``P[i, j] = p_j [i = j] + (1 - p_j) / m_b`` for ``i, j`` in the same block ``b`` (0 across blocks):
    column ``j`` is where a record holding value ``j`` goes.

    Built as ``RetentionMatrix(retention, starts=None)``: ``starts`` are the first indices of the blocks
    (``None``: one block, the whole domain); once built, :attr:`starts` is always an array.
    """

    retention: np.ndarray
    starts: np.ndarray
    #: the number of values of each block
    sizes: np.ndarray = field(repr=False)
    #: per value, the size of its block (as floats, the divisor of the uniform part)
    _size_of: np.ndarray = field(repr=False)

    def __init__(self, retention: np.ndarray, starts: np.ndarray | None = None) -> None:
        p = np.asarray(retention, dtype=float)
        if p.ndim != 1 or not len(p) or not np.all((p >= 0) & (p <= 1)):  # NaN fails
            raise ParameterError("A retention matrix needs one retention probability in [0, 1] per value.")
        first = np.zeros(1, dtype=np.int64) if starts is None else np.asarray(starts, dtype=np.int64)
        if first.ndim != 1 or not len(first) or first[0] != 0 or np.any(np.diff(first) <= 0) or first[-1] >= len(p):
            raise ParameterError("The blocks of a retention matrix must start at 0 and each hold at least one value.")
        sizes = np.diff(np.append(first, len(p)))
        object.__setattr__(self, "retention", p)
        object.__setattr__(self, "starts", first)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "_size_of", np.repeat(sizes, sizes).astype(float))

    # ---- shape and structure -------------------------------------------------------------------
    @property
    def m(self) -> int:
        return len(self.retention)

    @property
    def shape(self) -> tuple[int, int]:
        return self.m, self.m

    @property
    def n_blocks(self) -> int:
        return len(self.starts)

    @property
    def block_of(self) -> np.ndarray:
        """The block of each value."""
        return np.repeat(np.arange(self.n_blocks), self.sizes)

    @property
    def block_uniform(self) -> bool:
        """Every value of a block is kept with the same probability (the MLE then has a closed form)."""
        first = self.retention[self.starts]
        return bool(np.all(self.retention == np.repeat(first, self.sizes)))

    def block_sum(self, x: np.ndarray) -> np.ndarray:
        """Sum of ``x`` over each block (rows of a 2-D ``x``)."""
        if self.n_blocks == 1:  # a plain sum is several times faster than reduceat
            return np.asarray(x, dtype=float).sum(axis=0, keepdims=True)
        return np.add.reduceat(np.asarray(x, dtype=float), self.starts, axis=0)

    def _spread(self, per_block: np.ndarray) -> np.ndarray:
        """A per-block quantity repeated for each value of its block (one block: broadcast, not copied)."""
        if self.n_blocks == 1:
            return per_block
        return np.repeat(per_block, self.sizes, axis=0)

    def _p(self, like: np.ndarray) -> np.ndarray:
        return self.retention if like.ndim == 1 else self.retention[:, None]

    def _size(self, like: np.ndarray) -> np.ndarray:
        return self._size_of if like.ndim == 1 else self._size_of[:, None]

    @property
    def T(self) -> _Transposed:  # noqa: N802 - numpy's name
        return _Transposed(self)

    # ---- products ------------------------------------------------------------------------------
    def __matmul__(self, f: np.ndarray) -> np.ndarray:
        """``P f`` for a vector or each column of an ``m x R`` array."""
        f = np.asarray(f, dtype=float)
        p = self._p(f)
        return p * f + self._spread(self.block_sum((1.0 - p) * f)) / self._size(f)

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """``P^T r``."""
        r = np.asarray(r, dtype=float)
        p = self._p(r)
        return p * r + (1.0 - p) * self._spread(self.block_sum(r)) / self._size(r)

    # ---- entries -------------------------------------------------------------------------------
    def diagonal(self) -> np.ndarray:
        """``P[i, i]``: the chance a value is released as itself."""
        return self.retention + (1.0 - self.retention) / self._size_of

    def off_diagonal(self) -> np.ndarray:
        """Per column ``j``: ``(1 - p_j)/m_b``, its entry in every other row of its block."""
        return (1.0 - self.retention) / self._size_of

    def entry(self, i: int, j: int) -> float:
        block = self.block_of
        if block[i] != block[j]:
            return 0.0
        return float((1.0 - self.retention[j]) / self._size_of[j] + (self.retention[j] if i == j else 0.0))

    def row_extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per released value ``y``: the smallest and the largest chance ``P[y][x]`` over the original values
        ``x`` of ``y``'s block (only records of that block can be released as ``y``), in O(m)."""
        a, b = self.off_diagonal(), self.diagonal()
        lo = np.minimum(b, _per_block_other(a, self, np.minimum, np.inf))
        hi = np.maximum(b, _per_block_other(a, self, np.maximum, -np.inf))
        return lo, hi

    # ---- estimators ----------------------------------------------------------------------------
    def solve(self, observed: np.ndarray) -> np.ndarray:
        """``P^{-1} o`` by Sherman–Morrison per block (``P_b = D + u v^T``, ``D = diag(p)``, ``u = 1/m_b``,
        ``v = 1 - p``); where a block holds values that are never kept, its pseudo-inverse solution
        (:meth:`_solve_with_zeros`), also O(m). A block none of whose values is ever kept is refused."""
        o = np.asarray(observed, dtype=float)
        zero = self.retention <= 0
        never = self.block_sum(zero) > 0
        if never.any():
            return self._solve_with_zeros(o, zero, never)
        p, size = self._p(o), self._size(o)
        denominator = 1.0 + self.block_sum((1.0 - self.retention) / (self._size_of * self.retention))
        d_inv_o = o / p
        correction = self.block_sum((1.0 - p) * d_inv_o) / (denominator if o.ndim == 1 else denominator[:, None])
        return d_inv_o - self._spread(correction) / (size * p)

    def _solve_with_zeros(self, o: np.ndarray, zero: np.ndarray, never: np.ndarray) -> np.ndarray:
        """``P^+ o`` (the Moore–Penrose pseudo-inverse: the least-squares solution of least norm) in O(m).

        In a block with ``k >= 1`` values never kept, each such value's column is ``1/m_b`` everywhere, so
        ``(P f)_z = s / m_b`` for every such ``z`` (``s = sum_j (1 - p_j) f_j``) and ``(P f)_i = p_i f_i + s / m_b``
        for the others. Least squares replaces the ``o_z`` by their mean ``o_0``, which gives ``s``; then
        ``f_i = (o_i - o_0) / p_i`` exactly, and the values never kept share what is left of the block's total
        (``P`` has their differences in its null space: the least-norm solution splits it equally). With
        ``k = 1`` this is ``P^{-1} o``. Blocks without such a value are solved by Sherman–Morrison."""
        if np.any(self.block_sum(zero) == self.sizes):
            raise ParameterError("The perturbation matrix is singular: counts cannot be estimated from it (no value "
                                 "of a block is ever kept, so every released value is a uniform draw).")
        others = RetentionMatrix(np.where(self._spread(never), 1.0, self.retention), self.starts)
        kept = others.solve(o)  # the blocks without a value never kept (the rest is overwritten below)
        flat = o.ndim == 1
        o2 = o[:, None] if flat else o
        z = zero[:, None]
        k = self.block_sum(zero)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            level = self.block_sum(np.where(z, o2, 0.0)) / np.where(k > 0, k, 1.0)  # o_0 per block
            f = np.where(z, 0.0, (o2 - self._spread(level)) / np.where(z, 1.0, self.retention[:, None]))
        rest = (self.block_sum(o2) - self.block_sum(f)) / np.where(k > 0, k, 1.0)
        f = np.where(z, self._spread(rest), f)
        f = np.where(self._spread(never)[:, None], f, kept[:, None] if flat else kept)
        return f[:, 0] if flat else f

    def mle(self, observed: np.ndarray) -> np.ndarray:
        """Maximum-likelihood counts (non-negative, each block's total kept) in closed form, for a matrix that
        keeps every value of a block with one probability (:attr:`block_uniform`).

        Within a block of ``m`` values kept with ``p`` and ``N`` released records, the likelihood's optimality
        conditions give ``f_x = max(0, c o_x - t)`` with ``t = (1 - p) N / (m p)`` and ``c`` such that the ``f``
        add up to ``N`` (a water-filling; ``c`` found by Newton's method, O(m) a step). It is the point
        iterative Bayes converges to (the tests compare them)."""
        if not self.block_uniform:
            raise ParameterError("The closed-form estimate needs one retention per block.")
        o = np.asarray(observed, dtype=float)
        flat = o.ndim == 1
        o2 = o[:, None] if flat else o
        p_block = self.retention[self.starts][:, None]
        total = self.block_sum(o2)  # blocks x R
        singular = np.broadcast_to(p_block <= 0, total.shape)  # a block never kept: the likelihood is flat
        with np.errstate(divide="ignore", invalid="ignore"):
            t_block = np.where(singular, 0.0, (1.0 - p_block) * total / (self.sizes[:, None] * p_block))
            # c from the right by Newton's method on the convex, increasing sum of max(0, c o_x - t): start with
            # every value in the support (c too large), then each step solves the sum on the current support.
            # c never grows (a rounding error could otherwise make a value on the edge enter and leave forever),
            # so the support only shrinks, and the step that keeps its size is the last (a few steps, each O(m)).
            c_block = np.where(total > 0, (total + t_block * self.sizes[:, None]) / total, 0.0)
            size = None
            for _ in range(self.m + 1):
                support = (o2 * self._spread(c_block) > self._spread(t_block)) & (o2 > 0)
                k = self.block_sum(support)
                mass = self.block_sum(np.where(support, o2, 0.0))
                c_block = np.minimum(c_block, np.where(mass > 0, (total + t_block * k) / mass, 0.0))
                if size is not None and np.array_equal(k, size):
                    break
                size = k
        f = np.maximum(0.0, self._spread(c_block) * o2 - self._spread(t_block))
        if singular.any():  # iterative Bayes stays where it starts: every value of the block alike
            f = np.where(self._spread(singular), self._spread(total / self.sizes[:, None]), f)
        return f[:, 0] if flat else f

    # ---- the dense reference -------------------------------------------------------------------
    def to_dense(self) -> np.ndarray:
        """The dense matrix: for tests and small domains only (refused above :data:`DENSE_LIMIT` values, where it
        would take gigabytes: a code path that asks for it is a defect)."""
        if self.m > DENSE_LIMIT:
            raise ParameterError(f"A dense {self.m:,} x {self.m:,} perturbation matrix was asked for; this domain is "
                                 "handled by its parameters only.")
        dense = np.zeros((self.m, self.m))
        ends = np.append(self.starts[1:], self.m)
        for start, end in zip(self.starts, ends):
            size = end - start
            dense[start:end, start:end] = np.tile((1.0 - self.retention[start:end]) / size, (size, 1))
        dense[np.diag_indices(self.m)] += self.retention
        return dense

    def __array__(self, dtype=None, copy=None) -> np.ndarray:  # np.asarray(matrix) still works on small domains
        dense = self.to_dense()
        return dense if dtype is None else dense.astype(dtype)


def never_kept_note(labels: list[str], retention: np.ndarray, shown: int = 12) -> str:
    """What a plan whose retention is 0 for some values means, in words ("" when every value is sometimes kept):
    their records are always replaced, and two or more of them can be estimated only together (their columns of
    ``P`` are equal, so ``P`` has no inverse and the estimates split their total equally: the pseudo-inverse)."""
    never = np.flatnonzero(np.asarray(retention, dtype=float) <= 0)
    if not len(never):
        return ""
    names = ", ".join(repr(str(labels[i])) for i in never[:shown])
    more = f" and {len(never) - shown:,} more" if len(never) > shown else ""
    kind = "value is" if len(never) == 1 else "values are"
    text = (f"{len(never):,} {kind} never kept (retention 0): {names}{more}. Every record holding one is released "
            f"as a value drawn uniformly from the column's {len(retention):,} values, never as its own except by "
            "that draw's chance.")
    if len(never) > 1:
        text += (" The release therefore tells how many records hold one of them altogether, not how many hold "
                 "each: P has no inverse, and the estimates give each of them an equal share of that total (the "
                 "least-squares solution of least norm, numpy.linalg.pinv(P) @ o); only their sum is meaningful.")
    return text


def _per_block_other(a: np.ndarray, matrix: RetentionMatrix, pick: np.ufunc, empty: float) -> np.ndarray:
    """Per value ``y``: ``pick`` (np.minimum or np.maximum) of ``a_x`` over the other values ``x`` of its block
    (``empty`` for a block of one value), in O(m)."""
    sign = 1.0 if pick is np.minimum else -1.0
    key = sign * a
    block = matrix.block_of
    # the best and second-best of each block, by sorting on (block, key)
    order = np.lexsort((key, block))
    first = order[matrix.starts]
    second_at = np.minimum(matrix.starts + 1, np.append(matrix.starts[1:], matrix.m) - 1)
    second = order[second_at]
    best = sign * key[first]
    runner = np.where(matrix.sizes > 1, sign * key[second], empty)
    out = matrix._spread(best)
    is_first = np.zeros(matrix.m, dtype=bool)
    is_first[first] = True
    return np.where(is_first, matrix._spread(runner), out)


@dataclass(frozen=True)
class _Transposed:
    """``P^T`` of a :class:`RetentionMatrix`, for the estimators' ``matrix.T @ r``."""

    matrix: RetentionMatrix

    def __matmul__(self, r: np.ndarray) -> np.ndarray:
        return self.matrix.rmatvec(r)
