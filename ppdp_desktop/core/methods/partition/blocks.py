"""The sub-tables of a partition as one block-diagonal retention matrix (SPEC 2.3; issue 18).

Each sub-table perturbs its records uniformly over its own values, so the whole release is one matrix over the
*entries* (sub-table, value), block-diagonal with one block per sub-table:
:class:`~ppdp_desktop.core.privacy.structured.RetentionMatrix` with ``starts``. Estimating, verifying and
perturbing then take a few vectorized passes over the records and O(entries) memory, whatever the number of
sub-tables — instead of a loop over thousands of sub-tables, each scanning every record. An entry's estimate
counts towards its value: :meth:`SubtableBlocks.to_values` sums them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.persistent import mechanism_digests
from ppdp_desktop.core.privacy.structured import RetentionMatrix

#: :meth:`SubtableBlocks.entries` looks the records' keys up in a dense table of every (sub-table, value) key when
#: there are at most this many (8 bytes each), else by binary search
DENSE_KEYS = 1 << 22

if TYPE_CHECKING:
    from scipy import sparse

    from ppdp_desktop.core.privacy.keyed import KeyedRandomness


def canonical_counts(table_counts: np.ndarray | sparse.sparray, by: str = "row") -> sparse.sparray:
    """A (sub-tables x values) count table, dense or sparse, as an int64 CSR (``by="row"``) or CSC
    (``by="value"``) array with sorted indices and no stored zeros."""
    from scipy import sparse

    counts = (sparse.csr_array if by == "row" else sparse.csc_array)(table_counts, dtype=np.int64)
    counts.eliminate_zeros()
    counts.sum_duplicates()  # canonical: sorted indices
    return counts


@dataclass(frozen=True, eq=False)
class SubtableBlocks:
    """Entries (sub-table, value), sub-table by sub-table and, within one, by value code.

    ``values``: the domain code of each entry; ``starts``: each sub-table's first entry; ``retention``: each
    sub-table's one retention probability; ``m``: the size of the whole domain.
    """

    values: np.ndarray
    starts: np.ndarray
    retention: np.ndarray
    m: int

    @classmethod
    def from_counts(cls, table_counts: np.ndarray | sparse.sparray, retention: np.ndarray) -> SubtableBlocks:
        """The entries of a (sub-tables x values) count table, dense or sparse, with a retention per sub-table."""
        counts = canonical_counts(table_counts)  # each row's value codes ascending
        sizes = np.diff(counts.indptr)
        if np.any(sizes == 0):
            raise ParameterError("A sub-table of the partition holds no value.")
        return cls(counts.indices.astype(np.int64), counts.indptr[:-1].astype(np.int64),
                   np.asarray(retention, dtype=float), int(counts.shape[1]))

    @property
    def sizes(self) -> np.ndarray:
        """Number of values of each sub-table."""
        return np.diff(np.append(self.starts, len(self.values)))

    @property
    def n_subtables(self) -> int:
        return len(self.starts)

    @property
    def matrix(self) -> RetentionMatrix:
        """The block-diagonal matrix over the entries: keep with the sub-table's retention, else draw one of its
        values uniformly."""
        return RetentionMatrix(np.repeat(self.retention, self.sizes), self.starts)

    def members(self, s: int) -> np.ndarray:
        """Value codes of sub-table ``s``."""
        return self.values[self.starts[s]:self.starts[s] + self.sizes[s]]

    def entries(self, subtable: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The entry of each record (its sub-table, its value); -1 where the value is not one of its sub-table's."""
        keys = np.repeat(np.arange(self.n_subtables, dtype=np.int64), self.sizes) * self.m + self.values  # ascending
        wanted = np.asarray(subtable, dtype=np.int64) * self.m + np.asarray(codes, dtype=np.int64)
        space = self.n_subtables * self.m
        if len(wanted) and space <= DENSE_KEYS and int(wanted.min()) >= 0 and int(wanted.max()) < space:
            lookup = np.full(space, -1, dtype=np.int64)  # every (sub-table, value) key: its entry, or -1
            lookup[keys] = np.arange(len(keys), dtype=np.int64)
            return lookup[wanted]  # one gather instead of a binary search per record
        position = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        return np.where(keys[position] == wanted, position, -1)

    def observed(self, entries: np.ndarray) -> np.ndarray:
        """Released records per entry."""
        return np.bincount(entries, minlength=len(self.values)).astype(float)

    def to_values(self, per_entry: np.ndarray) -> np.ndarray:
        """Per-entry figures summed by value (the last axis)."""
        from ppdp_desktop.core.privacy.reconstruction import sum_by_group

        return sum_by_group(per_entry, self.values, self.m)

    def mechanisms(self, attribute: str, labels: Sequence[object]) -> np.ndarray:
        """Per entry (a value in a sub-table), its mechanism digest: the sub-table's values in order, the entry's
        retention and the sub-table's size (:func:`~ppdp_desktop.core.privacy.persistent.mechanism_digests`)."""
        out = np.empty(len(self.values), dtype=np.uint64)
        for k, (a, b) in enumerate(zip(self.starts.tolist(), [*self.starts[1:].tolist(), len(self.values)])):
            out[a:b] = mechanism_digests(f"{attribute}\x00sub-table {k}", [labels[v] for v in self.values[a:b]],
                                         self.retention[k] * np.ones(b - a), b - a)
        return out

    def perturb(self, subtable: np.ndarray, entries: np.ndarray, keyed: KeyedRandomness, attribute: str,
                start: int = 0, mechanism: np.ndarray | None = None) -> np.ndarray:
        """Each record keeps its value with its sub-table's retention, else gets one of its sub-table's values
        drawn uniformly; every draw keyed by the record's index (``start``: the first record's). ``mechanism``:
        per record, its entry's mechanism digest (persistent draws when the records are bound)."""
        return self.values[self.redraw(subtable, entries, keyed, attribute, start, mechanism)]

    def redraw(self, subtable: np.ndarray, entries: np.ndarray, keyed: KeyedRandomness, attribute: str,
               start: int = 0, mechanism: np.ndarray | None = None) -> np.ndarray:
        """:meth:`perturb`'s released *entries*: ``entries`` kept with the sub-table's retention, else one of the
        sub-table's entries drawn uniformly (a kept plan's later stage redraws an earlier stage's entries so)."""
        subtable = np.asarray(subtable, dtype=np.int64)
        keep, drawn = keyed.keep_or_draw(attribute, start, start + len(entries), self.retention[subtable],
                                         self.sizes[subtable], mechanism=mechanism)
        return np.where(keep, entries, self.starts[subtable] + drawn)


def assign_records(codes: np.ndarray, table_counts: np.ndarray | sparse.sparray,
                   rng: np.random.Generator | None = None, keys: np.ndarray | None = None) -> np.ndarray:
    """Sub-table id per record: value ``v``'s records are put in a random order and dealt so that sub-table
    ``k`` gets ``table_counts[k, v]`` of them. The order is by the records' keyed sort ``keys`` (a release), or a
    permutation drawn from ``rng``. ``codes`` are value indices into the counts' order; the table may be sparse
    (a 70,000-value domain in thousands of sub-tables)."""
    codes = np.asarray(codes, dtype=np.int64)
    by_value = canonical_counts(table_counts, by="value")  # each value's sub-tables ascending
    have = np.bincount(codes, minlength=by_value.shape[1])
    if have.size != by_value.shape[1] or np.any(have != np.asarray(by_value.sum(axis=0)).ravel()):
        raise ParameterError("The records' value counts do not match the partition plan.")
    # Records in random order, then grouped by value (stable): each value's block is a random
    # permutation of its records; deal each block to the sub-tables by the plan's counts.
    if keys is not None:  # by value, then by key (then index): each value's records in their keyed order
        grouped = _by_value_then_key(codes, keys)
    elif rng is None:
        raise TypeError("assign_records needs the records' sort keys or a generator to order them.")
    else:
        shuffled = rng.permutation(codes.size)
        grouped = shuffled[np.argsort(codes[shuffled], kind="stable")]
    labels = np.repeat(by_value.indices.astype(np.int64), by_value.data)
    out = np.empty(codes.size, dtype=np.int64)
    out[grouped] = labels
    return out


def _by_value_then_key(codes: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.lexsort((index, keys, codes))`` as two stable sorts: by key (ties by index), then by value code (ties
    kept in that order), the codes as 16-bit integers where they fit (a radix sort): half lexsort's time on 1M."""
    by_key = np.argsort(keys, kind="stable")
    ordered = codes[by_key]
    if len(codes) and 0 <= int(codes.min()) and int(codes.max()) < 1 << 15:
        ordered = ordered.astype(np.int16)
    return by_key[np.argsort(ordered, kind="stable")]
