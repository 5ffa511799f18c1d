"""Each released group's counts of the sensitive values, estimated from the release the way a recipient would:
read from what ``release.json`` publishes, whatever the method (the report's group section uses it).

- Randomized response (``randomized``): the quasi-identifier x sensitive table estimated axis by axis with the
  inverse of each published matrix (``ppdp estimate --table ... --project``), negative cells set to 0.
- A perturbed column (``sensitive``, with or without sub-tables): each group's counts estimated from its released
  values with the published matrix, sub-table by sub-table, by maximum likelihood (``ppdp estimate --where``'s
  default: never negative; the plain inverse is dominated by noise for a value kept with a small probability).
- A column a differential-privacy release protects (``protected``): does not apply; each released value is its
  cluster's noisy value, not the person's.
- Anything else: the values counted as released.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.evaluation.group_disclosure import (
    GroupCells, counted_cells, mle_by_group, released_groups,
)

COUNTED = "counted as released"
RANDOMIZED = ("estimated from the release by inverting the published matrices of the randomized columns (negative "
              "estimates set to 0), as ppdp estimate --table does")
PERTURBED = ("estimated from the release with the published perturbation matrix within each group{blocks} "
             "(maximum-likelihood counts, never negative), as ppdp estimate --where does")


def release_cells(release: LoadedRelease, quasi: list[str], sensitive: str) -> GroupCells | str:
    """The estimated counts per (released group, sensitive value), or a sentence saying why there are none."""
    meta = release.metadata
    missing = [c for c in [*quasi, sensitive] if c not in release.table.columns]
    if not quasi:
        return "no quasi-identifiers were named, so there are no groups to look at"
    if missing:
        return f"the release has no column {missing[0]!r}"
    if any(e.get("attribute") == sensitive for e in meta.get("protected") or []):
        return (f"{sensitive} is protected by differential privacy: each released value is its cluster's noisy "
                "value, not the person's, so a share of released values says nothing about anyone's true value")
    try:
        if "randomized" in meta:
            return _randomized(release, quasi, sensitive)
        entry = next((e for e in meta.get("sensitive") or [] if e.get("attribute") == sensitive), None)
        if entry is not None:
            return _perturbed(release, quasi, sensitive, entry)
    except PPDPError as exc:
        return f"it could not be estimated from this release ({exc})"
    return counted_cells(release.table, quasi, sensitive, COUNTED)


def _perturbed(release: LoadedRelease, quasi: list[str], sensitive: str, entry: dict) -> GroupCells:
    from ppdp_desktop.core.methods.partition.release import published_entries

    entries, matrix, entry_values = published_entries(release, entry)
    ids, labels = released_groups(release.table, quasi)
    values = [label_text(v) for v in entry["values"]]
    group, value, estimate = mle_by_group(ids, np.asarray(entries, dtype=np.int64), matrix, entry_values,
                                          len(values), len(labels))
    records = np.bincount(ids[ids >= 0], minlength=len(labels)).astype(float)
    blocks = " and sub-table" if entry.get("subtables") else ""
    return GroupCells(list(quasi), sensitive, labels, group, value, estimate, values, records, True,
                      PERTURBED.format(blocks=blocks))


def _randomized(release: LoadedRelease, quasi: list[str], sensitive: str) -> GroupCells:
    from ppdp_desktop.core.data.domain import text_column
    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table

    randomized = {e.get("attribute") for e in release.metadata.get("randomized") or []}
    if not randomized & {*quasi, sensitive}:
        return counted_cells(release.table, quasi, sensitive, COUNTED)
    grid = estimate_release_table(release, [*quasi, sensitive], project=True)
    grid = grid[grid["estimate"] > 0]
    text = pd.DataFrame({c: text_column(grid[c]).to_numpy() for c in [*quasi, sensitive]})
    ids, labels = released_groups(text, quasi)
    codes, uniques = pd.factorize(text[sensitive], use_na_sentinel=False)
    estimate = grid["estimate"].to_numpy(dtype=float)
    records = np.bincount(ids, weights=estimate, minlength=len(labels)) if len(ids) else np.zeros(len(labels))
    quasi_randomized = bool(randomized & set(quasi))
    return GroupCells(list(quasi), sensitive, labels, ids, codes.astype(np.int64), estimate,
                      [str(u) for u in uniques], records, True, RANDOMIZED, quasi_randomized)
