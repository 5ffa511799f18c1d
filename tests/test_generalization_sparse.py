"""The lattice walk on sparse data (issue 34): the same answer as brute force, with less work.

On sparse data most nodes below the optimum are infeasible; the walk binary-searches a node's chain to the top before
rolling the node itself up, so a node that a node above it proves infeasible is never rolled up (the bottom node, whose
table is the largest, first of all).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

from ppdp_desktop.core.generalization import Hierarchy, exhaustive_generalization, optimal_generalization, search
from ppdp_desktop.core.generalization.judge import NodeCheck
from ppdp_desktop.core.generalization.metrics import Scorer, Utility
from ppdp_desktop.core.generalization.search import LatticeWalk
from ppdp_desktop.core.generalization.table import ClassTable, aggregate_records


def sparse_data(n: int = 3000, seed: int = 3) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """Three quasi-identifiers of 40, 30 and 24 values (28,800 combinations for 3,000 records: nearly all unique)
    with 3-level hierarchies that halve the values per level."""
    rng = np.random.default_rng(seed)
    frame, hierarchies = pd.DataFrame(), {}
    for name, m in (("a", 40), ("b", 30), ("c", 24)):
        values = [f"{name}{i:02d}" for i in range(m)]
        frame[name] = pd.Categorical.from_codes(rng.integers(0, m, n), values)
        hierarchies[name] = Hierarchy.from_rows(name, [[v, f"{name}/{i // 2}", f"{name}//{i // 6}", "*"]
                                                       for i, v in enumerate(values)])
    return frame, hierarchies


def test_sparse_walk_finds_brute_forces_node_without_rolling_up_the_bottom(monkeypatch) -> None:
    frame, hierarchies = sparse_data()
    rolled: list[tuple[int, ...]] = []
    rollup = ClassTable.rollup

    def recording(self, levels, hierarchies, columns=None):  # type: ignore[no-untyped-def]
        rolled.append(tuple(int(h) for h in levels))
        return rollup(self, levels, hierarchies, columns)

    monkeypatch.setattr(ClassTable, "rollup", recording)
    for k in (2, 5):
        rolled.clear()
        g = optimal_generalization(frame, hierarchies, k, 0.05)
        brute = exhaustive_generalization(frame, hierarchies, k, 0.05)
        assert (g.levels, g.suppressed, g.precision) == (brute.levels, brute.suppressed, brute.precision)
        assert sum(g.levels.values()) > 0  # the bottom is infeasible on this data
        assert (0, 0, 0) not in rolled  # ... and a node above it said so: its 2,900-row table was never built
        assert len(rolled) < 64  # a part of the 64 nodes


def test_rolled_up_codes_take_the_smallest_integer_type() -> None:
    frame, hierarchies = sparse_data()
    table = aggregate_records(frame, hierarchies).rollup((1, 1, 0), list(hierarchies.values()))
    assert [c.dtype for c in table.codes] == [np.uint8] * 3  # 20, 15 and 24 labels: one byte per code, not four
    assert table.n_records == len(frame)


def test_suppressed_records_are_those_of_the_classes_smaller_than_k() -> None:
    frame, hierarchies = sparse_data()
    table = aggregate_records(frame, hierarchies).rollup((1, 1, 1), list(hierarchies.values()))
    for k in (1, 2, 3, 5, 10**6):
        assert table.suppressed(k) == int(table.counts[table.counts < k].sum())
    assert table.suppressed(1) == 0 and table.suppressed(10**6) == len(frame)


def test_precision_of_a_node_with_suppressed_classes_is_counted_without_its_labels() -> None:
    frame, hierarchies = sparse_data()
    hiers = list(hierarchies.values())
    base = aggregate_records(frame, hierarchies)
    table = base.rollup((1, 2, 1), hiers)
    check = NodeCheck(hiers, 4)
    verdict = check.verdict(table)
    assert 0 < verdict.suppressed < len(frame)
    score = Scorer(base, hiers, Utility()).score(table, verdict)
    n, s = len(frame), verdict.suppressed  # every cell at level h of H costs h / H, a suppressed one 1
    assert score.value == sum(Fraction(n * h + (3 - h) * s, 3) for h in (1, 2, 1))


def test_a_compact_table_gives_the_same_counts_and_rolls_up_the_same() -> None:
    frame, hierarchies = sparse_data()
    hiers = list(hierarchies.values())
    middle = aggregate_records(frame, hierarchies).rollup((1, 0, 1), hiers)
    counts, first = middle.counts.copy(), middle.rollup((2, 1, 1), hiers)
    assert middle._blocks is not None and middle._weights is not None  # kept for the next rollup
    middle.compact()
    assert middle._blocks is None and middle._weights is None and middle._counts.dtype == np.uint8
    assert middle.counts.dtype == np.int64 and np.array_equal(middle.counts, counts) and len(middle) == len(counts)
    assert middle.n_records == len(frame) and middle.suppressed(3) == int(counts[counts < 3].sum())
    again = middle.rollup((2, 1, 1), hiers)
    assert np.array_equal(again.key, first.key) and np.array_equal(again.counts, first.counts)
    assert [list(c) for c in again.codes] == [list(c) for c in first.codes]
    big = ClassTable((0,), (np.arange(3),), np.array([1, 70_000, 5], dtype=np.int64))
    big.compact()
    assert big._counts.dtype == np.uint32 and big.counts.tolist() == [1, 70_000, 5]


def test_a_small_cache_drops_tables_and_keeps_its_count_of_rows(monkeypatch) -> None:
    frame, hierarchies = sparse_data()
    keep, dropped = LatticeWalk._keep, []

    def checked_keep(walk, node, table):  # type: ignore[no-untyped-def]
        expected = len(walk.cache) + (table.levels not in walk.cache)
        keep(walk, node, table)
        dropped.append(expected - len(walk.cache))
        assert walk.held == sum(len(t) for t in walk.cache.values())  # the base's rows included
        assert walk.rows_at.sum() == walk.held - len(walk.base) and walk.cache[table.levels] is table

    monkeypatch.setattr(LatticeWalk, "_keep", checked_keep)
    for factor in (0, 8):
        monkeypatch.setattr(search, "_CACHE_FACTOR", factor)
        dropped.clear()
        for k in (2, 5):
            g = optimal_generalization(frame, hierarchies, k, 0.05)
            brute = exhaustive_generalization(frame, hierarchies, k, 0.05)
            assert (g.levels, g.suppressed, g.precision) == (brute.levels, brute.suppressed, brute.precision)
        assert (sum(dropped) > 0) == (factor == 0)  # 8x 16,384 rows: every table of 3,000 records fits
