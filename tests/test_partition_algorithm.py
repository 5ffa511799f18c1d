"""Perturbation Partitioning (SPEC 2.3): golden values of thesis Ex. 4-9 and invariants."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.partition.blocks import assign_records
from ppdp_desktop.core.methods.partition.phases import balance, candidate_orders, distribute_rest, merge
from ppdp_desktop.core.methods.partition.subtables import partition_domain

EX = np.array([12, 8, 6, 5, 4, 3, 1, 1, 1, 1])
G = np.array([
    [6, 6, 6, 0, 0, 0, 0, 0, 0, 0],
    [4, 0, 0, 4, 4, 0, 0, 0, 0, 0],
    [2, 2, 0, 0, 0, 2, 0, 0, 0, 0],
    [0, 0, 0, 1, 0, 1, 1, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 1, 1, 1],
])


def test_example_6_balancing():
    assert np.array_equal(balance(EX, 3).toarray(), G)


def test_examples_4_to_9_golden():
    p = partition_domain(EX, 1 / 3, 2 / 3)
    assert p.theta == 3
    assert np.array_equal(p.groups.toarray(), G)
    assert p.a == pytest.approx(3.841291, abs=1e-6)
    assert sorted(map(sorted, p.subtables)) == [[0, 1, 2], [3, 4]]
    assert list(p.m_i) == [6, 6]
    np.testing.assert_allclose(p.gamma_i, [4, 10], atol=1e-12)
    np.testing.assert_allclose(p.eps_i, [1.920646, 2.613668], atol=1e-6)
    assert p.eps_part == pytest.approx(2.019649, abs=1e-6)
    assert p.eps_unpartitioned == pytest.approx(2.568471, abs=1e-6)
    np.testing.assert_array_equal(p.table_counts.sum(axis=0), EX)


def test_example_8_thesis_order_is_tried_and_scipy_tie_break_is_worse():
    orders = candidate_orders(G)
    assert [0, 2, 1, 3, 4] in orders  # g1 g3 g2 g4 g5 (MATLAB symrcm)
    sa_prime = np.ones(10, dtype=bool)
    a = 2 * math.sqrt(math.log(40))
    eps, cuts = merge(G[[0, 2, 1, 3, 4]], sa_prime, 2 / 3, a)
    assert eps == pytest.approx(2.019649, abs=1e-6) and cuts == [0, 3, 5]
    eps_scipy, _ = merge(G[[3, 2, 1, 0, 4]], sa_prime, 2 / 3, a)  # g4 g3 g2 g1 g5
    assert eps_scipy == pytest.approx(2.0303, abs=1e-4)


def test_example_7_sa_prime_subset():
    before = balance(np.where(np.arange(10) == 0, 0, EX), 3).toarray()
    np.testing.assert_array_equal(before, [
        [0, 5, 5, 5, 0, 0, 0, 0, 0, 0],
        [0, 3, 0, 0, 3, 3, 0, 0, 0, 0],
        [0, 0, 1, 0, 1, 0, 1, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 1, 1, 1],
    ])
    after = distribute_rest(before, np.where(np.arange(10) == 0, EX, 0)).toarray()
    np.testing.assert_array_equal(after[:, 0], [6, 3, 1, 2])  # 6, 3, 1, 1 and +1 to the last
    np.testing.assert_array_equal(after[:, 1:], before[:, 1:])
    p = partition_domain(EX, 1 / 4, 2 / 3)
    assert p.theta == 3  # theta' = floor(30 / 8)
    np.testing.assert_array_equal(p.groups.toarray(), after)
    assert list(p.sa_prime) == [False] + [True] * 9
    assert np.all(p.rho1_i < 2 / 3)
    np.testing.assert_array_equal(p.table_counts.sum(axis=0), EX)


def test_distribute_rest_most_frequent_value_first():
    groups = np.array([[5, 5, 0, 0], [0, 0, 5, 5]])
    out = distribute_rest(groups, np.array([0, 0, 0, 0])).toarray()
    np.testing.assert_array_equal(out, groups)
    groups = np.array([[5, 5, 0, 0, 0, 0], [0, 0, 5, 5, 0, 0]])
    out = distribute_rest(groups, np.array([0, 0, 0, 0, 3, 4])).toarray()  # value 5 (4 records) first
    np.testing.assert_array_equal(out[:, 4:], [[0, 3], [3, 1]])


@pytest.mark.parametrize("rho1, rho2", [(0.0, 0.5), (0.5, 0.5), (0.6, 0.5), (0.3, 1.0), (-0.1, 0.2)])
def test_invalid_rho_raises(rho1, rho2):
    with pytest.raises(ParameterError, match="rho1"):
        partition_domain(EX, rho1, rho2)


def test_invalid_counts_and_no_protected_value_raise():
    for bad in ([], [-1, 3], [1.5, 2], [0, 0]):
        with pytest.raises(ParameterError):
            partition_domain(np.array(bad), 0.3, 0.6)
    with pytest.raises(ParameterError, match="protects nothing"):
        partition_domain(np.array([5, 5]), 0.3, 0.6)


def test_whole_table_is_always_a_valid_fallback():
    # theta = 2 and single groups reach 1/2 >= rho2, but the whole table (prior <= rho1) is valid
    p = partition_domain(np.array([4, 4, 1]), 0.45, 0.46)
    assert len(p.subtables) == 1 and p.eps_part <= p.eps_unpartitioned
    assert np.all(p.rho1_i < 0.46)


def test_assign_records_matches_plan():
    p = partition_domain(EX, 1 / 3, 2 / 3)
    codes = np.repeat(np.arange(10), EX)
    table_counts = p.table_counts.toarray()
    ids = assign_records(codes, table_counts, np.random.default_rng(1))
    for k in range(table_counts.shape[0]):
        np.testing.assert_array_equal(np.bincount(codes[ids == k], minlength=10), table_counts[k])
    with pytest.raises(ParameterError):
        assign_records(codes[1:], table_counts, np.random.default_rng(1))
    # the sparse table deals exactly as the dense one, and as the dense dealing did (same random draws)
    np.testing.assert_array_equal(assign_records(codes, p.table_counts, np.random.default_rng(1)), ids)
    np.testing.assert_array_equal(_dense_assign_records(codes, table_counts, np.random.default_rng(1)), ids)


def _dense_assign_records(codes, table_counts, rng):
    """The dealing before sparse count tables: the reference."""
    shuffled = rng.permutation(codes.size)
    grouped = shuffled[np.argsort(codes[shuffled], kind="stable")]
    k = table_counts.shape[0]
    labels = np.repeat(np.tile(np.arange(k), table_counts.shape[1]), table_counts.T.ravel())
    out = np.empty(codes.size, dtype=np.int64)
    out[grouped] = labels
    return out


def test_larger_domain_runs_and_improves():
    rng = np.random.default_rng(0)
    counts = rng.zipf(1.5, 50).clip(1, 5000) * 20
    rho1 = max(1 / 13, counts.max() / counts.sum())
    p = partition_domain(counts, rho1, min(0.99, 3 * rho1))
    np.testing.assert_array_equal(p.table_counts.sum(axis=0), counts)
    assert p.eps_part <= p.eps_unpartitioned + 1e-12


@st.composite
def problems(draw):
    m = draw(st.integers(2, 30))
    counts = np.array(draw(st.lists(st.integers(1, 200), min_size=m, max_size=m)))
    rho1 = draw(st.floats(0.01, 0.95))
    rho2 = draw(st.floats(rho1 + 0.01, 0.99)) if rho1 < 0.98 else 0.99
    return counts, rho1, rho2


@settings(max_examples=150, deadline=None)
@given(problems())
def test_invariants(problem):
    counts, rho1, rho2 = problem
    assume(0 < rho1 < rho2 < 1)
    try:
        p = partition_domain(counts, rho1, rho2)
    except ParameterError as exc:
        assert "protects nothing" in str(exc)
        assert np.all(counts > rho1 * counts.sum())
        return
    for arr in (p.groups, p.table_counts):
        assert np.issubdtype(arr.dtype, np.integer) and np.all(arr.data > 0)
    np.testing.assert_array_equal(p.groups.sum(axis=0), counts)
    np.testing.assert_array_equal(p.table_counts.sum(axis=0), counts)
    assert sorted(p.order) == list(range(p.groups.shape[0]))
    assert sorted(i for s in p.subtables for i in s) == list(range(p.groups.shape[0]))
    assert [i for s in p.subtables for i in s] == p.order
    assert np.all(p.rho1_i < rho2)
    assert len(p.eps_i) == len(p.gamma_i) == len(p.rho1_i) == p.table_counts.shape[0]
    sizes = p.table_counts.sum(axis=1)
    assert p.eps_part == pytest.approx(float(np.sum(sizes / counts.sum() * p.eps_i)))
    # the unpartitioned table is always valid (max prior over SA' <= rho1 < rho2)
    assert p.eps_part <= p.eps_unpartitioned + 1e-12
