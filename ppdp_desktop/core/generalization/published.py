"""What release.json states of a generalization: its figures, what each column's level means, and what ``ppdp verify``
needs to re-check the criteria on the released text (issue 33).

Public by construction: the levels and their labels are what the released columns show; the sensitive column's
label chains are written only for hierarchical t-closeness, whose distance is measured over them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.result import Generalization


def level_meaning(hierarchy: Hierarchy, level: int) -> str:
    """What ``level`` of ``hierarchy`` shows, in a few words: the values themselves, one label for all, or its number
    of groups (labels of the values, a blank cell's aside) with an example (``"12 groups, e.g. 39 becomes [35, 40["``)."""
    if level == 0:
        return "the values themselves"
    labels = hierarchy.labels(level)
    if level >= hierarchy.height or len(labels) == 1:
        return f"one label for every record ({labels[0]!r})"
    value = hierarchy.example
    label = hierarchy.chain(value)[level]
    present = np.array([v != "" for v in hierarchy.values])  # the missing value's label aside
    groups = len(np.unique(np.asarray(hierarchy.level_codes[level])[present]))
    return f"{groups:,} groups, e.g. {value} becomes {label}"


def published_json(generalization: Generalization, sensitive_as_is: bool = True) -> dict[str, Any]:
    """:meth:`Generalization.to_json` with ``meanings`` (column -> :func:`level_meaning`) and, when criteria beyond k
    were asked, ``criteria_checked_on``: ``"released"`` when the sensitive column is released unchanged (verify can
    check l-diversity and t-closeness on it), else ``"original"`` (a randomization method: checked on the true values
    before writing), with ``sensitive_chains`` for hierarchical t-closeness."""
    out = generalization.to_json()
    out["meanings"] = {name: level_meaning(h, generalization.levels[name]) for name, h in generalization.hierarchies.items()}
    criteria = generalization.criteria
    if criteria is not None:
        out["criteria_checked_on"] = "released" if sensitive_as_is or not criteria.needs_sensitive else "original"
        hierarchy = generalization.sensitive
        if hierarchy is not None and criteria.t is not None and criteria.hierarchical_t:
            out["sensitive_chains"] = {v: hierarchy.chain(v) for v in hierarchy.values if v != ""}
    return out
