"""The join probes of the lattice walk (issue 34, the sparse lattice search): before a node's chain is searched, the
joins of the node with cached infeasible nodes are rolled up from those nodes' small tables; one found infeasible tags
the node. Same answers as brute force and as the walk without the probes, fewer source rows read on sparse data."""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from ppdp_desktop.core.generalization import Hierarchy, exhaustive_generalization, optimal_generalization, search
from ppdp_desktop.core.generalization.search import LatticeWalk
from ppdp_desktop.core.generalization.table import ClassTable


def halving_data(sizes: list[int], height: int, n: int, seed: int) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """Quasi-identifiers of ``sizes`` values, nearly unique combinations for ``n`` records, hierarchies of ``height``
    levels that halve the values per level (the last: ``*``)."""
    rng = np.random.default_rng(seed)
    frame, hierarchies = pd.DataFrame(), {}
    for j, m in enumerate(sizes):
        name = f"q{j}"
        values = [f"{name}v{i:03d}" for i in range(m)]
        frame[name] = pd.Categorical.from_codes(rng.integers(0, m, n), values)
        rows = [[v] + [f"{name}/{i >> h}" for h in range(1, height)] + ["*"] for i, v in enumerate(values)]
        hierarchies[name] = Hierarchy.from_rows(name, rows)
    return frame, hierarchies


class Recorder:
    """Counts the source rows of every rollup and the nodes the probes tag."""

    def __init__(self, monkeypatch, probes: bool = True) -> None:  # type: ignore[no-untyped-def]
        self.rows, self.probed = 0, 0
        rollup, probe = ClassTable.rollup, LatticeWalk._probe_joins

        def rolling(table, levels, hierarchies, columns=None):  # type: ignore[no-untyped-def]
            self.rows += len(table)
            return rollup(table, levels, hierarchies, columns)

        def probing(walk, node):  # type: ignore[no-untyped-def]
            if probes:
                probe(walk, node)
                self.probed += bool(walk.infeasible[node])

        monkeypatch.setattr(ClassTable, "rollup", rolling)
        monkeypatch.setattr(LatticeWalk, "_probe_joins", probing)


def answer(g):  # type: ignore[no-untyped-def]
    return g.levels, g.suppressed, g.precision, g.metric_value, g.alternatives


def test_probes_give_the_same_answers_reading_fewer_rows(monkeypatch) -> None:
    """Skewed to no QI, 20,000 nearly unique records: at k = 5 two nodes are tagged by joins rolled up from small
    tables (the walk without probes rolls their chains up from the aggregated records): 2.28M source rows, not 2.51M,
    with a cache of 8 times the aggregated records. (With the search's cache of 32 times, 1.71M and 1.68M: most of the
    rows the probes save are then read from cached tables without them too.)"""
    frame, hierarchies = halving_data([40, 40, 32, 24], 4, 20_000, 5)
    monkeypatch.setattr(search, "_CACHE_FACTOR", 8)  # the cache the probes were measured with
    for k in (2, 5):
        with monkeypatch.context() as patch:
            without = Recorder(patch, probes=False)
            before = optimal_generalization(frame, hierarchies, k, 0.05)
        with monkeypatch.context() as patch:
            probed = Recorder(patch)
            after = optimal_generalization(frame, hierarchies, k, 0.05)
        assert answer(after) == answer(before)  # the alternatives included
    assert probed.probed > 0  # nodes tagged by a join, never rolled up themselves
    assert probed.rows < 0.95 * without.rows  # ... and fewer source rows read in all


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(hs.lists(hs.integers(2, 16), min_size=2, max_size=3), hs.integers(1, 3), hs.integers(20, 300),
       hs.integers(0, 2**31), hs.integers(1, 6), hs.sampled_from([0.0, 0.02, 0.05, 0.2]))
def test_random_lattices_with_probes_match_brute_force(monkeypatch, sizes, height, n, seed, k, suppression) -> None:
    frame, hierarchies = halving_data(sizes, height, n, seed)
    if k > n:
        return
    with monkeypatch.context() as patch:
        Recorder(patch)  # the probes as they run (and fail here on a walk without them)
        g = optimal_generalization(frame, hierarchies, k, suppression)
    brute = exhaustive_generalization(frame, hierarchies, k, suppression)
    assert (g.levels, g.suppressed, g.precision) == (brute.levels, brute.suppressed, brute.precision)
