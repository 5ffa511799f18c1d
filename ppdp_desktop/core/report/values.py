"""The report's per-value table: every value's counts, estimate, retention and verified bound.

A sensitive column of diagnosis codes can hold 15,000-70,000 values; a table with a row for each would
fill hundreds of PDF pages and take minutes to lay out. Above :data:`FULL_TABLE_LIMIT` values the report
shows the :data:`SHOWN_FREQUENT` most frequent values and the :data:`SHOWN_PROTECTED` most protected
others (:func:`shown_values`); the whole table goes into a CSV appendix (:func:`values_frame`). The numbers
are computed once per column with numpy (:func:`value_columns`); :func:`~ppdp_desktop.core.report.document.value_rows`
formats only the rows shown.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_desktop.core.evaluation.report_model import MISSING_LABEL, MethodReport
from ppdp_desktop.core.privacy.amplification import held_above_rho1

#: a table with more values than this shows only the most frequent and the most protected ones (100 rows);
#: up to here the whole table is at most half as long again as a shortened one, and worth having in full
FULL_TABLE_LIMIT = 150
SHOWN_FREQUENT = 50  # of a long table: the values held by most records ...
SHOWN_PROTECTED = 50  # ... then the protected values most often replaced

#: the CSV appendix's columns (the table's, with the interval split in two numbers); "Records" only where the
#: report holds the original counts (the custodian's), "Method" only when the file holds several methods
CSV_COLUMNS = ("Method", "Value", "Records", "Estimated", "95 % interval low", "95 % interval high", "Kept (p)",
               "rho1", "rho2", "Max posterior", "Status")


@dataclass(frozen=True)
class ValueGroup:
    """Rows of the table shown together: ``indices`` into ``report.values``, under ``title`` ("" for none)."""

    title: str
    indices: np.ndarray


@dataclass(frozen=True)
class ShownValues:
    """Which values the report's table shows, in which groups, out of ``total``."""

    groups: tuple[ValueGroup, ...]
    total: int

    @property
    def hidden(self) -> int:
        """How many values the table leaves out (they are in the CSV appendix)."""
        return self.total - sum(len(g.indices) for g in self.groups)


def has_value_table(r: MethodReport) -> bool:
    """Whether the report has a per-value table (it needs original or estimated counts)."""
    return bool(r.values) and (r.original is not None or r.reconstructed is not None)


def _weight(r: MethodReport) -> np.ndarray:
    """How common each value is: its original count, or in the report inside a release its estimated count."""
    counts = r.original if r.original is not None else r.reconstructed
    return np.nan_to_num(np.asarray(counts, dtype=float), nan=-np.inf)


def _protection_order(r: MethodReport, candidates: np.ndarray, weight: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    """``candidates`` from the most protected: lowest retention first (ties: the rarer first); without a
    retention per value, the max posterior closest to its bound first; without either, the rarest first."""
    rarity = weight[candidates]
    if r.retention is not None:
        first = np.nan_to_num(np.asarray(r.retention, dtype=float)[candidates], nan=np.inf)
    elif r.max_posterior is not None:
        ratio = np.asarray(r.max_posterior, dtype=float)[candidates] / rho2[candidates]
        first = -np.nan_to_num(ratio, nan=-np.inf)
    else:
        first = np.zeros(len(candidates))
    return candidates[np.lexsort((candidates, rarity, first))]  # last key first; the domain order breaks ties


def _protected_title(r: MethodReport, n: int) -> str:
    if r.retention is not None:
        return f"The {n} most protected values not listed above (the lowest chance of keeping their value first)"
    if r.max_posterior is not None:
        return f"The {n} most protected values not listed above (the belief closest to its bound first)"
    return f"The {n} rarest protected values not listed above"


def shown_values(r: MethodReport) -> ShownValues:
    """The values the table shows: all of them up to :data:`FULL_TABLE_LIMIT` (in the domain's order), else
    the :data:`SHOWN_FREQUENT` most frequent, then the :data:`SHOWN_PROTECTED` most protected of the values
    with a privacy bound that are not already shown."""
    if not has_value_table(r):
        return ShownValues((), 0)
    n = len(r.values)
    if n <= FULL_TABLE_LIMIT:
        return ShownValues((ValueGroup("", np.arange(n)),), n)
    weight = _weight(r)
    frequent = np.argsort(-weight, kind="stable")[:SHOWN_FREQUENT]
    groups = [ValueGroup(f"The {len(frequent)} most frequent values", frequent)]
    rho2 = bounds(r)[1]
    candidates = np.flatnonzero(~np.isnan(rho2))
    candidates = candidates[~np.isin(candidates, frequent)]
    protected = _protection_order(r, candidates, weight, rho2)[:SHOWN_PROTECTED]
    if len(protected):
        groups.append(ValueGroup(_protected_title(r, len(protected)), protected))
    return ShownValues(tuple(groups), n)


def hidden_sentence(shown: ShownValues, values_file: str = "") -> str:
    """The line closing a shortened table: how many values it leaves out and where the full table is (a report
    written without its CSV appendix, as ``ppdp report`` writes one, names none)."""
    where = f"; the full table, one row per value, is in the CSV file {values_file}" if values_file else ""
    return f"{shown.hidden:,} of the {shown.total:,} values are not shown here{where}."


def _one_pair(r: MethodReport, key: str) -> float:
    """The guarantee's one bound for every value (perturbation partitioning states one pair), NaN if none."""
    value = r.guarantee.get(key)
    if value is None:
        return np.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.nan


def bounds(r: MethodReport) -> tuple[np.ndarray, np.ndarray]:
    """rho1 and rho2 per value (NaN for a value without a privacy concern): the report's own ``rho2`` and the
    guarantee's per-value pairs, or else the one pair the guarantee states for every value (perturbation
    partitioning: a value held by more than rho1 of the records keeps the pair, and its status says it is not
    covered, by the same rule as a per-value pair's)."""
    n = len(r.values)
    pairs = r.guarantee.get("pairs") or []
    if len(pairs) == n:
        rho1 = pd.to_numeric(pd.Series([p.get("rho1") for p in pairs], dtype=object), errors="coerce").to_numpy(float)
    else:
        rho1 = np.full(n, np.nan if r.rho2 is not None else _one_pair(r, "rho1"))
    rho2 = np.asarray(r.rho2, dtype=float) if r.rho2 is not None else np.full(n, _one_pair(r, "rho2"))
    return rho1, rho2


def _optional(values: np.ndarray | None, n: int) -> np.ndarray:
    return np.full(n, np.nan) if values is None else np.asarray(values, dtype=float)


#: a value's status in the per-value table, by one rule (:func:`_statuses`) in the custodian's report and in the one
#: inside the release: the upward bound speaks of a belief up to rho1, so a value held by more than its rho1 of the
#: records is outside it for the data's own frequencies (no upward breach is possible by definition, none prevented)
NO_CONCERN = "no privacy concern"
PROTECTED = "protected (verified)"
NOT_COVERED = "not covered by its bound: held by more than rho1 of the records"
CONDITIONAL = "protected if held by at most rho1 of the records (verified)"
NOT_VERIFIED = "not verified"
BREACHED = "NOT within bound"


def _listed(r: MethodReport, key: str) -> np.ndarray | None:
    """Which values the guarantee lists under ``key`` (release.json's value texts), or None if it has no list."""
    listed = r.guarantee.get(key)
    if not isinstance(listed, list):
        return None
    return pd.Index(r.values).isin([str(v) or MISSING_LABEL for v in listed])


def _prior(counts: np.ndarray) -> np.ndarray:
    """Each value's share of the records (``counts`` in the domain order)."""
    counts = np.asarray(counts, dtype=float)
    return counts / max(counts.sum(), 1.0)


def _above_rho1(r: MethodReport, rho1: np.ndarray) -> np.ndarray | None:
    """Per value: held by more than its rho1 of the records. The guarantee's published list (both reports read
    it), else the original counts (the custodian's report of an older release), else unknown (None)."""
    listed = _listed(r, "prior_above_rho1")
    if listed is not None:
        return listed
    if r.original is None:
        return None
    return held_above_rho1(_prior(r.original), rho1)


#: the window's status of a value before any release is made (step 3): the bound it will be verified against
COVERED = "covered by its bound"


def planned_statuses(counts: np.ndarray, rho1: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    """Each value's status in the window's sensitivity table, before a release, by the reports' rule
    (:func:`~ppdp_desktop.core.privacy.amplification.held_above_rho1`): no privacy concern (no pair), not covered
    by its bound (held by more than rho1 of the records), else covered by its bound (checked when the release is
    made)."""
    status = np.full(len(np.atleast_1d(counts)), NO_CONCERN, dtype=object)
    protected = ~np.isnan(np.asarray(rho2, dtype=float))
    above = held_above_rho1(_prior(counts), rho1)
    status[protected & ~above] = COVERED
    status[protected & above] = NOT_COVERED
    return status


def _statuses(r: MethodReport, rho1: np.ndarray, rho2: np.ndarray) -> np.ndarray:
    """Each value's verdict, vectorized, by one rule whatever the report: no privacy concern (no pair); not
    verified; not covered (held by more than rho1 of the records); protected (verified), or NOT within bound
    where the custodian's own posteriors exceed rho2 (the verifier refuses that before writing); protected if held
    by at most rho1 of the records where the shares are unknown. "; downward breach" where the guarantee reports one."""
    status = np.full(len(r.values), NO_CONCERN, dtype=object)
    protected = ~np.isnan(rho2)
    above = _above_rho1(r, rho1)
    if not r.guarantee.get("verified"):
        status[protected] = NOT_VERIFIED
    elif above is None:
        status[protected] = CONDITIONAL
    else:
        within = (np.ones(len(r.values), dtype=bool) if r.max_posterior is None
                  else np.asarray(r.max_posterior, dtype=float) <= rho2 + 1e-9)
        status[protected & ~above] = np.where(within[protected & ~above], PROTECTED, BREACHED)
        status[protected & above] = NOT_COVERED
    breach = (pd.Index(r.values).isin(list(r.downward_breaches)) if r.downward_breaches
              else _listed(r, "downward_breaches"))
    if breach is not None and breach.any():
        status[breach] = status[breach] + "; downward breach"
    return status


def bound_coverage(r: MethodReport) -> tuple[list[str], list[str]] | None:
    """The values with a (rho1, rho2) bound, split by the table's rule into those it covers for the data's own
    frequencies and those held by more than their rho1 of the records (where it says nothing about them):
    ``(covered, not_covered)``; None where that is unknown (no published list and no original counts)."""
    rho1, rho2 = bounds(r)
    above = _above_rho1(r, rho1)
    if above is None:
        return None
    bounded = ~np.isnan(rho2)
    names = np.asarray(r.values, dtype=object)
    return [str(v) for v in names[bounded & ~above]], [str(v) for v in names[bounded & above]]


def _named(values: list[str], shown: int = 5) -> str:
    quoted = [repr(v) for v in values[:shown]]
    if len(values) > shown:
        return ", ".join(quoted) + f" and {len(values) - shown:,} more"
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


def upward_verdict(r: MethodReport) -> tuple[str, str]:
    """The first page's verdict on an upward (rho1, rho2) guarantee that was verified: ``(level, sentence)``.
    "protected" only where the bound covers every value with a pair; else how many it covers and which values are
    held by more than their rho1 of the records (the bound says nothing about them); amber where it covers none."""
    coverage = bound_coverage(r)
    checked = "checked before the release was written"
    if coverage is None or not coverage[1]:
        return "ok", f"protected, {checked}."
    covered, outside = coverage
    one = len(outside) == 1
    why = (f"{_named(outside)} {'is' if one else 'are'} held by more than {'its' if one else 'their'} rho1 of the "
           f"records, where the bound says nothing about {'it' if one else 'them'}")
    if not covered:
        return "warning", f"no value is covered by its bound: {why} ({checked})."
    total = len(covered) + len(outside)
    return "ok", f"{len(covered)} of {total} values with a bound are protected, {checked}; {why}."


def value_columns(r: MethodReport) -> dict[str, np.ndarray]:
    """The table's numbers for every value, as arrays in the domain order (NaN where a number does not apply)."""
    n = len(r.values)
    rho1, rho2 = bounds(r)
    return {
        "Value": np.asarray(r.values, dtype=object),
        "Records": _optional(r.original, n),
        "Estimated": _optional(r.reconstructed, n),
        "95 % interval low": _optional(r.band_low, n),
        "95 % interval high": _optional(r.band_high, n),
        "Kept (p)": _optional(r.retention, n),
        "rho1": rho1,
        "rho2": rho2,
        "Max posterior": _optional(r.max_posterior, n),
        "Status": _statuses(r, rho1, rho2),
    }


def values_frame(r: MethodReport) -> pd.DataFrame:
    """The CSV appendix of one report: every value with the table's numbers unformatted, one row per value.
    Without original counts (the report inside a release) it has no "Records" column."""
    columns = value_columns(r)
    frame = pd.DataFrame(columns)
    if r.original is None:
        frame = frame.drop(columns="Records")
    elif np.isfinite(columns["Records"]).all():
        frame["Records"] = columns["Records"].astype(np.int64)
    return frame
