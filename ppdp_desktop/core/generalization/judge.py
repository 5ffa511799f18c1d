"""Which equivalence classes the criteria suppress, vectorized (the search's and the release's check).

Rows are weighted ``(class, sensitive value)`` pairs: the aggregated combinations of a lattice node (weights:
their record counts) or the records themselves (weight 1). Per-class criteria are evaluated on a dense
``classes x values`` count matrix built a block of classes at a time, so memory stays bounded; the average risk
is then enforced by suppressing the smallest remaining classes first (see :mod:`.criteria`).

The verifier of a released table (:mod:`.check_criteria`) does not use this module.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.table import ClassTable, mixed_key

_BLOCK_CELLS = 1 << 22  # cells of one dense block of class counts
_TOLERANCE = 1e-12  # entropies and distances are sums of floats: equal within this is equal


class Judge:
    """The criteria of one search, with the sensitive column's hierarchy and the whole table's counts of its values.

    Parameters
    ----------
    criteria : Criteria
    sensitive : Hierarchy or None
        The sensitive column's values (level 0; the levels above only for hierarchical t-closeness); None when no
        criterion reads it.
    totals : numpy.ndarray or None
        The number of records of each sensitive value code in the whole table (for t-closeness).
    """

    def __init__(self, criteria: Criteria, sensitive: Hierarchy | None = None, totals: np.ndarray | None = None) -> None:
        if criteria.needs_sensitive and sensitive is None:
            raise ValueError("l-diversity and t-closeness need the sensitive column's hierarchy")
        self.criteria, self.sensitive = criteria, sensitive
        self.m = len(sensitive.values) if sensitive is not None else 0
        self.overall = None
        if criteria.t is not None:
            if totals is None or totals.sum() <= 0:
                raise ValueError("t-closeness needs the whole table's counts of the sensitive values")
            self.overall = np.asarray(totals, dtype=np.float64) / float(totals.sum())
        self._maps: list[np.ndarray] = []
        if criteria.t is not None and criteria.hierarchical_t and sensitive is not None:
            for h in range(1, sensitive.height + 1):  # one-hot: label at h - 1 -> its label at h
                parent = sensitive.level_map(h - 1, h)
                onehot = np.zeros((len(parent), len(sensitive.labels(h))), dtype=np.float64)
                onehot[np.arange(len(parent)), parent] = 1.0
                self._maps.append(onehot)

    def suppressed_classes(self, classes: np.ndarray, n_classes: int, weights: np.ndarray,
                           values: np.ndarray | None = None, distinct_rows: bool = False) -> np.ndarray:
        """True for each class ``0 .. n_classes - 1`` whose records are suppressed.

        ``classes``, ``weights`` and ``values`` (sensitive value codes; needed when a criterion reads them) are one
        entry per row. ``distinct_rows``: no two rows share their class and value, and every weight is above 0 (a
        class table's rows), so a class's distinct values are its rows: distinct l-diversity alone needs no
        per-value counts.
        """
        sizes = np.bincount(classes, weights=weights, minlength=n_classes)
        fail = sizes < self.criteria.min_size
        c = self.criteria
        if distinct_rows and c.distinct_l is not None and c.entropy_l is None and c.recursive_l is None and c.t is None:
            fail |= np.bincount(classes, minlength=n_classes) < c.distinct_l
        elif c.needs_sensitive:
            assert values is not None
            fail |= self._diversity_fails(classes, n_classes, weights, values, sizes)
        if self.criteria.average_risk is not None:
            fail |= self._risk_suppressed(sizes, fail)
        return fail

    def _diversity_fails(self, classes: np.ndarray, n_classes: int, weights: np.ndarray, values: np.ndarray,
                         sizes: np.ndarray) -> np.ndarray:
        out = np.zeros(n_classes, dtype=bool)
        block = max(1, _BLOCK_CELLS // max(self.m, 1))
        if n_classes <= block:  # one block: every row, in its order
            order, bounds = np.arange(len(classes)), np.array([0, len(classes)])
        else:  # the rows of each block, in their order (a stable sort of the small block numbers is a radix sort)
            blocks = classes // block
            order = np.argsort(blocks.astype(np.uint16 if n_classes // block < 1 << 16 else np.int64), kind="stable")
            bounds = np.searchsorted(blocks[order], np.arange(0, n_classes // block + 2))
        for number, start in enumerate(range(0, n_classes, block)):
            stop = min(start + block, n_classes)
            rows = order[bounds[number]:bounds[number + 1]]
            flat = (classes[rows] - start).astype(np.int64) * self.m + values[rows]
            counts = np.bincount(flat, weights=weights[rows], minlength=(stop - start) * self.m)
            out[start:stop] = ~self._passes(counts.reshape(stop - start, self.m), sizes[start:stop])
        return out

    def _passes(self, counts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        c = self.criteria
        ok = np.ones(len(counts), dtype=bool)
        safe = np.where(sizes > 0, sizes, 1.0)[:, None]
        shares = counts / safe
        if c.distinct_l is not None:
            ok &= (counts > 0).sum(axis=1) >= c.distinct_l
        if c.entropy_l is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(shares > 0, shares * np.log(shares), 0.0)
            ok &= -terms.sum(axis=1) >= np.log(c.entropy_l) - _TOLERANCE
        if c.recursive_l is not None and c.recursive_c is not None:
            ranked = -np.sort(-counts, axis=1)
            tail = ranked[:, c.recursive_l - 1:].sum(axis=1) if c.recursive_l <= self.m else np.zeros(len(counts))
            ok &= ranked[:, 0] < c.recursive_c * tail
        if c.t is not None and self.overall is not None:
            ok &= self._distance(shares) <= c.t + _TOLERANCE
        return ok

    def _distance(self, shares: np.ndarray) -> np.ndarray:
        """The earth mover's distance of each class's shares to the whole table's."""
        extra = shares - self.overall
        if not self._maps:
            return 0.5 * np.abs(extra).sum(axis=1)
        height = len(self._maps)
        cost = np.zeros(len(shares))
        for h, onehot in enumerate(self._maps, start=1):
            positive = np.maximum(extra, 0.0) @ onehot
            negative = np.maximum(-extra, 0.0) @ onehot
            cost += (h / height) * np.minimum(positive, negative).sum(axis=1)
            extra = extra @ onehot
        return cost

    def _risk_suppressed(self, sizes: np.ndarray, fail: np.ndarray) -> np.ndarray:
        """The classes the average risk suppresses besides ``fail``: the smallest first, as few as needed."""
        assert self.criteria.average_risk is not None
        risk = Fraction(repr(float(self.criteria.average_risk)))
        kept = np.flatnonzero(~fail & (sizes > 0))
        kept = kept[np.argsort(sizes[kept], kind="stable")]
        n_classes, n_records = len(kept), float(sizes[kept].sum())
        removed = np.concatenate([[0.0], np.cumsum(sizes[kept])])
        # after removing the j smallest: (n_classes - j) classes over (n_records - removed[j]) records
        j = np.arange(n_classes + 1)
        good = (n_classes - j) * risk.denominator <= risk.numerator * (n_records - removed)
        first = int(np.argmax(good))  # good[n_classes] holds (0 <= 0)
        out = np.zeros(len(sizes), dtype=bool)
        out[kept[:first]] = True
        return out


@dataclass(frozen=True)
class Verdict:
    """What a node suppresses: the number of records, which rows of its class table, and the kept classes' sizes."""

    suppressed: int
    rows: np.ndarray  # one bool per row of the class table
    kept_sizes: np.ndarray  # one size per released class (int64)


class NodeCheck:
    """Which records a lattice node suppresses: those of classes smaller than ``k``, or with a :class:`Judge`,
    of classes failing the criteria. Shared by the exhaustive and the greedy search and the scorer.

    With ``carried`` (the sensitive column's hierarchy), class tables carry that column last at level 0
    (:attr:`tail`), so a table's rows are ``(class, sensitive value)`` pairs and classes are grouped by the
    quasi-identifiers only.
    """

    def __init__(self, hierarchies: Sequence[Hierarchy], k: int, judge: Judge | None = None,
                 carried: Hierarchy | None = None) -> None:
        self.hierarchies, self.k, self.judge, self.carried = list(hierarchies), k, judge, carried
        self.q = len(self.hierarchies)
        self.tail: tuple[int, ...] = (0,) if carried is not None else ()
        self.table_hierarchies = [*self.hierarchies, *([carried] if carried is not None else [])]
        self._last: tuple[ClassTable, Verdict] | None = None

    def verdict(self, table: ClassTable) -> Verdict:
        """The :class:`Verdict` of ``table``'s node (the last one is remembered: the walks ask twice)."""
        if self._last is not None and self._last[0] is table:
            return self._last[1]
        if self.judge is None:
            rows = table.counts < self.k
            out = Verdict(int(table.counts[rows].sum()), rows, table.counts[~rows])
        else:
            values: np.ndarray | None
            if table.key is not None and self.carried is not None:  # the key's last digit is the carried value
                key, values = np.divmod(table.key, len(self.carried.labels(0)))
            else:
                radixes = [len(h.labels(lv)) for h, lv in zip(self.hierarchies, table.levels)]
                key, _, _ = mixed_key(table.codes[: self.q], radixes)
                values = table.codes[self.q] if self.tail else None
            classes, uniques = pd.factorize(key)
            fail = self.judge.suppressed_classes(classes, len(uniques), table.counts.astype(np.float64), values,
                                                 distinct_rows=True)
            rows = fail[classes]
            sizes = np.bincount(classes, weights=table.counts, minlength=len(uniques)).astype(np.int64)
            out = Verdict(int(table.counts[rows].sum()), rows, sizes[~fail & (sizes > 0)])
        self._last = (table, out)
        return out

    @property
    def min_size(self) -> int:
        """The smallest class a node may release (k, or the criteria's :attr:`~.criteria.Criteria.min_size`)."""
        return self.judge.criteria.min_size if self.judge is not None else self.k

    def suppressed(self, table: ClassTable) -> int:
        """The number of records ``table``'s node suppresses (for k alone, summed without building the verdict: most
        nodes a search checks are only counted)."""
        if self.judge is None and (self._last is None or self._last[0] is not table):
            return table.suppressed(self.k)
        return self.verdict(table).suppressed
