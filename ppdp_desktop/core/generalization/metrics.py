"""Utility metrics of a lattice node, attribute weights, and per-quasi-identifier level bounds (issue 33).

The custodian chooses what "best" means (:class:`Utility`); every metric is a loss (lower is better):

``precision``
    Sweeney's Prec loss: a record's cell at level ``h`` of ``H`` costs ``h / H``.
``loss``
    ARX's loss (Iyengar's LM): a cell whose label covers ``m`` of the ``D`` values of its hierarchy costs
    ``(m - 1) / (D - 1)``; the most general label costs 1.
``entropy``
    Non-uniform entropy: a cell of value ``v`` shown as label ``L`` costs ``log2(f(L) / f(v))`` bits, ``f``
    the counts in the input records.
``discernibility``
    DM*: a released class of ``c`` records costs ``c**2``, a suppressed record ``n``.
``aecs``
    The average size of the released classes, the suppressed records (all ``*``) counting as one class.

For the first three, a suppressed record costs what its cells cost at the top level (everything ``*``), a
quasi-identifier's cells are multiplied by its weight (default 1), and the value shown is the weighted mean
per cell (``precision`` as ``1 - loss``, ``entropy`` in bits per cell). Weights do not enter the last two,
which do not look at attributes. Precision, loss, discernibility and AECS are exact fractions, so ties are
real ties; entropy is a float.

Ties are broken by a second measure, never by column order: fewer suppressed records, then discernibility
(finer, more even classes), then precision loss; only nodes equal on all of them fall back to the level vector.

The three cell metrics are additive: a node's loss is at least its loss with nothing suppressed, a sum over
quasi-identifiers of one precomputed figure per level (:meth:`Scorer.bounds`), which only grows with the
levels; the search visits nodes in that order and stops at the first bound above the best loss.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.judge import Verdict
from ppdp_desktop.core.generalization.table import ClassTable

METRICS = ("precision", "loss", "entropy", "discernibility", "aecs")
CELL_METRICS = ("precision", "loss", "entropy")
METRIC_WORDS = {
    "precision": "precision loss (share of generalization steps taken)",
    "loss": "ARX's loss (share of each hierarchy's values a cell stands for)",
    "entropy": "non-uniform entropy (bits lost per cell)",
    "discernibility": "discernibility (sum of squared class sizes, n per suppressed record)",
    "aecs": "average class size",
}


@dataclass(frozen=True)
class Utility:
    """What the search optimizes: the metric, each quasi-identifier's weight, and the levels it may use.

    Attributes
    ----------
    metric : str
        One of :data:`METRICS`.
    weights : dict of str to float
        Weight of a quasi-identifier's cells in the cell metrics (default 1; 0: its generalization is free).
    min_levels, max_levels : dict of str to int
        The lowest and highest level a quasi-identifier may take (ARX's minimum and maximum generalization):
        ``max_levels={"age": 2}`` keeps age at least as fine as its level-2 bands.
    """

    metric: str = "precision"
    weights: Mapping[str, float] = field(default_factory=dict)
    min_levels: Mapping[str, int] = field(default_factory=dict)
    max_levels: Mapping[str, int] = field(default_factory=dict)

    @property
    def constrained(self) -> bool:
        """Whether weights or level bounds make this differ from the plain metric."""
        return bool(self.min_levels or self.max_levels or any(w != 1 for w in self.weights.values()))

    def plain(self) -> Utility:
        """The same metric with no weights and no level bounds (what the cost of the constraints is measured against)."""
        return Utility(self.metric)

    def box(self, hierarchies: Sequence[Hierarchy]) -> tuple[list[int], list[int]]:
        """The lowest and highest level of every quasi-identifier, checked against the hierarchies."""
        names = {h.attribute for h in hierarchies}
        if self.metric not in METRICS:
            raise ParameterError(f"Unknown utility metric {self.metric!r}; choose one of {', '.join(METRICS)}.",
                                 setting="metric")
        for key, table in (("weight", self.weights), ("min-level", self.min_levels), ("max-level", self.max_levels)):
            for name in table:
                if name not in names:
                    raise ParameterError(f"--{key} names {name!r}, which is not a quasi-identifier "
                                         f"(they are {', '.join(sorted(names))}).", setting=key, column=name)
        for name, w in self.weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise ParameterError(f"The weight of {name!r} must be a finite number >= 0. Got {w!r} instead.",
                                     setting="weight", column=name)
        low, high = [], []
        for h in hierarchies:
            lo, hi = self.min_levels.get(h.attribute, 0), self.max_levels.get(h.attribute, h.height)
            for key, level in (("min-level", lo), ("max-level", hi)):
                if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= h.height:
                    raise ParameterError(f"The {key} of {h.attribute!r} must be a whole number from 0 to its "
                                         f"hierarchy's height {h.height}. Got {level!r} instead.",
                                         setting=key, column=h.attribute)
            if lo > hi:
                raise ParameterError(f"The min-level of {h.attribute!r} ({lo}) is above its max-level ({hi}).",
                                     setting="min-level", column=h.attribute)
            low.append(int(lo))
            high.append(int(hi))
        return low, high

    def to_json(self) -> dict[str, object]:
        return {"metric": self.metric, "weights": dict(self.weights), "min_levels": dict(self.min_levels),
                "max_levels": dict(self.max_levels)}


@dataclass(frozen=True)
class Score:
    """A node's figures; :attr:`key` orders nodes (lower is better)."""

    metric: str
    value: Fraction | float  # the chosen metric, total (not per cell)
    suppressed: int
    discernibility: int
    precision_loss: Fraction | float  # weighted precision loss, total
    levels: tuple[int, ...]

    @property
    def key(self) -> tuple:
        if self.metric == "discernibility":
            return (self.value, self.suppressed, self.precision_loss, self.levels)
        return (self.value, self.suppressed, self.discernibility, self.precision_loss, self.levels)


class Scorer:
    """Scores the class tables of one search: per-level cell costs of every quasi-identifier, precomputed once.

    Costs of a quasi-identifier at a level are integers over a denominator ``den`` for precision and loss
    (exact), floats for entropy: ``level_total[i][h]`` is the cost of all records at level ``h`` with nothing
    suppressed, ``extra[i][h][L]`` what suppressing one record shown as label ``L`` adds.
    """

    def __init__(self, base: ClassTable, hierarchies: Sequence[Hierarchy], utility: Utility) -> None:
        self.utility, self.metric, self.hierarchies = utility, utility.metric, list(hierarchies)
        self.n, self.q = base.n_records, len(hierarchies)
        self.weights = [Fraction(repr(float(utility.weights.get(h.attribute, 1)))) for h in hierarchies]
        if self.metric in CELL_METRICS and not any(self.weights):
            raise ParameterError("At least one quasi-identifier needs a weight above 0.", setting="weight")
        self._prec = [_costs(base, h, i, "precision") for i, h in enumerate(hierarchies)]
        self._cell = self._prec if self.metric == "precision" else (
            [_costs(base, h, i, self.metric) for i, h in enumerate(hierarchies)] if self.metric in CELL_METRICS else None)

    def bounds(self, grid: np.ndarray) -> np.ndarray:
        """A lower bound of the metric at every node of ``grid`` (rows of levels), as floats; 0 for DM and AECS."""
        if self._cell is None:
            return np.zeros(len(grid))
        out = np.zeros(len(grid))
        for i, (totals, _, den) in enumerate(self._cell):
            out += float(self.weights[i]) * np.asarray(totals, dtype=np.float64)[grid[:, i]] / den
        return out

    def bounds_of(self, nodes: Sequence[Sequence[int]]) -> list[float]:
        """:meth:`bounds` of a few nodes."""
        return self.bounds(np.array(nodes, dtype=np.int64).reshape(len(nodes), self.q)).tolist()

    def score(self, table: ClassTable, verdict: Verdict) -> Score:
        """The figures of the node of ``table``, whose suppressed rows and released classes ``verdict`` gives
        (:class:`~.judge.NodeCheck`)."""
        small, s, kept = verdict.rows, verdict.suppressed, verdict.kept_sizes
        dm = _exact_dot(kept, kept) + s * self.n if len(kept) else s * self.n
        prec = self._cell_total(self._prec, table, small)
        if self.metric == "precision":
            value: Fraction | float = prec
        elif self.metric in ("loss", "entropy"):
            value = self._cell_total(self._cell, table, small)  # type: ignore[arg-type]
        elif self.metric == "discernibility":
            value = Fraction(dm)
        else:
            value = Fraction(self.n, len(kept) + (1 if s else 0))
        return Score(self.metric, value, s, dm, prec, table.levels[: self.q])

    def _cell_total(self, costs: list, table: ClassTable, small: np.ndarray) -> Fraction | float:
        exact = costs is self._prec or self.metric != "entropy"
        total: Fraction | float = Fraction(0) if exact else 0.0
        suppressed = int(table.counts[small].sum()) if exact and small.any() else 0
        for i, (totals, extra, den) in enumerate(costs):
            h = table.levels[i]
            part = totals[h]
            if suppressed and len(extra[h]) and extra[h].min() == extra[h].max():  # one cost for every label (precision)
                part = part + int(extra[h][0]) * suppressed  # the same integer, without decoding the labels
            elif small.any():
                part = part + _dot(table.counts[small], extra[h][table.codes[i][small]], exact)
            total += (self.weights[i] * Fraction(part, den)) if exact else float(self.weights[i]) * part / den
        return total

    def per_cell(self, value: Fraction | float) -> float:
        """The metric as shown: per cell (weighted mean) for the cell metrics, the total for DM and AECS."""
        if self.metric in CELL_METRICS:
            if isinstance(value, Fraction):
                return float(value / (self.n * sum(self.weights)))
            return float(value) / (self.n * float(sum(self.weights)))
        return float(value)


def _dot(counts: np.ndarray, costs: np.ndarray, exact: bool) -> int | float:
    if exact:
        return _exact_dot(counts, costs)
    return float(np.dot(counts.astype(np.float64), costs))


def _exact_dot(a: np.ndarray, b: np.ndarray) -> int:
    """``sum(a * b)`` of non-negative integer arrays as an exact int: in int64 when the sum cannot overflow it (the
    usual case, at C speed), else with Python integers."""
    if not len(a):
        return 0
    a64, b64 = a.astype(np.int64, copy=False), b.astype(np.int64, copy=False)
    if int(a64.sum()) * int(b64.max()) < 1 << 62 and int(a64.min()) >= 0 and int(b64.min()) >= 0:
        return int(np.dot(a64, b64))
    return int((a.astype(object) * b.astype(object)).sum())


def _costs(base: ClassTable, hierarchy: Hierarchy, i: int, metric: str) -> tuple[list, list[np.ndarray], int | float]:
    """``(level_total, extra, den)`` of one quasi-identifier (see :class:`Scorer`)."""
    H = hierarchy.height
    freq = np.bincount(base.codes[i], weights=base.counts, minlength=len(hierarchy.values)).astype(np.int64)
    n = int(freq.sum())
    totals: list = []
    extra: list[np.ndarray] = []
    if metric == "precision":
        den = H or 1
        for h in range(H + 1):
            totals.append(n * h)
            extra.append(np.full(len(hierarchy.labels(h)), den - h, dtype=np.int64))
        return totals, extra, den
    if metric == "loss":
        d = len(hierarchy.values) - 1  # the missing value "" is not a value of the domain
        den = max(d - 1, 1)
        top = hierarchy.labels(H)[0]
        for h in range(H + 1):
            codes = hierarchy.level_codes[h]
            leaves = np.bincount(codes[:-1], minlength=len(hierarchy.labels(h)))
            cost = np.clip(leaves - 1, 0, None).astype(np.int64)
            if h > 0:
                cost[np.array([label == top for label in hierarchy.labels(h)])] = den
            totals.append(int(np.dot(freq, cost[codes])))
            extra.append(den - cost)
        return totals, extra, den
    # entropy: a cell of value v shown as L costs log2(f(L) / f(v)); suppressing it adds log2(n / f(L))
    logf = np.log2(np.maximum(freq, 1))
    for h in range(H + 1):
        codes = hierarchy.level_codes[h]
        fl = np.bincount(codes, weights=freq, minlength=len(hierarchy.labels(h)))
        cost = np.log2(np.maximum(fl, 1))[codes] - logf
        totals.append(float(np.dot(freq, cost)))
        extra.append(np.log2(n / np.maximum(fl, 1)) if n else np.zeros(len(fl)))
    return totals, extra, 1.0
