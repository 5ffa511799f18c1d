"""Perturbation Partitioning, PP (SPEC 2.3; thesis ch. 4): split the table into sub-tables with small
SA sub-domains, each to be perturbed with its own UP matrix.

:func:`partition_domain` works on the value counts only (no records) and returns a :class:`Partition`:
phase 1 balancing, phase 2 RCM rearranging (several tie-breaks tried, best kept), phase 3 DP merging.
:func:`~ppdp_desktop.core.methods.partition.blocks.assign_records` then deals concrete records to the sub-tables
according to the plan.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.partition.phases import as_groups, balance, candidate_orders, distribute_rest, merge
from ppdp_desktop.core.privacy.sensitivity import MAX_GAMMA

if TYPE_CHECKING:  # scipy is imported when a plan is made, not when the window opens
    from scipy import sparse


@dataclass(frozen=True, eq=False)
class Partition:
    """The PP plan for one sensitive attribute (all counts in the caller's value order)."""

    groups: sparse.csr_array  # (g x m) initial groups after phase 1, rows in creation order (int64, sparse)
    order: list[int]  # group order chosen in phase 2
    subtables: list[list[int]]  # group indices of each sub-table, in order
    table_counts: sparse.csr_array  # (k x m) counts per sub-table (int64, sparse: sorted indices, no zeros)
    rho1_i: np.ndarray  # Eq. 8 per sub-table
    gamma_i: np.ndarray  # Eq. 9 per sub-table
    eps_i: np.ndarray  # Eq. 21 per sub-table
    eps_part: float  # sum |T_i|/|T| eps_i
    eps_unpartitioned: float  # eps of plain UP on the whole table (gamma from rho1)
    a: float  # 2 sqrt(ln(2/delta))
    theta: int  # balancing parameter used (theta' when SA' != SA)
    sa_prime: np.ndarray  # bool mask of the values the requirement protects (f/n <= rho1)

    @property
    def m_i(self) -> np.ndarray:
        """Number of values present in each sub-table."""
        return np.diff(self.table_counts.indptr)


def gamma_of(rho1: float | np.ndarray, rho2: float) -> np.ndarray:
    """Eq. 9: gamma = rho2 (1 - rho1) / (rho1 (1 - rho2)), at most ``MAX_GAMMA`` as for every pair (a rho2 within
    rounding of 1 would otherwise give a retention of exactly 1, which the verifier refuses); inf where rho1 = 0."""
    r = np.asarray(rho1, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(r > 0, np.minimum(rho2 * (1.0 - r) / (r * (1.0 - rho2)), MAX_GAMMA), np.inf)


def eps_of(size: np.ndarray, m: np.ndarray, gamma: np.ndarray, a: float) -> np.ndarray:
    """Eq. 21: eps = a / sqrt(|T_i|) * (m_i / (gamma_i - 1) + 1)."""
    gamma = np.asarray(gamma, dtype=float)
    with np.errstate(divide="ignore"):
        ratio = np.where(np.isinf(gamma), 0.0, np.asarray(m, dtype=float) / (gamma - 1.0))
    return a / np.sqrt(np.asarray(size, dtype=float)) * (ratio + 1.0)


def _check(counts: np.ndarray, rho1: float, rho2: float, delta: float) -> np.ndarray:
    if not (0.0 < rho1 < rho2 < 1.0):
        raise ParameterError(f"PP needs 0 < rho1 < rho2 < 1; got rho1={rho1}, rho2={rho2}.")
    if not (0.0 < delta < 1.0):
        raise ParameterError(f"PP needs a confidence parameter 0 < delta < 1; got delta={delta}.")
    c = np.asarray(counts)
    if c.ndim != 1 or c.size == 0:
        raise ParameterError("PP needs a non-empty 1-D vector of value counts.")
    if not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(c != np.round(c)):
        raise ParameterError("PP value counts must be non-negative integers.")
    c = c.astype(np.int64)
    if c.sum() == 0:
        raise ParameterError("PP needs at least one record.")
    return c


def partition_domain(counts: np.ndarray, rho1: float, rho2: float, delta: float = 0.05) -> Partition:
    """Plan Perturbation Partitioning for value counts ``counts`` under (rho1, rho2)-privacy."""
    c = _check(counts, rho1, rho2, delta)
    n = int(c.sum())
    a = 2.0 * math.sqrt(math.log(2.0 / delta))
    sa_prime = c <= rho1 * n  # f_x / n <= rho1
    protected = np.where(sa_prime, c, 0)
    n_prime = int(protected.sum())
    if n_prime == 0:
        raise ParameterError(
            f"No sensitive value has a prior frequency at or below rho1={rho1}: (rho1, rho2)-privacy "
            "protects nothing here; raise rho1 or use another method."
        )
    f_max = int(protected.max())
    theta = n_prime // f_max
    groups = distribute_rest(balance(protected, theta), np.where(sa_prime, 0, c))

    best: tuple[float, list[int], list[int]] | None = None
    merged: dict[tuple[int, ...], float] = {}
    for order in candidate_orders(groups):
        if _cannot_win(merged.get(tuple(order[::-1])), best, len(order)):
            continue
        eps, cuts = merge(groups[order], sa_prime, rho2, a)
        merged[tuple(order)] = eps
        if np.isfinite(eps) and (best is None or eps < best[0] - 1e-12):
            best = (eps, order, cuts)
    if best is None:
        raise ParameterError(
            f"No valid partition for rho1={rho1}, rho2={rho2}: every sub-table would have a value "
            f"more frequent than rho2. Choose rho2 further above rho1."
        )
    eps_part, order, cuts = best
    subtables = [order[i:j] for i, j in zip(cuts[:-1], cuts[1:])]
    table_counts = _table_counts(groups, subtables)
    size = np.diff(np.concatenate([[0], np.cumsum(table_counts.data)])[table_counts.indptr])
    top = np.maximum.reduceat(np.where(sa_prime[table_counts.indices], table_counts.data, 0), table_counts.indptr[:-1])
    rho1_i = top / size
    gamma_i = gamma_of(rho1_i, rho2)
    eps_i = eps_of(size, np.diff(table_counts.indptr), gamma_i, a)
    eps_part = float(np.sum(size / n * eps_i))
    eps_up = float(eps_of(np.array([n]), np.array([np.count_nonzero(c)]), gamma_of(rho1, rho2), a)[0])
    return Partition(
        groups=groups, order=list(order), subtables=subtables, table_counts=table_counts,
        rho1_i=rho1_i, gamma_i=gamma_i, eps_i=eps_i, eps_part=eps_part, eps_unpartitioned=eps_up,
        a=a, theta=theta, sa_prime=sa_prime,
    )


def _cannot_win(reverse_eps: float | None, best: tuple | None, t: int) -> bool:
    """Whether an order whose reverse merged to ``reverse_eps`` cannot replace ``best`` (by 1e-12).

    Both merge the same runs with the same float costs, only summed in the opposite order, so their
    optima differ by at most ``2 gamma_t`` relative (``gamma_t = t u / (1 - t u)``, u = 2^-53); taken
    as ``4 t u``. An infinite one stays infinite. When in doubt (huge t or eps) the order is merged.
    """
    if reverse_eps is None:
        return False
    if not np.isfinite(reverse_eps):
        return True
    return best is not None and reverse_eps * (1.0 - 4.0 * t * 2.0 ** -53) >= best[0] - 1e-12


def _table_counts(groups: sparse.csr_array, subtables: list[list[int]]) -> sparse.csr_array:
    """(k x m) sparse counts of each sub-table: the sum of its groups' rows."""
    from scipy import sparse

    rows = np.repeat(np.arange(len(subtables)), [len(s) for s in subtables])
    cols = np.array([i for s in subtables for i in s], dtype=np.int64)
    member = sparse.csr_array((np.ones(cols.size, dtype=np.int64), (rows, cols)),
                              shape=(len(subtables), groups.shape[0]))
    return as_groups(member @ groups)
