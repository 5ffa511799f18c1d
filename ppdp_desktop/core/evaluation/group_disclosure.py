"""What a release's statistics reveal about a group: the largest share of one sensitive value among the records
that share their quasi-identifiers (Qt-free, vectorized).

The attacker is anyone who reads the release's statistics: for a person whose quasi-identifiers they know (in
the data or not), they look up that person's group in the release, estimate its sensitive values the way the
release allows (counted as released, or un-mixed with the published matrices) and guess the most frequent one.
No record needs to be found for this: it is inference about a group, which a useful release cannot rule out,
only bound (:func:`summarize` measures it; ``ProtectionSettings.require_group_bound`` caps it).

Everything starts from :class:`GroupCells`: one entry per (group, value) with a non-negative estimated count.
:func:`counted_cells` makes them from records (released values, or the original ones for the exact check),
``core/methods/group_estimates.py`` from a release's randomized values.

Where the shares are estimated from randomized values, the largest of a group's estimates is inflated by the
noise that made it the largest (in a group of a few records kept with a small probability, it is often 100 %).
So an estimated group counts as above the bound only where the release *shows* it: the simultaneous lower
confidence bound of one value's share (``GroupCells.bounds``, ``core/methods/group_support.py``) exceeds it;
and how often the guess is right is estimated on records the guess was not made from
(``core/methods/group_crossfit.py``). A released label that stands for several values (a generalization, ``*``)
counts in its group's records but toward no value (``GroupCells.several``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.privacy.risk import SUPPRESSED

#: a group's share counts as above the bound when it exceeds it by more than this (rounding of the estimates)
TOLERANCE = 1e-9
#: groups of fewer (estimated) records than this have shares estimated from too few records to rely on
FEW_RECORDS = 20
#: column names of the summary's own tables (no data column can have them)
_RECORDS, _GUESS, _SHARE, _SUPPORTED = "\x00records", "\x00guess", "\x00share", "\x00supported"
_LOW, _HIGH = "\x00low", "\x00high"


@dataclass
class GroupCells:
    """Estimated counts per (group, sensitive value).

    ``groups`` holds one row per group: its quasi-identifiers as released (text); ``group``, ``value`` and
    ``estimate`` one entry per cell with a positive estimate (``value`` indexes ``values``); ``records`` each
    group's number of records (estimated where the quasi-identifiers were randomized). ``estimated`` says whether
    the counts were un-mixed from randomized values (True) or counted as released (False); ``how`` says how, in
    a sentence; ``records_estimated`` whether the group sizes are estimates too.
    """

    quasi: list[str]
    sensitive: str
    groups: pd.DataFrame
    group: np.ndarray
    value: np.ndarray
    estimate: np.ndarray
    values: list[str]
    records: np.ndarray
    estimated: bool
    how: str
    records_estimated: bool = False  # the groups' sizes are estimates too (randomized quasi-identifiers)
    #: ``(group, value, low, high)``: the interval of each (group, value) share seen, 95 % for every cell at once
    #: (``core/methods/group_support.py``); None: counted, the shares are exact
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    #: labels of ``values`` that stand for several values of the column (counted in a group, toward no value)
    several: frozenset[str] = frozenset()


def text_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's code into the column's distinct labels as text (as a recipient reads them: missing as ""), and
    those labels; one factorization, the labels made once per distinct value."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, uniques = column.cat.codes.to_numpy(), column.cat.categories  # one byte a cell, mostly
    else:
        codes, uniques = pd.factorize(column, use_na_sentinel=True)
    labels = np.array([label_text(u) for u in uniques] + [""], dtype=object)
    merged, distinct = pd.factorize(labels)  # two values with one label ("1" and 1.0) are one label
    # a missing cell's code -1 picks the last label, "": one gather, no int64 copies of the codes beside it
    return np.asarray(merged, dtype=np.int64)[codes], np.asarray(distinct, dtype=object)


def combined_key(codes: list[np.ndarray], n: int) -> np.ndarray:
    """One int64 key per row for the combination of ``codes`` (non-negative, one array per column; equal keys:
    equal combinations), re-factorized whenever the mixed radix would overflow."""
    key = np.zeros(n, dtype=np.int64)
    space = 1
    for c in codes:
        radix = int(c.max()) + 1 if len(c) else 1
        if space * radix >= 1 << 62:
            key, uniques = pd.factorize(key)
            space = max(len(uniques), 1)
        key = key * radix + c
        space *= radix
    return key


def released_groups(frame: pd.DataFrame, quasi: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Each record's group (-1 for a record suppressed by k-anonymity: every quasi-identifier ``*``) and one row
    of text labels per group."""
    coded = [text_codes(frame[c]) for c in quasi]
    ids = pd.factorize(combined_key([c for c, _ in coded], len(frame)))[0]
    n_groups = int(ids.max()) + 1 if len(ids) else 0
    first = np.full(n_groups, len(ids), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(ids)))
    labels = pd.DataFrame({c: labels[codes[first]] for c, (codes, labels) in zip(quasi, coded)})
    suppressed = labels.eq(SUPPRESSED).all(axis=1).to_numpy() if quasi else np.zeros(len(labels), bool)
    if suppressed.any():  # renumber without the suppressed group
        new = np.cumsum(~suppressed) - 1
        ids = np.where(suppressed[ids], -1, new[ids])
        labels = labels[~suppressed].reset_index(drop=True)
    return ids.astype(np.int64), labels


def counted_cells(frame: pd.DataFrame, quasi: list[str], sensitive: str, how: str) -> GroupCells:
    """The records of ``frame`` counted as they are, per group of ``quasi`` and value of ``sensitive``."""
    ids, labels = released_groups(frame, quasi)
    codes, uniques = text_codes(frame[sensitive])
    keep = ids >= 0
    m = max(len(uniques), 1)
    cells, counts = np.unique(ids[keep] * m + codes[keep], return_counts=True)
    group, value = np.divmod(cells, m)
    records = np.bincount(ids[keep], minlength=len(labels)).astype(float)
    return GroupCells(list(quasi), sensitive, labels, group, value, counts.astype(float), [str(u) for u in uniques],
                      records, False, how)


@dataclass(frozen=True)
class WorstGroup:
    """One released group: its quasi-identifiers (text, in the order of ``quasi``), its records, its most
    frequent value and that value's share."""

    labels: tuple[str, ...]
    records: float
    value: str
    share: float
    supported: float = 0.0  # the share the release shows with confidence (= share when counted)
    low: float = float("nan")  # the interval of the share (95 %, every cell at once; nan when counted)
    high: float = float("nan")


@dataclass
class GroupDisclosure:
    """The largest (estimated) share of one sensitive value in each released group, summed up.

    All of it is computed from the release alone, except ``measured_right`` and ``measured_own`` (the custodian's
    report: how often the guess is right on the original records, made as ``guess_right`` is, and made from the
    whole release) and ``required`` (the custodian asked for the bound in every group, checked exactly on the
    original data before the release was written).

    Estimated (``estimated``): ``groups_above`` counts the groups whose ``supported`` share exceeds the bound,
    ``largest_supported`` is the largest of them, and ``guess_right`` is cross-fitted over ``folds`` folds, within
    ``guess_margin`` of its expectation at 95 % (``core/methods/group_crossfit.py``). Counted: exact figures
    (``folds`` 0, no margin).
    """

    quasi: list[str]
    sensitive: str
    bound: float
    bound_source: str  # "1/l", "the threshold" or "the group bound"
    estimated: bool = False
    how: str = ""
    records_estimated: bool = False
    n_groups: int = 0
    n_values: int = 0  # the values the shares are estimated over (the supported shares are simultaneous over
    # n_groups x n_values cells)
    n_records: float = 0.0
    largest_share: float = 0.0
    groups_above: int = 0
    groups_noisy: int = 0  # groups whose estimated share is above the bound, where the release does not show it
    records_above: float = 0.0
    guess_right: float = 0.0
    largest_supported: float = 0.0  # the largest share one value is shown to hold (= largest_share when counted)
    guess_margin: float = 0.0  # guess_right's 95 % margin (0 when counted)
    folds: int = 0  # guess_right made on each fold from the others (0: counted, in the records themselves)
    few_groups: int = 0  # groups of fewer than FEW_RECORDS records, where an estimate is uncertain
    few_records: float = 0.0
    several_labels: list[str] = field(default_factory=list)  # labels standing for several values, found here
    several_records: float = 0.0  # records showing one of them
    worst: list[WorstGroup] = field(default_factory=list)  # the groups shown, most records above the bound first
    guesses: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # each group's labels and its guess
    #: per fold, the guesses made without it (cross-fitted ``guess_right``; the custodian's check repeats them)
    fold_guesses: list[pd.DataFrame] = field(default_factory=list, repr=False)
    measured_right: float | None = None  # the custodian's: guesses made as guess_right's, on the original records
    measured_own: float | None = None  # the custodian's: the whole release's guess, on the records in the data
    #: the interval of the first shown group's share, 95 % for every (group, value) at once (None when counted)
    example_interval: tuple[float, float] | None = None
    required: bool = False
    reason: str = ""  # why the measure does not apply ("" when it does)

    @property
    def applies(self) -> bool:
        return not self.reason

    def public(self) -> GroupDisclosure:
        """The same without what was measured on the original records (for a report inside the release)."""
        from dataclasses import replace

        return replace(self, measured_right=None, measured_own=None)

    def to_json(self) -> dict[str, object]:
        """The headline figures for ``release.json`` (all of them computed from the release itself)."""
        out: dict[str, object] = {"quasi_identifiers": list(self.quasi), "sensitive": self.sensitive,
                                  "required": bool(self.required)}
        if not self.applies:
            return {**out, "not_measured": self.reason}
        found = {**out, "bound": float(self.bound), "bound_source": self.bound_source, "estimated": self.estimated,
                 "groups": self.n_groups, "records": round(self.n_records, 1),
                 "largest_share": round(self.largest_share, 6), "largest_supported": round(self.largest_supported, 6),
                 "groups_above": self.groups_above, "records_above": round(self.records_above, 1),
                 "groups_estimated_above": self.groups_above + self.groups_noisy,
                 "guess_right": round(self.guess_right, 6), "guess_right_margin": round(self.guess_margin, 6),
                 "folds": self.folds}
        if self.several_labels:
            found.update(several_values=list(self.several_labels), several_records=round(self.several_records, 1))
        return found


def not_applicable(quasi: list[str], sensitive: str, reason: str, bound: float = float("nan"),
                   bound_source: str = "") -> GroupDisclosure:
    """A group-disclosure entry that says plainly why it does not apply."""
    return GroupDisclosure(list(quasi), sensitive, bound, bound_source, reason=reason)


def summarize(cells: GroupCells, bound: float, bound_source: str, shown: int = 10) -> GroupDisclosure:
    """Each group's most frequent value and its share of the group (ties: the first value in label order; labels
    in ``cells.several`` are never a group's value), the groups above ``bound`` (by the supported share where
    the shares are estimated), the records they hold and how often a guess of that value is right overall (in
    the records themselves: exact where counted; ``core/methods/group_crossfit.py`` replaces it where
    estimated)."""
    n = len(cells.groups)
    total = np.bincount(cells.group, weights=cells.estimate, minlength=n)
    labels = np.asarray(cells.values, dtype=object)
    one_value = ~np.isin(labels.astype(str), sorted(cells.several)) if len(labels) else np.zeros(0, bool)
    named = one_value[cells.value] if len(cells.value) else np.zeros(0, bool)
    value_rank = np.argsort(np.argsort(labels.astype(str), kind="stable"), kind="stable")
    order = np.lexsort((value_rank[cells.value], -cells.estimate, cells.group))
    order = order[named[order]]
    head = order[np.r_[True, cells.group[order][1:] != cells.group[order][:-1]]] if len(order) else order
    top = np.zeros(n)
    guess = np.full(n, -1, dtype=np.int64)
    top[cells.group[head]] = cells.estimate[head]
    guess[cells.group[head]] = cells.value[head]
    share = np.divide(top, total, out=np.zeros(n), where=total > 0)
    low, high = np.full(n, np.nan), np.full(n, np.nan)
    if cells.bounds is None:
        evidence = share
    else:
        b_group, b_value, b_low, b_high = (np.asarray(x) for x in cells.bounds)
        evidence = np.zeros(n)
        np.maximum.at(evidence, b_group.astype(np.int64), np.asarray(b_low, dtype=float))
        cell_key = pd.Index(b_group.astype(np.int64) * max(len(labels), 1) + b_value.astype(np.int64))
        at = cell_key.get_indexer(np.arange(n) * max(len(labels), 1) + np.maximum(guess, 0))
        found = (at >= 0) & (guess >= 0)
        low = np.where(found, np.asarray(b_low, dtype=float)[np.maximum(at, 0)], 0.0)
        high = np.where(found, np.asarray(b_high, dtype=float)[np.maximum(at, 0)], 1.0)
    records = np.asarray(cells.records, dtype=float)
    held = records > 0
    above = held & (evidence > bound + TOLERANCE)
    noisy = held & (share > bound + TOLERANCE) & ~above  # estimated above, not shown to be
    all_records = float(records[held].sum())
    few = held & (records < FEW_RECORDS)
    several = ~named
    several_found = sorted({str(v) for v in labels[np.unique(cells.value[several])]}) if several.any() else []
    table = cells.groups.copy()
    table[_RECORDS] = records
    table[_GUESS] = np.where(guess >= 0, labels[np.maximum(guess, 0)], "") if len(labels) else ""
    table[_SHARE] = share
    table[_SUPPORTED] = evidence
    table[_LOW], table[_HIGH] = low, high
    table = table[held & (guess >= 0)]  # a group whose every label stands for several values has no guess
    chosen = table[above[table.index.to_numpy()]] if above.any() else table
    worst = chosen.sort_values([_RECORDS, _SHARE] if above.any() else [_SUPPORTED, _RECORDS, _SHARE],
                               ascending=False, kind="stable").head(shown)
    q = len(cells.quasi)
    rows = [WorstGroup(tuple(str(v) for v in row[:q]), *(float(row[q]), str(row[q + 1])),
                       *(float(x) for x in row[q + 2:q + 6])) for row in worst.itertuples(index=False, name=None)]
    guesses = cells.groups.copy()
    guesses[_GUESS] = table[_GUESS].reindex(guesses.index).fillna("").to_numpy(dtype=object)
    return GroupDisclosure(
        list(cells.quasi), cells.sensitive, float(bound), bound_source, cells.estimated, cells.how,
        cells.records_estimated,
        n_groups=int(held.sum()), n_values=len(labels), n_records=all_records,
        largest_share=float(share[held].max()) if held.any() else 0.0,
        groups_above=int(above.sum()), records_above=float(records[above].sum()), groups_noisy=int(noisy.sum()),
        guess_right=float((share * records)[held].sum() / all_records) if all_records > 0 else 0.0,
        largest_supported=float(evidence[held].max()) if held.any() else 0.0,
        few_groups=int(few.sum()) if cells.estimated else 0, few_records=float(records[few].sum()) if cells.estimated else 0.0,
        several_labels=several_found, several_records=float(cells.estimate[several].sum()),
        worst=rows, guesses=guesses[guesses[_GUESS] != ""].reset_index(drop=True),
    )


def group_guesses(cells: GroupCells) -> pd.DataFrame:
    """Each group's labels and its guess (:func:`summarize`'s rule), for the groups that have one."""
    return summarize(cells, 1.0, "", shown=0).guesses


def guess_success(disclosure: GroupDisclosure, quasi_frame: pd.DataFrame, sensitive: pd.Series,
                  guesses: pd.DataFrame | None = None, decode: dict[str, str] | None = None) -> float:
    """The share of records (``quasi_frame``: their quasi-identifiers as their released group shows them;
    ``sensitive``: their true values, same rows) whose value is the guess of their group (``guesses``, by default
    the release's: its most frequent value): how often the group attacker is right on these records. ``decode``
    turns a guessed label into the value it names (an opaque code into its value). Suppressed records are left
    out; a record whose group has no guess counts as a wrong guess."""
    if not disclosure.applies or not len(quasi_frame):
        return float("nan")
    right, kept = guess_hits(disclosure.quasi, disclosure.guesses if guesses is None else guesses, quasi_frame,
                             sensitive, decode)
    return float(right[kept].mean()) if kept.any() else float("nan")


def guess_hits(quasi: list[str], guesses: pd.DataFrame, quasi_frame: pd.DataFrame, sensitive: pd.Series,
               decode: dict[str, str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per record: whether its group's guess is its value, and whether it is counted (not suppressed)."""
    n_groups, n = len(guesses), len(quasi_frame)
    if not n_groups:  # no group has a guess (every label stands for several values): nobody is guessed right
        coded = [text_codes(quasi_frame[c]) for c in quasi]
        suppressed = np.logical_and.reduce([(t == SUPPRESSED)[c] for c, t in coded]) if quasi else np.zeros(n, bool)
        return np.zeros(n, dtype=bool), ~suppressed
    joint, suppressed = [], np.ones(n, dtype=bool)
    for c in quasi:  # each column as codes into the groups' own labels (0: a label no group shows)
        vocabulary = pd.Index(pd.unique(guesses[c].to_numpy(dtype=object)))
        codes, labels = text_codes(quasi_frame[c])
        suppressed &= (labels == SUPPRESSED)[codes]
        mapped = vocabulary.get_indexer(labels)[codes]
        joint.append(np.concatenate([vocabulary.get_indexer(guesses[c].to_numpy(dtype=object)), mapped]) + 1)
    key = combined_key(joint, n_groups + n)
    group = pd.Index(key[:n_groups]).get_indexer(key[n_groups:])
    codes, labels = text_codes(sensitive)
    named = guesses[_GUESS].to_numpy(dtype=object)
    if decode:
        named = np.array([decode.get(str(g), str(g)) for g in named], dtype=object)  # one per group, not per record
    guess = pd.Index(pd.unique(named))
    truth = guess.get_indexer(labels)[codes]
    guessed = guess.get_indexer(named)
    right = (group >= 0) & (guessed[np.maximum(group, 0)] == truth) & (truth >= 0)
    return right, ~suppressed
