"""Re-identification risk of a table under the prosecutor model (the figures ARX shows).

Records that share every quasi-identifier value form an equivalence class; an attacker who knows a
person is in the table and knows their quasi-identifiers picks one record of that class, so the
record's risk is ``1 / class size``. Missing values are a value of their own: a blank postcode only
matches other blanks, as in ``domain.py``. Everything is vectorized (one int64 key per record), so a
million records take well under a second.
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.sentences import full_stop
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.verdict import _pct, _records, risk_verdict

_KEY_LIMIT = 1 << 63  # a mixed-radix key must stay below this to fit in int64
SUPPRESSED = "*"  # every quasi-identifier of a record suppressed by k-anonymity shows this


def _names(quasi: Sequence[str] | str) -> list[str]:
    return [quasi] if isinstance(quasi, str) else list(quasi)


def _check_columns(frame: pd.DataFrame, quasi: list[str], what: str = "the table") -> None:
    unknown = [q for q in quasi if q not in frame.columns]
    if unknown:
        listed = ", ".join(repr(u) for u in unknown)
        raise ParameterError(
            f"Quasi-identifier {listed} is not a column of {what} (its columns: "
            f"{', '.join(map(str, frame.columns))}); check the spelling."
        )
    doubled = [q for q in quasi if isinstance(frame[q], pd.DataFrame)]
    if doubled:
        raise ParameterError(
            f"Column {doubled[0]!r} occurs more than once in {what}; give each column a distinct name."
        )


def equivalence_classes(frame: pd.DataFrame, quasi: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each record's class id (``0 .. c-1``, int64) and the ``c`` class sizes.

    Each quasi-identifier column is factorized (missing is a value of its own), the codes combined
    into one mixed-radix int64 key per record (re-factorized whenever the radix product would overflow),
    and the keys counted. An empty ``quasi`` puts every record in one class.
    """
    quasi = _names(quasi)
    _check_columns(frame, quasi)
    n = len(frame)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if not quasi:  # one class: the same ids and size as counted below, without 24 bytes a record (issue 34)
        return np.zeros(n, dtype=np.int64), np.array([n], dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    space = 1
    for name in quasi:
        codes, uniques = pd.factorize(frame[name], use_na_sentinel=False)
        radix = max(len(uniques), 1)
        if space * radix >= _KEY_LIMIT:
            key, seen = pd.factorize(key)
            space = len(seen)
        key = key * radix + codes.astype(np.int64, copy=False)
        space *= radix
    if space <= max(4 * n, 1 << 16):  # small key space: count directly, then number the occupied keys
        counts = np.bincount(key, minlength=space)
        occupied = counts > 0
        number = np.cumsum(occupied, dtype=np.int64) - 1
        return number[key], counts[occupied].astype(np.int64)
    ids, seen = pd.factorize(key)
    return ids.astype(np.int64, copy=False), np.bincount(ids, minlength=len(seen)).astype(np.int64)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _join(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class RiskAnalysis:
    """Prosecutor re-identification risk of one table over its quasi-identifiers.

    A record's risk is ``1 / size`` of its class. ``average_risk`` (mean over records) equals
    ``marketer_risk`` (``n_classes / n_records``: the expected share a marketer linking the whole table
    re-identifies, one per class). ``class_size_histogram`` maps a class size to the number of
    *records* in classes of that size (its values sum to ``n_records``). All figures are 0 for an empty
    table; ``records_below_k`` is None when no k was given.
    """

    quasi: tuple[str, ...]
    n_records: int
    n_classes: int
    threshold: float
    k: int | None
    highest_risk: float
    average_risk: float
    records_above_threshold: int
    share_above_threshold: float
    sample_uniques: int
    share_sample_uniques: float
    records_below_k: int | None
    marketer_risk: float
    class_size_histogram: dict[int, int]
    missing_as_value: bool = True

    def verdict(self) -> str:
        """The verdict of the one rule (:func:`~ppdp_desktop.core.privacy.verdict.risk_verdict`) with ``k`` as
        the stated k: ``"protected"``, ``"above threshold"``, ``"not protected"`` or ``"not measured"``."""
        return risk_verdict(self).code

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RiskAnalysis:
        """The analysis :meth:`to_json` wrote (release.json's ``original`` or ``release``)."""
        return cls(
            quasi=tuple(str(q) for q in data["quasi_identifiers"]), n_records=int(data["n_records"]),
            n_classes=int(data["n_classes"]), threshold=float(data["threshold"]),
            k=None if data.get("k") is None else int(data["k"]), highest_risk=float(data["highest_risk"]),
            average_risk=float(data["average_risk"]), records_above_threshold=int(data["records_above_threshold"]),
            share_above_threshold=float(data["share_above_threshold"]), sample_uniques=int(data["sample_uniques"]),
            share_sample_uniques=float(data["share_sample_uniques"]),
            records_below_k=None if data.get("records_below_k") is None else int(data["records_below_k"]),
            marketer_risk=float(data["marketer_risk"]),
            class_size_histogram={int(size): int(n) for size, n in (data.get("class_size_histogram") or {}).items()},
            missing_as_value=bool(data.get("missing_as_value", True)),
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (finite floats; histogram keys as text so a JSON round trip keeps them)."""
        return {
            "model": "prosecutor",
            "quasi_identifiers": list(self.quasi),
            "n_records": self.n_records,
            "n_classes": self.n_classes,
            "threshold": float(self.threshold),
            "k": self.k,
            "highest_risk": self.highest_risk,
            "average_risk": self.average_risk,
            "records_above_threshold": self.records_above_threshold,
            "share_above_threshold": self.share_above_threshold,
            "sample_uniques": self.sample_uniques,
            "share_sample_uniques": self.share_sample_uniques,
            "records_below_k": self.records_below_k,
            "marketer_risk": self.marketer_risk,
            "class_size_histogram": {str(size): count for size, count in self.class_size_histogram.items()},
            "missing_as_value": self.missing_as_value,
            "verdict": self.verdict(),
        }

    def lines(self) -> list[str]:
        """The figures as plain sentences for a clinician; the first says who can be singled out."""
        n = self.n_records
        if n == 0:
            return ["The table has no records, so nobody can be re-identified from it."]
        if not self.quasi:
            out = [f"No quasi-identifiers were named: all {_records(n)} form one group, so none can be singled out."]
        else:
            verb = "is" if self.sample_uniques == 1 else "are"
            out = [full_stop(f"{self.sample_uniques:,} of {_records(n)} ({_pct(self.share_sample_uniques)}) {verb} the "
                             f"only one with their {_join(self.quasi)}")]
        smallest = round(1.0 / self.highest_risk)
        where = "a record alone in its group" if smallest == 1 else f"the smallest group has {smallest:,} records"
        out.append(f"The highest risk of re-identification is {_pct(self.highest_risk)} ({where}); "
                   f"on average {_pct(self.average_risk)}.")
        verb = "is" if self.records_above_threshold == 1 else "are"
        out.append(f"{_records(self.records_above_threshold)} ({_pct(self.share_above_threshold)}) {verb} above the "
                   f"threshold of {_pct(self.threshold)}.")
        if self.k is not None and self.k > 1:  # k = 1: no record can be below it
            verb = "is" if self.records_below_k == 1 else "are"
            out.append(f"{_records(self.records_below_k or 0)} {verb} in groups smaller than k = {self.k}.")
        out.append(f"Someone linking the whole table to another list would re-identify about "
                   f"{_pct(self.marketer_risk)} of the records (one per group).")
        if self.missing_as_value:
            out.append("A missing value counts as a value of its own: a blank cell matches only other blank cells.")
        return out


def _check_threshold(threshold: float) -> float:
    ok = isinstance(threshold, numbers.Real) and not isinstance(threshold, bool) and 0.0 < float(threshold) <= 1.0
    if not ok:  # NaN fails the comparison too
        raise ParameterError(
            f"The 'threshold' parameter must be a risk in (0, 1], e.g. 0.2 for 20 %; got {threshold!r}."
        )
    return float(threshold)


def _check_k(k: float | None) -> int | None:
    if k is None:
        return None
    integral = isinstance(k, numbers.Integral) or (isinstance(k, float) and k.is_integer())
    if isinstance(k, bool) or not integral or k < 1:
        raise ParameterError(f"The 'k' parameter must be a whole number of at least 1 (or none); got {k!r}.")
    return int(k)


def suppressed_records(frame: pd.DataFrame, quasi: Sequence[str]) -> np.ndarray:
    """True for each record whose every quasi-identifier is ``"*"`` (suppressed by k-anonymity): nobody can
    be singled out by such a record's quasi-identifiers, so, as in ARX, it is left out of the release's risk.
    All False without quasi-identifiers."""
    quasi = _names(quasi)
    _check_columns(frame, quasi)
    if not quasi:
        return np.zeros(len(frame), dtype=bool)
    return frame[quasi].eq(SUPPRESSED).all(axis=1).to_numpy()


def analyse_risk(frame: pd.DataFrame, quasi: Sequence[str], threshold: float = 0.2,
                 k: int | None = None) -> RiskAnalysis:
    """The prosecutor risk of ``frame`` over ``quasi``: a record counts as at risk when ``1/size >
    threshold`` (``0 < threshold <= 1``); with ``k`` (``>= 1``), records in classes smaller than k."""
    threshold, k = _check_threshold(threshold), _check_k(k)
    quasi = _names(quasi)
    _, sizes = equivalence_classes(frame, quasi)
    n, c = int(sizes.sum()), len(sizes)
    risk = 1.0 / sizes if c else np.zeros(0)
    above = int(sizes[risk > threshold].sum())
    uniques = int((sizes == 1).sum())
    size_values, class_counts = np.unique(sizes, return_counts=True)
    histogram = {int(s): int(s) * int(m) for s, m in zip(size_values, class_counts)}
    return RiskAnalysis(
        quasi=tuple(quasi), n_records=n, n_classes=c, threshold=threshold, k=k,
        highest_risk=float(risk.max()) if c else 0.0, average_risk=_share(c, n),
        records_above_threshold=above, share_above_threshold=_share(above, n),
        sample_uniques=uniques, share_sample_uniques=_share(uniques, n),
        records_below_k=None if k is None else int(sizes[sizes < k].sum()),
        marketer_risk=_share(c, n), class_size_histogram=histogram,
    )


@dataclass(frozen=True)
class NaiveLinkage:
    """What a naive linker gets right in a release with randomized quasi-identifiers: ``records`` whose
    released combination equals their true one *and* is unique in the release, of ``n_records``."""

    quasi: tuple[str, ...]
    n_records: int
    records: int
    share: float

    def to_json(self) -> dict[str, Any]:
        return {"quasi_identifiers": list(self.quasi), "n_records": self.n_records, "records": self.records,
                "share": self.share}

    def lines(self) -> list[str]:
        verb = "is" if self.records == 1 else "are"
        return [f"A naive linker who looks up a person's true {_join(self.quasi) if self.quasi else 'details'} in the "
                f"release finds the right record for {self.records:,} of {_records(self.n_records)} "
                f"({_pct(self.share)}): their released values {verb} unchanged and unique."]


def _text_codes(original: pd.Series, released: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Codes of both columns over one shared set of texts: the cells of ``text_column`` (``label_text``),
    computed once per distinct value of each column rather than once per cell."""
    codes_o, uniques_o = pd.factorize(original, use_na_sentinel=False)
    codes_r, uniques_r = pd.factorize(released, use_na_sentinel=False)
    texts = [label_text(u) for u in uniques_o] + [label_text(u) for u in uniques_r]
    shared = pd.factorize(pd.Index(texts, dtype=object))[0].astype(np.int64)
    return shared[codes_o], shared[len(uniques_o) + codes_r]


def naive_linkage(original: pd.DataFrame, released: pd.DataFrame, quasi: Sequence[str]) -> NaiveLinkage:
    """Count the records a naive linker re-identifies: ``original`` and ``released`` are aligned row by
    row; values are compared as text (as ``text_column`` shows them), so ``3``, ``3.0`` and ``"3"`` match
    and blanks match blanks."""
    quasi = _names(quasi)
    _check_columns(original, quasi, "the original table")
    _check_columns(released, quasi, "the release")
    if len(original) != len(released):
        raise ParameterError(
            f"The original ({len(original):,} records) and the release ({len(released):,}) must hold the same "
            f"records in the same order."
        )
    n = len(released)
    same = np.ones(n, dtype=bool)
    shown: dict[str, np.ndarray] = {}  # columns by position: a name given twice is two columns
    for i, name in enumerate(quasi):
        true_codes, shown_codes = _text_codes(original[name], released[name])
        same &= true_codes == shown_codes
        shown[str(i)] = shown_codes
    ids, sizes = equivalence_classes(pd.DataFrame(shown, index=pd.RangeIndex(n)), list(shown))
    hit = int((same & (sizes[ids] == 1)).sum()) if n else 0
    return NaiveLinkage(tuple(quasi), n, hit, _share(hit, n))
