"""An l-diverse generalization of the quasi-identifiers as a utility baseline (SPEC 6, seed 001 V).

Seed 001 compares against Incognito with entropy l-diversity; SPEC 6 accepts a Mondrian-style
l-diverse partition if documented. This module is that substitute:

* **Mondrian** (LeFevre, DeWitt & Ramakrishnan, ICDE 2006), strict multidimensional partitioning with
  **median splits**: a partition is split on the quasi-identifier with the widest *normalized* code
  range (the partition's range divided by the attribute's range over the whole table) at the median
  code — records with code <= median go left, the others right (if that leaves the right half empty,
  the split point moves just below the median). If the widest attribute cannot be split, the next
  widest is tried; a partition is final when no attribute can be split.
* **Distinct l-diversity**: a split is accepted only if both halves hold at least ``l`` distinct
  sensitive values (so every final partition does, given the whole table does).
* **Our own hierarchies are the code order**: every quasi-identifier is an integer code whose order is
  the ordinal order; a partition publishes per attribute the range ``[lo, hi]`` of the codes its
  records hold (no external taxonomy is used).

The release is ``partition_of_record`` (the generalized table: each record shows its partition's
ranges), ``ranges`` (partitions x q x 2) and ``sa_counts`` (partitions x m).

A count query ``QI_j = a_j (chosen attributes) AND SA = x`` is estimated by spreading each partition
uniformly over its box: ``sum_p c(p, x) * prod_j [lo_pj <= a_j <= hi_pj] / (hi_pj - lo_pj + 1)``.

The recursion is an explicit stack over partitions; the work inside a partition is vectorized.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ppdp_desktop.core.errors import ParameterError


@dataclass(frozen=True)
class MondrianRelease:
    """``partition_of_record`` (n,), ``ranges`` (partitions x q x 2, inclusive [lo, hi] codes) and
    ``sa_counts`` (partitions x m)."""

    partition_of_record: np.ndarray
    ranges: np.ndarray
    sa_counts: np.ndarray
    l: int

    @property
    def n_partitions(self) -> int:
        return int(self.sa_counts.shape[0])

    @property
    def partition_sizes(self) -> np.ndarray:
        return self.sa_counts.sum(axis=1)


def _n_distinct(sa: np.ndarray, m: int) -> int:
    return int(np.count_nonzero(np.bincount(sa, minlength=m)))


def _try_split(
    idx: np.ndarray, qi: np.ndarray, sa: np.ndarray, m: int, l: int, span: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The accepted median split of the records ``idx`` (left, right), or None if none is allowed."""
    block = qi[idx]
    lo, hi = block.min(axis=0), block.max(axis=0)
    width = (hi - lo) / span
    for j in np.argsort(-width, kind="stable"):
        if hi[j] == lo[j]:
            break  # this and every narrower attribute hold a single code
        col = block[:, j]
        med = np.median(col)
        left = col <= med
        if left.all():  # the median is the maximum: split just below it
            left = col < med
        left_idx, right_idx = idx[left], idx[~left]
        if _n_distinct(sa[left_idx], m) >= l and _n_distinct(sa[right_idx], m) >= l:
            return left_idx, right_idx
    return None


def mondrian_l_diverse(
    qi_codes: np.ndarray, sa_codes: np.ndarray, l: int, m: int | None = None
) -> MondrianRelease:
    """Partition the records Mondrian-style into distinct-l-diverse boxes of the QI code space.

    ``qi_codes``: n x q non-negative integer codes (code order = ordinal order); ``sa_codes``: n
    sensitive-value codes; ``m``: the sensitive domain size (default: largest code + 1).
    """
    qi = np.asarray(qi_codes)
    sa = np.asarray(sa_codes)
    if l < 2:
        raise ParameterError(f"The l-diverse generalization needs l >= 2 distinct sensitive values; got l = {l}.")
    if qi.ndim == 1:
        qi = qi[:, None]
    if qi.ndim != 2 or sa.ndim != 1 or len(qi) != len(sa):
        raise ParameterError(
            "The l-diverse generalization expects an n x q quasi-identifier code matrix and n sensitive codes."
        )
    if len(sa) == 0 or qi.shape[1] == 0:
        raise ParameterError("The l-diverse generalization needs at least one record and one quasi-identifier.")
    if not (np.issubdtype(qi.dtype, np.integer) and np.issubdtype(sa.dtype, np.integer)):
        raise ParameterError("The l-diverse generalization expects integer codes.")
    if qi.min() < 0 or sa.min() < 0:
        raise ParameterError("The l-diverse generalization expects non-negative codes.")
    m = max(int(sa.max()) + 1, int(m or 0))
    distinct = _n_distinct(sa, m)
    if distinct < l:
        raise ParameterError(
            f"No l-diverse generalization exists for l = {l}: the table holds only {distinct} distinct "
            f"sensitive value(s); lower l to at most {distinct}."
        )

    span = np.maximum(qi.max(axis=0) - qi.min(axis=0), 1).astype(float)
    final: list[np.ndarray] = []
    stack = [np.arange(len(sa))]
    while stack:
        idx = stack.pop()
        split = _try_split(idx, qi, sa, m, l, span)
        if split is None:
            final.append(idx)
        else:
            stack.append(split[1])
            stack.append(split[0])

    n_parts = len(final)
    partition_of_record = np.empty(len(sa), dtype=np.int64)
    ranges = np.empty((n_parts, qi.shape[1], 2), dtype=np.int64)
    for p, idx in enumerate(final):
        partition_of_record[idx] = p
        block = qi[idx]
        ranges[p, :, 0] = block.min(axis=0)
        ranges[p, :, 1] = block.max(axis=0)
    sa_counts = np.zeros((n_parts, m), dtype=np.int64)
    np.add.at(sa_counts, (partition_of_record, sa), 1)
    return MondrianRelease(partition_of_record=partition_of_record, ranges=ranges, sa_counts=sa_counts, l=l)


def mondrian_weights(release: MondrianRelease, conditions: Mapping[int, int]) -> np.ndarray:
    """Per partition, the fraction of its box matching ``QI_j = a_j`` for all ``j`` in ``conditions``."""
    w = np.ones(release.n_partitions)
    q = release.ranges.shape[1]
    for j, a in conditions.items():
        if not 0 <= int(j) < q:
            raise ParameterError(f"Condition on quasi-identifier {j}, but the release has {q} (0..{q - 1}).")
        lo, hi = release.ranges[:, j, 0], release.ranges[:, j, 1]
        w *= ((lo <= a) & (a <= hi)) / (hi - lo + 1)
    return w


def mondrian_estimate(release: MondrianRelease, conditions: Mapping[int, int]) -> np.ndarray:
    """Estimates of ``COUNT(*) WHERE QI_j = a_j (j in conditions) AND SA = x`` for every x (length m).

    Uniform spreading in each partition: ``sum_p c(p, x) prod_j [a_j in range_pj] / |range_pj|``.
    The empty condition returns the sensitive-value totals exactly.
    """
    return mondrian_weights(release, conditions) @ release.sa_counts
