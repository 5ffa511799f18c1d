"""Anatomy (Xiao & Tao, VLDB 2006) as a utility baseline (SPEC 6, thesis 4.4.1).

The records are cut into l-diverse groups; the release is the quasi-identifier table
QIT(QI, GID) — here the record -> group map — and the sensitive table ST(GID, SA, count).
A count query ``COUNT(*) WHERE condition AND SA = x`` is estimated as
``sum_g c(g, condition) * c(g, SA = x) / |g|``.

Group formation is the standard algorithm: one bucket per sensitive value; while at least ``l``
buckets are non-empty, take one record from each of the ``l`` largest buckets to form a group;
the residual records (fewer than ``l`` non-empty buckets left) each join an existing group that
does not yet hold their value. A grouping exists iff no value holds more than ``n / l`` records.

The group loop works on the bucket sizes only (and takes many identical steps at once); the
records are then dealt to the groups with one vectorized sort.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.evaluation.workload import SELECTIVITIES, WorkloadResult, run_workload


@dataclass(frozen=True)
class AnatomyRelease:
    """QIT as ``group_of_record`` (record -> group id) and ST as a groups x m count matrix."""

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
        """(size, group ids, ST^T of those groups as float) per distinct group size, for fast estimates."""
        sizes = self.group_sizes
        blocks = []
        for size in np.unique(sizes):
            idx = np.flatnonzero(sizes == size)
            blocks.append((int(size), idx, np.ascontiguousarray(self.st[idx].T, dtype=float)))
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


def _group_compositions(counts: np.ndarray, l: int) -> tuple[list[np.ndarray], list[int]]:
    """Greedy 'l largest buckets' on the bucket sizes; returns (value sets, repetitions) and leaves residuals in counts."""
    sets, reps = [], []
    m = len(counts)
    while np.count_nonzero(counts) >= l:
        order = np.argsort(-counts, kind="stable")
        top = order[:l]
        nxt = int(counts[order[l]]) if l < m else 0
        # the same l buckets stay the largest until the l-th drops to the (l+1)-th
        k = max(int(counts[top[-1]]) - nxt, 1)
        sets.append(np.sort(top))
        reps.append(k)
        counts[top] -= k
    return sets, reps


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
    n_groups = int(sum(reps))
    # (group, value) slots of the main phase: group g of block b holds each value of sets[b] once
    reps_arr = np.asarray(reps, dtype=np.int64)
    block_start = np.concatenate([[0], np.cumsum(reps_arr)[:-1]])
    slot_group = np.concatenate(
        [np.repeat(np.arange(s, s + r), l) for s, r in zip(block_start, reps_arr)]
    ) if n_groups else np.zeros(0, np.int64)
    slot_value = np.concatenate([np.tile(vs, r) for vs, r in zip(sets, reps_arr)]) if n_groups else np.zeros(0, np.int64)

    st = np.zeros((n_groups, m), dtype=np.int64)
    np.add.at(st, (slot_group, slot_value), 1)

    # residual values: each residual record joins a distinct group lacking its value
    res_group, res_value = [], []
    for v in np.flatnonzero(remaining):
        r = int(remaining[v])
        candidates = np.flatnonzero(st[:, v] == 0)
        if len(candidates) < r:  # impossible when the eligibility condition holds
            raise PrivacyError(f"Anatomy could not place {r} residual records of value {v} l-diversely.")
        chosen = rng.choice(candidates, size=r, replace=False)
        st[chosen, v] += 1
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
    return AnatomyRelease(group_of_record=group_of_record, st=st, l=l)


def anatomy_count_estimates(release: AnatomyRelease, condition_mask: np.ndarray) -> np.ndarray:
    """Estimates of ``COUNT(*) WHERE condition AND SA = x`` for every value x (length m).

    Groups are summed per group size (few distinct sizes): ``(c[sel] @ ST[sel]) / size`` is an
    exact integer product divided once, so the all-records condition returns the true counts exactly.
    """
    c = np.bincount(release.group_of_record[np.asarray(condition_mask, dtype=bool)], minlength=release.n_groups)
    c = c.astype(float)
    total = np.zeros(release.st.shape[1])
    for size, idx, st_t in release._size_blocks:
        total += (st_t @ c[idx]) / size
    return total


def anatomy_count_estimate(release: AnatomyRelease, condition_mask: np.ndarray, value: int) -> float:
    """Estimate of ``COUNT(*) WHERE condition AND SA = value``: sum_g c(g, cond) c(g, value) / |g|."""
    c = np.bincount(release.group_of_record[np.asarray(condition_mask, dtype=bool)], minlength=release.n_groups)
    return float(np.sum((c * release.st[:, value]) / release.group_sizes))


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
