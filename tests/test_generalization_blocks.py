"""Rollups by lookups over blocks of columns (issue 34, the sparse lattice search): the same keys, classes and counts
as grouping the generalized codes directly, whatever the label counts (blocks of one column or several, keys in int32
or int64), and the exact sums of the scorer in int64 equal to those in Python integers."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from ppdp_desktop.core.generalization.blocks import BLOCK_SPACE, block_codes, block_plan, lookup_tables, rolled_key
from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.judge import NodeCheck
from ppdp_desktop.core.generalization.metrics import _exact_dot
from ppdp_desktop.core.generalization.table import ClassTable, group


@hs.composite
def keyed_rows(draw):  # type: ignore[no-untyped-def]
    """Label counts (some above 2**16, so a column is a block of its own), codes below them, and a map per column."""
    radixes = draw(hs.lists(hs.sampled_from([1, 2, 3, 7, 40, 255, 300, 70_000]), min_size=1, max_size=6)
                   .filter(lambda r: math.prod(r) < 1 << 62))  # the rollup's keys fit int64 (else it compresses them)
    seed = draw(hs.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(hs.integers(1, 300))
    codes = [rng.integers(0, r, n) for r in radixes]
    target = [int(rng.integers(1, r + 1)) for r in radixes]
    maps = [rng.integers(0, t, r) for r, t in zip(radixes, target)]
    return radixes, codes, target, maps


def brute_key(values: list[np.ndarray], radixes: list[int]) -> list[int]:
    """The mixed-radix key of each row in Python integers (never overflows)."""
    return [sum(int(v[row]) * math.prod(radixes[i + 1:]) for i, v in enumerate(values)) for row in range(len(values[0]))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(keyed_rows())
def test_a_rolled_key_is_the_mixed_radix_key_of_the_mapped_codes(rows) -> None:  # type: ignore[no-untyped-def]
    radixes, codes, target, maps = rows
    plan = block_plan(radixes)
    assert [i for a, b in plan for i in range(a, b)] == list(range(len(radixes)))  # every column once, in order
    assert all(b - a == 1 or math.prod(radixes[a:b]) <= BLOCK_SPACE for a, b in plan)
    key = brute_key(codes, radixes)
    from_codes = block_codes(radixes, plan, codes=codes)
    from_key = block_codes(radixes, plan, key=np.array(key, dtype=np.int64))
    assert all(np.array_equal(a, b) for a, b in zip(from_codes, from_key))
    dtype = np.int32 if math.prod(target) < 1 << 31 else np.int64
    rolled = rolled_key(from_key, lookup_tables(maps, target, plan, dtype))
    assert rolled.tolist() == brute_key([m[c] for m, c in zip(maps, codes)], target)


def nested(name: str, m: int, fanouts: list[int]) -> Hierarchy:
    """``m`` values, each level grouping ``fanouts[j]`` labels of the one below."""
    rows, width = [], 1
    for i in range(m):
        row = [f"{name}{i}"]
        width = 1
        for f in fanouts:
            width *= f
            row.append(f"{name}{'/' * len(row)}{i // width}")
        rows.append(row)
    return Hierarchy.from_rows(name, rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hs.integers(0, 2**32 - 1), hs.integers(1, 2000))
def test_a_rollup_from_any_node_has_the_classes_of_grouping_the_records_there(seed, n) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    hierarchies = [nested("a", 300, [3, 4]), nested("b", 40, [2, 5]), nested("c", 7, [7]), nested("d", 260, [2, 2, 5])]
    values = [rng.integers(0, len(h.values) - 1, n) for h in hierarchies]  # (the last value is the missing one)
    base = ClassTable((0,) * 4, *[tuple(x) if i == 0 else x for i, x in enumerate(group(values, [len(h.values)
                                                                                            for h in hierarchies]))])
    middle = tuple(int(rng.integers(0, h.height + 1)) for h in hierarchies)
    top = tuple(int(rng.integers(lv, h.height + 1)) for lv, h in zip(middle, hierarchies))
    for source, levels in ((base, middle), (base.rollup(middle, hierarchies), top)):
        table = source.rollup(levels, hierarchies)
        assert source._blocks is not None  # rolled up by lookups over blocks of columns
        generalized = pd.DataFrame({i: h.level_map(0, lv)[v] for i, (h, lv, v) in enumerate(zip(hierarchies, levels, values))})
        brute = generalized.value_counts()
        got = pd.Series(table.counts, index=pd.MultiIndex.from_arrays([c.astype(np.int64) for c in table.codes]))
        assert got.sort_index().to_dict() == brute.sort_index().to_dict()
        assert table.n_records == n


@settings(max_examples=200, deadline=None)
@given(hs.lists(hs.integers(0, 2**40), min_size=0, max_size=20), hs.integers(0, 2**40))
def test_exact_sums_of_products_overflow_to_python_integers(values, factor) -> None:  # type: ignore[no-untyped-def]
    a = np.array(values, dtype=np.int64)
    b = np.full(len(values), factor, dtype=np.int64)
    assert _exact_dot(a, b) == sum(v * factor for v in values)  # int64 would wrap beyond 2**63
    assert _exact_dot(a, a) == sum(v * v for v in values)


@settings(max_examples=100, deadline=None)
@given(hs.lists(hs.integers(1, 9), min_size=1, max_size=40), hs.integers(1, 10))
def test_the_count_of_suppressed_records_is_the_verdicts(counts, k) -> None:  # type: ignore[no-untyped-def]
    h = nested("a", len(counts) + 1, [2])
    table = ClassTable((0,), (np.arange(len(counts)),), np.array(counts, dtype=np.int64))
    check = NodeCheck([h], k)
    fast = check.suppressed(table)
    assert fast == check.verdict(table).suppressed == sum(c for c in counts if c < k)
