"""What happened to each column of a release, in words a recipient reads on the report's first page.

:func:`column_changes` compares the job's released columns with the original ones (vectorized, and only
for the columns the job touched: every other column is copied by construction), so the first page can
say "9 of 10 columns released; id removed; diag: 77 % of values differ from the original".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.evaluation.report_model import percent
from ppdp_desktop.core.generalization.alternatives import level_kind, level_words

if TYPE_CHECKING:
    from ppdp_desktop.core.outcome import Anonymization

REMOVED, PSEUDONYMIZED, RANDOMIZED, GENERALIZED, CHANGED, UNCHANGED = (
    "removed", "replaced by pseudonyms", "randomized", "generalized", "changed", "unchanged")


@dataclass(frozen=True)
class ColumnChange:
    """One column of the input and what the release did with it.

    ``share_changed`` is the share of records whose released value differs from the original one
    (``None`` where it does not apply or is not known, e.g. a report rebuilt from a release).
    """

    name: str
    role: str
    change: str
    share_changed: float | None = None
    detail: str = ""

    def sentence(self) -> str:
        """The column in one clause: ``diag (sensitive): randomized, 77 % of values differ from the original``."""
        text = f"{self.name} ({self.role}): {self.change}"
        if self.share_changed is not None and self.change in (RANDOMIZED, CHANGED, GENERALIZED):
            text += f", {percent(self.share_changed)} of values differ from the original"
        return text + (f" ({self.detail})" if self.detail else "")




def column_changes(result: Anonymization) -> list[ColumnChange]:
    """Every input column with what the release did to it, in the data's column order."""
    schema = result.dataset.schema
    frame = result.dataset.frame
    applied = result.applied
    generalization = result.reidentification.generalization if result.reidentification is not None else None
    levels = generalization.levels if generalization is not None else {}
    released = set(result.table.columns)
    out = []
    for name, attr in schema.attributes.items():
        role = attr.role.value
        if attr.role.value == "identifier":
            change = PSEUDONYMIZED if result.has_pseudonyms else REMOVED
            out.append(ColumnChange(name, role, change, detail="not in the release"))
        elif name in applied.dropped or name not in released:
            out.append(ColumnChange(name, role, REMOVED))
        elif name in applied.codes:
            true, shown = applied.codes[name]
            share = float(np.mean(true != shown)) if len(true) else 0.0
            out.append(ColumnChange(name, role, RANDOMIZED if share > 0 else UNCHANGED, share if share > 0 else None))
        elif name in applied.columns:
            share = _share_differing(frame[name], applied.columns[name])
            out.append(ColumnChange(name, role, CHANGED if share > 0 else UNCHANGED, share if share > 0 else None))
        elif generalization is not None and levels.get(name, 0) > 0:  # levels are empty without one
            height = generalization.heights.get(name)
            detail = f"level {levels[name]}" + (f" of {height}" if height else "") + " of its hierarchy"
            hierarchy = generalization.hierarchies.get(name) if generalization.hierarchies else None
            if hierarchy is not None:
                detail += ": " + level_kind(level_words(hierarchy, levels[name]))  # e.g. "10-year bands"
            if generalization.local is not None:
                detail += "; the records it would suppress recoded locally"
            out.append(ColumnChange(name, role, GENERALIZED, detail=detail))
        elif generalization is not None and name in levels and (generalization.suppressed or generalization.local):
            # level 0, yet not unchanged: the suppressed records show '*' (or local recoding changed them)
            rest = ("the records it would suppress recoded locally (coarser levels or '*')" if generalization.local
                    else f"'*' for the {generalization.suppressed:,} suppressed records")
            out.append(ColumnChange(name, role, CHANGED, detail=f"its own values where the generalization keeps them; {rest}"))
        else:
            out.append(ColumnChange(name, role, UNCHANGED))
    return out


def _share_differing(original: pd.Series, released: Any) -> float:
    """Share of records whose ``released`` value (original row order) differs from ``original``; two missing
    values are the same value. Vectorized: one elementwise comparison."""
    left = original.to_numpy(dtype=object)
    right = np.asarray(released, dtype=object)
    if len(left) == 0 or len(left) != len(right):
        return 0.0
    same = left == right
    missing = pd.isna(left) & pd.isna(right)
    return float(np.mean(~(same | missing)))


def changes_from_roles(columns: list[tuple[str, str]]) -> list[ColumnChange]:
    """What can be said without the job (a report rebuilt from a release): identifiers removed, the rest
    as released, with nothing measured."""
    return [ColumnChange(name, role, REMOVED if role == "identifier" else "released") for name, role in columns]
