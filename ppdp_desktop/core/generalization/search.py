"""The walk over the generalization lattice that finds the optimal node (see :mod:`.lattice` for the goal).

The lattice is the box of level vectors between each quasi-identifier's lowest and highest allowed level
(:class:`~ppdp_desktop.core.generalization.metrics.Utility`).

Order and stop: for the cell metrics (precision, loss, entropy) a node's loss is at least its bound, its loss
with nothing suppressed (:meth:`~ppdp_desktop.core.generalization.metrics.Scorer.bounds`), which grows with
the levels; nodes are visited in increasing bound (then level vector) and the walk stops at the first node
whose bound is above the best loss found (by a float margin, so exact ties are still compared on their second
measure). Discernibility and AECS have no such bound: every node not tagged infeasible is scored.

Monotonicity (levels nest, so classes only merge as levels rise): every generalization of a feasible node
is feasible; every specialization of an infeasible node is infeasible. Each node checked tags the lattice
accordingly (predictive tagging) and a tagged-infeasible node is skipped. Before a node not yet tagged is rolled up,
the walk binary-searches the chain from it to the top for the highest infeasible node on it, whose tag then covers
that node and a large part of the nodes still to come (on sparse data most nodes below the optimum are infeasible,
and a node higher up has a smaller table); the node itself is rolled up only when the chain shows nothing above it
infeasible. Before that chain, the walk probes the node's joins with cached infeasible nodes (Flash-like: a join is
above such a node, near the border, and is rolled up from its small table instead of from the aggregated records): one
found infeasible tags the node (:meth:`LatticeWalk._probe_joins`).

Criteria (:mod:`.criteria`): a node's suppressed records are those :class:`~.judge.NodeCheck` says (classes
smaller than k, or failing the criteria, whose class tables then carry the sensitive column last). The tags above
are used only when the criteria are monotone with suppression (:meth:`~.criteria.Criteria.monotone`); otherwise
every node within the bound is checked.

The few best (``keep``): the walk may keep the ``keep`` best nodes rather than the best alone, for the custodian to see
the alternatives (:mod:`.alternatives`); it then stops at the first bound above the ``keep``-th best loss. The best
node is the same whatever ``keep``: the nodes visited beyond the usual stop all have a bound, so a loss, above it.

Cost: a node's classes are rolled up from the smallest cached table of a node below it (the aggregated
records at worst); cached tables are bounded to a few times the aggregated table and dropped largest first (a small
table is the cheap source of many nodes above it; on sparse data the large ones near the bottom are rarely reused).
A cached table keeps its keys and its counts in the smallest type, not what a rollup from it builds
(:meth:`~.table.ClassTable.compact`: 5 to 8 bytes a class instead of up to 28), so that four times as many rows are kept
in about the same memory as before (issue 34: on sparse data a node's source is then more often a small cached table
than the aggregated records).
"""
from __future__ import annotations

import bisect
import math
import operator
from collections.abc import Sequence

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.generalization.judge import NodeCheck
from ppdp_desktop.core.generalization.metrics import Score, Scorer
from ppdp_desktop.core.generalization.table import ClassTable
from ppdp_desktop.core.progress import CancelToken, Progress

MAX_NODES = 2_000_000  # lattices beyond this would need too much memory for the tags
_CACHE_FACTOR = 32  # cached tables may hold this many times the aggregated table's rows
_JOIN_REACH = 2  # joins probed before a node's chain: at most this many levels above the node
_JOIN_TRIES = 10  # ... and at most this many of them
_JOIN_SHARE = 2  # ... rolled up from tables of at most this share (1/2) of the node's own source
_PROGRESS_EVERY = 64  # nodes between progress reports and cancellation checks


class LatticeWalk:
    """One search: the node grid, the tags, the cache of class tables, and the best node so far.

    Parameters
    ----------
    base : ClassTable
        The aggregated records (the bottom node).
    check : NodeCheck
        The quasi-identifiers' hierarchies (in the order of the level vectors) and what a node suppresses.
    limit : int
        The largest number of records that may be suppressed.
    scorer : Scorer
        The metric: bounds and scores of nodes.
    low, high : sequence of int, optional
        The lowest and highest level of each quasi-identifier (default: the whole hierarchy).
    monotone : bool, default True
        Whether feasibility only grows with the levels, so that the lattice may be tagged.
    keep : int, default 1
        How many of the best feasible nodes to keep (:attr:`ranked`, best first); the first is :attr:`best`.
    """

    def __init__(self, base: ClassTable, check: NodeCheck, limit: int, scorer: Scorer,
                 low: Sequence[int] | None = None, high: Sequence[int] | None = None, monotone: bool = True,
                 keep: int = 1) -> None:
        hierarchies = check.hierarchies
        low = [0] * len(hierarchies) if low is None else list(low)
        high = [h.height for h in hierarchies] if high is None else list(high)
        shape = [b - a + 1 for a, b in zip(low, high)]
        if lattice_size(low, high) > MAX_NODES:
            raise ParameterError(f"The lattice has {lattice_size(low, high):,} nodes (levels "
                                 f"{' x '.join(map(str, shape))}); use fewer quasi-identifiers or levels "
                                 f"(at most {MAX_NODES:,} nodes).")
        self.base, self.hierarchies, self.check, self.limit, self.scorer = base, list(hierarchies), check, limit, scorer
        self.monotone = monotone
        self.n, self.q, self.shape, self.low = base.n_records, len(hierarchies), shape, np.array(low, dtype=np.int16)
        self.grid: np.ndarray = np.indices(shape, dtype=np.int16).reshape(self.q, -1).T + self.low
        self.bound: np.ndarray = scorer.bounds(self.grid)
        self.suppressed = np.full(len(self.grid), -1, dtype=np.int64)  # exact, where computed
        self.infeasible = np.zeros(len(self.grid), dtype=bool)  # tagged or computed
        self.feasible = np.zeros(len(self.grid), dtype=bool)
        self.cache: dict[tuple[int, ...], ClassTable] = {base.levels: base}
        self.recent: tuple[ClassTable, ...] = ()  # the last source and table, not yet compact (see :meth:`evaluate`)
        self.rows_at = np.zeros(len(self.grid), dtype=np.int64)  # the rows of each node's cached table (0: none)
        self.held = len(base)  # the rows of every cached table, the base's included
        self.born = np.zeros(len(self.grid), dtype=np.int64)  # when each node's table was cached (ties: the oldest first)
        # with a carried sensitive column: the classes alone (smaller tables), to reject nodes that fail k first
        self.qbase = base.rollup(base.levels[: self.q], self.hierarchies) if check.tail else None
        self.qcache: dict[tuple[int, ...], ClassTable] = {} if self.qbase is None else {self.qbase.levels: self.qbase}
        self.sizes_pass = np.zeros(len(self.grid), dtype=bool)  # class sizes known to be within the limit (monotone)
        self.checked = 0
        self.probe_credit = len(base)  # rows the join probes may still waste (see :meth:`_probe_joins`)
        self.keep = max(int(keep), 1)
        self.ranked: list[Score] = []  # the best feasible nodes so far, best first, at most ``keep``

    @property
    def best(self) -> Score | None:
        """The best feasible node so far (None before one is found)."""
        return self.ranked[0] if self.ranked else None

    def run(self, progress: Progress, cancel: CancelToken | None) -> Score | None:
        """Visit the nodes in bound order; the best node's :class:`Score` (None if none is feasible)."""
        order = np.lexsort((*(self.grid[:, j] for j in reversed(range(self.q))), self.bound))
        for visited, node in enumerate(order.tolist()):
            b = float(self.bound[node])
            if len(self.ranked) >= self.keep:
                last = float(self.ranked[-1].value)  # the keep-th best: the best itself when keep is 1
                if b > last + 1e-9 * max(1.0, abs(last)):
                    break  # bounds only grow from here (a float margin: exact ties are still visited)
            if visited % _PROGRESS_EVERY == 0:
                if cancel is not None:
                    cancel.check()
                progress(visited / len(order), "searching the generalization lattice")
            if self.infeasible[node]:
                continue
            if self.monotone and not self.feasible[node] and self.suppressed[node] < 0:
                self._probe_joins(node)  # a node near the border, rolled up from a small cached table, may tag it
                if self.infeasible[node]:
                    continue
                self._search_chain(node)  # a node above it found infeasible tags it without rolling it up
                if self.infeasible[node]:
                    continue
            s, table = self.evaluate(node)
            if s > self.limit:
                if self.monotone:
                    self._climb(node)
                continue
            assert table is not None
            candidate = self.scorer.score(table, self.check.verdict(table))
            if len(self.ranked) < self.keep or candidate.key < self.ranked[-1].key:
                bisect.insort(self.ranked, candidate, key=lambda score: score.key)
                del self.ranked[self.keep:]
        return self.best

    def top(self) -> int:
        """The index of the highest node of the box."""
        return len(self.grid) - 1

    def levels(self, node: int) -> tuple[int, ...]:
        return tuple(int(h) for h in self.grid[node])

    def evaluate(self, node: int) -> tuple[int, ClassTable | None]:
        """The records suppressed at ``node`` and its class table (rolled up from the smallest cached table
        below it; None when the node already fails on its class sizes alone); tags the lattice."""
        levels = self.levels(node) + self.check.tail
        if self.suppressed[node] >= 0 and levels in self.cache:
            return int(self.suppressed[node]), self.cache[levels]
        if self.qbase is not None and not self.sizes_pass[node]:
            small = self._too_small(node)
            if small <= self.limit:  # so at every node above it too (classes only merge upwards)
                self.sizes_pass |= (self.grid >= self.grid[node]).all(axis=1)
            else:  # more than the criteria allow, here and at every node below (class sizes)
                self.checked += 1
                self.suppressed[node] = small  # at least this many: enough to know the node is infeasible
                self.infeasible |= (self.grid <= self.grid[node]).all(axis=1)
                return small, None
        source = self._source(node)
        table = source.rollup(levels, self.check.table_hierarchies)
        for old in self.recent:  # cached compact, but for the source and the table last used (often used again at once)
            if old is not source and old is not self.base:
                old.compact()
        self.recent = (source, table)
        self.checked += 1
        s = self.suppressed[node] = self.check.suppressed(table)
        self._keep(node, table)
        if self.monotone and s > self.limit:
            self.infeasible |= (self.grid <= self.grid[node]).all(axis=1)
        elif self.monotone:
            self.feasible |= (self.grid >= self.grid[node]).all(axis=1)
        return int(s), table

    def _source(self, node: int) -> ClassTable:
        """The smallest cached table of a node at or below ``node`` (the base at worst): the cheapest source."""
        below = np.flatnonzero((self.rows_at > 0) & (self.grid <= self.grid[node]).all(axis=1))
        j = int(below[np.lexsort((self.born[below], self.rows_at[below]))[0]]) if len(below) else -1
        return self.cache[self.levels(j) + self.check.tail] if j >= 0 and self.rows_at[j] < len(self.base) else self.base

    def _keep(self, node: int, table: ClassTable) -> None:
        """Cache ``table``, then drop the largest other tables (never the base) while the cache holds more than
        :data:`_CACHE_FACTOR` times the base's rows: small tables are the cheap sources of many nodes above them."""
        self.cache[table.levels] = table
        if table.levels == self.base.levels:
            return  # the base's own node: the base is always kept
        self.rows_at[node], self.born[node] = len(table), self.checked
        self.held += len(table)
        budget = _CACHE_FACTOR * max(len(self.base), 1 << 14)
        for j in np.lexsort((self.born, -self.rows_at)).tolist() if self.held > budget else ():
            if self.held <= budget or not self.rows_at[j]:
                break
            if j != node:
                self.held -= int(self.rows_at[j])
                self.rows_at[j] = 0
                del self.cache[self.levels(j) + self.check.tail]

    def _too_small(self, node: int) -> int:
        """The records of classes smaller than the criteria's smallest class size at ``node``, from the classes
        without the sensitive column: a lower bound of what the criteria suppress, which only grows below ``node``
        (classes split as levels fall), so a node it puts over the limit is infeasible with every node below it,
        whether or not the criteria are monotone."""
        levels = self.levels(node)
        assert self.qbase is not None
        table = smallest_below(self.qcache, levels).rollup(levels, self.hierarchies)
        remember(self.qcache, table, self.qbase)
        return table.suppressed(self.check.min_size)

    def _chain(self, node: int) -> list[int]:
        """The chain from ``node`` to the top of the box, raising the QI with the most levels left (first one on ties)."""
        chain, levels = [node], [int(h) - int(a) for h, a in zip(self.grid[node], self.low)]  # within the box
        while any(h < size - 1 for h, size in zip(levels, self.shape)):
            i = max(range(self.q), key=lambda j: (self.shape[j] - 1 - levels[j], -j))
            levels[i] += 1
            chain.append(int(np.ravel_multi_index(levels, self.shape)))
        return chain

    def _bisect(self, chain: list[int], lo: int) -> None:
        """Binary-search ``chain`` (``chain[lo]`` infeasible, or ``lo`` -1; the top feasible) for its highest
        infeasible node; evaluating a node tags the lattice."""
        hi = len(chain) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.infeasible[chain[mid]] or (not self.feasible[chain[mid]] and self.evaluate(chain[mid])[0] > self.limit):
                lo = mid
            else:
                hi = mid

    def _climb(self, node: int) -> None:
        """Binary-search the chain from infeasible ``node`` to the top for its highest infeasible node."""
        self._bisect(self._chain(node), 0)

    def _probe_joins(self, node: int) -> None:
        """Roll up the joins of ``node`` with cached infeasible nodes (their levels' maxima), nearest first, until one
        is infeasible, which tags ``node``; then climb its chain (issue 34).

        A join is above a cached infeasible node, so it is rolled up from that node's table: small, near the border
        between feasible and infeasible nodes, where the walk's own chain would roll up from the aggregated records.
        Only joins at most :data:`_JOIN_REACH` levels above ``node`` (farther ones are mostly feasible: a wasted rollup),
        at most :data:`_JOIN_TRIES` of them, from tables at most 1/:data:`_JOIN_SHARE` of the node's own source; and only
        while the probes have credit: the rows of feasible joins (read for nothing) are taken from it, a node tagged adds
        its own source's rows (about what its chain would have read), so that on data where joins are mostly feasible
        the probes soon stop (it starts at the aggregated records' rows).
        """
        held = np.flatnonzero(self.rows_at)  # the nodes with a cached table (the base's aside)
        if not len(held) or self.probe_credit <= 0:
            return
        others, sizes = (self.grid[held] - self.low).astype(np.int64), self.rows_at[held]
        here = (self.grid[node] - self.low).astype(np.int64)
        below = (others <= here).all(axis=1)
        own = min(len(self.base), int(sizes[below].min()) if below.any() else len(self.base))  # what the node would read
        useful = (self.suppressed[held] > self.limit) & (sizes * _JOIN_SHARE <= own)  # -1: not computed
        if not useful.any():
            return
        joins, sizes = np.maximum(others[useful], here), sizes[useful]
        reach = joins.sum(axis=1) - int(here.sum())
        targets = np.ravel_multi_index(joins.T, self.shape)
        near = (reach <= _JOIN_REACH) & ~self.feasible[targets]
        order = np.lexsort((targets[near], sizes[near], reach[near]))[:_JOIN_TRIES]
        for target, size in zip(targets[near][order].tolist(), sizes[near][order].tolist()):
            if self.probe_credit <= 0:
                return
            if self.feasible[target]:  # tagged by a join tried before
                continue
            if self.infeasible[target] or self.evaluate(target)[0] > self.limit:
                self.probe_credit += own  # about what the node's chain would have read
                self._climb(target)
                return
            self.probe_credit -= size  # a feasible join: its rows read for nothing

    def _search_chain(self, node: int) -> None:
        """The same search before ``node`` itself is evaluated (issue 34): on sparse data the nodes below the optimum
        are infeasible, and a node higher on the chain, whose table is smaller, tags ``node`` without rolling it up;
        ``node`` is evaluated only when the chain's node just above it is feasible."""
        self._bisect(self._chain(node), -1)



def smallest_below(cache: dict[tuple[int, ...], ClassTable], levels: tuple[int, ...]) -> ClassTable:
    """The smallest cached table of a node at or below ``levels`` (the base is always there): the cheapest source."""
    below = [t for lv, t in cache.items() if all(map(operator.le, lv, levels))]
    return below[0] if len(below) == 1 else min(below, key=len)


def remember(cache: dict[tuple[int, ...], ClassTable], table: ClassTable, base: ClassTable) -> None:
    """Cache ``table``, then drop the largest other tables (never ``base``) while the cache holds more than a few
    times ``base``'s rows: small tables are the cheap sources of many nodes above them."""
    cache[table.levels] = table
    budget = _CACHE_FACTOR * max(len(base), 1 << 14)
    held = sum(map(len, cache.values()))
    if held <= budget:
        return
    for levels in sorted(cache, key=lambda lv: -len(cache[lv])):
        if held <= budget:
            break
        if levels != base.levels and levels != table.levels:
            held -= len(cache.pop(levels))


def lattice_size(low: Sequence[int], high: Sequence[int]) -> int:
    """The number of nodes between the levels ``low`` and ``high``."""
    return math.prod(b - a + 1 for a, b in zip(low, high))
