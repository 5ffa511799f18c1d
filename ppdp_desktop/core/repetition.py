"""The job's side of repeated releases (issue 30): who a record is across releases, what this release draws and
spends on it, and -- before anything is written -- what the project's releases add up to.

* :func:`identity_columns`: a record is recognised by its identifier columns (a patient number) when the custodian
  tagged any, else by every column released unchanged (what an attacker links releases by).
* :func:`chunk_records`: a chunk's records as the ledger keeps them (keyed digests, the epsilon spent, the
  generalized class), computed beside the release of the chunk, so memory, streaming and Dask agree.
* :func:`repeat_outcome`: the cumulative guarantee against the project's published releases in the ledger, the
  intersection with the last generalized release, and the budget check (fail closed, before any writing).
* :func:`previous_node` / :func:`node_notes`: a generalized release keeps the lattice node of the project's last
  generalized release while it is still k-anonymous on the new records (the project's default), else searches
  afresh and says so; what combining the two releases would reveal (records in a group smaller than k) is said in
  the release's statement and as a warning (:func:`intersection_warning`), before anything is written.
* :func:`stable_pseudonym_key`: a project's stable pseudonyms (its custodian secret's key), checked one per
  record in :func:`repeat_outcome`.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_ref
from ppdp_desktop.core.privacy.pseudonyms import StablePseudonymKey
from ppdp_desktop.core.repeat.accounting import check_budget, cumulative_guarantee
from ppdp_desktop.core.repeat.intersection import ATTACKER as LINKER
from ppdp_desktop.core.repeat.intersection import IntersectionReport, intersection_check
from ppdp_desktop.core.repeat.ledger import Ledger, LedgerRelease
from ppdp_desktop.core.repeat.outcome import NODE_QUASI, RepeatOutcome
from ppdp_desktop.core.repeat.records import ReleaseRecords

if TYPE_CHECKING:
    from ppdp_desktop.core.anonymize import JobPlan
    from ppdp_desktop.core.generalization import Generalization
    from ppdp_desktop.core.outcome import Applied
    from ppdp_desktop.core.settings import AnonymizationSettings

_FOLD = np.uint64(0x9E3779B97F4A7C15)


def identity_columns(settings: AnonymizationSettings, columns: Sequence[str], protected: set[str]) -> tuple[list[str], str]:
    """The columns that tell who a record is across releases, and that choice in words for the user."""
    if settings.identifiers:
        names = ", ".join(settings.identifiers)
        return list(settings.identifiers), f"their identifier column{'s' if len(settings.identifiers) > 1 else ''} ({names})"
    unchanged = [c for c in columns if c not in protected]
    if not unchanged:
        return list(columns), "their whole original content (no identifier column is tagged)"
    return unchanged, ("the columns released unchanged (no identifier column is tagged: two patients alike in all of "
                       "them count as one)")


def planned_identity(settings: AnonymizationSettings, columns: Sequence[str]) -> tuple[list[str], str]:
    """:func:`identity_columns` of a job not yet planned (the window says it before the run): the columns the
    method protects are found as :func:`~ppdp_desktop.core.anonymize.plan_job` finds them."""
    from ppdp_desktop.core.methods import get_method

    method = get_method(settings.method)
    settings = method.job_settings(settings)
    sensitive, quasi = method.roles(settings)
    protected = {*sensitive, *((c for c in quasi if c not in sensitive) if method.randomizes_quasi else ())}
    return identity_columns(settings, columns, protected)


def class_digests(quasi: pd.DataFrame) -> np.ndarray:
    """Each record's digest of its released quasi-identifier class: pandas' hash of the columns as text. Columns held
    as categories (the generalized ones) are hashed through their categories' text, with no string made per cell
    (the same digests: pandas hashes a categorical by its categories); any other frame, or a missing cell, as text
    cell by cell."""
    if all(isinstance(quasi[c].dtype, pd.CategoricalDtype) for c in quasi.columns) and not quasi.isna().to_numpy().any():
        as_text = [quasi[c].cat.categories.astype("string") for c in quasi.columns]
        if all(t.is_unique and not t.isna().any() for t in as_text):
            coded = pd.DataFrame({i: pd.Categorical.from_codes(quasi[c].cat.codes, t)
                                  for i, (c, t) in enumerate(zip(quasi.columns, as_text))}, index=quasi.index)
            return pd.util.hash_pandas_object(coded, index=False).to_numpy(dtype=np.uint64)
    return pd.util.hash_pandas_object(quasi.astype("string"), index=False).to_numpy(dtype=np.uint64)


def chunk_records(job: JobPlan, identities: np.ndarray, applied: Applied, quasi: pd.DataFrame) -> ReleaseRecords:
    """A chunk's records as the ledger keeps them: keyed identity digests, the digest of what was drawn (of the
    mechanisms when the draws were persistent; fresh random digests, which never repeat, otherwise), the epsilon
    spent on each record, and the digest of its released quasi-identifier class when they were generalized."""
    n = len(identities)
    keys = job.settings.repeat.keys
    if applied.mechanisms and keys is not None:
        folded = np.zeros(n, dtype=np.uint64)
        for position, name in enumerate(sorted(applied.mechanisms)):
            folded *= _FOLD  # in place: no full-length temporaries per column (issue 34)
            folded ^= np.asarray(applied.mechanisms[name], dtype=np.uint64) + np.uint64(position)
        draws = keys.digest(identities, folded, b"draws")
    else:
        draws = np.frombuffer(os.urandom(8 * n), dtype="<u8").astype(np.uint64)
    epsilon = np.broadcast_to(np.float64(job.release_epsilon), (n,))  # one value, not 8 bytes a record (issue 34)
    classes = None
    if job.generalization is not None and job.quasi:
        classes = class_digests(quasi[job.quasi])
    return ReleaseRecords(identities, draws, epsilon, classes, applied.rederived)


def concatenate(parts: Sequence[ReleaseRecords]) -> ReleaseRecords:
    """The records of consecutive chunks as one release's."""
    classes = None if any(p.classes is None for p in parts) else np.concatenate([p.classes for p in parts])
    rederived = None if all(p.rederived is None for p in parts) else np.concatenate(
        [np.zeros(len(p), dtype=bool) if p.rederived is None else p.rederived for p in parts])
    return ReleaseRecords(np.concatenate([p.identities for p in parts]), np.concatenate([p.draws for p in parts]),
                          np.concatenate([p.epsilon for p in parts]), classes, rederived)


def repeat_outcome(job: JobPlan, records: ReleaseRecords) -> RepeatOutcome:
    """This release against the project's published releases in the ledger; refused past the budget.

    Raises
    ------
    PrivacyError
        The largest cumulative epsilon of a record would exceed the project's budget and no reason to go past it
        was given (nothing is written).
    """
    repeat = job.settings.repeat
    with Ledger() as ledger:
        earlier = ledger.releases(repeat.project_id)
        previous = [release.records() for release in earlier]
        ordinal = ledger.next_ordinal(repeat.project_id)
    cumulative = cumulative_guarantee(previous, records, ordinal=ordinal, budget=repeat.budget,
                                      persistent=repeat.keys is not None and job.persistent_draws,
                                      project_id=repeat.project_id, randomized=not job.method.generalizes_only)
    check_budget(cumulative, repeat.override_reason)
    node = [int(job.generalization.levels[q]) for q in job.quasi] if job.generalization is not None else None
    intersection, flagged = None, None
    last = next((r for r in reversed(earlier) if r.node is not None), None)
    k = int(job.settings.protection.k or 1)
    criteria = job.generalization.criteria if job.generalization is not None else None
    size = max(k, criteria.group_size if criteria is not None else 1)  # no k: the group size the criteria promise
    if records.classes is not None and last is not None and size > 1:
        before = previous[earlier.index(last)]
        if before.classes is not None:
            same = last.node == node and last.parameters.get(NODE_QUASI) == job.quasi
            intersection = intersection_check(before, records, size, same_node=same, by_criteria=size > k)
            flagged = intersection_warning(intersection, ordinal, last.ordinal, repeat.project_id)
    if isinstance(job.pseudonym_key, StablePseudonymKey) and job.needs_pseudonyms and job.ledger_keys is not None:
        check_one_record_per_identity(records, job.identity)
        job.pseudonym_key.bind(records.identities, job.ledger_keys.keyed_identities)  # the read-back check's way back
    notes = list(job.repeat_notes)
    if repeat.keys is not None and job.method.draws_per_record and not job.settings.identifiers:
        notes.append("No identifier column is tagged, so this release's draws are fresh (two patients alike in every "
                     "unchanged column must not share a draw) and every patient released before composes; tag a "
                     "patient number as an identifier to keep an unchanged patient's released value.")
    notes += job.method.repeat_notes(job.plan)
    parameters = getattr(job.plan, "parameters", None)
    kept = parameters.get("kept_from_release") if isinstance(parameters, dict) else None
    if kept:
        notes.append(f"The plan of release {kept} of this project was kept (the column holds the same values and the "
                     "same rule was asked for): its pairs and retentions, so that an unchanged patient's draw stays the "
                     "same; a new value or another rule makes a new plan, and every patient's draw fresh.")
    return RepeatOutcome(repeat.project_id, job.identity, cumulative.persistent, records, cumulative, repeat.budget,
                         repeat.override_reason, repeat.stable_pseudonyms, node, intersection, notes,
                         plan_state=job.method.repeat_state(job.plan), quasi=list(job.quasi),
                         custodian_notes=list(repeat.notes), warnings=[flagged] if flagged else [])


def project_releases(project_id: str) -> list[LedgerRelease]:
    """The project's published releases in the ledger, oldest first (read once by the job's planning)."""
    with Ledger() as ledger:
        return ledger.releases(project_id)


def previous_plan(history: Sequence[LedgerRelease], method: str) -> dict[str, Any] | None:
    """The plan state of the last release of ``history`` by ``method`` (``Method.repeat_state``, kept in the ledger
    with the release's number), or None."""
    for release in reversed(history):
        if release.method == method:
            state = release.parameters.get("plan_state")
            return {**state, "ordinal": release.ordinal} if isinstance(state, dict) else None
    return None


@dataclass(frozen=True)
class PreviousNode:
    """The lattice node of a project's last generalized release: its levels, the quasi-identifiers they are of (in
    that order; empty when the ledger does not say) and the release's number in the project."""

    levels: list[int]
    quasi: list[str]
    ordinal: int


def previous_node(history: Sequence[LedgerRelease]) -> PreviousNode | None:
    """The node of the last generalized release of ``history`` (the project's, from the ledger), or None."""
    last = next((r for r in reversed(history) if r.node is not None), None)
    if last is None or last.node is None:
        return None
    quasi = last.parameters.get(NODE_QUASI)
    return PreviousNode([int(level) for level in last.node],
                        [str(q) for q in quasi] if isinstance(quasi, list) else [], int(last.ordinal))


def node_to_keep(previous: PreviousNode | None, quasi: Sequence[str]) -> list[int] | None:
    """The levels this release keeps when they are of the same quasi-identifiers, else None (searched afresh)."""
    if previous is None or previous.quasi != list(quasi) or len(previous.levels) != len(quasi):
        return None
    return list(previous.levels)


def node_notes(previous: PreviousNode | None, quasi: Sequence[str], generalization: Generalization | None) -> list[str]:
    """What the statement says of the generalization against the project's last generalized release: kept, or
    searched afresh and why (empty when there is none to compare with)."""
    if previous is None or generalization is None:
        return []
    release = f"release {previous.ordinal} of this project"
    levels = [int(generalization.levels[q]) for q in quasi]
    if previous.quasi != list(quasi):
        was = ", ".join(previous.quasi) if previous.quasi else "quasi-identifiers the ledger does not name"
        return [f"The quasi-identifiers differ from those {release} generalized ({was}), so this release's "
                "generalization was searched afresh."]
    if levels == previous.levels:
        return [f"The quasi-identifiers are generalized to the same levels as in {release} (the project's default: "
                f"{_levels(quasi, levels)}), which {_meet(generalization, True)} within the suppression limit "
                "on this release's records."]
    taller = [q for q, level in zip(quasi, previous.levels) if level > generalization.heights[q]]
    why = (f"the hierarchies of {', '.join(taller)} have fewer levels now" if taller else
           f"they {_meet(generalization, False)} within the suppression limit on this release's records")
    return [f"The levels of {release} ({_levels(quasi, previous.levels)}) were not kept because {why}, so the most "
            f"precise generalization that is was searched afresh ({_levels(quasi, levels)})."]


def _levels(quasi: Sequence[str], levels: Sequence[int]) -> str:
    return ", ".join(f"{q} level {level}" for q, level in zip(quasi, levels))


def intersection_warning(report: IntersectionReport, ordinal: int, previous: int, project_id: str) -> str | None:
    """The warning for a release that, combined with the project's last generalized release, would put records in a
    group smaller than k (None when it would not). Flagged rather than refused: each release's own k holds, and a
    custodian who tries several k on one file before publishing one would otherwise be stopped; the statement of
    the release says it too."""
    if not report.shrunk:
        return None
    project = f" of project '{project_id}'" if project_id else ""
    bound = f"the {report.k} records the criteria promise" if report.by_criteria else f"k = {report.k}"
    cause = ("the records of their groups changed between the releases (records added, removed or changed: a group "
             "suppressed before as too small can show now, with new records in it)" if report.same_node else
             "the groups of the two generalizations cut across each other")
    return (f"Release {ordinal}{project}, combined with release {previous}, puts {report.shrunk:,} "
            f"record{'' if report.shrunk == 1 else 's'} in a group smaller than {bound} (the smallest holds "
            f"{report.smallest}) for {LINKER}, because {cause}; publish only one of the two, or keep the node.")


def stable_pseudonym_key(settings: AnonymizationSettings) -> StablePseudonymKey:
    """The project's stable pseudonym key, derived from its custodian secret (a patient keeps one pseudonym in every
    release of the project).

    Raises
    ------
    ParameterError
        No custodian secret is at hand (the pseudonyms could not be the same next time), or no identifier column
        is tagged (a stable pseudonym follows the patient by it).
    """
    repeat = settings.repeat
    fresh = setting_ref("no-stable-pseudonyms")
    if repeat.keys is None:
        raise ParameterError(
            f"Stable pseudonyms are made with the custodian secret of project '{repeat.project_id}', and none is at "
            f"hand: give its passphrase ({setting_ref('secret-passphrase-file', 'FILE')}) or release with fresh "
            f"pseudonyms ({fresh}).", setting="stable-pseudonyms")
    if not settings.identifiers:
        raise ParameterError(
            "Stable pseudonyms follow each patient by the identifier columns, and none is tagged: tag them "
            f"({setting_ref('identifier', 'COLS')}) or release with fresh pseudonyms ({fresh}).",
            setting="stable-pseudonyms")
    return StablePseudonymKey.from_secret(repeat.keys)


def check_one_record_per_identity(records: ReleaseRecords, identity: str) -> None:
    """Refuse stable pseudonyms when two records of the release share an identity: they would share a pseudonym,
    which fresh pseudonyms would not reveal (a :class:`PrivacyError`, before anything is published)."""
    _, counts = np.unique(records.identities, return_counts=True)
    shared = int(counts[counts > 1].sum())
    if shared:
        raise PrivacyError(
            f"Stable pseudonyms give each patient one pseudonym, but {shared:,} records of this release share "
            f"{identity or 'their identity'} with another record, so they would share a pseudonym and be linked to "
            f"each other. Tag identifier columns that tell every record apart ({setting_ref('identifier', 'COLS')}) "
            f"or release with fresh pseudonyms ({setting_ref('no-stable-pseudonyms')}). Nothing was published.",
            setting="stable-pseudonyms", value=shared, allowed="one record per patient")


def _meet(generalization: Generalization, still: bool) -> str:
    """Whether the levels still meet k and the criteria beyond it: "are still 5-anonymous", "no longer meet the
    release's criteria" (k = 1 asks nothing of a group's size, so it is not named alone)."""
    criteria = generalization.criteria
    beyond = criteria is not None and criteria.to_json() != {"k": criteria.k}
    k = generalization.k
    if k > 1 and not beyond:
        return f"are {'still' if still else 'no longer'} {k}-anonymous"
    what = f"k = {k} and the release's criteria" if k > 1 else "the release's criteria"
    return f"still meet {what}" if still else f"no longer meet {what}"
