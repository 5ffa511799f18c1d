"""Mondrian l-diverse generalization baseline (SPEC 6): l-diversity, coverage, ranges, estimates."""
from __future__ import annotations

import numpy as np
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.baselines.mondrian import mondrian_estimate, mondrian_l_diverse


def _data(n=3000, seed=3, domains=(10, 7, 4), m=6):
    rng = np.random.default_rng(seed)
    qi = np.column_stack([rng.integers(d, size=n) for d in domains])
    sa = rng.integers(m, size=n)
    return qi, sa


@pytest.mark.parametrize("l", [2, 3, 5])
def test_partitions_l_diverse_cover_and_contain(l):
    qi, sa = _data()
    rel = mondrian_l_diverse(qi, sa, l)
    n, q = qi.shape
    p = rel.partition_of_record
    assert p.shape == (n,) and p.min() == 0 and p.max() == rel.n_partitions - 1
    assert rel.ranges.shape == (rel.n_partitions, q, 2)
    assert rel.sa_counts.shape == (rel.n_partitions, 6)
    assert rel.n_partitions > 1  # the data is splittable
    # every partition is distinct-l-diverse and the counts are the crosstab of the records
    assert ((rel.sa_counts > 0).sum(axis=1) >= l).all()
    crosstab = np.zeros_like(rel.sa_counts)
    np.add.at(crosstab, (p, sa), 1)
    assert np.array_equal(crosstab, rel.sa_counts)
    assert rel.partition_sizes.sum() == n
    # every record's codes lie in its partition's ranges
    lo, hi = rel.ranges[p, :, 0], rel.ranges[p, :, 1]
    assert ((lo <= qi) & (qi <= hi)).all()


def test_partitions_are_maximal_small_example():
    # one QI with four codes, each holding both SA values: split down to single codes
    qi = np.array([[0], [0], [1], [1], [8], [8], [9], [9]])
    sa = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    rel = mondrian_l_diverse(qi, sa, 2)
    assert rel.n_partitions == 4
    assert sorted(map(tuple, rel.ranges[:, 0, :])) == [(0, 0), (1, 1), (8, 8), (9, 9)]
    # l = 3: the median split gives {0,1,2,0} | {1,2,0,1}; no further split keeps 3 values
    rel3 = mondrian_l_diverse(qi, np.array([0, 1, 2, 0, 1, 2, 0, 1]), 3)
    assert sorted(map(tuple, rel3.ranges[:, 0, :])) == [(0, 1), (8, 9)]
    # l = 3 with a value only on one side: no split at all, one partition over the whole range
    rel1 = mondrian_l_diverse(qi, np.array([0, 1, 0, 1, 2, 1, 0, 1]), 3)
    assert rel1.n_partitions == 1 and tuple(rel1.ranges[0, 0]) == (0, 9)


def test_empty_condition_returns_sa_totals():
    qi, sa = _data()
    rel = mondrian_l_diverse(qi, sa, 3)
    assert np.allclose(mondrian_estimate(rel, {}), np.bincount(sa, minlength=6))


def test_single_attribute_estimates_sum_to_totals_and_match_brute_force():
    qi, sa = _data(seed=11)
    rel = mondrian_l_diverse(qi, sa, 3)
    totals = np.bincount(sa, minlength=6)
    for j, d in enumerate((10, 7, 4)):
        est = np.array([mondrian_estimate(rel, {j: a}) for a in range(d)])
        assert np.allclose(est.sum(axis=0), totals)
    # brute force for a 2-attribute condition
    cond = {0: 4, 2: 1}
    expect = np.zeros(6)
    for p in range(rel.n_partitions):
        w = 1.0
        for j, a in cond.items():
            lo, hi = rel.ranges[p, j]
            w *= (lo <= a <= hi) / (hi - lo + 1)
        expect += w * rel.sa_counts[p]
    assert np.allclose(mondrian_estimate(rel, cond), expect)


def test_parameter_errors():
    qi, sa = _data(n=200)
    with pytest.raises(ParameterError, match="l >= 2"):
        mondrian_l_diverse(qi, sa, 1)
    with pytest.raises(ParameterError, match="distinct"):
        mondrian_l_diverse(qi, sa % 2, 3)
    with pytest.raises(ParameterError):
        mondrian_l_diverse(qi[:0], sa[:0], 2)
    rel = mondrian_l_diverse(qi, sa, 2)
    with pytest.raises(ParameterError, match="quasi-identifier 5"):
        mondrian_estimate(rel, {5: 0})


def test_l_equal_to_distinct_values_of_whole_table():
    qi, sa = _data(n=500, m=4)
    rel = mondrian_l_diverse(qi, sa, 4)
    assert ((rel.sa_counts > 0).sum(axis=1) >= 4).all()
