"""What local recoding did to each quasi-identifier, in words, from release.json's generalization entry (issue 33).

With local recoding the records of a column are not all at the generalization's level: records the chosen node
would have suppressed are released at the levels of later rounds, or with that one cell suppressed. README and the
marks of a decoded file read this, so that neither says "unchanged" of a column some records show coarser.
"""
from __future__ import annotations

from typing import Any


def recoded_columns(entry: dict[str, Any]) -> dict[str, str]:
    """Per quasi-identifier that local recoding released other than at the node's level: what it did, in words
    (empty without local recoding or an unreadable entry)."""
    local = entry.get("local_recoding") if isinstance(entry, dict) else None
    if not isinstance(local, dict):
        return {}
    try:
        levels = {str(k): int(v) for k, v in (entry.get("levels") or {}).items()}
        rounds = [({str(k): int(v) for k, v in r["levels"].items()}, int(r["records"])) for r in local.get("rounds") or []]
        cells = {str(k): int(v) for k, v in (local.get("cells_suppressed") or {}).items()}
    except (TypeError, ValueError, KeyError, AttributeError):
        return {}
    out = {}
    for name, level in levels.items():
        other: dict[int, int] = {}
        for node, records in rounds:
            if node.get(name, level) != level:
                other[node[name]] = other.get(node[name], 0) + records
        parts = [f"{records:,} records at level {lv}" for lv, records in sorted(other.items())]
        if cells.get(name):
            parts.append(f"this cell alone suppressed ('*') in {cells[name]:,} records")
        if parts:
            out[name] = "local recoding: " + ", ".join(parts)
    return out


def highest_levels(entry: dict[str, Any]) -> dict[str, int]:
    """Per quasi-identifier, the coarsest level any record shows (the node's, or a local recoding round's)."""
    levels = {str(k): int(v) for k, v in (entry.get("levels") or {}).items()}
    local = entry.get("local_recoding")
    for r in (local.get("rounds") or []) if isinstance(local, dict) else []:
        for name, level in r["levels"].items():
            levels[str(name)] = max(levels.get(str(name), 0), int(level))
    return levels
