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

Labels that stand for several values (``several``: a personalized release's generalizations, ``*``) count in
their group's records but toward no value. Estimated shares get each group's supported share
(``core/methods/group_support.py``); :func:`measure` sums them up with the cross-fitted guess
(``core/methods/group_crossfit.py``), as the report, release.json and ``ppdp verify`` all state it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import Cancelled, ParameterError, PPDPError
from ppdp_desktop.core.evaluation.group_disclosure import (
    GroupCells,
    GroupDisclosure,
    counted_cells,
    not_applicable,
    released_groups,
    summarize,
)
from ppdp_desktop.core.methods.group_support import log_term, perturbed_bounds, randomized_bounds
from ppdp_desktop.core.progress import CancelToken

#: a perturbed column's groups are estimated for at most this many (groups x values) cells in all, and this many
#: at a time; estimates below MIN_COUNT records are taken as 0
MLE_CELLS = 200_000_000
CHUNK_CELLS = 2_000_000
MIN_COUNT = 1e-9
#: iterative Bayes (a matrix with a retention per value) stops when a step moves every group's shares by less than
#: EM_TOLERANCE in all, or after EM_STEPS steps (on 1M adult records, 300 steps and 5,000 give the same shares to 0.1 %)
EM_TOLERANCE, EM_STEPS = 1e-6, 300

COUNTED = "counted as released"
RANDOMIZED = ("estimated from the release by inverting the published matrices of the randomized columns (negative "
              "estimates set to 0), as ppdp estimate --table does")
PERTURBED = ("estimated from the release with the published perturbation matrix within each group{blocks} "
             "(maximum-likelihood counts, never negative), as ppdp estimate --where does")


def measure(release: LoadedRelease, quasi: list[str], sensitive: str, bound: float, source: str,
            several: list[str] | tuple[str, ...] = (), cancel: CancelToken | None = None) -> GroupDisclosure:
    """The section's figures from the release alone (or why there are none): :func:`release_cells` summed up,
    with the cross-fitted guess where the shares are estimated; ``cancel`` stops it (``Cancelled``). A release
    holding the same cells and entries as the one measured last gets its figures again (``group_memo.py``)."""
    from ppdp_desktop.core.methods import group_memo

    asked = (tuple(quasi), sensitive, float(bound), source, tuple(several))
    shared = group_memo.recall(release, asked)  # the same cells measured just before (the job's own, in memory)
    if shared is not None:
        return shared
    found = _measure(release, quasi, sensitive, bound, source, several, cancel)
    group_memo.remember(release, asked, found)
    return found


def _measure(release: LoadedRelease, quasi: list[str], sensitive: str, bound: float, source: str,
             several: list[str] | tuple[str, ...], cancel: CancelToken | None) -> GroupDisclosure:
    """:func:`measure`, computed."""
    from dataclasses import replace

    from ppdp_desktop.core.methods import group_crossfit

    cells = release_cells(release, quasi, sensitive, several, cancel)
    if isinstance(cells, str):
        return not_applicable(quasi, sensitive, cells, bound, source)
    found = summarize(cells, bound, source)
    if not cells.estimated:
        return found
    estimate = lambda part: release_cells(part, quasi, sensitive, several, cancel)  # noqa: E731 - one fold's estimate
    try:
        if "randomized" in release.metadata:
            right, margin, guesses = group_crossfit.randomized(release, quasi, sensitive, estimate)
        else:
            entry = next(e for e in release.metadata.get("sensitive") or [] if e.get("attribute") == sensitive)
            right, margin, guesses = group_crossfit.perturbed(release, quasi, entry, estimate)
    except Cancelled:
        raise
    except (PPDPError, np.linalg.LinAlgError) as exc:
        return not_applicable(quasi, sensitive, f"it could not be estimated from this release ({exc})", bound, source)
    return replace(found, guess_right=right, guess_margin=margin, folds=group_crossfit.FOLDS, fold_guesses=guesses)


def release_cells(release: LoadedRelease, quasi: list[str], sensitive: str,
                  several: list[str] | tuple[str, ...] = (), cancel: CancelToken | None = None) -> GroupCells | str:
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
            cells = _randomized(release, quasi, sensitive, cancel)
        else:
            entry = next((e for e in meta.get("sensitive") or [] if e.get("attribute") == sensitive), None)
            cells = (counted_cells(release.table, quasi, sensitive, COUNTED) if entry is None
                     else _perturbed(release, quasi, sensitive, entry))
    except Cancelled:
        raise
    except (PPDPError, np.linalg.LinAlgError) as exc:
        return f"it could not be estimated from this release ({exc})"
    cells.several = frozenset(str(v) for v in several)
    return cells


def _cells_to_compare(records: np.ndarray, values: int) -> int:
    """How many (group, value) cells the supported shares are simultaneous over (as the example's interval)."""
    return int((np.asarray(records) > 0).sum()) * max(values, 1)


def _perturbed(release: LoadedRelease, quasi: list[str], sensitive: str, entry: dict) -> GroupCells:
    from ppdp_desktop.core.methods.partition.release import published_entries

    entries, matrix, entry_values = published_entries(release, entry)
    ids, labels = released_groups(release.table, quasi)
    values = [label_text(v) for v in entry["values"]]
    group, value, estimate = mle_by_group(ids, np.asarray(entries, dtype=np.int64), matrix, entry_values,
                                          len(values), len(labels))
    records = np.bincount(ids[ids >= 0], minlength=len(labels)).astype(float)
    blocks = " and sub-table" if entry.get("subtables") else ""
    bounds = perturbed_bounds(ids, np.asarray(entries, dtype=np.int64), matrix, entry_values, len(values),
                              len(labels), log_term(_cells_to_compare(records, len(values))))
    return GroupCells(list(quasi), sensitive, labels, group, value, estimate, values, records, True,
                      PERTURBED.format(blocks=blocks), bounds=bounds)


def _randomized(release: LoadedRelease, quasi: list[str], sensitive: str, cancel: CancelToken | None = None
                ) -> GroupCells:
    from ppdp_desktop.core.data.domain import text_column
    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table

    published = {e.get("attribute"): e for e in release.metadata.get("randomized") or []}
    if not set(published) & {*quasi, sensitive}:
        return counted_cells(release.table, quasi, sensitive, COUNTED)
    attributes = [*quasi, sensitive]
    full = estimate_release_table(release, attributes, project=True)
    dims = [full[c].nunique() for c in attributes]
    observed = full["observed"].to_numpy(dtype=float).reshape(dims)
    matrices = [np.asarray(published[c]["matrix"], dtype=float) if c in published else None for c in attributes]
    positive = full["estimate"].to_numpy() > 0
    grid = full[positive]
    text = pd.DataFrame({c: text_column(grid[c]).to_numpy() for c in attributes})
    ids, labels = released_groups(text, quasi)
    codes, uniques = pd.factorize(text[sensitive], use_na_sentinel=False)
    estimate = grid["estimate"].to_numpy(dtype=float)
    records = np.bincount(ids, weights=estimate, minlength=len(labels)) if len(ids) else np.zeros(len(labels))
    low, high = randomized_bounds(observed, matrices, log_term(_cells_to_compare(records, len(uniques))), cancel)
    bounds = (ids, codes.astype(np.int64), low.ravel()[positive], high.ravel()[positive])
    return GroupCells(list(quasi), sensitive, labels, ids, codes.astype(np.int64), estimate,
                      [str(u) for u in uniques], records, True, RANDOMIZED, bool(set(published) & set(quasi)),
                      bounds=bounds)


def label_meanings(plan: object, sensitive: str) -> tuple[list[str], dict[str, str]]:
    """``(labels that stand for several values, label -> the one value it names)`` of ``sensitive`` in a plan
    that publishes it through a taxonomy's aliases (personalized recoding: a value, its alias1 or its alias2):
    an alias1 shared by several values names none of them; an opaque code names its value (decodable by its
    frequency); empty for any other plan. Read from the plan, which holds the taxonomy the key seals."""
    taxonomy = getattr(plan, "taxonomy", None)
    if getattr(plan, "attribute", None) != sensitive or taxonomy is None or not hasattr(taxonomy, "leaves"):
        return [], {}
    named: dict[str, set[str]] = {}
    for leaf in taxonomy.leaves():
        for label in (leaf.label, getattr(leaf, "alias1", None), getattr(leaf, "alias2", None)):
            if label is not None:
                named.setdefault(str(label), set()).add(str(leaf.label))
    several = sorted(label for label, values in named.items() if len(values) > 1)
    return several, {label: next(iter(values)) for label, values in named.items() if len(values) == 1}


def mle_by_group(ids: np.ndarray, entries: np.ndarray, matrix, entry_values: np.ndarray | None, n_values: int,
                 n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(group, value, estimate)``: each group's counts estimated from its released values with ``matrix`` (a
    :class:`~ppdp_desktop.core.privacy.structured.RetentionMatrix` over the entries, block-diagonal with one block
    per sub-table) by maximum likelihood, as ``ppdp estimate --where`` does by default: non-negative, each block's
    records kept, in closed form where each block has one retention, else by iterative Bayes; the entries of one
    value (``entry_values``) are added up. ``ids``: each record's group (-1: left out); ``entries``: each record's
    released entry. Groups are estimated a block of groups at a time (one dense array of entries x groups)."""
    from ppdp_desktop.core.privacy.reconstruction import iterative_bayesian_many

    n_entries = matrix.m
    if n_groups * n_entries > MLE_CELLS:
        raise ParameterError(f"{n_groups:,} groups x {n_entries:,} values are too many to estimate group by group "
                             f"(at most {MLE_CELLS:,}); name fewer or coarser quasi-identifiers.")
    keep = ids >= 0
    cells, observed = np.unique(ids[keep] * n_entries + entries[keep], return_counts=True)
    group, entry = np.divmod(cells, n_entries)
    closed = bool(matrix.block_uniform)
    step = max(1, CHUNK_CELLS // max(n_entries, 1))
    found_group, found_entry, found = [], [], []
    for first in range(0, n_groups, step):
        width = min(step, n_groups - first)
        chosen = (group >= first) & (group < first + width)
        dense = np.zeros((n_entries, width))
        dense[entry[chosen], group[chosen] - first] = observed[chosen]
        estimate = matrix.mle(dense) if closed else iterative_bayesian_many(dense, matrix, EM_TOLERANCE, EM_STEPS)
        e, g = np.nonzero(estimate > MIN_COUNT)
        found_group.append(g + first)
        found_entry.append(e)
        found.append(estimate[e, g])
    group, entry, estimate = (np.concatenate(x) if x else np.zeros(0) for x in (found_group, found_entry, found))
    value = entry.astype(np.int64) if entry_values is None else np.asarray(entry_values, dtype=np.int64)[entry.astype(np.int64)]
    cells, where = np.unique(group.astype(np.int64) * n_values + value, return_inverse=True)
    group, value = np.divmod(cells, n_values)
    return group, value, np.bincount(where, weights=estimate)
