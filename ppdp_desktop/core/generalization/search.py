"""The walk over the generalization lattice that finds the optimal node (see :mod:`.lattice` for the goal).

Order and stop: the loss of a node is at least its bound ``sum(h_i / H_i) / |QI|`` (its loss with nothing
suppressed), so nodes are visited in increasing bound (then level vector) and the walk stops at the first
node whose bound is above the best loss found; losses are exact integers (in units of
``1 / (n * |QI| * lcm(H))``), so ties are real ties.

Monotonicity (levels nest, so classes only merge as levels rise): every generalization of a feasible node
is feasible and suppresses no more; every specialization of an infeasible node is infeasible. Each node
checked tags the lattice accordingly; a tagged-infeasible node is skipped, and one below a node that
suppresses nothing is known to suppress nothing. When a node turns out infeasible, the walk also
binary-searches the chain from it to the top for the highest infeasible node on it, whose tag then covers
a large part of the nodes still to come (on sparse data most nodes below the optimum are infeasible).

Criteria (:mod:`.criteria`): with a :class:`~.judge.Judge`, a node's suppressed records are those of the classes
the criteria fail, and the aggregated table carries the sensitive column as a last column kept at level 0 (its
classes are then grouped by the quasi-identifiers only). The tags above are used only when the criteria are
monotone with suppression (:meth:`~.criteria.Criteria.monotone`); otherwise every node within the bound is checked.

Cost: a node's classes are rolled up from the smallest cached table of a node below it (the aggregated
records at worst); cached tables are bounded to a few times the aggregated table and dropped oldest first.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.judge import Judge
from ppdp_desktop.core.generalization.table import ClassTable, mixed_key
from ppdp_desktop.core.progress import CancelToken, Progress

MAX_NODES = 2_000_000  # lattices beyond this would need too much memory for the tags
_CACHE_FACTOR = 4  # cached tables may hold this many times the aggregated table's rows
_PROGRESS_EVERY = 64  # nodes between progress reports and cancellation checks


class LatticeWalk:
    """One search: the node grid, the tags, the cache of class tables, and the best node so far.

    Parameters
    ----------
    base : ClassTable
        The aggregated records (the bottom node).
    hierarchies : sequence of Hierarchy
        One per quasi-identifier, in the order of the level vectors.
    k, limit : int
        The class size required and the largest number of records that may be suppressed.
    weights : sequence of int
        Each QI's loss per level, ``scale / H_i`` (0 for a height of 0).
    scale : int
        ``lcm`` of the heights: losses are integers in units of ``1 / (n * |QI| * scale)``.
    judge : Judge, optional
        Criteria beyond k (then ``k`` is not used); ``carried`` is the sensitive column's hierarchy when ``base``
        carries that column last, and ``monotone`` whether the criteria allow tagging.
    """

    def __init__(self, base: ClassTable, hierarchies: Sequence[Hierarchy], k: int, limit: int,
                 weights: Sequence[int], scale: int, judge: Judge | None = None, carried: Hierarchy | None = None,
                 monotone: bool = True) -> None:
        heights = [h.height for h in hierarchies]
        shape = [h + 1 for h in heights]
        if int(np.prod(shape, dtype=np.float64)) > MAX_NODES:
            raise ParameterError(f"The lattice has {int(np.prod(shape, dtype=np.float64)):,} nodes (levels "
                                 f"{' x '.join(map(str, shape))}); use fewer quasi-identifiers or levels "
                                 f"(at most {MAX_NODES:,} nodes).")
        self.base, self.hierarchies, self.k, self.limit = base, list(hierarchies), k, limit
        self.n, self.q, self.scale, self.shape = base.n_records, len(heights), scale, shape
        self.grid: np.ndarray = np.indices(shape, dtype=np.int16).reshape(self.q, -1).T
        self.bound: np.ndarray = self.grid.astype(np.int64) @ np.array(weights, dtype=np.int64)
        self.suppressed = np.full(len(self.grid), -1, dtype=np.int64)  # exact, where computed
        self.infeasible = np.zeros(len(self.grid), dtype=bool)  # tagged or computed
        self.feasible = np.zeros(len(self.grid), dtype=bool)
        self.nothing = np.zeros(len(self.grid), dtype=bool)  # known to suppress nothing
        self.judge, self.monotone = judge, monotone
        self.tail: tuple[int, ...] = (0,) if carried is not None else ()
        self.table_hierarchies = [*hierarchies, *([carried] if carried is not None else [])]
        self.cache: dict[tuple[int, ...], ClassTable] = {base.levels: base}
        self._base_columns: dict[tuple[int, int], np.ndarray] = {}
        self.checked = 0
        self.best: tuple[int, int, tuple[int, ...]] | None = None

    def run(self, progress: Progress, cancel: CancelToken | None) -> tuple[int, int, tuple[int, ...]] | None:
        """Visit the nodes in bound order; the best ``(loss, suppressed, levels)`` (None if none is feasible)."""
        order = np.lexsort((*(self.grid[:, j] for j in reversed(range(self.q))), self.bound))
        for visited, node in enumerate(order.tolist()):
            b = int(self.bound[node])
            if self.best is not None and (self.n * b > self.best[0] or (self.n * b == self.best[0] and self.best[1] == 0)):
                break  # bounds only grow from here; an equal bound with nothing suppressed loses on order
            if visited % _PROGRESS_EVERY == 0:
                if cancel is not None:
                    cancel.check()
                progress(visited / len(order), "searching the generalization lattice")
            if self.infeasible[node]:
                continue
            s = 0 if self.nothing[node] else self.evaluate(node)
            if s > self.limit:
                if self.monotone:
                    self._climb(node)
                continue
            candidate = ((self.n - s) * b + s * self.q * self.scale, s, self.levels(node))
            self.best = candidate if self.best is None or candidate < self.best else self.best
        return self.best

    def levels(self, node: int) -> tuple[int, ...]:
        return tuple(int(h) for h in self.grid[node])

    def evaluate(self, node: int) -> int:
        """The records suppressed at ``node``, rolled up from the smallest cached table below it; tags."""
        if self.suppressed[node] >= 0:
            return int(self.suppressed[node])
        levels = self.levels(node) + self.tail
        below = [t for lv, t in self.cache.items() if all(a <= b for a, b in zip(lv, levels))]
        source = min(below, key=len)
        columns = [self._base_column(i, h) for i, h in enumerate(levels)] if source is self.base else None
        table = source.rollup(levels, self.table_hierarchies, columns)
        self.checked += 1
        s = self.suppressed[node] = self._suppressed(table)
        self._remember(table)
        if s > self.limit:
            if self.monotone:
                self.infeasible |= (self.grid <= self.grid[node]).all(axis=1)
        else:
            up = (self.grid >= self.grid[node]).all(axis=1)
            if self.monotone:
                self.feasible |= up
            if s == 0:  # every class passes; merged classes pass too (every criterion is monotone without suppression)
                self.nothing |= up
        return int(s)

    def _suppressed(self, table: ClassTable) -> int:
        """The records the criteria suppress at ``table``'s node (k alone: those of classes smaller than k)."""
        if self.judge is None:
            return table.suppressed(self.k)
        radixes = [len(h.labels(lv)) for h, lv in zip(self.hierarchies, table.levels)]
        key, _, _ = mixed_key(table.codes[: self.q], radixes)
        classes, uniques = pd.factorize(key)
        values = table.codes[self.q] if self.tail else None
        fail = self.judge.suppressed_classes(classes, len(uniques), table.counts.astype(np.float64), values)
        return int(table.counts[fail[classes]].sum())

    def _base_column(self, i: int, level: int) -> np.ndarray:
        """The aggregated records' codes of QI ``i`` at ``level``, kept: the base is the most used source."""
        key = (i, level)
        if key not in self._base_columns:
            self._base_columns[key] = self.base.generalized(i, level, self.table_hierarchies[i])
        return self._base_columns[key]

    def _climb(self, node: int) -> None:
        """Binary-search the chain from infeasible ``node`` to the top (raising the QI with the most levels
        left, first one on ties) for its highest infeasible node; evaluating it tags everything below."""
        chain, levels = [node], [int(h) for h in self.grid[node]]
        while any(h < size - 1 for h, size in zip(levels, self.shape)):
            i = max(range(self.q), key=lambda j: (self.shape[j] - 1 - levels[j], -j))
            levels[i] += 1
            chain.append(int(np.ravel_multi_index(levels, self.shape)))
        lo, hi = 0, len(chain) - 1  # chain[lo] infeasible; chain[hi] (the top) feasible
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.infeasible[chain[mid]] or (not self.feasible[chain[mid]] and self.evaluate(chain[mid]) > self.limit):
                lo = mid
            else:
                hi = mid

    def _remember(self, table: ClassTable) -> None:
        self.cache[table.levels] = table
        budget = _CACHE_FACTOR * max(len(self.base), 1 << 14)
        for levels in list(self.cache):
            if sum(len(t) for t in self.cache.values()) <= budget:
                break
            if levels != self.base.levels and levels != table.levels:
                del self.cache[levels]
