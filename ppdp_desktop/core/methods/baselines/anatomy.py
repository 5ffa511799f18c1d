"""Anatomy (Xiao & Tao, VLDB 2006) as a utility baseline (SPEC 6, thesis 4.4.1).

The records are cut into l-diverse groups; the release is the quasi-identifier table
QIT(QI, GID) — here the record -> group map — and the sensitive table ST(GID, SA, count).
A count query ``COUNT(*) WHERE condition AND SA = x`` is estimated as
``sum_g c(g, condition) * c(g, SA = x) / |g|``.

Group formation is the standard algorithm: one bucket per sensitive value; while at least ``l``
buckets are non-empty, take one record from each of the ``l`` largest buckets to form a group;
the residual records (fewer than ``l`` non-empty buckets left) each join an existing group that
does not yet hold their value. A grouping exists iff no value holds more than ``n / l`` records.

Scale (1M records, 70,000 values): the group loop keeps the bucket sizes in a heap (ties: lower
value first, as a stable sort) and takes many identical steps at once, so a step costs O(l log m);
once the largest buckets level off (any skewed domain) nearly every step is a single group, about
n / l steps in all. The records are then dealt to the groups with one vectorized sort. ST is a
sparse matrix with one entry per record (no value twice in a group), and a query costs
O(n + m * distinct group sizes); no groups x m array is ever built.
"""
from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import sparse

from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.evaluation.workload import SELECTIVITIES, WorkloadResult, run_workload


class SensitiveTable(sparse.csr_array):
    """ST as a sparse groups x m count matrix (CSR, one stored entry per record)."""


@dataclass(frozen=True)
class AnatomyRelease:
    """QIT as ``group_of_record`` (record -> group id) and ST as a sparse groups x m count matrix."""

    group_of_record: np.ndarray
    st: sparse.csr_array
    l: int

    @property
    def n_groups(self) -> int:
        return int(self.st.shape[0])

    @cached_property
    def group_sizes(self) -> np.ndarray:
        return np.asarray(self.st.sum(axis=1), dtype=np.int64).ravel()

    @cached_property
    def _size_blocks(self) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]]:
        """(size, group, value, count or None when all 1) of ST's entries per distinct group size.

        Within a block the entries run by group, so a query reads its per-group counts in order.
        """
        st = self.st
        entry_group = np.repeat(np.arange(st.shape[0], dtype=np.int64), np.diff(st.indptr))
        entry_value = np.asarray(st.indices, dtype=np.int64)
        entry_count = np.asarray(st.data, dtype=np.int64)
        entry_size = self.group_sizes[entry_group]
        order = np.argsort(entry_size, kind="stable")
        sizes = entry_size[order]
        cuts = np.flatnonzero(np.diff(sizes)) + 1
        blocks = []
        for part in np.split(order, cuts):
            if len(part) == 0:
                continue
            counts = entry_count[part]
            blocks.append((int(entry_size[part[0]]), entry_group[part], entry_value[part],
                           None if bool((counts == 1).all()) else counts.astype(float)))
        return blocks


def _check_eligible(counts: np.ndarray, l: int, labels: Sequence[str] | None) -> None:
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


def _group_compositions(counts: np.ndarray, l: int) -> tuple[np.ndarray, np.ndarray]:
    """Greedy 'l largest buckets' on the bucket sizes; leaves the residuals in ``counts``.

    Returns (value sets as a blocks x l array, each row ascending; repetitions per block). The
    buckets sit in a heap of the integer keys ``-count * m + value``: the smallest key is the
    largest bucket, the lower value first among equal sizes (as a stable sort on -counts).
    """
    m = len(counts)
    heap = [int(v) - int(counts[v]) * m for v in np.flatnonzero(counts)]
    heapq.heapify(heap)
    pop, push, pushpop = heapq.heappop, heapq.heappush, heapq.heappushpop
    tops: list[int] = []
    reps: list[int] = []
    if len(heap) < l:
        return np.zeros((0, l), np.int64), np.zeros(0, np.int64)
    top = [pop(heap) for _ in range(l)]  # ascending keys: the l largest buckets, largest first
    while True:
        # the same l buckets stay the largest until the l-th drops to the (l+1)-th
        k = (heap[0] // m if heap else 0) - top[-1] // m
        if k < 1:
            k = 1
        tops.extend(top)
        reps.append(k)
        step = k * m
        if top[-1] + step < 0:
            # all l stay non-empty: l push-pops leave the l smallest keys of heap + top in hand
            top = sorted([pushpop(heap, key + step) for key in top])
        else:
            for key in top:
                if key + step < 0:
                    push(heap, key + step)
            if len(heap) < l:
                break
            top = [pop(heap) for _ in range(l)]
    counts[:] = 0
    for key in heap:
        counts[key % m] = -(key // m)
    sets = np.sort((np.asarray(tops, dtype=np.int64) % m).reshape(-1, l), axis=1)
    return sets, np.asarray(reps, dtype=np.int64)


def anatomize(
    sa_codes: np.ndarray, l: int, rng: np.random.Generator, labels: Sequence[str] | None = None
) -> AnatomyRelease:
    """Form l-diverse groups of the records by the Anatomy algorithm; ``labels`` name the codes in errors."""
    sa_codes = np.asarray(sa_codes)
    if l < 2:
        raise ParameterError(f"Anatomy needs l >= 2 (distinct sensitive values per group); got l = {l}.")
    if sa_codes.ndim != 1 or (sa_codes.size and sa_codes.min() < 0):
        raise ParameterError("Anatomy expects a one-dimensional array of non-negative sensitive-value codes.")
    m = max(int(sa_codes.max()) + 1 if sa_codes.size else 0, len(labels) if labels is not None else 0)
    counts = np.bincount(sa_codes, minlength=m).astype(np.int64)
    _check_eligible(counts, l, labels)

    remaining = counts.copy()
    sets, reps = _group_compositions(remaining, l)
    n_groups = int(reps.sum())
    # (group, value) slots of the main phase: group g of block b holds each value of sets[b] once
    slot_group = np.repeat(np.arange(n_groups, dtype=np.int64), l)
    slot_value = np.repeat(sets, reps, axis=0).ravel()

    # residual values (fewer than l): each residual record joins a distinct group lacking its value;
    # the values are distinct, so a group lacks v iff its block's set lacks v
    res_group, res_value = [], []
    for v in np.flatnonzero(remaining):
        r = int(remaining[v])
        candidates = np.flatnonzero(~np.repeat((sets == v).any(axis=1), reps))
        if len(candidates) < r:  # impossible when the eligibility condition holds
            raise PrivacyError(f"Anatomy could not place {r} residual records of value {v} l-diversely.")
        chosen = rng.choice(candidates, size=r, replace=False)
        res_group.append(chosen)
        res_value.append(np.full(r, v))
    if res_group:
        slot_group = np.concatenate([slot_group, *res_group])
        slot_value = np.concatenate([slot_value, *res_value])

    # deal the records: within each value, a random order of records meets that value's slots
    record_order = np.lexsort((rng.random(len(sa_codes)), sa_codes))
    slot_order = np.lexsort((slot_group, slot_value))
    group_of_record = np.empty(len(sa_codes), dtype=np.int64)
    group_of_record[record_order] = slot_group[slot_order]

    # the slots sorted by (value, group) are ST in CSC order (every value holds counts[v] slots)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    csc = sparse.csc_array((np.ones(len(slot_order), dtype=np.int64), slot_group[slot_order], indptr),
                           shape=(n_groups, m)).tocsr()
    st = SensitiveTable((csc.data, csc.indices, csc.indptr), shape=(n_groups, m))
    return AnatomyRelease(group_of_record=group_of_record, st=st, l=l)


def anatomy_count_estimates(release: AnatomyRelease, condition_mask: np.ndarray) -> np.ndarray:
    """Estimates of ``COUNT(*) WHERE condition AND SA = x`` for every value x (length m).

    Groups are summed per group size (few distinct sizes): the integer sum of ``c(g) * c(g, x)``
    over the groups of one size is exact in floats and divided once, so the all-records condition
    returns the true counts exactly. O(n + m) per distinct size; no groups x m array.
    """
    c = np.bincount(release.group_of_record[np.asarray(condition_mask, dtype=bool)], minlength=release.n_groups)
    c = c.astype(float)
    m = release.st.shape[1]
    total = np.zeros(m)
    for size, group, value, count in release._size_blocks:
        weights = c[group] if count is None else c[group] * count
        total += np.bincount(value, weights=weights, minlength=m) / size
    return total


def anatomy_count_estimate(release: AnatomyRelease, condition_mask: np.ndarray, value: int) -> float:
    """Estimate of ``COUNT(*) WHERE condition AND SA = value``: sum_g c(g, cond) c(g, value) / |g|."""
    c = np.bincount(release.group_of_record[np.asarray(condition_mask, dtype=bool)], minlength=release.n_groups)
    st = release.st
    column = np.zeros(release.n_groups, dtype=np.int64)  # ST[:, value], one group-length vector
    hits = np.flatnonzero(st.indices == value)
    column[np.searchsorted(st.indptr, hits, side="right") - 1] = st.data[hits]
    return float(np.sum((c * column) / release.group_sizes))


def count_query_error_anatomy(
    conditions: pd.DataFrame,
    true_codes: np.ndarray,
    release: AnatomyRelease,
    seed: int = 0,
    n_conditions: int = 200,
    selectivities: tuple[float, ...] = SELECTIVITIES,
) -> WorkloadResult:
    """The count-query workload of :func:`workload.count_query_error` answered from an Anatomy release.

    The conditions are drawn exactly as there (same generator, same order of draws), so for the
    same seed and columns both methods answer the same queries.
    """
    return run_workload(
        conditions, np.asarray(true_codes), release.st.shape[1],
        lambda mask: anatomy_count_estimates(release, mask), seed, n_conditions, selectivities,
    )
