"""What a dp-microagg release's epsilon covers, in words, with the figure that shows where it stops (issue 28).

**Covered.** Each protected column's released values *taken as a multiset* are ``epsilon / M``-differentially
private (:mod:`~ppdp_desktop.core.methods.dp.numeric`): the multiset is a function of the noisy cluster sums, whose
L1 sensitivity is ``units`` when one record is *replaced* by another (the sorted column moves monotonically), and
the discrete Laplace draws make them exactly ``epsilon / M``-DP. The ``M`` columns compose to ``epsilon``. The
attacker may know every other record: DP's bound holds whatever they know. The number of records is published,
so neighbouring data sets replace one record; adding or removing one is not what epsilon bounds.

**Not covered in the linked layout (the default).** Each row keeps its record's other released columns beside its
clusters' values, and which records share a cluster depends on the data. Whoever can pick out a person's row by its
other columns reads their cluster's value, and no epsilon bounds that (on adult.csv at epsilon = 1, k = 50, an
attacker who finds a target by its other columns tells age 17 from 90 every time, where epsilon = 1 allows 73 %;
tests/test_claims_dp.py). The release states how many records its other columns single out, measured on the
released table (:func:`singled_out_count`): the records no other record shares their values of those columns with.
The pseudonym column is left out of that count: it is random, and only the sealed key links it to a person.

**Covered in the unlinked layout.** Every released column is protected, each is permuted on its own by a uniform
permutation from the job's keyed randomness (stream ``(column, "unlinked order")``, independent of the data and of
the noise) and no pseudonym is released. The table is then a function of the ``M`` multisets and of randomness
independent of the data (post-processing), so the whole release is ``epsilon``-DP, rows included; a row is not a
person's record. Only such a release, with every column numeric and its range declared, says "epsilon-differential
privacy" without qualification: a categorical column's accounting is not proven (its order depends on the data) and
a range taken from the data discloses its minimum and maximum.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.methods.dp.noise import UNLINK_DRAW
from ppdp_desktop.core.privacy.keyed import key_order

if TYPE_CHECKING:
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness

LINKED, UNLINKED = "linked", "unlinked"
#: the headline of the one release that is epsilon-DP without qualification
FULL_KIND = "epsilon-differential privacy of the whole release: every released column protected and unlinked"
ATTACKER = ("anyone, including an attacker who knows every other record of the data; neighbouring data sets differ "
            "by one person's record replaced by another (the number of records is published)")


@dataclass(frozen=True)
class SingledOut:
    """The records a linked release's other columns single out: ``records`` of ``n_records`` are the only one
    with their values of ``columns`` (the released columns other than the protected ones and the pseudonyms)."""

    records: int
    n_records: int
    columns: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"records": int(self.records), "n_records": int(self.n_records), "columns": list(self.columns),
                "measured_on": "the released table: records that no other record shares their values of these "
                               "columns with (the pseudonym column left out: it is random)"}

    @classmethod
    def from_json(cls, data: Any) -> SingledOut | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(int(data["records"]), int(data["n_records"]), tuple(str(c) for c in data["columns"]))
        except (KeyError, TypeError, ValueError):
            return None


def singled_out_count(frames: Iterable[pd.DataFrame]) -> int:
    """Records whose row of ``frames`` (the table, or consecutive batches of it) no other record shares.

    One frame is counted exactly (``duplicated``, missing values equal to each other); batches (a release
    written in chunks) by a 64-bit hash of each row (pandas' ``hash_pandas_object``, values only): two different
    rows collide with probability about ``n**2 / 2**65``, which can only lower the count by two.
    """
    first: pd.DataFrame | None = None
    hashes: list[np.ndarray] = []
    for frame in frames:  # one batch held at a time: a streamed release keeps 8 bytes a record
        if first is None:
            first = frame
            continue
        if not hashes:
            hashes.append(_row_hashes(first))
        hashes.append(_row_hashes(frame))
    if first is None:
        return 0
    if not hashes:
        return int((~first.duplicated(keep=False)).sum())
    _, counts = np.unique(np.concatenate(hashes), return_counts=True)
    return int((counts == 1).sum())


def _row_hashes(frame: pd.DataFrame) -> np.ndarray:
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def unlink(values: Any, keyed: KeyedRandomness, attribute: str) -> Any:
    """``values`` (one per record, record order) permuted by the uniform permutation of the keyed stream
    ``(attribute, "unlinked order")``: record ``i`` gets the value of the record ranked ``i`` by its sort key."""
    n = len(values)
    order = key_order(keyed.stream(attribute, UNLINK_DRAW).sort_keys(0, n))
    return values[order]


def _names(columns: Iterable[str], most: int = 8) -> str:
    columns = list(columns)
    shown = ", ".join(columns[:most])
    return shown + (f" and {len(columns) - most} more" if len(columns) > most else "")


def _factor(epsilon: float) -> str:
    return f"{math.exp(epsilon):.3g}" if epsilon < 700 else "inf"


def claim(epsilon: float, names: list[str], k: int, n_records: int, layout: str, categorical: list[str],
          from_data: list[str], singled: SingledOut | None) -> dict[str, Any]:
    """The guarantee's words and figures: ``kind`` (the headline every output prints), ``statement`` (what is
    epsilon-DP, against whom, and what is not, with the measured figure), ``layout``, ``row_level`` and
    ``singled_out``. A pure function of what release.json publishes, so ``ppdp verify`` rebuilds and compares it.

    ``categorical``: the protected columns drawn by the exponential mechanism; ``from_data``: the numeric ones whose
    range was taken from the data; ``singled``: the measured figure (None before the table was built).
    """
    m = len(names)
    share = epsilon / max(m, 1)
    covers = (f"Each protected column's released values ({_names(names)}), taken as a multiset (the values without "
              f"the rows they sit in), are epsilon-differentially private with epsilon = {epsilon:g} in all "
              f"({share:g} per column, sequential composition over {m} column{'s' if m != 1 else ''}): whatever an "
              f"attacker knows, every other record included, replacing any one person's record by another changes "
              f"the chance of these values by at most a factor e^{epsilon:g} = {_factor(epsilon)}. The number of "
              "records is published, so neighbouring data sets replace one record; they never add or remove one.")
    covers += (" Taken as public, as release.json states them: the column names and types, each range and grid "
               "(whole numbers or not) and the number of records.")
    reasons = []
    if categorical:
        reasons.append(f"the epsilon accounting of the categorical column{'s' if len(categorical) > 1 else ''} "
                       f"{_names(categorical)} is not proven")
    if from_data:
        reasons.append(f"the range of {_names(from_data)} was taken from the data and discloses its minimum and maximum")
    out: dict[str, Any] = {"layout": layout, "attacker": ATTACKER,
                           "neighbours": "one record replaced by another; the number of records is public"}
    if layout == UNLINKED:
        whole = ("Every released column is protected, each was shuffled on its own with randomness independent of "
                 "the data, and no pseudonym links the rows: the table is a function of the columns' multisets, so "
                 "what holds for the multisets holds for the whole release, rows included. A row is not a person's "
                 "record: read each column on its own.")
        if reasons:
            out["kind"] = ("epsilon-DP of each protected column's values (columns unlinked), not of the whole release: "
                           + "; ".join(reasons))
            out["statement"] = f"{covers} {whole} Not covered: {'; '.join(reasons)}."
            out["row_level"] = False
        else:
            out["kind"] = FULL_KIND
            out["statement"] = (f"The release is epsilon-differentially private with epsilon = {epsilon:g} "
                                f"({share:g} per column, sequential composition over {m} column{'s' if m != 1 else ''}): "
                                f"whatever an attacker knows, every other record included, replacing any one "
                                f"person's record by another changes the chance of the whole release by at most a "
                                f"factor e^{epsilon:g} = {_factor(epsilon)}. The number of records is published, so "
                                f"neighbouring data sets replace one record; they never add or remove one. Taken as "
                                f"public, as release.json states them: the column names and types, each range and grid "
                                f"(whole numbers or not). {whole}")
            out["row_level"] = True
        out["singled_out"] = SingledOut(0, n_records, ()).to_json()
        return out
    out["row_level"] = False
    if singled is None:
        figure = "(the records its other released columns single out are counted when the release is built)"
        rows = ("It does not cover the rows: each row keeps its record's other released columns beside its clusters' "
                "values, and which records share a cluster depends on the data.")
    else:
        figure = (f"{singled.records:,} of {singled.n_records:,} records can be singled out by their other released "
                  "columns")
        rows = ("It does not cover the rows: each row keeps its record's other released columns beside its clusters' "
                "values, and which records share a cluster depends on the data. ")
        if singled.columns:
            rows += (f"{singled.records:,} of {singled.n_records:,} records are the only one with their values of the "
                     f"other released columns ({_names(singled.columns)}): whoever knows those values of such a person "
                     "finds their row and reads their cluster's value of each protected column, and no epsilon bounds "
                     "that.")
        else:
            rows += ("The release has no other column, so no record can be singled out by one (0 records)"
                     + (f"; but each row pairs its record's clusters of the {m} protected columns, which is not covered."
                        if m > 1 else "."))
    out["kind"] = ("epsilon-DP of each protected column's values as a multiset"
                   + (f" (except: {'; '.join(reasons)})" if reasons else "") + f", not of the rows: {figure}")
    out["statement"] = (f"{covers} {rows} For a guarantee on the rows, release the columns unlinked "
                        "(--layout unlinked)." + (f" Not covered either: {'; '.join(reasons)}." if reasons else ""))
    if singled is not None:
        out["singled_out"] = singled.to_json()
    return out


OLD_CLAIM = ("note: this release was made before its guarantee was stated precisely: it calls itself epsilon-"
             "differentially private, but only each protected column's released values taken as a multiset are; a row "
             "that can be singled out by its other columns shows its cluster's value")


def verify_claim(release: LoadedRelease, names: list[str], entries: list[dict]) -> str:
    """Re-check the guarantee's words against the release (one line): an unlinked release holds protected columns
    only and no pseudonyms; a linked one states the records its other columns single out, recounted here when the
    data is held whole (a figure below the recount is refused); only an unlinked release of numeric columns with
    declared ranges may claim epsilon-DP without qualification.

    Raises
    ------
    PrivacyError
        The stated layout, figure or headline contradicts the data or what release.json publishes.
    """
    from ppdp_desktop.core.errors import PrivacyError

    meta = release.metadata
    guarantee = meta.get("guarantee") or {}
    layout = (meta.get("parameters") or {}).get("layout")
    if layout is None and "layout" not in guarantee:
        return OLD_CLAIM
    if layout not in (LINKED, UNLINKED) or guarantee.get("layout") != layout:
        raise PrivacyError(f"release.json: the layout {layout!r} of parameters and {guarantee.get('layout')!r} of the "
                           "guarantee must agree (linked or unlinked).")
    columns = release.column_names
    pseudonyms = meta.get("pseudonym_column")
    others = [c for c in columns if c not in names and c != pseudonyms]
    n = release.n_rows
    categorical = [e.get("attribute") for e in entries if e.get("kind") == "categorical"]
    from_data = [e.get("attribute") for e in entries
                 if str((e.get("domain") or {}).get("source", "declared")).startswith("data")]
    full = layout == UNLINKED and not categorical and not from_data
    kind = str(guarantee.get("kind", ""))
    if bool(guarantee.get("row_level")) != full or (kind == FULL_KIND) != full:
        raise PrivacyError(f"release.json's guarantee says {kind!r} (row level: {guarantee.get('row_level')!r}), but "
                           f"a {layout} release"
                           f"{' with categorical columns or ranges from the data' if layout == UNLINKED else ''} "
                           "is not epsilon-differentially private as a whole.")
    if layout == UNLINKED:
        if others or (pseudonyms and pseudonyms in columns):
            raise PrivacyError(f"release.json says the columns are unlinked, but the data holds "
                               f"{', '.join(map(repr, others)) if others else repr(pseudonyms)}, which is not protected.")
        return (f"rows: every released column is protected and the columns are unlinked (no pseudonyms); "
                f"{'epsilon-DP holds for the whole release' if full else 'not epsilon-DP as a whole: ' + kind}")
    stated = SingledOut.from_json(guarantee.get("singled_out"))
    if stated is None or list(stated.columns) != others or stated.n_records != n or not 0 <= stated.records <= n:
        raise PrivacyError("release.json does not state how many records the other released columns "
                           f"({', '.join(others) or 'none'}) single out among the {n:,} records.")
    if f"{stated.records:,} of {stated.n_records:,} records" not in kind:
        raise PrivacyError(f"release.json's guarantee headline {kind!r} does not state the {stated.records:,} records "
                           "its other columns single out.")
    if all(c in release.table.columns for c in others):
        recount = singled_out_count([release.table[others]]) if others else 0
        if recount > stated.records:
            raise PrivacyError(f"release.json says {stated.records:,} records can be singled out by the other released "
                               f"columns, but {recount:,} of the {n:,} released rows are the only one with theirs.")
        checked = f"recounted: {recount:,}"
    else:
        checked = "not recounted: the data was read in part"
    return (f"rows: not covered; {stated.records:,} of {n:,} records can be singled out by the other released columns "
            f"({checked})")
