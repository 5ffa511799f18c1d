"""The chosen generalization: the node, its figures, and how to apply it to the records."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_desktop.core.generalization.alternatives import Alternative
from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.hierarchy import ROOT, Hierarchy
from ppdp_desktop.core.generalization.judge import Judge
from ppdp_desktop.core.generalization.metrics import METRIC_WORDS, Utility
from ppdp_desktop.core.generalization.recoding import LocalRecoding, Recoder
from ppdp_desktop.core.generalization.table import encode_frame, mixed_key, row_class_sizes


@dataclass(frozen=True)
class ConstraintCost:
    """What weights and level bounds cost: the plain metric's optimum against the chosen node, both in the
    plain metric (per cell for the cell metrics)."""

    levels: dict[str, int]
    value: float
    chosen_value: float
    suppressed: int
    proven_optimal: bool

    def to_json(self) -> dict[str, object]:
        return {"levels": dict(self.levels), "value": round(self.value, 6), "chosen_value": round(self.chosen_value, 6),
                "suppressed": self.suppressed, "proven_optimal": self.proven_optimal}


@dataclass(frozen=True)
class Generalization:
    """The optimal node of the generalization lattice for ``k`` and the suppression limit.

    Attributes
    ----------
    levels, heights : dict of str to int
        Per quasi-identifier, the chosen level and the hierarchy's height ``H``.
    k : int
    suppression_limit : float
        The largest share of records that may be suppressed.
    n_records, suppressed : int
        Records in the table, and how many of them are suppressed (their classes are smaller than ``k``).
    precision : float
        Sweeney's Prec of the node (1 = nothing generalized; see :mod:`~ppdp_desktop.core.generalization.lattice`).
    n_nodes_checked : int
        Lattice nodes whose classes were computed (a measure of the search's work).
    hierarchies : dict of str to Hierarchy
        The hierarchies the levels refer to.
    utility : Utility
        The metric, weights and level bounds the node was chosen by.
    metric_value : float
        The node's value of that metric (per cell for precision, loss and entropy; see :mod:`.metrics`).
    proven_optimal : bool
        False when a lattice too large for the exhaustive walk was searched greedily.
    cost : ConstraintCost or None
        With weights or level bounds: the plain metric's optimum, to say what they cost.
    criteria : Criteria or None
        Criteria beyond k (None: k alone); a class failing them is suppressed.
    sensitive : Hierarchy or None
        The sensitive column's hierarchy when a criterion reads it; then :meth:`apply` needs that column too.
    local : LocalRecoding or None
        With local recoding (:mod:`.local_recoding`): its plan and figures; ``suppressed`` is then the records still
        suppressed whole, and ``levels`` the node of the records the global search keeps.
    alternatives : tuple of Alternative
        The few best nodes of the same search, best (this one) first (:mod:`.alternatives`); this one alone after a
        greedy search, none for a node checked on its own (:func:`~.lattice.node_generalization`).
    """

    levels: dict[str, int]
    heights: dict[str, int]
    k: int
    suppression_limit: float
    n_records: int
    suppressed: int
    precision: float
    n_nodes_checked: int
    hierarchies: dict[str, Hierarchy] = field(repr=False, compare=False)
    utility: Utility = field(default_factory=Utility)
    metric_value: float = 0.0
    proven_optimal: bool = True
    cost: ConstraintCost | None = None
    criteria: Criteria | None = None
    sensitive: Hierarchy | None = field(default=None, repr=False, compare=False)
    local: LocalRecoding | None = None
    alternatives: tuple[Alternative, ...] = field(default=(), repr=False, compare=False)

    @property
    def columns(self) -> list[str]:
        """The columns :meth:`apply` reads: the quasi-identifiers, and the sensitive column when a criterion reads it."""
        return [*self.hierarchies, *([self.sensitive.attribute] if self.sensitive is not None else [])]

    def suppressed_mask(self, frame: pd.DataFrame) -> np.ndarray:
        """True for each record of ``frame`` suppressed whole (its class at this node fails ``k`` or the criteria,
        and local recoding, if asked, released it nowhere)."""
        if self.local is not None:
            return self._recoder(frame).outlier
        return self._generalized(frame)[1]

    def _recoder(self, frame: pd.DataFrame) -> Recoder:
        """Local recoding's plan replayed on ``frame``."""
        assert self.local is not None
        criteria = self.criteria if self.criteria is not None else Criteria(k=self.k)
        recoder = Recoder(frame, self.hierarchies, tuple(self.levels.values()), criteria,
                          self.sensitive if criteria.needs_sensitive else None)
        recoder.replay(self.local.rounds, self.local.cell_suppression)
        return recoder

    def apply(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The quasi-identifier columns of ``frame`` as their labels at the chosen levels (text), with
        every quasi-identifier of a suppressed record ``"*"``; same index and row order as ``frame``.

        Classes are recomputed on ``frame``: on other records than the search saw, check the result
        with :func:`~ppdp_desktop.core.generalization.verify.check_k_anonymity` before releasing it.
        """
        if self.local is not None:
            return self._recoder(frame).frame(frame.index)
        codes, mask = self._generalized(frame)
        columns = {}
        for (name, hierarchy), generalized in zip(self.hierarchies.items(), codes):
            # A categorical of the level's few labels: cheap to reorder, group and write (no string per record).
            labels = list(hierarchy.labels(self.levels[name]))
            if ROOT not in labels:
                labels.append(ROOT)
            generalized = np.where(mask, labels.index(ROOT), generalized)
            columns[name] = pd.Categorical.from_codes(generalized, categories=pd.Index(labels, dtype=object))
        return pd.DataFrame(columns, index=frame.index)

    def to_json(self) -> dict[str, object]:
        """The public figures: levels and heights per quasi-identifier, k, the limit, suppression, precision, and,
        when they are not the default (precision, no weights or bounds, proven optimal), the utility's figures; with
        runners-up, ``alternatives`` (each one's levels, suppressed records, metric and value, this node first)."""
        out: dict[str, object] = {
            "levels": dict(self.levels),
            "heights": dict(self.heights),
            "k": self.k,
            "suppression_limit": self.suppression_limit,
            "n_records": self.n_records,
            "suppressed": self.suppressed,
            "precision": round(self.precision, 6),
            **({"criteria": self.criteria.to_json()} if self.criteria is not None else {}),
            **({"sensitive": self.sensitive.attribute} if self.sensitive is not None else {}),
        }
        if self.utility.metric != "precision" or self.utility.constrained or not self.proven_optimal:
            out.update(utility=self.utility.to_json(), metric_value=round(self.metric_value, 6),
                       proven_optimal=self.proven_optimal)
        if self.cost is not None:
            out["constraint_cost"] = self.cost.to_json()
        if self.local is not None:
            out["local_recoding"] = self.local.to_json(list(self.levels))
        if len(self.alternatives) > 1:  # the search's few best nodes, this one first (report: "considered")
            out["alternatives"] = [a.to_json(self.utility.metric) for a in self.alternatives]
        return out

    def lines(self) -> list[str]:
        """The generalization in plain words, one line per quasi-identifier and a few for the figures."""
        out = []
        if self.local is not None and (self.local.recoded or any(self.local.cells)):
            out.append("The levels of the records the chosen node releases (local recoding released others at other "
                       "levels, said below):")
        for name, hierarchy in self.hierarchies.items():
            level, height = self.levels[name], self.heights[name]
            if level == 0:
                out.append(f"{name}: kept as is (level 0 of {height})")
            elif level == height:
                shown = hierarchy.labels(level)[0]
                out.append(f"{name}: not released, every value shown as {shown!r} (level {level} of {height})")
            else:
                value = hierarchy.example
                label = hierarchy.labels(level)[hierarchy.level_codes[level][hierarchy.values.index(value)]]
                out.append(f"{name}: level {level} of {height} (e.g. {value} becomes {label})")
        share = self.suppressed / self.n_records if self.n_records else 0.0
        few = 0 < self.suppressed < self.k  # the suppressed records are a group of their own, smaller than k
        size = self.criteria.group_size if self.criteria is not None else self.k
        if self.k > 1:
            out.append(f"Every released combination of {', '.join(self.levels)}"
                       f"{' apart from the suppressed records' if few else ''} is shared by at least {self.k} records.")
        elif size > 1:  # k = 1 promises nothing; the criteria below still bound the groups' size
            out.append(f"No k was asked (k = 1), but the criteria below make every released combination of "
                       f"{', '.join(self.levels)} shared by at least {size} records.")
        else:
            out.append(f"No k was asked (k = 1): a released combination of {', '.join(self.levels)} may be a single "
                       "record's, so the release promises nothing against singling out beyond the criteria below.")
        if self.criteria is not None:
            out.extend(self.criteria.lines(self.sensitive.attribute if self.sensitive is not None else None)[1:])
        out.append(f"{self.suppressed:,} of {self.n_records:,} records suppressed ({share:.2%}; at most "
                   f"{self.suppression_limit:.2%} allowed): their quasi-identifiers are all '*'.")
        if few:
            s = self.suppressed
            out.append(f"Only {s:,} record{'s were' if s > 1 else ' was'} suppressed, fewer than k = {self.k}: someone "
                       "who knows a person's quasi-identifiers and finds no released group matching them learns that the "
                       f"person is {'one of these records' if s > 1 else 'this record'} (a risk of {1 / s:.0%}).")
        out.append(f"Precision {self.precision:.3f} (1 means nothing generalized, 0 everything).")
        if self.local is not None:
            out.extend(self.local.lines(list(self.levels), self.precision))
        out.extend(self.utility_lines())
        return out

    def utility_lines(self) -> list[str]:
        """How the node was chosen: the metric, weights, level bounds, what they cost, and whether it is proven best."""
        u, out = self.utility, []
        if u.metric != "precision" or u.constrained:
            out.append(f"Chosen for the lowest {METRIC_WORDS[u.metric]}: {self.metric_value:.4g}.")
        if u.weights:
            out.append("Weights: " + ", ".join(f"{a} {w:g}" for a, w in u.weights.items()) + ".")
        bounds = [f"{a} {u.min_levels.get(a, 0)}-{u.max_levels.get(a, self.heights[a])}"
                  for a in self.levels if a in u.min_levels or a in u.max_levels]
        if bounds:
            out.append("Levels allowed: " + ", ".join(bounds) + ".")
        if self.cost is not None:
            c = self.cost
            plain = ", ".join(f"{a} {lv}" for a, lv in c.levels.items())
            if c.levels == self.levels:
                out.append(f"These choices cost nothing: without them the same node is best ({METRIC_WORDS[u.metric]} "
                           f"{c.value:.4g}).")
            else:
                out.append(f"What these choices cost: {METRIC_WORDS[u.metric]} {c.chosen_value:.4g} against {c.value:.4g} "
                           f"at the best node without them (levels {plain}; {c.suppressed:,} records suppressed)"
                           f"{'' if c.proven_optimal else ', found greedily'}.")
        if not self.proven_optimal:
            out.append("The lattice was too large to search exhaustively: this node was found by a greedy search and "
                       "meets every criterion asked, but it is not proven to be the best one.")
        return out

    def _generalized(self, frame: pd.DataFrame) -> tuple[list[np.ndarray], np.ndarray]:
        """The label codes of every quasi-identifier at the chosen levels, and the suppression mask."""
        codes, radixes = [], []
        for (name, hierarchy), values in zip(self.hierarchies.items(), encode_frame(frame, self.hierarchies)):
            codes.append(hierarchy.generalize(values, self.levels[name]))
            radixes.append(len(hierarchy.labels(self.levels[name])))
        if not len(frame):
            return codes, np.zeros(0, dtype=bool)
        if self.criteria is None:
            return codes, row_class_sizes(codes, radixes) < self.k
        key, _, _ = mixed_key(codes, radixes)
        classes, uniques = pd.factorize(key)
        sensitive: np.ndarray | None = None
        totals: np.ndarray | None = None
        if self.sensitive is not None:
            sensitive = self.sensitive.encode(frame[self.sensitive.attribute])
            totals = np.bincount(sensitive, minlength=len(self.sensitive.values))
        judge = Judge(self.criteria, self.sensitive, totals)
        fail = judge.suppressed_classes(classes, len(uniques), np.ones(len(classes)), sensitive)
        return codes, fail[classes]
