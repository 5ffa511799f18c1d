"""The window's jobs for a file larger than memory (Qt-free; the window runs them in its worker).

Load reads only the file's first records (steps 1-4 work on them; the load page says so). Run gathers the
plan's columns of every record (pass 1), plans and verifies, and applies the plan to every record without
writing anything, keeping a random sample for the report page (:class:`SampledAnonymization`). Export then
streams the whole file again with the run's seed (:func:`streamed_source`), so the release is exactly the one
the report describes.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.loading import LoadOptions
from ppdp_desktop.core.data.streamed import PREVIEW_ROWS, StreamedFile, open_streamed
from ppdp_desktop.core.errors import InputError
from ppdp_desktop.core.privacy.randomness import ROW_ORDER_STREAM
from ppdp_desktop.core.progress import CancelToken, Progress, subrange
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.streaming.job import CHUNK_SIZE, StreamedData, plan_from_file, streamed_outcome
from ppdp_desktop.core.streaming.mode import choose_mode
from ppdp_desktop.core.streaming.passes import compact_frame, join_compact, release_chunks
from ppdp_desktop.core.streaming.release import StreamedSource
from ppdp_desktop.core.streaming.sample import ReportSample, SampledAnonymization

#: ``Dataset.details`` key of a dataset that holds only the first records of a streamed file
STREAMED = "streamed"


def load_preview_if_large(path: str | Path, options: LoadOptions) -> Dataset | None:
    """The first :data:`PREVIEW_ROWS` records of ``path`` when it is too large to load whole (None: load it)."""
    choice = choose_mode(path)
    if not choice.streaming:
        return None
    source = open_streamed(path, **options)
    preview = source.preview
    preview.details[STREAMED] = (f"{choice.reason} The window shows its first {len(preview.frame):,} records; "
                                 "Run and Export read the whole file in batches.")
    return preview


def is_streamed(dataset: Dataset | None) -> bool:
    return dataset is not None and STREAMED in dataset.details


def reopen(dataset: Dataset) -> StreamedFile:
    """The streamed file behind a preview ``dataset``, read as the window now types its columns."""
    if dataset.source is None:  # a preview is always of a file; fail closed otherwise
        raise InputError("The data has no file behind it to read in batches; load the file again.")
    details = dataset.details
    options = {"sep": details.get("delimiter"), "encoding": details.get("encoding"),
               "decimal": details.get("decimal"), "header_row": details.get("header_row")}
    kinds = {name: attribute.kind.value for name, attribute in dataset.schema.attributes.items()}
    return open_streamed(dataset.source, kinds=kinds, **{k: v for k, v in options.items() if v})


def run_streamed(dataset: Dataset, settings: AnonymizationSettings, progress: Progress,
                 cancel: CancelToken) -> SampledAnonymization:
    """Plan from every record, verify, apply to every record (nothing written) and keep the report's sample; with a
    project, this release among the project's releases (the budget checked, as the export will)."""
    source = reopen(dataset)
    job, bound, frame, planned = plan_from_file(source, settings, CHUNK_SIZE, subrange(progress, 0.0, 0.4), cancel)
    sample = ReportSample(len(frame))
    keys = job.randomness.keyed.stream(ROW_ORDER_STREAM, "order")
    quasi, ledger = [], []
    for chunk, released in release_chunks(source, job, bound, CHUNK_SIZE):
        stop = released.start + len(chunk)
        sample.add(chunk, released, keys.sort_keys(released.start, stop))
        if job.quasi:  # every record's released quasi-identifiers, for the risk measure
            quasi.append(compact_frame(released.quasi))
        if released.records is not None:  # a job with a project: its records as the release ledger keeps them
            ledger.append(released.records)
        progress(0.4 + 0.6 * stop / max(1, len(frame)), f"Applied the plan to {stop:,} of {len(frame):,} records")
        cancel.check()
    released = join_compact(quasi, len(frame))
    outcome = streamed_outcome(job, planned, frame, StreamedData("", len(frame), [], [], released, None, ledger=ledger))
    result = sample.outcome(job, planned, outcome.reidentification)
    result.repeat = outcome.repeat  # among the project's releases, refused past its budget before any writing
    result.settings = replace(result.settings, seed=job.seed)  # the export streams the same release
    return result


def streamed_source(result: SampledAnonymization) -> StreamedSource:
    """The whole file behind a streamed run, to be streamed into the release package again with the run's seed
    (the release its report describes): the source :func:`~ppdp_desktop.core.release.pipeline.publish_release`
    writes it from."""
    return StreamedSource(reopen(result.dataset), result.settings)


__all__ = ["PREVIEW_ROWS", "STREAMED", "is_streamed", "load_preview_if_large", "run_streamed", "streamed_source"]
