"""Perturbation partitioning's plan kept for a project's next release (issue 30).

A partition planned afresh from next month's counts moves almost every sub-table, and with it every patient's
mechanism, so every draw would be fresh. While it still fits, the project's previous layout is kept instead:

* the same sub-tables with the same values; each value's new records split among its sub-tables in the previous
  proportions (largest remainders, so the integer counts add up), which the persistent deal
  (:meth:`~ppdp_desktop.core.methods.partition.method.PartitionPlan.bind`) fills with nearly the same patients;
* each sub-table's randomization kept as a chain of *stages*: the first stage is the previous release's own
  retention (so an unchanged patient's draw, keyed by the mechanism, is the same), and where the sub-table's top
  protected share rose so that Eq. 9 asks for a lower retention, one stage is added that keeps the value drawn so
  far with probability ``q`` and otherwise redraws it uniformly among the sub-table's values. Uniform matrices
  compose by multiplying their retentions (``(pI + (1-p)J/m)(qI + (1-q)J/m) = pqI + (1-pq)J/m``), so the published
  matrix is the uniform one of retention ``p q``; and the added stage only post-processes the earlier draw with
  randomness that does not depend on the true value, so the releases together tell no more than the earlier one.

The layout is not kept (None: planned afresh, every draw fresh and counted so) when the values, the pair or the
method differ, when a value no longer has a record for each of its sub-tables, when a sub-table's top share
reaches rho2, or when a sub-table's chain would exceed :data:`MAX_STAGES`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.methods.partition.phases import as_groups
from ppdp_desktop.core.methods.partition.subtables import Partition, eps_of, gamma_of
from ppdp_desktop.core.methods.perturbation.uniform import uniform_retention

if TYPE_CHECKING:
    from scipy import sparse

    from ppdp_desktop.core.data.domain import CategoricalDomain

#: a sub-table's randomization is at most this many stages (each one a draw per record); past it, planned afresh
MAX_STAGES = 8


def same_column_and_pair(previous: dict[str, Any], domain: CategoricalDomain, rho1: float, rho2: float) -> bool:
    """Whether the project's previous plan is partitioning's of this column, with its values and this pair."""
    return (previous.get("method") == "partition" and previous.get("attribute") == domain.attribute
            and previous.get("values") == [label_text(v) for v in domain.values]
            and previous.get("rho1") == rho1 and previous.get("rho2") == rho2)


def kept_notes(ordinal: int, lowered: int, subtables: int) -> list[str]:
    """The statement's sentences on a kept layout (release ``ordinal``'s) with ``lowered`` sub-tables redrawn."""
    notes = [f"The sub-tables of release {ordinal} of this project were kept (the column holds the same values and the "
             "same pair was asked for), each value's records split among them as before, so that an unchanged patient's "
             "sub-table and draw stay the same; a new value, another pair or a sub-table that no longer fits makes a "
             "new plan, and every patient's draw fresh."]
    if lowered:
        notes.append(f"In {lowered} of the {subtables} sub-tables the share of a protected value has risen since they "
                     "were planned, so their retention was lowered by redrawing what was drawn before (kept with a "
                     "probability, else one of the sub-table's values at random): a value redrawn so depends only on the "
                     "earlier draw, not on the patient's true value.")
    return notes


def layout_state(table_counts: sparse.csr_array, stages: list[list[float]]) -> dict[str, Any]:
    """The layout as the ledger keeps it (JSON): the (sub-tables x values) counts and each sub-table's stages."""
    return {"indptr": [int(i) for i in table_counts.indptr], "indices": [int(i) for i in table_counts.indices],
            "counts": [int(c) for c in table_counts.data], "stages": [[float(p) for p in s] for s in stages]}


def kept_partition(state: dict[str, Any], counts: np.ndarray, rho1: float, rho2: float,
                   delta: float = 0.05) -> tuple[Partition, list[list[float]]] | None:
    """The previous layout ``state`` (:func:`layout_state`) with the new value ``counts`` (same values, same order),
    and each sub-table's retention stages; None when it does not fit (module docstring)."""
    from scipy import sparse

    try:
        indptr = np.asarray(state["indptr"], dtype=np.int64)
        indices = np.asarray(state["indices"], dtype=np.int64)
        before = np.asarray(state["counts"], dtype=np.int64)
        stages = [[float(p) for p in s] for s in state["stages"]]
        theta = int(state.get("theta", 1))
    except (KeyError, TypeError, ValueError):
        return None
    c = np.asarray(counts, dtype=np.int64)
    m, k = c.size, len(indptr) - 1
    if (k < 1 or len(stages) != k or indptr[0] != 0 or indptr[-1] != len(indices) or len(indices) == 0
            or len(before) != len(indices) or np.any(np.diff(indptr) < 1) or np.any(before < 1)
            or np.any((indices < 0) | (indices >= m))
            or any(not s or not all(0.0 <= p <= 1.0 for p in s) for s in stages)):
        return None
    table = as_groups(sparse.csr_array((before, indices, indptr), shape=(k, m)))
    if table.nnz != len(indices):  # a value listed twice in a sub-table
        return None
    split = _split(table, c)
    if split is None:
        return None
    n = int(c.sum())
    sa_prime = c <= rho1 * n
    size = np.diff(np.concatenate([[0], np.cumsum(split.data)])[split.indptr])
    top = np.maximum.reduceat(np.where(sa_prime[split.indices], split.data, 0), split.indptr[:-1])
    rho1_i = top / size
    if np.any(rho1_i >= rho2) or not np.any(sa_prime):
        return None
    gamma_i = gamma_of(rho1_i, rho2)
    m_i = np.diff(split.indptr)
    with np.errstate(invalid="ignore"):
        needed = np.where(np.isfinite(gamma_i), uniform_retention(gamma_i, m_i), 1.0)
    stages = [_lowered(s, float(p)) for s, p in zip(stages, needed)]
    if any(len(s) > MAX_STAGES for s in stages):
        return None
    retention = np.array([math.prod(s) for s in stages])
    with np.errstate(divide="ignore"):
        effective_gamma = np.where(retention < 1.0, (1.0 + retention * (m_i - 1)) / (1.0 - retention), np.inf)
    a = 2.0 * math.sqrt(math.log(2.0 / delta))
    eps_i = eps_of(size, m_i, effective_gamma, a)
    eps_up = float(eps_of(np.array([n]), np.array([np.count_nonzero(c)]), gamma_of(rho1, rho2), a)[0])
    partition = Partition(groups=split, order=list(range(k)), subtables=[[i] for i in range(k)], table_counts=split,
                          rho1_i=rho1_i, gamma_i=gamma_i, eps_i=eps_i, eps_part=float(np.sum(size / n * eps_i)),
                          eps_unpartitioned=eps_up, a=a, theta=theta, sa_prime=sa_prime)
    return partition, stages


def _split(table: sparse.csr_array, counts: np.ndarray) -> sparse.csr_array | None:
    """Each value's ``counts`` split among the sub-tables that held it, in their previous proportions (floors, then
    one more for the largest remainders, ties to the earlier sub-table); None when a value has no record left for
    one of them, or a value with records has no sub-table."""
    by_value = table.tocsc()
    by_value.sort_indices()
    held = np.asarray(by_value.sum(axis=0)).ravel()
    if np.any((held == 0) & (counts > 0)):
        return None
    column = np.repeat(np.arange(by_value.shape[1]), np.diff(by_value.indptr))
    share = by_value.data * (counts[column] / np.where(held > 0, held, 1)[column])
    floor = np.floor(share).astype(np.int64)
    left = counts - np.bincount(column, weights=floor, minlength=len(counts)).astype(np.int64)
    # rank each entry within its value by remainder (largest first, then the earlier sub-table)
    order = np.lexsort((np.arange(len(share)), -(share - floor), column))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - by_value.indptr[column[order]]
    data = floor + (rank < left[column])
    if np.any(data < 1):
        return None
    from scipy import sparse

    out = sparse.csc_array((data, by_value.indices, by_value.indptr), shape=by_value.shape).tocsr()
    out.sort_indices()
    return out


def _lowered(stages: list[float], needed: float) -> list[float]:
    """``stages`` as they are when their product is within ``needed``; else with one stage more whose product is."""
    current = math.prod(stages)
    if current <= needed:
        return list(stages)
    q = needed / current
    while current * q > needed:  # rounding: the product must not exceed what Eq. 9 allows
        q = math.nextafter(q, 0.0)
    return [*stages, q]
