"""The released text of every record under local recoding, rebuilt from its plan (issue 33).

A global node suppresses whole records (every quasi-identifier ``"*"``) of the classes that fail ``k`` or the
criteria. Local recoding releases some of them instead: each later round's node (a coarser one, found by searching
the lattice again on the outliers alone, :mod:`.local_recoding`) is *offered* to the records still suppressed, and a
record is released at it when the class its text joins meets every criterion; then single quasi-identifier cells may
be suppressed the same way (one cell ``"*"``, the others at a node's levels).

Classes are the released TEXT, exactly as a reader groups it: each column's labels of every level are one vocabulary
of strings, so a level-2 label equal to a level-1 label of another value is the same text and the same class. An
offer never breaks a class already released: candidates are rejected from any class they would make fail, which
leaves that class as it was. Whole-table criteria (the average risk) are checked after each offer, and an offer that
would break them is withdrawn whole. Everything is vectorized (one grouping per offer); :class:`Recoder` replays a
plan deterministically, so :meth:`~.result.Generalization.apply` on the same records gives the same text.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import pandas as pd

from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.hierarchy import ROOT, Hierarchy
from ppdp_desktop.core.generalization.judge import Judge
from ppdp_desktop.core.generalization.table import encode_frame, mixed_key


@dataclass(frozen=True)
class LocalRecoding:
    """The plan and the figures of a local recoding.

    Attributes
    ----------
    rounds : tuple of tuple of int
        The node of each round after the global one (one level per quasi-identifier), in order.
    recoded : tuple of int
        The records released at each round's node.
    cells : tuple of int
        Per quasi-identifier, the records released with that one cell suppressed (``cell_suppression`` on).
    cell_suppression : bool
        Whether single cells were offered after the rounds.
    global_suppressed : int
        The records the global node alone suppresses whole.
    suppressed : int
        The records still suppressed whole (never more than ``global_suppressed``).
    precision : float
        Sweeney's precision of the release (a suppressed cell counts 1, a suppressed record 1 on every column).
    """

    rounds: tuple[tuple[int, ...], ...]
    recoded: tuple[int, ...]
    cells: tuple[int, ...]
    cell_suppression: bool
    global_suppressed: int
    suppressed: int
    precision: float

    def to_json(self, names: Sequence[str]) -> dict[str, object]:
        """The plan for ``release.json`` (levels by quasi-identifier name)."""
        return {"rounds": [{"levels": dict(zip(names, node)), "records": r} for node, r in zip(self.rounds, self.recoded)],
                "cells_suppressed": dict(zip(names, self.cells)), "cell_suppression": self.cell_suppression,
                "global_suppressed": self.global_suppressed, "suppressed": self.suppressed,
                "precision": round(self.precision, 6), "method": "greedy"}

    def lines(self, names: Sequence[str], global_precision: float) -> list[str]:
        """What local recoding did, in plain words."""
        if not self.global_suppressed:
            return ["Local recoding: the chosen node suppresses no record, so there was nothing to recode."]
        out = [f"Local recoding: of the {self.global_suppressed:,} records the chosen node alone would suppress whole, "
               f"{sum(self.recoded) + sum(self.cells):,} are released instead."]
        for node, records in zip(self.rounds, self.recoded):
            out.append(f"{records:,} records released at the levels " + ", ".join(
                f"{a} {lv}" for a, lv in zip(names, node)) + ".")
        if self.cell_suppression:
            where = ", ".join(f"{a} {c:,}" for a, c in zip(names, self.cells) if c)
            out.append(f"{sum(self.cells):,} records released with a single quasi-identifier cell suppressed to '*' (the "
                       f"others at a node's levels){': ' + where if where else ''}.")
        out.append(f"{self.suppressed:,} records remain suppressed whole (every quasi-identifier '*'). The recoding is "
                   "greedy, not proven to keep the most: it never suppresses more records than whole-record suppression "
                   "alone, and every released group was checked on the released text.")
        out.append(f"Precision of the release with local recoding {self.precision:.3f} ({global_precision:.3f} with "
                   "whole records suppressed).")
        return out


class Recoder:
    """The released text ids of every record: the global node's classes, then the offers of local recoding.

    Parameters
    ----------
    frame : pandas.DataFrame
        The records (the quasi-identifiers, and the sensitive column when a criterion reads it).
    hierarchies : mapping of str to Hierarchy
        The quasi-identifiers' hierarchies, in order.
    node : sequence of int
        The global node.
    criteria : Criteria
        The criteria every released class meets (``Criteria(k=k)`` for k alone).
    sensitive : Hierarchy or None
        The sensitive column's hierarchy when a criterion reads it.
    """

    def __init__(self, frame: pd.DataFrame, hierarchies: Mapping[str, Hierarchy], node: Sequence[int],
                 criteria: Criteria, sensitive: Hierarchy | None) -> None:
        self.hierarchies = list(hierarchies.values())
        self.node, self.q, self.n = tuple(node), len(self.hierarchies), len(frame)
        self.codes = encode_frame(frame, hierarchies)
        self.vocab: list[pd.Index] = []
        self.maps: list[list[np.ndarray]] = []  # [column][level]: label code -> text id
        for h in self.hierarchies:
            texts = [label for level in range(h.height + 1) for label in h.labels(level)] + [ROOT]
            ids, vocab = pd.factorize(pd.Index(texts, dtype=object))
            bounds = np.cumsum([0] + [len(h.labels(level)) for level in range(h.height + 1)])
            self.maps.append([ids[a:b].astype(np.int32) for a, b in zip(bounds[:-1], bounds[1:])])
            self.vocab.append(vocab)
        self.star = [int(v.get_loc(ROOT)) for v in self.vocab]
        self.values = self.totals = None
        if criteria.needs_sensitive and sensitive is not None:
            self.values = sensitive.encode(frame[sensitive.attribute])
            self.totals = np.bincount(self.values, minlength=len(sensitive.values))
        self.average = criteria.average_risk
        self.judge = Judge(replace(criteria, average_risk=None), sensitive, self.totals)
        self.ids = np.empty((self.q, self.n), dtype=np.int32)
        self.loss = np.full(self.n, float(self.q))  # precision loss per record (suppressed: 1 per column)
        self.outlier = np.ones(self.n, dtype=bool)
        self.ids[:] = np.array(self.star, dtype=np.int32)[:, None]
        self.cells = np.zeros(self.q, dtype=np.int64)
        # the global node: its classes, judged with every criterion (the average risk too), as the search did
        everyone = np.ones(self.n, dtype=bool)
        text = self._text(everyone, self.node, None)
        classes, count = self._classes(text)
        fail = Judge(criteria, sensitive, self.totals).suppressed_classes(classes, count, np.ones(self.n), self.values)
        kept = ~fail[classes]
        self._release(np.flatnonzero(kept), text[:, kept], self.node, None)

    @property
    def suppressed(self) -> int:
        """Records still suppressed whole."""
        return int(self.outlier.sum())

    def offer(self, node: Sequence[int], cell: int | None = None) -> int:
        """Release the outliers at ``node`` (with quasi-identifier ``cell`` suppressed, if given) wherever the class
        their text joins still meets every criterion; returns how many were released."""
        rows = np.flatnonzero(self.outlier)
        text = self._text(self.outlier, node, cell)
        visible = ~(text == np.array(self.star, dtype=np.int32)[:, None]).all(axis=0)  # all '*' is suppression
        rows, text = rows[visible], text[:, visible]
        if not len(rows):
            return 0
        released = np.flatnonzero(~self.outlier)
        both = np.concatenate([self.ids[:, released], text], axis=1)
        classes, count = self._classes(both)
        values = self.values[np.concatenate([released, rows])] if self.values is not None else None
        fail = self.judge.suppressed_classes(classes, count, np.ones(len(classes)), values)
        ok = ~fail[classes[len(released):]]
        if not ok.any():
            return 0
        if self.average is not None:
            kept = np.concatenate([np.ones(len(released), dtype=bool), ok])
            risk = Fraction(len(np.unique(classes[kept])), int(kept.sum()))
            if risk > Fraction(repr(float(self.average))):
                return 0
        self._release(rows[ok], text[:, ok], tuple(node), cell)
        return int(ok.sum())

    def replay(self, rounds: Sequence[Sequence[int]], cells: bool) -> None:
        """Offer each round's node, then (``cells``) single cells at every node: the plan, deterministically."""
        for node in rounds:
            self.offer(node)
        if cells:
            self.offer_cells(rounds)

    def offer_cells(self, rounds: Sequence[Sequence[int]]) -> None:
        """Offer the outliers each node (the global one first) with one quasi-identifier cell suppressed."""
        for node in [self.node, *map(tuple, rounds)]:
            for j in range(self.q):
                if self.outlier.any():
                    self.cells[j] += self.offer(node, j)

    def precision(self) -> float:
        """Sweeney's precision of the records as released now."""
        return float(1.0 - self.loss.sum() / (self.n * self.q)) if self.n and self.q else 1.0

    def frame(self, index: pd.Index) -> pd.DataFrame:
        """The released quasi-identifiers as text (categoricals), one row per record of ``index``."""
        return pd.DataFrame({h.attribute: pd.Categorical.from_codes(self.ids[j], categories=self.vocab[j])
                             for j, h in enumerate(self.hierarchies)}, index=index)

    def _text(self, rows: np.ndarray, node: Sequence[int], cell: int | None) -> np.ndarray:
        out = np.empty((self.q, int(rows.sum())), dtype=np.int32)
        for j, (h, level) in enumerate(zip(self.hierarchies, node)):
            out[j] = self.star[j] if j == cell else self.maps[j][level][h.generalize(self.codes[j][rows], level)]
        return out

    def _classes(self, text: np.ndarray) -> tuple[np.ndarray, int]:
        key, _, _ = mixed_key(list(text), [len(v) for v in self.vocab])
        classes, uniques = pd.factorize(key)
        return classes, len(uniques)

    def _release(self, rows: np.ndarray, text: np.ndarray, node: Sequence[int], cell: int | None) -> None:
        self.ids[:, rows] = text
        self.outlier[rows] = False
        shares = [1.0 if j == cell else level / (h.height or 1) for j, (h, level) in enumerate(zip(self.hierarchies, node))]
        self.loss[rows] = sum(shares)
