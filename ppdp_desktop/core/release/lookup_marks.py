"""What each value a reverse lookup shows is: the patient's own value, or the release's.

A lookup prints the real patient beside the released row. Some of its columns are the patient's values (the
identifiers from the key, aliases and grades decoded with the key, columns released as they were), others
are not: a randomized diagnosis, a differentially private length of stay, an age generalized to a range. A
clinician who follows a patient up from a lookup must never take the second kind for the first, so every
shown column carries a :class:`Mark` saying which it is. The marks come from what ``release.json`` says
about each column (the method's lists of randomized, recoded, graded and protected attributes, the
generalization levels) and from the key; a column whose treatment the release does not describe (a method
this module does not know) is marked "unknown", never "unchanged" (fail closed).

The key holds the original values of the identifiers and, for personalized recoding, whatever is needed to
decode aliases and grades exactly. It does not hold the original of a randomized, noised or generalized
value (that would make the key a copy of the data): those are marked as such, saying the original is not in
the key.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.generalization.verify import SUPPRESSED
from ppdp_desktop.core.methods import REGISTRY
from ppdp_desktop.core.release.recoding_words import highest_levels, recoded_columns

__all__ = ["Decoded", "Mark", "STATUSES", "column_marks", "describes_its_columns", "suppressed_cells"]

#: the package whose methods list in release.json every column they change (sensitive, randomized, recoded,
#: graded, protected; any other column is released as it was); a method registered from elsewhere (a plug-in)
#: may change columns it does not list
BUILT_IN = "ppdp_desktop.core.methods."


def describes_its_columns(method: str) -> bool:
    """True for a built-in method (its release.json lists every column it changes)."""
    found = REGISTRY.get(method)
    return found is not None and str(getattr(found, "__module__", "")).startswith(BUILT_IN)

NOT_IN_KEY = "the key does not hold the original"


@dataclass(frozen=True)
class Mark:
    """What one shown value is.

    Attributes
    ----------
    status : str
        One of :data:`STATUSES` (machine-readable).
    is_original : bool
        True only where the shown value is the patient's own value (as in the input file).
    what : str
        The same in plain words, for a tooltip, a note or a JSON document.
    """

    status: str
    is_original: bool
    what: str

    @property
    def label(self) -> str:
        """A short label for a column header or beside a value: ``RANDOMIZED, not the patient's value``."""
        return LABELS[self.status]

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "is_original": self.is_original, "what": self.what}


#: status -> short label; a status whose value is not the patient's is in capitals
LABELS = {
    "original": "original, from the key",
    "decoded": "original, decoded with the key",
    "unchanged": "original, released unchanged",
    "randomized": "RANDOMIZED, not the patient's value",
    "dp-noised": "DP-NOISED, not the patient's value",
    "generalized": "GENERALIZED, not the patient's exact value",
    "suppressed": "SUPPRESSED, not the patient's value",
    "one of": "ONE OF several values, the key does not say which",
    "not found": "NOT FOUND, this pseudonym is not in the key",
    "unknown": "UNKNOWN treatment, may not be the patient's value",
    "pseudonym": "pseudonym in the release",
    "added": "added by the method, not from the input",
}
STATUSES = tuple(LABELS)

IDENTIFIER = Mark("original", True, "original value, from the key (this column was removed from the release)")
PSEUDONYM = Mark("pseudonym", False, "the record's pseudonym in the release; it is not in the patient's file")
UNCHANGED = Mark("unchanged", True, "released as in the input: the patient's value")
SUPPRESSED_CELL = Mark("suppressed", False, f"suppressed in the release ('{SUPPRESSED}'); {NOT_IN_KEY}")
NOT_FOUND = Mark("not found", False, "this pseudonym is not one of the release's: nothing is known about the record")
ONE_OF_CELL = Mark("one of", False, "one of these values: the alias stands for several and the key does not say "
                                    "which (look the record up by its pseudonym to get its own value)")


def decoded(how: str) -> Mark:
    """An alias or grade decoded with the key: the patient's value (``how``: "its alias", "its grade")."""
    return Mark("decoded", True, f"original value, decoded from {how} with the key")


def column_marks(metadata: dict[str, Any], columns: list[str]) -> dict[str, Mark]:
    """The mark of each of ``columns`` that is a column of the release described by ``metadata``.

    Columns the release does not have (a results file's own columns) get no mark; the identifier columns a
    lookup adds are marked by the caller. Aliases and grades are marked "decoded" only where the key decodes
    them (the caller passes their names in ``metadata``'s ``recoded`` / ``graded`` lists, as release.json
    has them).
    """
    method = str(metadata.get("method", ""))
    attributes = metadata.get("attributes") or {}
    treated = _treatments(metadata, method)
    generalization = _generalization(metadata)
    levels, heights, suppressed = generalization or ({}, {}, 0)
    entry = (metadata.get("reidentification") or {}).get("generalization")
    varied = recoded_columns(entry) if isinstance(entry, dict) else {}  # local recoding: records at several levels
    marks: dict[str, Mark] = {}
    for name in columns:
        role = str((attributes.get(name) or {}).get("role", ""))
        if name == metadata.get("pseudonym_column"):
            marks[name] = PSEUDONYM
        elif name in treated:
            mark = treated[name]
            if levels.get(name, 0) > 0 and not mark.is_original:
                mark = Mark(mark.status, False, f"generalized ({_level(name, levels, heights, name in varied)}) and "
                                                f"{mark.what[0].lower()}{mark.what[1:]}")
            marks[name] = mark
        elif name in attributes:
            if role == "identifier":
                marks[name] = Mark("unknown", False, "an identifier column in the release: the release says it was "
                                                     "removed, so it may not be the patient's value")
            elif generalization is None and role == "quasi-identifier":
                marks[name] = Mark("unknown", False, "release.json's generalization entry cannot be read: this "
                                                     "quasi-identifier may have been generalized or suppressed")
            elif levels.get(name, 0) > 0:
                level = _level(name, levels, heights, name in varied)
                marks[name] = Mark("generalized", False, f"generalized in the release ({level}):"
                                                         f" a range or group holding the patient's value; {NOT_IN_KEY}")
            elif not describes_its_columns(method):
                marks[name] = Mark("unknown", False, f"released by the method {method!r}, whose release.json does not "
                                                     "say what it did to this column: it may not be the patient's value")
            else:
                marks[name] = UNCHANGED
        if name in marks and name in levels and suppressed and marks[name].status in ("unchanged", "generalized"):
            mark = marks[name]  # suppressed records show '*' in every quasi-identifier (per-cell marks say so)
            marks[name] = Mark(mark.status, mark.is_original, f"{mark.what}; '{SUPPRESSED}' means suppressed ({NOT_IN_KEY})")
    return marks


def _treatments(metadata: dict[str, Any], method: str) -> dict[str, Mark]:
    """The columns the method says it changed, with their marks."""
    out: dict[str, Mark] = {}
    randomized = Mark("randomized", False, f"released value, randomized in the release (method {method}) — not "
                                           f"the patient's value ({NOT_IN_KEY})")
    for entry in _entries(metadata, "sensitive"):
        out[str(entry["attribute"])] = randomized
        if entry.get("subtable_column"):
            out[str(entry["subtable_column"])] = Mark("added", False, "added by the method: the sub-table the record "
                                                                      "was randomized in; not from the input")
    for entry in _entries(metadata, "randomized"):
        out[str(entry["attribute"])] = randomized
    for entry in _entries(metadata, "protected"):
        how = ("a value drawn at random for its cluster of records" if entry.get("kind") == "categorical" else
               "its cluster's value plus noise")
        out[str(entry["attribute"])] = Mark(
            "dp-noised", False, f"released value with differential-privacy noise: {how}, not the patient's value "
                                f"({NOT_IN_KEY})")
    for entry in _entries(metadata, "recoded"):
        out[str(entry["attribute"])] = decoded("its alias")
    for entry in _entries(metadata, "graded"):
        out[str(entry["attribute"])] = decoded("its grade")
    return out


def _entries(metadata: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = metadata.get(key)
    return [e for e in value if isinstance(e, dict) and "attribute" in e] if isinstance(value, list) else []


def _generalization(metadata: dict[str, Any]) -> tuple[dict[str, int], dict[str, int], int] | None:
    """Levels and heights of the generalized quasi-identifiers, and how many records were suppressed; None
    if release.json has a generalization entry that cannot be read (then no quasi-identifier is trusted)."""
    risk = metadata.get("reidentification")
    entry = risk.get("generalization") if isinstance(risk, dict) else None
    if entry is None:
        return {}, {}, 0
    try:
        levels = highest_levels(entry)  # with local recoding some records are coarser than the node
        heights = {str(k): int(v) for k, v in (entry.get("heights") or {}).items()}
        return levels, heights, int(entry.get("suppressed") or 0)
    except (TypeError, ValueError, AttributeError):
        return None


def _level(name: str, levels: dict[str, int], heights: dict[str, int], varied: bool = False) -> str:
    height = heights.get(name)
    return f"{'up to ' if varied else ''}level {levels[name]}" + (f" of {height}" if height else "") + " of its hierarchy"


@dataclass
class Decoded:
    """A decoded table with what each column is and, where a cell is something else than its column, what
    that cell is (a suppressed '*', an alias the key cannot resolve, a pseudonym that is not in the key).

    ``cells`` maps a column to ``(rows, mark)`` pairs, ``rows`` a boolean array over the table's rows; a later
    pair wins over an earlier one.
    """

    table: pd.DataFrame
    marks: dict[str, Mark]
    cells: dict[str, list[tuple[np.ndarray, Mark]]] = field(default_factory=dict)

    def cell_marks(self, position: int) -> dict[str, Mark | None]:
        """The mark of every shown value of row ``position`` (None for a column the release does not have)."""
        out: dict[str, Mark | None] = {}
        for name in self.table.columns:
            mark = self.marks.get(name)
            for rows, special in self.cells.get(name, []):
                if rows[position]:
                    mark = special
            out[name] = mark
        return out

    def status_frame(self) -> pd.DataFrame:
        """Every cell's status (one of :data:`STATUSES`, "" for a column the release does not have); vectorized
        per column."""
        out = {}
        for name in self.table.columns:
            mark = self.marks.get(name)
            status = np.full(len(self.table), "" if mark is None else mark.status, dtype=object)
            for rows, special in self.cells.get(name, []):
                status[rows] = special.status
            out[name] = status
        return pd.DataFrame(out, index=self.table.index)

    def headed(self) -> pd.DataFrame:
        """The table with each marked column's header followed by its label in brackets:
        ``diagnosis [RANDOMIZED, not the patient's value]`` (for a decoded file)."""
        names = {name: f"{name} [{self.marks[name].label}]" for name in self.table.columns if name in self.marks}
        # (ppdp_desktop.core.release.decoded.column_name gives the name back)
        return self.table.rename(columns=names)


def suppressed_cells(metadata: dict[str, Any], table: pd.DataFrame) -> dict[str, np.ndarray]:
    """The cells ('*') of each generalized quasi-identifier that were suppressed, where records were."""
    generalization = _generalization(metadata)
    entry = (metadata.get("reidentification") or {}).get("generalization") or {}
    cells = (entry.get("local_recoding") or {}).get("cells_suppressed") if isinstance(entry, dict) else None
    if not generalization or not (generalization[2] or (isinstance(cells, dict) and any(cells.values()))):
        return {}
    return {name: (table[name].astype(object) == SUPPRESSED).to_numpy(dtype=bool)
            for name in generalization[0] if name in table.columns}
