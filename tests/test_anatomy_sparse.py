"""The sparse Anatomy (issue 18, point 2) gives exactly what the dense one gave.

``_dense_*`` below are the functions of ``baselines/anatomy.py`` before the rewrite, copied
verbatim (dense groups x m ST, an argsort of all m counts per step); the property tests compare
groups, the group of every record, ST, the estimates, the errors and what the generator draws
afterwards. The 1M-record timing is a benchmark: ``benchmarks/bench_anatomy.py``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.methods.baselines.anatomy import (
    _group_compositions,
    anatomize,
    anatomy_count_estimate,
    anatomy_count_estimates,
)

# ---------------------------------------------------------------------------------------------
# dense reference (the implementation before the rewrite)

@dataclass(frozen=True)
class _DenseRelease:
    group_of_record: np.ndarray
    st: np.ndarray
    l: int

    @property
    def n_groups(self) -> int:
        return int(self.st.shape[0])

    @cached_property
    def group_sizes(self) -> np.ndarray:
        return self.st.sum(axis=1)

    @cached_property
    def _size_blocks(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        sizes = self.group_sizes
        blocks = []
        for size in np.unique(sizes):
            idx = np.flatnonzero(sizes == size)
            blocks.append((int(size), idx, np.ascontiguousarray(self.st[idx].T, dtype=float)))
        return blocks


def _dense_check_eligible(counts: np.ndarray, l: int, labels: Sequence[str] | None) -> None:
    n = int(counts.sum())
    if n == 0:
        raise ParameterError("Anatomy needs at least one record.")
    top = int(np.argmax(counts))
    if int(counts[top]) * l > n:
        label = labels[top] if labels is not None and top < len(labels) else str(top)
        raise ParameterError(
            f"No l-diverse grouping exists for l = {l}: value {label!r} holds {int(counts[top])} of {n} "
            f"records, more than {n}/{l} = {n / l:g}; lower l."
        )


def _dense_group_compositions(counts: np.ndarray, l: int) -> tuple[list[np.ndarray], list[int]]:
    sets, reps = [], []
    m = len(counts)
    while np.count_nonzero(counts) >= l:
        order = np.argsort(-counts, kind="stable")
        top = order[:l]
        nxt = int(counts[order[l]]) if l < m else 0
        k = max(int(counts[top[-1]]) - nxt, 1)
        sets.append(np.sort(top))
        reps.append(k)
        counts[top] -= k
    return sets, reps


def _dense_anatomize(sa_codes, l, rng, labels=None) -> _DenseRelease:
    sa_codes = np.asarray(sa_codes)
    if l < 2:
        raise ParameterError(f"Anatomy needs l >= 2 (distinct sensitive values per group); got l = {l}.")
    if sa_codes.ndim != 1 or (sa_codes.size and sa_codes.min() < 0):
        raise ParameterError("Anatomy expects a one-dimensional array of non-negative sensitive-value codes.")
    m = max(int(sa_codes.max()) + 1 if sa_codes.size else 0, len(labels) if labels is not None else 0)
    counts = np.bincount(sa_codes, minlength=m).astype(np.int64)
    _dense_check_eligible(counts, l, labels)

    remaining = counts.copy()
    sets, reps = _dense_group_compositions(remaining, l)
    n_groups = int(sum(reps))
    reps_arr = np.asarray(reps, dtype=np.int64)
    block_start = np.concatenate([[0], np.cumsum(reps_arr)[:-1]])
    slot_group = np.concatenate(
        [np.repeat(np.arange(s, s + r), l) for s, r in zip(block_start, reps_arr)]
    ) if n_groups else np.zeros(0, np.int64)
    slot_value = np.concatenate([np.tile(vs, r) for vs, r in zip(sets, reps_arr)]) if n_groups else np.zeros(0, np.int64)

    st = np.zeros((n_groups, m), dtype=np.int64)
    np.add.at(st, (slot_group, slot_value), 1)

    res_group, res_value = [], []
    for v in np.flatnonzero(remaining):
        r = int(remaining[v])
        candidates = np.flatnonzero(st[:, v] == 0)
        if len(candidates) < r:
            raise PrivacyError(f"Anatomy could not place {r} residual records of value {v} l-diversely.")
        chosen = rng.choice(candidates, size=r, replace=False)
        st[chosen, v] += 1
        res_group.append(chosen)
        res_value.append(np.full(r, v))
    if res_group:
        slot_group = np.concatenate([slot_group, *res_group])
        slot_value = np.concatenate([slot_value, *res_value])

    record_order = np.lexsort((rng.random(len(sa_codes)), sa_codes))
    slot_order = np.lexsort((slot_group, slot_value))
    group_of_record = np.empty(len(sa_codes), dtype=np.int64)
    group_of_record[record_order] = slot_group[slot_order]
    return _DenseRelease(group_of_record=group_of_record, st=st, l=l)


def _dense_count_estimates(release: _DenseRelease, condition_mask: np.ndarray) -> np.ndarray:
    c = np.bincount(release.group_of_record[np.asarray(condition_mask, dtype=bool)], minlength=release.n_groups)
    c = c.astype(float)
    total = np.zeros(release.st.shape[1])
    for size, idx, st_t in release._size_blocks:
        total += (st_t @ c[idx]) / size
    return total


def _dense_count_estimate(release: _DenseRelease, condition_mask: np.ndarray, value: int) -> float:
    c = np.bincount(release.group_of_record[np.asarray(condition_mask, dtype=bool)], minlength=release.n_groups)
    return float(np.sum((c * release.st[:, value]) / release.group_sizes))


# ---------------------------------------------------------------------------------------------
# inputs: bucket sizes from a small range (many ties), records in a shuffled order

@hs.composite
def columns(draw):
    m = draw(hs.integers(1, 30))
    hi = draw(hs.sampled_from([1, 2, 3, 12]))
    counts = draw(hs.lists(hs.integers(0, hi), min_size=m, max_size=m))
    if draw(hs.booleans()):  # one or two dominant values: eligible or not, ties at the top
        for v in draw(hs.lists(hs.integers(0, m - 1), min_size=1, max_size=2)):
            counts[v] += draw(hs.integers(0, 40))
    codes = np.repeat(np.arange(m), counts)[:300]
    perm = np.random.default_rng(draw(hs.integers(0, 2**32 - 1))).permutation(len(codes))
    labels = [f"v{i}" for i in range(m + draw(hs.integers(0, 2)))] if draw(hs.booleans()) else None
    return codes[perm], labels


def _outcome(build, codes, l, seed, labels):
    rng = np.random.default_rng(seed)
    try:
        release = build(codes, l, rng, labels)
    except (ParameterError, PrivacyError) as exc:
        return None, (type(exc), str(exc)), rng.random(4)
    return release, None, rng.random(4)


def _assert_same(codes, l, seed, labels):
    new, new_err, new_after = _outcome(anatomize, codes, l, seed, labels)
    old, old_err, old_after = _outcome(_dense_anatomize, codes, l, seed, labels)
    assert new_err == old_err
    assert np.array_equal(new_after, old_after)  # same generator consumption
    if old is None:
        return None, None
    assert new.n_groups == old.n_groups and new.l == old.l
    assert np.array_equal(new.group_of_record, old.group_of_record)
    assert new.st.shape == old.st.shape and new.st.nnz == len(codes)
    assert np.array_equal(new.st.toarray(), old.st)
    assert np.array_equal(new.group_sizes, old.group_sizes) and new.group_sizes.dtype == old.group_sizes.dtype
    return new, old


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns(), hs.integers(1, 5), hs.integers(0, 2**32 - 1))
def test_same_release_errors_and_generator_state_as_the_dense_anatomy(column, l, seed):
    codes, labels = column
    _assert_same(codes, l, seed, labels)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns(), hs.integers(2, 4), hs.integers(0, 2**32 - 1), hs.floats(0.0, 1.0))
def test_same_estimates_as_the_dense_anatomy(column, l, seed, share):
    codes, labels = column
    new, old = _assert_same(codes, l, seed, labels)
    if new is None:
        return
    masks = [np.random.default_rng(seed).random(len(codes)) < share, np.ones(len(codes), bool),
             np.zeros(len(codes), bool)]
    for mask in masks:
        assert np.array_equal(anatomy_count_estimates(new, mask), _dense_count_estimates(old, mask))
        for v in range(new.st.shape[1]):
            assert anatomy_count_estimate(new, mask, v) == _dense_count_estimate(old, mask, v)


@settings(max_examples=300, deadline=None)
@given(hs.lists(hs.integers(0, 6), min_size=1, max_size=30), hs.integers(2, 4))
def test_same_group_compositions(counts, l):
    counts = np.asarray(counts, dtype=np.int64)
    old_left, new_left = counts.copy(), counts.copy()
    old_sets, old_reps = _dense_group_compositions(old_left, l)
    new_sets, new_reps = _group_compositions(new_left, l)
    assert np.array_equal(new_left, old_left)
    assert new_reps.tolist() == old_reps
    assert new_sets.shape == (len(old_reps), l)
    assert all(np.array_equal(a, b) for a, b in zip(new_sets, old_sets))


@pytest.mark.parametrize("m, n, l", [(40, 30_000, 2), (300, 20_000, 3), (7, 25_003, 2), (120, 40_001, 4)])
def test_same_release_on_larger_skewed_columns(m, n, l):
    """Thousands of groups, Zipf ties, residual records."""
    rng = np.random.default_rng(m)
    w = 1 / np.arange(1, m + 1) ** 1.1
    codes = np.concatenate([np.arange(m), rng.choice(m, size=n - m, p=w / w.sum())])
    new, old = _assert_same(codes, l, 5, None)
    mask = rng.random(n) < 0.1
    assert np.array_equal(anatomy_count_estimates(new, mask), _dense_count_estimates(old, mask))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns(), hs.integers(2, 4), hs.integers(0, 2**32 - 1))
def test_all_records_condition_returns_the_true_counts_exactly(column, l, seed):
    codes, labels = column
    try:
        release = anatomize(codes, l, np.random.default_rng(seed), labels)
    except ParameterError:
        return
    truth = np.bincount(codes, minlength=release.st.shape[1]).astype(float)
    assert np.array_equal(anatomy_count_estimates(release, np.ones(len(codes), bool)), truth)


def test_rr_anatomy_tensor_equals_the_dense_product():
    """rr's Anatomy estimate of the QI x S table keeps ST sparse and equals the dense computation."""
    from ppdp_desktop.core.methods.rr.evaluation import anatomy_tensor

    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, size=60)
    qi = [rng.integers(0, 3, size=60), rng.integers(0, 2, size=60)]
    tensor = anatomy_tensor(qi, [3, 2], codes, 2, np.random.default_rng(1), [str(i) for i in range(4)])
    release = anatomize(codes, 2, np.random.default_rng(1))
    share = release.st.toarray() / release.group_sizes[:, None]
    alpha = qi[0] * 2 + qi[1]
    groups = np.zeros((release.n_groups, 6))
    np.add.at(groups, (release.group_of_record, alpha), 1.0)
    assert np.allclose(tensor, (groups.T @ share).reshape(3, 2, 4))
