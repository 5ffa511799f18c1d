"""The anonymization job: dataset + settings -> verified plan -> released table (in memory).

Used by the CLI, ``ppdp run`` and, through the worker, by the GUI. Nothing is written here: writing is
:mod:`ppdp_desktop.core.release.package`, which only takes what this job verified. The job reaches the
chosen method through the registry only: the method says which columns it protects, plans from
statistics, verifies its guarantee (fail closed) and applies the plan to the rows.
"""
from __future__ import annotations

from dataclasses import replace

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.schema import free_name, roles_from_lists
from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.privacy.pseudonyms import PSEUDONYM_COLUMN, make_pseudonyms
from ppdp_desktop.core.privacy.randomness import job_randomness
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.protection import measure, protect, released_quasi
from ppdp_desktop.core.settings import AnonymizationSettings, MethodSettings


def anonymize(
    dataset: Dataset,
    settings: AnonymizationSettings,
    progress: Progress = no_progress,
    cancel: CancelToken | None = None,
) -> Anonymization:
    """Prepare a plan from statistics, verify it (fail closed), then apply it to the rows."""
    cancel = cancel or CancelToken()
    frame = dataset.frame
    method = get_method(settings.method)
    settings = method.job_settings(settings)
    for declared in (settings.options, settings.protection):  # declared limits first, before any allocation
        if isinstance(declared, MethodSettings):
            declared.check()
    if settings.sensitive not in frame.columns:
        raise ParameterError(
            f"Sensitive column {settings.sensitive!r} is not in {dataset.label}; its columns are: {', '.join(frame.columns)}."
        )
    sensitive, quasi = method.roles(settings)
    notes = [f"{c!r} is protected by {method.title} (e.g. graded), so it is no longer kept as a quasi-identifier."
             for c in quasi if c in sensitive]
    quasi = [c for c in quasi if c not in sensitive]  # a protected column has one role: protected
    schema = dataset.schema.with_roles(roles_from_lists(sensitive, settings.identifiers, quasi))
    dataset = replace(dataset, schema=schema)
    protection = settings.protection
    if protection.k is not None and method.randomizes_quasi:
        raise ParameterError(
            f"{method.title} randomizes the quasi-identifiers itself; k-anonymity by generalization goes in front of "
            "the methods that leave them as they are. Choose one of the two."
        )
    progress(0.03, "Generalizing the quasi-identifiers")
    generalization = protect(frame, quasi, schema, protection, settings.taxonomies)
    cancel.check()
    progress(0.05, "Planning")
    plan = method.prepare(dataset, settings)
    cancel.check()
    progress(0.2, "Verifying the guarantee")
    guarantee = plan.verify()
    cancel.check()
    rng, seed = job_randomness(settings.seed)
    progress(0.3, "Applying the plan")
    applied = plan.apply(frame, rng)
    cancel.check()
    progress(0.6, "Building the release table")
    order = rng.shuffle_order(len(frame))  # by each record's keyed sort key: the same however it is computed
    keep = [c for c in schema.released_columns if c not in applied.dropped]
    added = [c for c in applied.columns if c not in frame.columns]
    protected = {*sensitive, *(quasi if method.randomizes_quasi else ())}
    replaced = [c for c in applied.columns if c in frame.columns and c not in protected]
    if replaced:  # fail closed: a method may replace only the columns it protects
        raise PrivacyError(f"{method.title} would write over the data column {replaced[0]!r}, which it does not "
                           "protect; nothing was written.")
    table = frame[keep].take(order).reset_index(drop=True)
    for name, values in applied.columns.items():
        table[name] = values[order]
    released = released_quasi(frame, quasi, generalization, applied.columns)
    if generalization is not None:
        for name in quasi:
            table[name] = released[name].array.take(order)  # a categorical of the level's labels
    pseudonym_map = None
    pseudonym_column = free_name(PSEUDONYM_COLUMN, [*frame.columns, *added])
    if schema.identifiers or plan.needs_pseudonyms:
        # a fixed seed: record i's id from the keyed stream, put in the release's order like the record
        ids = (make_pseudonyms(len(frame), keyed=rng.keyed).take(order).reset_index(drop=True)
               if settings.seed is not None else make_pseudonyms(len(frame)))
        table.insert(0, pseudonym_column, ids.array)
        pseudonym_map = frame[schema.identifiers].take(order).reset_index(drop=True)
        pseudonym_map.insert(0, pseudonym_column, ids.array)
    cancel.check()
    progress(0.9, "Measuring the re-identification risk")
    reidentification = measure(frame, released, table, quasi, protection, generalization, method.randomizes_quasi)
    progress(1.0, "Done")
    return Anonymization(dataset, settings, plan, guarantee, table, applied, seed, order, pseudonym_map,
                         reidentification, notes, pseudonym_column)
