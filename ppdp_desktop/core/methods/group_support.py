"""Which shares of a group the release *shows*: an interval for every (group, value) share at once, valid for
groups of any size (Qt-free, vectorized).

Where the shares are estimated from randomized values, a group's largest estimated share is the one the noise
made largest: in a group of a few records kept with a small probability it is often 100 %, whatever the group
holds. The report therefore counts a group above a bound only where the lower end of its interval is above it,
and shows the example group's share with its interval.

The intervals hold, with probability at least ``LEVEL``, for every (group, value) cell at once. Each is made at
``1 - (1 - LEVEL) / cells`` (Bonferroni) from Bernstein's inequality, not from a normal approximation: the
unbiased (inverted) estimate of a cell's count is a sum of independent terms, one per record, ``w(y_i)``, the
weight of the record's released value; each term lies in a known range ``R`` and has a variance at most ``V``,
the largest over the values the record can truly hold (both from the published matrices only). Then ``P(sum -
E sum >= t) <= exp(-t^2 / (2 (n V + R t / 3)))`` for any number of records, so a group of one record kept with
probability 5 % (weight 21) is not "shown" to hold anything; the multinomial variance estimated from the
group's own released counts is 0 there (benchmarks/README.md).

- A perturbed column (:func:`perturbed_bounds`): the group's size ``n`` is exact, the count of ``v`` is ``a =
  sum_i w_v(e_i)`` with ``w_v = P^-T e_v`` (per block ``P^T = diag(p) + (1 - p) 1^T / m_b``, Sherman-Morrison:
  ``w_v(e) = [e = v] / p_v - (1 - p_e) / p_e * kappa_v`` within ``v``'s block, 0 outside it); the share lies in
  ``(a -+ t) / n``.
- Randomized response (:func:`randomized_bounds`): the group's size ``b`` is estimated too when the
  quasi-identifiers were randomized, so the share ``s`` is bounded as Fieller's is, by testing ``a - s b = 0``
  with the same inequality on a grid of ``s`` (``a - s b`` is a sum over records of ``prod_k f_k`` along the
  axes, so its range and variance bounds are products of one factor per axis).
"""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.progress import CancelToken

#: the confidence claimed for every (group, value) interval at once
LEVEL = 0.95
#: the grid of shares randomized response's intervals are found on (their ends are rounded outward to it)
GRID = np.linspace(0.0, 1.0, 201)
#: a sub-table of at most this many values is inverted densely (any retentions); larger ones in closed form
DENSE_BLOCK = 2000
#: dense products are made this many cells at a time
CHUNK_CELLS = 2_000_000
#: :meth:`BlockInverse.weights` gathers from the whole ``W`` of a domain of at most this many (entry, entry) pairs
DENSE_PAIRS = 1 << 20
#: randomized response: a stratum of at least this many records has its variance estimated from the table
POOLED = 500


def log_term(cells: int, level: float = LEVEL) -> float:
    """``log(2 cells / (1 - level))``: each side of each of ``cells`` intervals fails with probability at most
    ``(1 - level) / (2 cells)``."""
    return float(np.log(2.0 * max(int(cells), 1) / (1.0 - level)))


def deviation(variance, spread, log: float) -> np.ndarray:
    """The ``t`` with ``exp(-t^2 / (2 (V + R t / 3))) = exp(-log)``: how far a sum of independent terms of total
    variance at most ``V``, each within ``R`` of its mean, strays from its mean on one side (Bernstein)."""
    third = np.asarray(spread, dtype=float) * log / 3.0
    return third + np.sqrt(third * third + 2.0 * np.maximum(np.asarray(variance, dtype=float), 0.0) * log)


class BlockInverse:
    """``W = P^-T`` of a :class:`~ppdp_desktop.core.privacy.structured.RetentionMatrix`, block by block (``W[e,
    t]``: the weight of a record released as entry ``e`` in the unbiased count of entry ``t``; 0 across blocks):
    dense for a block of at most :data:`DENSE_BLOCK` values (any retentions, a value never kept included), else
    by Sherman-Morrison (``W[e, t] = [e = t] / p_t - (1 - p_e) / p_e * kappa_t``, ``kappa_t = 1 / (p_t m_b D_b)``,
    ``D_b = 1 + sum_b (1 - p) / (m_b p)``), which needs every value of the block kept with some probability."""

    def __init__(self, matrix) -> None:
        self.matrix = matrix
        self._whole: np.ndarray | None = None  # every W[e, t], made on first use (:meth:`weights`)
        p = np.asarray(matrix.retention, dtype=float)
        self.block = matrix.block_of
        self.local = np.arange(matrix.m) - np.repeat(matrix.starts, matrix.sizes)
        self.dense: dict[int, np.ndarray] = {}
        for b, (start, size) in enumerate(zip(matrix.starts, matrix.sizes)):
            part = p[start:start + size]
            if size <= DENSE_BLOCK:
                try:
                    dense = np.diag(part) + np.outer(np.full(size, 1.0 / size), 1.0 - part)
                    self.dense[b] = np.linalg.inv(dense).T
                except np.linalg.LinAlgError:
                    raise ParameterError("the perturbation matrix is singular: shares cannot be estimated from it") from None
            elif np.any(part <= 0.0):
                raise ParameterError("a value is never kept, so its share cannot be estimated without bias")
        sizes = np.repeat(matrix.sizes, matrix.sizes).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.inv_p = np.where(p > 0, 1.0 / p, 0.0)
            self.r = np.where(p > 0, (1.0 - p) / p, 0.0)
            denominator = 1.0 + matrix.block_sum(self.r / sizes)
            self.kappa = np.where(p > 0, self.inv_p / (sizes * np.repeat(denominator, matrix.sizes)), 0.0)

    def weights(self, e: np.ndarray, t: np.ndarray) -> np.ndarray:
        """``W[e, t]`` element-wise (0 where ``e`` and ``t`` lie in different blocks); for more pairs than a
        domain of at most :data:`DENSE_PAIRS` (entries x entries) has, gathered from the whole ``W``, computed
        once by the same element-wise formula."""
        e, t = np.asarray(e, dtype=np.int64), np.asarray(t, dtype=np.int64)
        m = int(self.matrix.m)
        if m * m <= DENSE_PAIRS and len(e) > m * m:
            if self._whole is None:
                every = np.arange(m, dtype=np.int64)
                self._whole = self._weights(np.repeat(every, m), np.tile(every, m)).reshape(m, m)
            return self._whole[e, t]
        return self._weights(e, t)

    def _weights(self, e: np.ndarray, t: np.ndarray) -> np.ndarray:
        """:meth:`weights`, computed pair by pair."""
        out = (e == t) * self.inv_p[t] - self.r[e] * self.kappa[t]
        out = np.where(self.block[e] == self.block[t], out, 0.0)
        for b, w in self.dense.items():
            here = (self.block[e] == b) & (self.block[t] == b)
            out[here] = w[self.local[e[here]], self.local[t[here]]]
        return out

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per target entry ``t``: ``(own, other, R)``, the variance of ``W[y, t]`` for one record truly holding
        ``t`` (``y`` drawn by ``P``), at least its largest variance for a record of ``t``'s block holding another
        value, and at least the range of ``W[., t]`` over the block (exact for a dense block)."""
        p = np.asarray(self.matrix.retention, dtype=float)
        sizes = np.repeat(self.matrix.sizes, self.matrix.sizes).astype(float)
        starts, counts = self.matrix.starts, self.matrix.sizes
        per_block = lambda x, f: np.repeat(f.reduceat(x, starts), counts)  # noqa: E731
        diagonal = self.inv_p - self.r * self.kappa  # W[t, t]; every other y of the block: -r_y kappa_t
        squares = diagonal ** 2 + self.kappa ** 2 * (per_block(self.r * self.r, np.add) - self.r * self.r)
        own = p * diagonal ** 2 + (1.0 - p) * squares / sizes
        other = (self.kappa ** 2 * per_block(p * self.r * self.r, np.maximum)
                 + per_block(1.0 - p, np.maximum) * squares / sizes)
        spread = diagonal + self.kappa * per_block(self.r, np.maximum)
        for b, w in self.dense.items():
            start, size = starts[b], counts[b]
            part, w2 = p[start:start + size], w * w
            expected = part[:, None] * w2 + ((1.0 - part)[:, None] / size) * w2.sum(axis=0)[None, :]  # [x, t]
            own[start:start + size] = np.diag(expected)
            np.fill_diagonal(expected, -np.inf)
            other[start:start + size] = np.maximum(expected.max(axis=0), 0.0) if size > 1 else 0.0
            spread[start:start + size] = w.max(axis=0) - w.min(axis=0)
        return np.maximum(own, 0.0), other, spread

    def counts(self, group: np.ndarray, entry: np.ndarray, o: np.ndarray, pair_group: np.ndarray,
               pair_entry: np.ndarray, n_groups: int) -> np.ndarray:
        """``sum_e o[g, e] W[e, t]`` for each ``(g, t)`` pair, from the released counts ``o`` of ``(group, entry)``
        (each block's records only count toward its own entries)."""
        m = self.matrix.m
        nb = self.matrix.n_blocks
        gb_key, gb_index = np.unique(group * nb + self.block[entry], return_inverse=True)
        r_gb = np.bincount(gb_index, weights=o * self.r[entry])
        cells = group * m + entry
        out = (_lookup(cells, o, pair_group * m + pair_entry) * self.inv_p[pair_entry]
               - self.kappa[pair_entry] * _lookup(gb_key, r_gb, pair_group * nb + self.block[pair_entry]))
        for b, w in self.dense.items():
            here = self.block[pair_entry] == b
            if not here.any():
                continue
            mine = self.block[entry] == b
            rows, index = np.unique(group[mine], return_inverse=True)
            step = max(1, CHUNK_CELLS // max(w.shape[0], 1))
            want = np.flatnonzero(here)
            at = np.searchsorted(rows, pair_group[want])
            found = (at < len(rows)) & (rows[np.minimum(at, len(rows) - 1)] == pair_group[want])
            values = np.zeros(len(want))
            for first in range(0, len(rows), step):
                chosen = (index >= first) & (index < first + step)
                dense = np.zeros((min(step, len(rows) - first), w.shape[0]))
                np.add.at(dense, (index[chosen] - first, self.local[entry[mine][chosen]]), o[mine][chosen])
                block_sums = dense @ w  # [group, t]
                inside = found & (at >= first) & (at < first + step)
                values[inside] = block_sums[at[inside] - first, self.local[pair_entry[want][inside]]]
            out[want] = values
        return out


def perturbed_bounds(ids: np.ndarray, entries: np.ndarray, matrix, entry_values: np.ndarray | None,
                     n_values: int, n_groups: int, log: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(group, value, low, high)`` for every (group, value) seen among the released entries: the interval of
    that value's share of the group (clipped to [0, 1]). ``ids``: each record's group (-1: left out);
    ``entries``: its released entry; ``entry_values``: each entry's value (None: the entries are the values)."""
    m = matrix.m
    keep = ids >= 0
    cells, counts = np.unique(ids[keep] * m + entries[keep], return_counts=True)
    group, entry = np.divmod(cells, m)
    o = counts.astype(float)
    n_g = np.bincount(group, weights=o, minlength=n_groups)
    inverse = BlockInverse(matrix)
    own, other, spread = inverse.bounds()
    block = matrix.block_of
    gb_key, gb_index = np.unique(group * matrix.n_blocks + block[entry], return_inverse=True)
    n_gb = np.bincount(gb_index, weights=o)
    value_of = np.arange(m) if entry_values is None else np.asarray(entry_values, dtype=np.int64)
    # every (group, value) seen, with every entry of that value (one per sub-table that holds it)
    pairs = np.unique(group * n_values + value_of[entry])
    pg, pv = np.divmod(pairs, n_values)
    by_value = np.argsort(value_of, kind="stable")
    first = np.searchsorted(value_of[by_value], np.arange(n_values + 1))
    per = first[pv + 1] - first[pv]
    which = np.repeat(np.arange(len(pairs)), per)
    e = by_value[first[pv][which] + np.arange(len(which)) - np.repeat(np.cumsum(per) - per, per)]
    g = pg[which]
    n_b = _lookup(gb_key, n_gb, g * matrix.n_blocks + block[e])
    a = np.bincount(which, weights=inverse.counts(group, entry, o, g, e, n_groups), minlength=len(pairs))
    # If the share of the value is s, the records' variances add up to at most V0 + s n delta: every record
    # is at most "other", the s n holding the value at most "own" (in their own sub-tables).
    v0 = np.bincount(which, weights=n_b * other[e], minlength=len(pairs))
    delta = np.zeros(len(pairs))
    np.maximum.at(delta, which, np.where(n_b > 0, np.maximum(own[e] - other[e], 0.0), 0.0))
    reach = np.zeros(len(pairs))
    np.maximum.at(reach, which, np.where(n_b > 0, spread[e], 0.0))
    size = np.maximum(n_g[pg], 1e-300)
    low, high = share_bounds(a, size, v0, delta, reach, log)
    return pg, pv, low, high


def share_bounds(a, n, v0, delta, spread, log: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval of a share ``s = A / n`` (``n`` exact) from ``a``, an unbiased estimate of ``A`` made of
    independent terms each within ``spread`` of its mean, whose variances add up to at most ``v0 + s n delta``
    when the share is ``s``: every ``s`` that Bernstein's inequality does not reject at ``exp(-log)`` on either
    side. Rejection is monotone in ``s`` on each side, so the ends solve a quadratic: with ``c = R log / 3``, ``u
    = a - s n`` is rejected above ``c`` and ``(c - log delta) + sqrt((c - log delta)^2 + 2 log (v0 + a delta))``,
    and ``s n - a`` above the same with ``c + log delta``."""
    a, n, v0, delta = (np.asarray(x, dtype=float) for x in (a, n, v0, delta))
    c = np.asarray(spread, dtype=float) * log / 3.0
    base = np.maximum(v0 + a * delta, 0.0)
    below = np.maximum((c - log * delta) + np.sqrt((c - log * delta) ** 2 + 2.0 * log * base), c)
    above = (c + log * delta) + np.sqrt((c + log * delta) ** 2 + 2.0 * log * base)
    return np.clip((a - below) / n, 0.0, 1.0), np.clip((a + above) / n, 0.0, 1.0)


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` at ``wanted`` among the sorted ``keys`` (0 where absent)."""
    if not len(keys):
        return np.zeros(len(wanted))
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[at] == wanted, values[at], 0.0)


def randomized_bounds(observed: np.ndarray, matrices: list[np.ndarray | None], log: float,
                      cancel: CancelToken | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's interval ``(low, high)`` of its share of its group (on :data:`GRID`, rounded outward), for a
    released table ``observed`` (one axis per quasi-identifier, the sensitive column last) whose axes were
    randomized with the published ``matrices`` (``M[c, x]``: the chance that ``x`` is released as ``c``; None:
    not randomized); the records of each combination of the other axes (a stratum) are counted exactly.

    ``a - s b`` is a sum over the stratum's records of ``prod_k f_k(c_k)`` (``f_k = M_k^-1[t_k, .]`` along a
    randomized quasi-identifier, ``M_S^-1[v, .] - s`` along the sensitive column), so a record truly at ``x`` has
    variance at most ``prod_k F_k[t_k, x_k]`` with ``F_k = (f_k^2) M_k``. The variances add up to at most:
    with no quasi-identifier randomized (the stratum is the group), ``n (s own + (1 - s) other)`` when the share
    is ``s`` (``own``: ``F_S[v, v]``, ``other``: its largest off the diagonal), for groups of any size; else, in
    a stratum of at least :data:`POOLED` records, the estimated table pushed through the ``F_k`` (the variance
    of a sum over that many records, estimated from all of them), and in a smaller one its size times the largest
    ``prod_k F_k``. ``cancel`` is checked at each step of the grid (a few hundredths of a second each on a table
    of millions of cells, 15 s in all: issue 31)."""
    from ppdp_desktop.core.methods.rr.estimate import project_to_simplex
    from ppdp_desktop.core.methods.rr.risk import apply_axes

    o = np.asarray(observed, dtype=float)
    inverses = [None if m is None else np.linalg.inv(np.asarray(m, dtype=float)) for m in matrices]
    a = apply_axes(o, inverses)
    b = np.broadcast_to(a.sum(axis=-1, keepdims=True), a.shape)
    squares = [None if m is None or inv is None else (inv ** 2) @ np.asarray(m, dtype=float)
               for m, inv in zip(matrices, inverses)]
    quasi_square = np.ones(o.shape[:-1])  # prod over the quasi-identifier axes of the largest F_k ...
    quasi_reach = np.ones(o.shape[:-1])  # ... and of the largest |f_k|
    for k, (square, inverse) in enumerate(zip(squares[:-1], inverses[:-1])):
        if square is None or inverse is None:  # None together: the axis is not randomized
            continue
        shape = [1] * (o.ndim - 1)
        shape[k] = -1
        quasi_square = quasi_square * square.max(axis=1).reshape(shape)
        quasi_reach = quasi_reach * np.abs(inverse).max(axis=1).reshape(shape)
    quasi_square, quasi_reach = quasi_square[..., None], quasi_reach[..., None]
    randomized = tuple(i for i, m in enumerate(matrices) if m is not None)
    quasi_randomized = any(m is not None for m in matrices[:-1])
    stratum = o.sum(axis=randomized, keepdims=True)  # records per combination of the other axes
    n = np.broadcast_to(stratum.sum(axis=-1, keepdims=True) if matrices[-1] is None else stratum, a.shape)
    pooled = quasi_randomized & (n >= POOLED)
    # the estimated table pushed through every quasi-identifier's F_k (the sensitive axis' depends on s)
    spread_table = apply_axes(project_to_simplex(a), [*squares[:-1], None]) if pooled.any() else None
    s_matrix = None if matrices[-1] is None else np.asarray(matrices[-1], dtype=float)
    s_inverse = inverses[-1]  # None exactly when s_matrix is
    identity = np.eye(o.shape[-1])

    def bounds_at(s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(V0, V1, R)``: the variance bound ``V0 + s V1`` of ``a - s b`` (V0 convex in s, V1 >= 0) and its
        terms' range bound."""
        if s_matrix is not None and s_inverse is not None:
            h = s_inverse - s  # h[v, c]: the sensitive axis' factor for target v
            spread_s = np.abs(h).max(axis=1)
            h_square = (h ** 2) @ s_matrix  # [v, x]
        else:
            spread_s = np.full(o.shape[-1], max(1.0 - s, s))
            h_square = (1.0 - s) ** 2 * identity + s * s * (1.0 - identity)
        spread = 2.0 * quasi_reach * spread_s
        if not quasi_randomized:  # the stratum is the group: s n records hold v
            own = np.diag(h_square)
            other = np.where(identity > 0, -np.inf, h_square).max(axis=1) if len(own) > 1 else np.zeros(1)
            return n * np.maximum(other, 0.0), n * np.maximum(own - np.maximum(other, 0.0), 0.0), spread
        worst = n * quasi_square * h_square.max(axis=1)
        if spread_table is not None:
            worst = np.where(pooled, spread_table @ h_square.T, worst)
        return worst, np.zeros(a.shape), spread

    # Each step [s_j, s_j+1] of the grid is rejected as a whole: a - s b is monotone in s, V0 and R are convex
    # (largest at an end) and s V1 is at most s_j+1 V1.
    clear = b > 0  # a group whose size is not estimated above 0 gets [0, 1]
    low, last_open = np.zeros(a.shape), np.full(a.shape, -1, dtype=np.int64)
    rising = clear.copy()
    previous = bounds_at(float(GRID[0]))
    for j in range(len(GRID) - 1):
        if cancel is not None:
            cancel.check()
        current = bounds_at(float(GRID[j + 1]))
        variance = np.maximum(previous[0], current[0]) + GRID[j + 1] * np.maximum(previous[1], current[1])
        t = deviation(variance, np.maximum(previous[2], current[2]), log)
        rising &= a - GRID[j + 1] * b > t  # the share is above the whole step
        low = np.where(rising, GRID[j + 1], low)
        last_open = np.where(clear & (GRID[j] * b - a > t), last_open, j)  # not shown below the step
        previous = current
    return low, np.where(clear, GRID[np.minimum(last_open + 1, len(GRID) - 1)], 1.0)
