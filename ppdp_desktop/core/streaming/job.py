"""A release written from a file larger than memory: the in-memory job's stages, run over record batches.

Pass 1 gathers the plan's columns (:mod:`.passes`), the plan is made and verified exactly as in memory
(:func:`~ppdp_desktop.core.anonymize.plan_job`), pass 2 applies it chunk by chunk and spills the released records
to an external shuffle by their keyed sort keys (:mod:`.shuffle`), and the data file is written bucket by bucket
with its SHA-256 computed while writing. The package is then finished, re-checked as written and published
like any other (:mod:`ppdp_desktop.core.release.package`): a failure, a cancel or a killed process leaves
nothing under the output's name (temporary folders are hidden beside it and cleaned on the next run).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.anonymize import Bound, JobPlan, ReleasedChunk, applies_in_chunks, bind_job, plan_columns, plan_job
from ppdp_desktop.core.data.csv_writer import write_csv_batches
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.formats import _arrow_ready, guard_formulas
from ppdp_desktop.core.data.freed_memory import return_freed
from ppdp_desktop.core.data.streamed import StreamedFile
from ppdp_desktop.core.errors import ParameterError, ReleaseError, setting_ref
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy.randomness import ROW_ORDER_STREAM
from ppdp_desktop.core.privacy.record_table import record_batch
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress, subrange
from ppdp_desktop.core.protection import measure
from ppdp_desktop.core.repeat.records import ReleaseRecords
from ppdp_desktop.core.repetition import concatenate, repeat_outcome
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.streaming.passes import compact_frame, gather_plan_columns, join_compact, release_chunks
from ppdp_desktop.core.streaming.sample import ReportSample
from ppdp_desktop.core.streaming.sealed_spill import SealedBatchWriter, SpillKey
from ppdp_desktop.core.streaming.shuffle import ExternalShuffle

#: records a chunk holds by default (about 100-200 MB of a 10-column table in memory)
CHUNK_SIZE = 250_000


@dataclass
class StreamedData:
    """What pass 2 wrote: the data file's digest, its records and columns, the guarded columns, the released
    quasi-identifiers of every record (for the risk measure) and the identifiers for the key, in record order."""

    sha256: str
    n_records: int
    columns: list[str]
    guarded: list[str]
    quasi: pd.DataFrame
    identifiers: Path | None  # the key's record table (Arrow IPC, record order), None without one
    sample: ReportSample | None = None
    secrets: list[str] = field(default_factory=list)  # the record secrets among its columns
    ledger: list[ReleaseRecords] = field(default_factory=list)  # the records as the release ledger keeps them, by chunk
    spill_key: SpillKey | None = None  # what ``identifiers`` is sealed under (:mod:`.sealed_spill`)


#: ``writer(source, job, bound, target, spill, *, sep, bom, chunk_size, n_records, progress, cancel, sample,
#: spill_key) -> StreamedData``: pass 2, writing the data file ``target`` in the release's order
#: (:func:`write_streamed_data`, or the Dask engine's), its spill sealed under ``spill_key``
DataWriter = Callable[..., "StreamedData"]


def plan_from_file(source: StreamedFile, settings: AnonymizationSettings, chunk_size: int = CHUNK_SIZE,
                   progress: Progress = no_progress, cancel: CancelToken | None = None):
    """Pass 1 + plan + verify + bind: ``(job, bound, plan_frame, dataset)`` for a streamed file."""
    cancel = cancel or CancelToken()
    columns = [c for c in plan_columns(settings) if c in source.columns]
    frame = gather_plan_columns(source, columns, chunk_size, subrange(progress, 0.0, 0.8), cancel)
    dataset = Dataset(frame, source=source.source, schema=source.preview.schema, details=source.preview.details,
                      labels=source.preview.labels)
    method = get_method(settings.method)
    treated = method.job_dataset(dataset, method.job_settings(settings))
    if len(treated.frame) != len(frame):  # pass 2 reads every record of the file again
        raise ParameterError(f"{method.title} would leave records out (blank cells, {setting_ref('blanks')}), which a "
                             f"streamed job cannot do; choose another way for the blank cells, or run in memory "
                             f"(without {setting_ref('streaming')}).", setting="blanks")
    dataset, frame = treated, treated.frame
    job = plan_job(dataset, settings, subrange(progress, 0.8, 0.95), cancel, columns=source.columns)
    if not applies_in_chunks(job.plan):
        raise ParameterError(f"{job.method.title} applies its plan to the whole table at once, so it cannot be "
                             f"streamed; run it in memory (without {setting_ref('streaming')}).",
                             setting="streaming")
    bound = bind_job(job, frame)
    progress(1.0, "Plan verified")
    return job, bound, frame, dataset


class RecordTableSpill:
    """The key's record table (identifiers and record secrets of each record, in record order) spilled as Arrow
    IPC, sealed under the job's spill key (:mod:`.sealed_spill`: a crash leaves no identifier in clear), while
    pass 2 runs, to be sealed into the key a batch at a time."""

    def __init__(self, path: Path, key: SpillKey) -> None:
        self.path, self.key = path, key
        self.writer: SealedBatchWriter | None = None
        self.schema: pa.Schema | None = None
        self.secrets: list[str] = []

    def add(self, released: ReleasedChunk, job: JobPlan) -> None:
        secrets = released.applied.record_secrets
        if not (job.needs_pseudonyms and (job.schema.identifiers or secrets)):
            return
        batch = pa.Table.from_batches([record_batch(released.identifiers.drop(columns=[job.pseudonym_column]),
                                                    secrets)])
        if self.writer is None:  # a column all empty in the first chunk is text, not "null"
            self.schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                                     for f in batch.schema])
            self.secrets = list(secrets)
            self.writer = SealedBatchWriter(self.path, self.schema, self.key)
        self.writer.write_table(batch.cast(self.schema))

    def close(self) -> Path | None:
        """Close the file (again: nothing); its path, or None when no record had a column for the key."""
        if self.writer is None:
            return None
        self.writer.close()  # closing twice does nothing
        return self.path


def write_sorted_csv(tables, target: Path, *, sep: str, bom: bool, n_records: int,
                     progress: Progress = no_progress, cancel: CancelToken | None = None) -> tuple[str, int]:
    """Write ``tables`` (the release's records in order) to the CSV ``target``: header once, the byte-order mark
    first if ``bom``; return its SHA-256, computed while writing, and the records written."""
    cancel = cancel or CancelToken()

    def after(written: int) -> None:
        progress(written / max(1, n_records), f"Wrote {written:,} of {n_records:,} records")
        cancel.check()

    return write_csv_batches(tables, target, sep, bom=bom, after=after)


def write_streamed_data(source: StreamedFile, job: JobPlan, bound: Bound, target: Path, spill: Path, *, sep: str,
                        bom: bool, chunk_size: int, n_records: int, progress: Progress = no_progress,
                        cancel: CancelToken | None = None, sample: ReportSample | None = None,
                        spill_key: SpillKey | None = None) -> StreamedData:
    """Pass 2 and the external shuffle: write the release's data file ``target`` (CSV) in its keyed order (the
    spill sealed under ``spill_key``, a fresh one when None)."""
    cancel = cancel or CancelToken()
    spill_key = spill_key if spill_key is not None else SpillKey()
    shuffle = ExternalShuffle(spill / "shuffle", n_records, run_rows=max(chunk_size, 1_000_000), key=spill_key)
    records = RecordTableSpill(spill / "key-records.sealed", spill_key)
    order_keys = job.randomness.keyed.stream(ROW_ORDER_STREAM, "order")
    quasi_parts: list[pd.DataFrame] = []
    ledger: list[ReleaseRecords] = []
    guarded: set[str] = set()
    columns: list[str] = []
    try:
        for chunk, released in release_chunks(source, job, bound, chunk_size):
            rows, changed = guard_formulas(released.rows)
            guarded.update(changed)
            columns = columns or [str(c) for c in released.rows.columns]
            stop = released.start + len(rows)
            keys = order_keys.sort_keys(released.start, stop)
            shuffle.add(keys, pa.Table.from_pandas(_arrow_ready(rows), preserve_index=False))
            if sample is not None:
                sample.add(chunk, released, keys)
            if job.quasi:
                quasi_parts.append(compact_frame(released.quasi))
            records.add(released, job)
            if released.records is not None:
                ledger.append(released.records)
            del chunk, released, rows
            return_freed()  # the chunk's temporaries, before the next chunk's (glibc's heap: issue 34)
            progress(0.8 * min(1.0, stop / max(1, n_records)), f"Released {stop:,} of {n_records:,} records (pass 2)")
            cancel.check()
        table_path = records.close()
        pa.default_memory_pool().release_unused()
        digest, written = write_sorted_csv(shuffle.sorted_tables(), target, sep=sep, bom=bom, n_records=n_records,
                                           progress=subrange(progress, 0.8, 1.0), cancel=cancel)
    finally:
        records.close()
        shuffle.remove()
    if written != n_records:
        raise ReleaseError(f"{written:,} records were written but {n_records:,} were read; nothing was published.")
    return StreamedData(digest, written, columns, [c for c in columns if c in guarded],
                        join_compact(quasi_parts, written), table_path, sample, records.secrets, ledger, spill_key)


def streamed_outcome(job, dataset: Dataset, frame: pd.DataFrame, data: StreamedData) -> Anonymization:
    """The job's outcome without its records (they are in the file): what release.json, README.txt, the key and
    the CLI's summary need, and the re-identification risk measured on the released quasi-identifiers."""
    released = data.quasi.set_axis(frame.index) if job.quasi else pd.DataFrame(index=frame.index)
    reidentification = measure(frame, released, released, job.quasi, job.settings.protection, job.generalization,
                               job.method.randomizes_quasi, sensitive_as_is=job.guarantee.get("randomized") is False)
    table = pd.DataFrame(columns=data.columns)
    repeat = repeat_outcome(job, concatenate(data.ledger)) if data.ledger else None  # refused past the budget
    return Anonymization(replace(dataset, schema=job.schema), job.settings, job.plan, job.guarantee, table,
                         Applied({}), job.seed, np.empty(0, dtype=np.int64), None, reidentification, job.notes,
                         job.pseudonym_column, job.pseudonym_key if job.needs_pseudonyms else None, repeat)


def temp_folder_beside(out: Path) -> Path:
    """A hidden temporary folder beside ``out`` (same disk, so renames are atomic; cleaned when stale)."""
    parent = out.resolve().parent
    if not parent.is_dir():
        raise ReleaseError(f"The folder {parent} does not exist.")
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.{os.getpid()}.", suffix=".partial", dir=parent))


def remove_quietly(*paths: Path | None) -> None:
    for path in paths:
        if path is not None and path.exists():
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
