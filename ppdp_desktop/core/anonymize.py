"""The anonymization job: dataset + settings -> verified plan -> released table (in memory).

Used by the CLI, ``ppdp run`` and, through the worker, by the GUI. Nothing is written here: writing is
:mod:`ppdp_desktop.core.release.package`, which only takes what this job verified. The job reaches the
chosen method through the registry only: the method says which columns it protects, plans from
statistics, verifies its guarantee (fail closed) and applies the plan to the rows.

The job has three stages, shared with the streamed job (:mod:`ppdp_desktop.core.streaming`), which runs
them on a file chunk by chunk: :func:`plan_job` (plan + verify, from the columns the plan reads),
:func:`bind_job` (the per-record decisions that need every record: the k-anonymous generalization's
suppression, partitioning's dealing to sub-tables) and :func:`release_chunk` (records ``start, ...`` as
released, in their original order). Every draw is keyed by the record's index, and the release's order is
the rank of each record's keyed sort key, so a fixed seed gives the same release however the records are cut.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeGuard

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.dictionary import dictionary_encoded
from ppdp_desktop.core.data.freed_memory import return_freed
from ppdp_desktop.core.data.schema import Schema, free_name, roles_from_lists
from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_ref
from ppdp_desktop.core.generalization import Generalization
from ppdp_desktop.core.methods import Method, Plan, get_method
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy.persistent import PersistentKeys, identity_fingerprints
from ppdp_desktop.core.privacy.pseudonyms import PSEUDONYM_COLUMN, STABLE_RECORD, PseudonymKey, StablePseudonymKey
from ppdp_desktop.core.privacy.randomness import RandomSource, job_randomness
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress, subrange
from ppdp_desktop.core.protection import check_group_bound, measure, protect, released_quasi
from ppdp_desktop.core.release.installation import ledger_identity_secret
from ppdp_desktop.core.repeat.records import ReleaseRecords
from ppdp_desktop.core.repetition import (
    chunk_records,
    identity_columns,
    node_notes,
    node_to_keep,
    previous_node,
    previous_plan,
    project_releases,
    repeat_outcome,
    stable_pseudonym_key,
)
from ppdp_desktop.core.settings import AnonymizationSettings, MethodSettings


@dataclass
class JobPlan:
    """A verified plan and everything needed to release any chunk of the records with it."""

    method: Method
    settings: AnonymizationSettings
    schema: Schema
    sensitive: list[str]
    quasi: list[str]
    notes: list[str]
    generalization: Generalization | None
    plan: Plan
    guarantee: dict[str, Any]
    randomness: RandomSource  # the only randomness the plan receives: keyed per-record streams
    seed: int
    columns: list[str]  # the data's columns, in the file's order
    pseudonym_column: str = PSEUDONYM_COLUMN
    pseudonym_key: PseudonymKey | None = None  # record i's id is the key's permutation of i, or of its identity (secret)
    #: repeated releases (issue 30): the columns that say who a record is, that choice in words, the epsilon this
    #: release spends on a record, whether the method draws persistently, and the ledger's identity keys
    identity_columns: list[str] = field(default_factory=list)
    identity: str = ""
    release_epsilon: float = 0.0
    persistent_draws: bool = False
    ledger_keys: PersistentKeys | None = None
    #: what the release's statement says of the generalization against the project's last one (kept or not)
    repeat_notes: list[str] = field(default_factory=list)

    @property
    def protected(self) -> set[str]:
        """The columns the method may replace: those it protects."""
        return {*self.sensitive, *(self.quasi if self.method.randomizes_quasi else ())}

    @property
    def needs_pseudonyms(self) -> bool:
        """A pseudonym column stands for the removed identifiers, unless the plan releases none (dp-microagg's
        unlinked columns, whose rows are not records)."""
        return (bool(self.schema.identifiers) and getattr(self.plan, "releases_pseudonyms", True)) \
            or self.plan.needs_pseudonyms


@dataclass
class Bound:
    """:func:`bind_job`'s per-record decisions for the whole table: the generalized quasi-identifiers (None: no
    generalization) and the plan's own (``plan.bind``; None for a method whose records are independent)."""

    quasi: pd.DataFrame | None = None
    plan: Any = None
    #: the identity fingerprints computed while binding, and of which table (the in-memory job's release_chunk
    #: gets that very table: they are not computed twice)
    fingerprints: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    fingerprinted: pd.DataFrame | None = field(default=None, repr=False)


@dataclass
class ReleasedChunk:
    """Records ``start, start+1, ...`` as released, in their original order (``rows``), what applying the plan
    produced (``applied``) and the quasi-identifiers as released (``quasi``, for the risk measure)."""

    start: int
    rows: pd.DataFrame
    applied: Applied
    quasi: pd.DataFrame
    identifiers: pd.DataFrame = field(default_factory=pd.DataFrame)
    records: ReleaseRecords | None = None  # as the release ledger keeps them (a job with a project only)


def plan_columns(settings: AnonymizationSettings) -> list[str]:
    """The columns a job's plan reads (each method's protected columns, the quasi-identifiers, a choice column, and
    the identifier columns of a project with a custodian secret: who a record is, for a persistent whole-table deal
    such as partitioning's): all a streamed job keeps of every record in its first pass."""
    method = get_method(settings.method)
    settings = method.job_settings(settings)
    sensitive, quasi = method.roles(settings)
    extra = [settings.choices.choice_column] if settings.choices.choice_column else []
    if settings.repeat.active and settings.repeat.keys is not None:
        extra += list(settings.identifiers)
    return list(dict.fromkeys(c for c in [*sensitive, *quasi, *extra] if c))


def plan_job(dataset: Dataset, settings: AnonymizationSettings, progress: Progress = no_progress,
             cancel: CancelToken | None = None, columns: list[str] | None = None) -> JobPlan:
    """Check the settings, generalize the quasi-identifiers if asked, plan from statistics and verify (fail closed).

    ``dataset`` needs only the columns of :func:`plan_columns` (a streamed job's first pass); ``columns`` are
    the data's columns when ``dataset`` does not hold them all.
    """
    cancel = cancel or CancelToken()
    frame = dataset.frame
    columns = list(frame.columns) if columns is None else list(columns)
    method = get_method(settings.method)
    settings = method.job_settings(settings)
    for declared in (settings.options, settings.protection):  # declared limits first, before any allocation
        if isinstance(declared, MethodSettings):
            declared.check()
    if (settings.sensitive or method.needs_sensitive) and settings.sensitive not in columns:
        raise ParameterError(
            f"Sensitive column {settings.sensitive!r} is not in {dataset.label}; its columns are: {', '.join(columns)}."
        )
    sensitive, quasi = method.roles(settings)
    notes = [f"{c!r} is protected by {method.title} (e.g. graded), so it is no longer kept as a quasi-identifier."
             for c in quasi if c in sensitive]
    quasi = [c for c in quasi if c not in sensitive]  # a protected column has one role: protected
    schema = dataset.schema.with_roles(roles_from_lists(sensitive, settings.identifiers, quasi))
    dataset = replace(dataset, schema=schema)
    protection = settings.protection
    if protection.generalizes and method.randomizes_quasi:
        raise ParameterError(
            f"{method.title} randomizes the quasi-identifiers itself; k-anonymity by generalization goes in front of "
            "the methods that leave them as they are. Choose one of the two."
        )
    progress(0.1, "Generalizing the quasi-identifiers")
    history = project_releases(settings.repeat.project_id) if settings.repeat.active else []  # the ledger, read once
    last_node = previous_node(history) if protection.generalizes else None
    generalization = protect(frame, quasi, schema, protection, settings.taxonomies, node_to_keep(last_node, quasi),
                             sensitive=settings.sensitive or None)
    if protection.require_group_bound:  # the stronger bound the custodian asked for, checked exactly (fail closed)
        check_group_bound(frame, quasi, settings.sensitive, generalization, *method.group_bound(settings),
                          method.randomizes_quasi)
    cancel.check()
    progress(0.2, "Planning")
    if settings.repeat.active and settings.repeat.previous_plan is None:  # kept when it still fits (persistence)
        # on a copy: the caller's settings (the window's, run again next month) never hold a stale previous plan
        settings = replace(settings, repeat=replace(settings.repeat, previous_plan=previous_plan(history, method.name)))
    plan = method.prepare(dataset, settings, **prepare_extras(method, subrange(progress, 0.2, 0.7), cancel))
    cancel.check()
    progress(0.7, "Verifying the guarantee")
    guarantee = plan.verify()
    cancel.check()
    randomness, seed = job_randomness(settings.seed)
    added = [c for c in (getattr(plan, "subtable_column", None),) if c]
    pseudonym_column = free_name(PSEUDONYM_COLUMN, [*columns, *added])
    key = PseudonymKey.from_seed(randomness.keyed) if settings.seed is not None else PseudonymKey.random()
    if settings.repeat.active and settings.repeat.stable_pseudonyms:  # a patient's id follows them (issue 30)
        key = stable_pseudonym_key(settings)
    job = JobPlan(method, settings, schema, sensitive, quasi, notes, generalization, plan, guarantee, randomness, seed,
                  columns, pseudonym_column, key)
    if settings.repeat.active or settings.repeat.keys is not None:  # a project, or persistent draws without a ledger
        job.identity_columns, job.identity = identity_columns(settings, columns, job.protected)
        job.release_epsilon = method.release_epsilon(plan, guarantee)
        # persistent only for patients told apart by a patient number: without one, two patients alike in every
        # unchanged column would share their draws (the same released value), which no randomization allows
        job.persistent_draws = (settings.repeat.keys is not None and method.draws_per_record
                                and bool(settings.identifiers))
        job.ledger_keys = PersistentKeys(ledger_identity_secret())
        job.repeat_notes = node_notes(last_node, quasi, generalization)
    progress(1.0, "Verified")
    return job


def prepare_extras(method: Method, progress: Progress, cancel: CancelToken) -> dict[str, Any]:
    """``progress`` and ``cancel`` for a method whose ``prepare`` takes them (a long plan, such as rr's optimizer,
    reports its progress and stops when cancelled); nothing for one written without them."""
    parameters = inspect.signature(method.prepare).parameters
    return {"progress": progress, "cancel": cancel} if "progress" in parameters and "cancel" in parameters else {}


def bind_job(job: JobPlan, frame: pd.DataFrame, *, keep_fingerprints: bool = False) -> Bound:
    """The decisions that need every record (``frame``: the plan's columns of the whole table, in order).
    ``keep_fingerprints``: the identity fingerprints computed here (persistent draws) are kept with ``frame`` in
    the result, for :func:`release_chunk` of that very table (the in-memory job); a streamed job does not hold them."""
    quasi = job.generalization.apply(frame[job.generalization.columns]) if job.generalization is not None else None
    bind = getattr(job.plan, "bind", None)
    if bind is None:
        return Bound(quasi, None)
    randomness, keys = job.randomness, job.settings.repeat.keys
    if keys is not None and job.persistent_draws:  # the plan's whole-table draws (partition's deal) persistent too
        missing = [c for c in job.identity_columns if c not in frame.columns]
        if missing:
            raise ParameterError(f"{job.method.title} deals the records with persistent randomness, which needs the "
                                 f"columns that tell who a record is ({', '.join(missing)}) in the plan's pass; tag an "
                                 f"identifier column in {setting_ref('identifiers')}.", setting="identifiers")
        fingerprints = identity_fingerprints(frame, job.identity_columns)
        randomness = randomness.with_records(keys, keys.keyed_identities(*fingerprints), 0)
        if keep_fingerprints:
            return Bound(quasi, bind(frame, randomness), fingerprints, frame)
    return Bound(quasi, bind(frame, randomness))


def release_chunk(job: JobPlan, bound: Bound, chunk: pd.DataFrame, start: int, *,
                  pseudonyms: bool = True) -> ReleasedChunk:
    """Records ``start, ..., start + len(chunk) - 1`` as released (original order): the plan applied, the
    quasi-identifiers generalized, identifiers dropped and a pseudonym column first when needed (without
    ``pseudonyms``, left to the caller when the job's key can make them in the release's order: :func:`anonymize`)."""
    randomness, identities = job.randomness, None
    fingerprints: tuple[np.ndarray, np.ndarray] | None = None
    if job.ledger_keys is not None:
        fingerprints = (bound.fingerprints if bound.fingerprints is not None and bound.fingerprinted is chunk
                        else identity_fingerprints(chunk, job.identity_columns))
        identities = job.ledger_keys.keyed_identities(*fingerprints)
        keys = job.settings.repeat.keys
        if keys is not None and job.persistent_draws:  # bound to the records' identities under the custodian secret
            randomness = randomness.with_records(keys, keys.keyed_identities(*fingerprints), start)
    if bound.fingerprinted is chunk:  # the in-memory job's, computed while binding: read here once
        bound.fingerprints = bound.fingerprinted = None
    if not isinstance(job.pseudonym_key, StablePseudonymKey):  # only stable pseudonyms read them again: not held
        fingerprints = None                                      # through the draws (16 MB a million records)
    if applies_in_chunks(job.plan):
        applied = job.plan.apply(chunk, randomness, start=start, bound=bound.plan)
    elif start == 0:  # a plug-in written before chunks: it gets the whole table
        applied = job.plan.apply(chunk, randomness)
    else:
        raise ParameterError(f"{job.method.title} applies its plan to the whole table at once; it cannot be streamed.")
    randomness = job.randomness  # the records' keys (8 bytes a record) are not held through the ledger's digests
    stop = start + len(chunk)
    replaced = [c for c in applied.columns if c in chunk.columns and c not in job.protected]
    if replaced:  # fail closed: a method may replace only the columns it protects
        raise PrivacyError(f"{job.method.title} would write over the data column {replaced[0]!r}, which it does not "
                           "protect; nothing was written.")
    keep = [c for c in job.schema.released_columns if c not in applied.dropped]
    rows = chunk[keep].reset_index(drop=True)
    for name, values in applied.columns.items():
        rows[name] = values
    if bound.quasi is not None:
        quasi = bound.quasi.iloc[start:stop].reset_index(drop=True)
        for name in job.quasi:
            rows[name] = quasi[name].array  # a categorical of the level's labels
    else:
        quasi = released_quasi(chunk.reset_index(drop=True), job.quasi, None, applied.columns)
    identifiers = pd.DataFrame()
    if job.needs_pseudonyms and not (pseudonyms or isinstance(job.pseudonym_key, StablePseudonymKey)):
        identifiers = chunk[job.schema.identifiers].reset_index(drop=True)
    elif job.needs_pseudonyms:
        ids = _pseudonyms(job, start, stop, fingerprints)
        if isinstance(job.pseudonym_key, StablePseudonymKey):  # the key keeps each record's id in its record table
            applied.record_secrets[STABLE_RECORD] = ids.to_numpy(dtype=object)
        rows.insert(0, job.pseudonym_column, ids.array)
        identifiers = chunk[job.schema.identifiers].reset_index(drop=True)
        identifiers.insert(0, job.pseudonym_column, ids.array)
    records = None if identities is None or not job.settings.repeat.active else chunk_records(job, identities, applied,
                                                                                                 quasi)
    applied.mechanisms = {}  # 8 bytes a record and column, read by chunk_records only: not kept with the job (issue 34)
    return ReleasedChunk(start, rows, applied, quasi, identifiers, records)


def measure_released(job: JobPlan, read, columns: list[str]) -> None:
    """A plan whose guarantee states a figure of the released table (dp-microagg: the records its other columns
    single out) measures it here, and the job's guarantee is restated with it. ``read(cols)`` gives the released
    values of ``cols`` (the table, or its batches); ``columns`` are the released table's."""
    measure = getattr(job.plan, "measure_release", None)
    if measure is not None:
        measure(read, columns, [job.pseudonym_column] if job.needs_pseudonyms else [])
        job.guarantee = job.plan.verify()


class ChunkedPlan(Plan, Protocol):
    """A plan that can be applied chunk by chunk (:func:`applies_in_chunks`)."""

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0, bound: Any = None) -> Applied:
        """The records ``start, ..., start + len(frame) - 1`` released; ``bound``: ``bind``'s result, or None."""


def applies_in_chunks(plan: Plan) -> TypeGuard[ChunkedPlan]:
    """Whether ``plan.apply`` takes the records from ``start`` on (``start`` and ``bound`` arguments), as every
    built-in method does: its draws are keyed by record, so it can be applied to a file chunk by chunk."""
    parameters = inspect.signature(plan.apply).parameters
    return "start" in parameters and "bound" in parameters


def _pseudonyms(job: JobPlan, start: int, stop: int, fingerprints: tuple[np.ndarray, np.ndarray] | None) -> pd.Series:
    """Records ``start..stop-1``'s ids under the job's pseudonym key (derived from a fixed seed, else random), or,
    for stable pseudonyms, from their identity ``fingerprints``."""
    key = job.pseudonym_key
    if key is None:  # plan_job always makes one
        raise PrivacyError("The job has no pseudonym key to make the records' ids with; nothing was released.")
    if isinstance(key, StablePseudonymKey):
        if fingerprints is None:
            raise PrivacyError("Stable pseudonyms need the records' identities, which this job did not compute; "
                               "nothing was released.")
        ids = key.ids_of(*fingerprints)
    else:
        ids = key.ids(start, stop)
    return pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([ids])), name=job.pseudonym_column)


def _shuffled_pseudonyms(job: JobPlan, order: np.ndarray) -> pd.arrays.ArrowStringArray:
    """The released records' ids in the release's order (record ``order[j]``'s id in row ``j``)."""
    key = job.pseudonym_key
    if not isinstance(key, PseudonymKey):  # plan_job always makes one; a stable key's ids come with the records
        raise PrivacyError("The job has no pseudonym key to make the records' ids with; nothing was released.")
    return pd.arrays.ArrowStringArray(pa.chunked_array([key.ids_at(order)]))


def anonymize(
    dataset: Dataset,
    settings: AnonymizationSettings,
    progress: Progress = no_progress,
    cancel: CancelToken | None = None,
    *,
    keep_input: bool = True,
) -> Anonymization:
    """Prepare a plan from statistics, verify it (fail closed), then apply it to the rows (of the table the method
    works on: :meth:`~ppdp_desktop.core.methods.base.Method.job_dataset`).

    ``keep_input`` False: the caller hands the records over, for a release written without a report, utility
    figures or a key, none of which is then made (the command line's job): once the job has read them for the last
    time, ``dataset.frame`` (the caller's too) is emptied, and neither the identifiers beside the pseudonyms nor the
    perturbed columns' codes are kept (:func:`without_input`), so that the release's pseudonyms, its write and its
    read-back are not made beside the input's records (issue 34: ~50 MB of the 1M-record job's peak)."""
    cancel = cancel or CancelToken()
    given = dataset
    method = get_method(settings.method)
    dataset = method.job_dataset(dataset, method.job_settings(settings))
    frame = dataset.frame
    return_freed()  # the parse's temporaries, before the job's own (each phase's peak would add to them: issue 34)
    job = plan_job(dataset, settings, subrange(progress, 0.0, 0.3), cancel)
    progress(0.3, "Applying the plan")
    bound = bind_job(job, frame, keep_fingerprints=True)
    released = release_chunk(job, bound, frame, 0, pseudonyms=False)
    bound.fingerprints = bound.fingerprinted = None
    cancel.check()
    progress(0.6, "Building the release table")
    order = job.randomness.shuffle_order(len(frame))  # by each record's keyed sort key: the same however it is computed
    return_freed()  # the draws' and the sort's temporaries, before the shuffled table
    rows = dictionary_encoded(released.rows, skip=(job.pseudonym_column,))  # text shuffled and written as codes
    table = rows.take(order).reset_index(drop=True)
    del rows
    return_freed()  # the shuffle's temporaries
    identities = None  # the identifiers in record order, shuffled beside the table's pseudonyms when asked
    if job.needs_pseudonyms:
        identities = released.identifiers.drop(columns=[job.pseudonym_column], errors="ignore")
    # made in the release's order (no unshuffled copy of them); after the checks below, which do not read them,
    # unless the plan measures the release as written (dp-microagg): its table then has them from the start
    ids_later = job.needs_pseudonyms and job.pseudonym_column not in table.columns
    if ids_later and getattr(job.plan, "measure_release", None) is not None:
        table.insert(0, job.pseudonym_column, _shuffled_pseudonyms(job, order))
        ids_later = False
    released.rows = released.identifiers = pd.DataFrame()  # the unshuffled rows are not held beside the shuffled
    return_freed()
    measure_released(job, lambda cols: [table[cols]], list(table.columns))
    repeat = repeat_outcome(job, released.records) if released.records is not None else None  # refused past a budget
    cancel.check()
    progress(0.9, "Measuring the re-identification risk")
    quasi = released.quasi.set_axis(frame.index)
    reidentification = measure(frame, quasi, table, job.quasi, job.settings.protection, job.generalization,
                               job.method.randomizes_quasi, job.settings.sensitive not in released.applied.columns)
    del quasi, frame
    result = Anonymization(replace(dataset, schema=job.schema), job.settings, job.plan, job.guarantee, table,
                           released.applied, job.seed, order, identities, reidentification, job.notes,
                           job.pseudonym_column, job.pseudonym_key if job.needs_pseudonyms else None, repeat)
    if not keep_input:
        without_input(result)
        given.frame = dataset.frame = result.dataset.frame  # the caller's records, let go of
        del dataset, given, identities
    return_freed()  # the checks' temporaries (and the input's records), before the pseudonyms
    if ids_later:
        table.insert(0, job.pseudonym_column, _shuffled_pseudonyms(job, order))
    progress(1.0, "Done")
    return result


def without_input(result: Anonymization) -> None:
    """Let go of what only the report, the utility figures and the key read: the input's records
    (``result.dataset.frame`` emptied, its columns and types kept), the identifiers beside the pseudonyms
    (``identities``, when the key would hold the pseudonym key instead) and the perturbed columns' codes
    (``applied.codes``)."""
    frame = result.dataset.frame
    empty = pd.DataFrame({name: pd.array([], dtype=frame[name].dtype) for name in frame.columns})  # no slice: a view
    result.dataset = replace(result.dataset, frame=empty)                                  # would hold its buffers
    if result.pseudonym_key is not None:
        result.identities = None
    result.applied.codes = {}
