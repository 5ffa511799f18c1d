"""Anatomy baseline (SPEC 6): l-diverse groups, exact estimates without condition, seeded workload."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation.workload import count_query_error
from ppdp_desktop.core.methods.baselines.anatomy import (
    anatomize,
    anatomy_count_estimate,
    anatomy_count_estimates,
    count_query_error_anatomy,
)


def _codes(n=6000, seed=5):
    rng = np.random.default_rng(seed)
    p = np.array([0.2, 0.18, 0.15, 0.12, 0.1, 0.09, 0.08, 0.05, 0.03])
    return rng.choice(len(p), n, p=p / p.sum())


def _check_release(release, codes, l):
    n, m = len(codes), release.st.shape[1]
    st = release.st.toarray()  # ST is sparse; these inputs are small
    assert release.st.nnz == n  # one stored entry per record
    g = release.group_of_record
    assert g.shape == (n,) and g.min() >= 0 and g.max() < release.n_groups
    # ST is exactly the group x value crosstab of the records
    crosstab = np.zeros_like(st)
    np.add.at(crosstab, (g, codes), 1)
    assert np.array_equal(crosstab, st)
    assert np.array_equal(st.sum(axis=0), np.bincount(codes, minlength=m))
    assert st.max() == 1  # each value at most once per group
    assert ((st > 0).sum(axis=1) >= l).all()
    assert np.array_equal(np.bincount(g, minlength=release.n_groups), release.group_sizes)


@pytest.mark.parametrize("l", [2, 3, 4])
def test_groups_are_l_diverse_and_cover_all_records(l):
    codes = _codes()
    release = anatomize(codes, l, np.random.default_rng(0))
    _check_release(release, codes, l)


def test_residual_records_join_groups_without_their_value():
    codes = np.array([0, 0, 0, 1, 1, 1, 2])
    release = anatomize(codes, 2, np.random.default_rng(1))
    _check_release(release, codes, 2)
    assert release.n_groups == 3 and sorted(release.group_sizes) == [2, 2, 3]


def test_uniform_ties_and_exact_boundary():
    codes = np.repeat(np.arange(10), 30)  # every value exactly n/l for l = 10
    release = anatomize(codes, 10, np.random.default_rng(2))
    _check_release(release, codes, 10)
    assert release.n_groups == 30


def test_estimate_without_condition_is_exact():
    codes = _codes()
    release = anatomize(codes, 4, np.random.default_rng(3))
    everyone = np.ones(len(codes), dtype=bool)
    truth = np.bincount(codes, minlength=release.st.shape[1])
    assert np.array_equal(anatomy_count_estimates(release, everyone), truth.astype(float))
    for v in range(len(truth)):
        assert anatomy_count_estimate(release, everyone, v) == truth[v]


def test_scalar_and_vector_estimates_agree_with_the_formula():
    codes = _codes()
    release = anatomize(codes, 3, np.random.default_rng(4))
    mask = np.random.default_rng(9).random(len(codes)) < 0.25
    c = np.bincount(release.group_of_record[mask], minlength=release.n_groups)
    formula = (c[:, None] * release.st.toarray() / release.group_sizes[:, None]).sum(axis=0)
    vector = anatomy_count_estimates(release, mask)
    assert vector == pytest.approx(formula)
    assert [anatomy_count_estimate(release, mask, v) for v in range(len(vector))] == pytest.approx(vector)
    assert vector.sum() == pytest.approx(mask.sum())


def test_ineligible_l_names_the_value():
    codes = np.array([0] * 6 + [1, 2, 3, 4])
    with pytest.raises(ParameterError, match=r"'flu' holds 6 of 10 records.*lower l"):
        anatomize(codes, 2, np.random.default_rng(0), labels=["flu", "cancer", "hiv", "cold", "gout"])
    with pytest.raises(ParameterError):
        anatomize(codes, 1, np.random.default_rng(0))


def test_seeded_determinism():
    codes = _codes()
    a = anatomize(codes, 4, np.random.default_rng(7))
    b = anatomize(codes, 4, np.random.default_rng(7))
    c = anatomize(codes, 4, np.random.default_rng(8))
    assert np.array_equal(a.group_of_record, b.group_of_record) and (a.st != b.st).nnz == 0
    assert not np.array_equal(a.group_of_record, c.group_of_record)


def test_workload_uses_the_same_queries_as_perturbation_and_is_seeded():
    rng = np.random.default_rng(11)
    n = 20_000
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "region": rng.choice(list("ABCDE"), n),
                          "year": rng.integers(2015, 2020, n)})
    codes = _codes(n, seed=12)
    release = anatomize(codes, 4, np.random.default_rng(0))
    result = count_query_error_anatomy(frame, codes, release, seed=1)
    assert result == count_query_error_anatomy(frame, codes, release, seed=1)
    exact = count_query_error(frame, codes, codes, np.eye(release.st.shape[1]), seed=1)
    assert result.n_queries == exact.n_queries  # same conditions drawn -> same kept queries
    assert all(0 <= e < 1 for e in result.mean_error)
