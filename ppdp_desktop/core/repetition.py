"""The job's side of repeated releases (issue 30): who a record is across releases, what this release draws and
spends on it, and -- before anything is written -- what the project's releases add up to.

* :func:`identity_columns`: a record is recognised by its identifier columns (a patient number) when the custodian
  tagged any, else by every column released unchanged (what an attacker links releases by).
* :func:`chunk_records`: a chunk's records as the ledger keeps them (keyed digests, the epsilon spent, the
  generalized class), computed beside the release of the chunk, so memory, streaming and Dask agree.
* :func:`repeat_outcome`: the cumulative guarantee against the project's published releases in the ledger, the
  intersection with the last generalized release, and the budget check (fail closed, before any writing).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.repeat.accounting import check_budget, cumulative_guarantee
from ppdp_desktop.core.repeat.intersection import intersection_check
from ppdp_desktop.core.repeat.ledger import Ledger
from ppdp_desktop.core.repeat.outcome import RepeatOutcome
from ppdp_desktop.core.repeat.records import ReleaseRecords

if TYPE_CHECKING:
    from ppdp_desktop.core.anonymize import JobPlan
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


def chunk_records(job: JobPlan, identities: np.ndarray, applied: Applied, quasi: pd.DataFrame) -> ReleaseRecords:
    """A chunk's records as the ledger keeps them: keyed identity digests, the digest of what was drawn (of the
    mechanisms when the draws were persistent; fresh random digests, which never repeat, otherwise), the epsilon
    spent on each record, and the digest of its released quasi-identifier class when they were generalized."""
    n = len(identities)
    keys = job.settings.repeat.keys
    if applied.mechanisms and keys is not None:
        folded = np.zeros(n, dtype=np.uint64)
        for position, name in enumerate(sorted(applied.mechanisms)):
            folded = folded * _FOLD ^ (np.asarray(applied.mechanisms[name], dtype=np.uint64) + np.uint64(position))
        draws = keys.digest(identities, folded, b"draws")
    else:
        draws = np.frombuffer(os.urandom(8 * n), dtype="<u8").astype(np.uint64)
    epsilon = np.full(n, job.release_epsilon, dtype=np.float64)
    classes = None
    if job.generalization is not None and job.quasi:
        classes = pd.util.hash_pandas_object(quasi[job.quasi].astype("string"), index=False).to_numpy(dtype=np.uint64)
    return ReleaseRecords(identities, draws, epsilon, classes)


def concatenate(parts: Sequence[ReleaseRecords]) -> ReleaseRecords:
    """The records of consecutive chunks as one release's."""
    classes = None if any(p.classes is None for p in parts) else np.concatenate([p.classes for p in parts])
    return ReleaseRecords(np.concatenate([p.identities for p in parts]), np.concatenate([p.draws for p in parts]),
                          np.concatenate([p.epsilon for p in parts]), classes)


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
                                      project_id=repeat.project_id)
    check_budget(cumulative, repeat.override_reason)
    node = [int(job.generalization.levels[q]) for q in job.quasi] if job.generalization is not None else None
    intersection = None
    last = next((r for r in reversed(earlier) if r.node is not None), None)
    if records.classes is not None and last is not None and job.settings.protection.k is not None:
        before = previous[earlier.index(last)]
        if before.classes is not None:
            intersection = intersection_check(before, records, int(job.settings.protection.k), same_node=last.node == node)
    notes = list(repeat.notes)
    parameters = getattr(job.plan, "parameters", None)
    kept = parameters.get("kept_from_release") if isinstance(parameters, dict) else None
    if kept:
        notes.append(f"The plan of release {kept} of this project was kept (the column holds the same values and the "
                     "same rule was asked for): its pairs and retentions, so that an unchanged patient's draw stays the "
                     "same; a new value or another rule makes a new plan, and every patient's draw fresh.")
    return RepeatOutcome(repeat.project_id, job.identity, cumulative.persistent, records, cumulative, repeat.budget,
                         repeat.override_reason, repeat.stable_pseudonyms, node, intersection, notes,
                         plan_state=job.method.repeat_state(job.plan))


def previous_plan(project_id: str, method: str) -> dict[str, Any] | None:
    """The plan state of the project's last published release by ``method`` (``Method.repeat_state``, kept in the
    ledger with the release's number), or None."""
    with Ledger() as ledger:
        for release in reversed(ledger.releases(project_id)):
            if release.method != method:
                continue
            state = release.parameters.get("plan_state")
            return {**state, "ordinal": release.ordinal} if isinstance(state, dict) else None
    return None
