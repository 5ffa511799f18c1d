"""A greedy search for lattices too large to search exhaustively; its result is not proven optimal.

Two phases, each a walk along the lattice's edges (one quasi-identifier one level up or down):

1. Bottom-up: from the lowest allowed node, while it suppresses more records than allowed, rise along the edge
   whose node suppresses the fewest records (ties: the lower loss bound). Its tables roll up from the previous
   node's, which only shrink, so the climb is cheap. It ends at a feasible node (the top at worst).
2. Top-down refinement: from that node, repeatedly move to the best-scoring feasible node one level down on
   one quasi-identifier, or one level down on one and up on another, while that improves the score.

Every node it scores is feasible (k-anonymous and meeting the criteria within the suppression limit), so the
result is valid; the report says it is not proven optimal. If even the highest allowed node is not feasible (criteria
that are not monotone can fail there), it finds nothing. The number of nodes it scores grows with the sum of the
heights times the number of quasi-identifiers, not with the lattice size.
"""
from __future__ import annotations

from collections.abc import Sequence

from ppdp_desktop.core.generalization.judge import NodeCheck
from ppdp_desktop.core.generalization.metrics import Score, Scorer
from ppdp_desktop.core.generalization.search import smallest_below
from ppdp_desktop.core.generalization.table import ClassTable
from ppdp_desktop.core.progress import CancelToken, Progress

_MAX_STEPS = 10_000  # a safety net: each refinement step strictly improves the score, so the walk ends anyway


class GreedyWalk:
    """One greedy search (see the module docstring); :attr:`checked` counts the nodes whose classes were computed."""

    def __init__(self, base: ClassTable, check: NodeCheck, limit: int, scorer: Scorer,
                 low: Sequence[int], high: Sequence[int]) -> None:
        self.base, self.check, self.limit, self.scorer = base, check, limit, scorer
        self.low, self.high, self.q = tuple(low), tuple(high), len(check.hierarchies)
        self.tables: dict[tuple[int, ...], ClassTable] = {base.levels: base}
        self.checked = 0

    def table(self, levels: tuple[int, ...], source: ClassTable | None = None, keep: bool = True) -> ClassTable:
        """The classes at ``levels``, rolled up from ``source`` or the smallest kept table below it."""
        levels = levels + self.check.tail
        if levels in self.tables:
            return self.tables[levels]
        if source is None:
            source = smallest_below(self.tables, levels)
        table = source.rollup(levels, self.check.table_hierarchies)
        self.checked += 1
        if keep:
            self.tables[levels] = table
        return table

    def run(self, progress: Progress, cancel: CancelToken | None) -> Score | None:
        """The best node found (None if the climb reaches the highest allowed node and it is not feasible)."""
        node = self.low
        table = self.table(node, self.base)
        while self.check.suppressed(table) > self.limit:  # phase 1: climb
            if cancel is not None:
                cancel.check()
            progress(0.5 * sum(node) / max(sum(self.high), 1), "searching a large lattice greedily")
            ups = [node[:i] + (node[i] + 1,) + node[i + 1:] for i in range(self.q) if node[i] < self.high[i]]
            if not ups:
                return None
            bounds = self.scorer.bounds_of(ups)
            tables = [self.table(up, table) for up in ups]
            j = min(range(len(ups)), key=lambda i: (self.check.suppressed(tables[i]), bounds[i], ups[i]))
            node, table = ups[j], tables[j]
            self._drop_below(node)
        best = self.scorer.score(table, self.check.verdict(table))
        for _ in range(_MAX_STEPS):  # phase 2: refine
            if cancel is not None:
                cancel.check()
            progress(0.75, "refining the greedy search's node")
            found = None
            for near in self._neighbours(best.levels):
                candidate = self.table(near, keep=False)
                verdict = self.check.verdict(candidate)
                if verdict.suppressed <= self.limit:
                    score = self.scorer.score(candidate, verdict)
                    if score.key < (found or best).key:
                        found = score
            if found is None:
                break
            best = found
        return best

    def _neighbours(self, node: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Nodes one level down on one quasi-identifier, or down on one and up on another, within the box."""
        out = []
        for i in range(self.q):
            if node[i] <= self.low[i]:
                continue
            down = node[:i] + (node[i] - 1,) + node[i + 1:]
            out.append(down)
            out.extend(down[:j] + (down[j] + 1,) + down[j + 1:] for j in range(self.q) if j != i and down[j] < self.high[j])
        return out

    def _drop_below(self, node: tuple[int, ...]) -> None:
        """Forget the climb's tables that are neither the base nor below ``node``'s path (memory stays small)."""
        node = node + self.check.tail
        for levels in [lv for lv in self.tables if lv != self.base.levels and lv != node]:
            if not all(a <= b for a, b in zip(levels, node)):
                del self.tables[levels]
