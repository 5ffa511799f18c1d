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
from ppdp_desktop.core.privacy.reconstruction import BOOTSTRAP_SEED
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


#: replicates of the parametric bootstrap behind a group's interval, and the largest table redrawn that way
REPLICATES = 200
MAX_REDRAWN_CELLS = 20_000_000


def share_interval(release: LoadedRelease, quasi: list[str], sensitive: str, labels: tuple[str, ...],
                   value: str, estimate: float | None = None, level: float = 0.95) -> tuple[float, float] | None:
    """A ``level`` interval of the share of ``value`` in the group with quasi-identifiers ``labels`` from a seeded
    parametric bootstrap of the same estimator (released values redrawn with the published matrices from the
    estimate itself, then estimated again): the basic bootstrap around ``estimate`` (the share shown), else the
    percentiles. None where the shares are counted, not estimated. On 3,000 Adult records (sex, race; workclass)
    it held the true share for 19 of 20 seeds (uniform, fine-grain, partitioning) and 55 of 60 (rr, l = 3)."""
    meta = release.metadata
    try:
        if "randomized" in meta and {e.get("attribute") for e in meta["randomized"]} & {*quasi, sensitive}:
            replicates = _randomized_replicates(release, quasi, sensitive, labels, value)
        else:
            entry = next((e for e in meta.get("sensitive") or [] if e.get("attribute") == sensitive), None)
            if entry is None:
                return None
            replicates = _perturbed_replicates(release, quasi, entry, labels, value)
    except PPDPError:  # a table too large to redraw, a malformed entry (verify says which)
        return None
    if replicates is None or not len(replicates):
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(replicates, [tail, 100.0 - tail])
    if estimate is not None:  # the basic bootstrap: the estimator's own bias (clipping, a maximum) is turned round
        low, high = 2.0 * estimate - high, 2.0 * estimate - low
    return float(np.clip(low, 0.0, 1.0)), float(np.clip(high, 0.0, 1.0))


def _in_group(table: pd.DataFrame, quasi: list[str], labels: tuple[str, ...]) -> np.ndarray:
    from ppdp_desktop.core.evaluation.group_disclosure import text_codes

    mask = np.ones(len(table), dtype=bool)
    for column, label in zip(quasi, labels):
        codes, texts = text_codes(table[column])
        mask &= (texts == label)[codes]
    return mask


def _perturbed_replicates(release: LoadedRelease, quasi: list[str], entry: dict, labels: tuple[str, ...],
                          value: str) -> np.ndarray | None:
    from ppdp_desktop.core.methods.partition.release import published_entries
    from ppdp_desktop.core.privacy.reconstruction import bootstrap_replicates

    values = [label_text(v) for v in entry["values"]]
    if value not in values:
        return None
    entries, matrix, entry_values = published_entries(release, entry)
    observed = np.bincount(np.asarray(entries)[_in_group(release.table, quasi, labels)],
                           minlength=matrix.m).astype(float)
    counts = bootstrap_replicates(observed, matrix, "mle", REPLICATES, groups=entry_values,
                                  n_groups=len(values) if entry_values is not None else None)
    total = counts.sum(axis=1)
    return np.divide(counts[:, values.index(value)], total, out=np.zeros(len(total)), where=total > 0)


def _randomized_replicates(release: LoadedRelease, quasi: list[str], sensitive: str, labels: tuple[str, ...],
                           value: str) -> np.ndarray | None:
    from ppdp_desktop.core.methods.rr.estimate import estimate_tensor
    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table
    from ppdp_desktop.core.methods.rr.risk import apply_axes

    attributes = [*quasi, sensitive]
    grid = estimate_release_table(release, attributes, project=True)
    axes = [pd.Index(pd.unique(grid[c])) for c in attributes]
    dims = [len(a) for a in axes]
    if int(np.prod(dims, dtype=float)) * REPLICATES > MAX_REDRAWN_CELLS:
        return None
    target = [a.get_indexer([label])[0] for a, label in zip(axes, [*labels, value])]
    if min(target) < 0:
        return None
    randomized = {e["attribute"]: np.asarray(e["matrix"], dtype=float) for e in release.metadata["randomized"]}
    matrices = [randomized.get(c) for c in attributes]
    estimate = grid["estimate"].to_numpy(dtype=float).reshape(dims)  # the grid is every combination, in order
    n = int(round(grid["observed"].sum()))
    expected = np.clip(apply_axes(estimate, matrices), 0.0, None).ravel()
    if n == 0 or expected.sum() <= 0:
        return None
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    redrawn = rng.multinomial(n, expected / expected.sum(), size=REPLICATES).T.reshape(*dims, REPLICATES)
    again = np.clip(estimate_tensor(redrawn, matrices), 0.0, None)
    group = again[tuple(target[:-1])]  # values x replicates
    total = group.sum(axis=0)
    return np.divide(group[target[-1]], total, out=np.zeros(REPLICATES), where=total > 0)
