"""What the Dask engine's workers run: one partition's pass 2, and one bucket of the release's order.

:func:`release_partition` applies the verified plan to a partition's records (``release_chunk`` from the record
index where the partition begins, a chunk at a time) and spills the released rows with their keyed sort keys to
bucket files of its own (:class:`~ppdp_desktop.core.streaming.shuffle.ExternalShuffle`, whose buckets are the
same key ranges in every partition). :func:`write_bucket` sorts one bucket's rows by (key, record index) and
writes them as a part of the CSV. Every file they write is sealed under the job's spill key (:mod:`.sealed_spill`),
which they get with the task. Both write only their own files, so a task the scheduler runs again (its
worker died) starts afresh. Nothing here imports Dask.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ppdp_desktop.core.anonymize import Bound, JobPlan, release_chunk
from ppdp_desktop.core.data.formats import _arrow_ready, guard_formulas
from ppdp_desktop.core.data.streamed import _rebatch
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.privacy.randomness import ROW_ORDER_STREAM
from ppdp_desktop.core.repeat.records import ReleaseRecords
from ppdp_desktop.core.repetition import concatenate
from ppdp_desktop.core.streaming.dask_partitions import Layout, settled
from ppdp_desktop.core.streaming.job import RecordTableSpill
from ppdp_desktop.core.streaming.passes import compact_frame
from ppdp_desktop.core.streaming.sealed_spill import SpillKey, read_sealed_batches, write_sealed_bytes
from ppdp_desktop.core.streaming.shuffle import KEY_COLUMN, ExternalShuffle


class RecordSlice:
    """Records ``offset, offset + 1, ...`` of a per-record value (an array, a Series or a DataFrame), indexed by
    record number as the whole value is: what a partition's task gets of :func:`bind_job`'s decisions."""

    def __init__(self, values: Any, offset: int) -> None:
        self.values, self.offset = values, offset

    def __getitem__(self, records: slice) -> Any:
        if not isinstance(records, slice) or records.step not in (None, 1) or (records.start or 0) < self.offset:
            raise ReleaseError(f"A partition's task holds the decisions of records {self.offset:,} on; it was asked "
                               f"for {records!r}.")
        part = slice((records.start or 0) - self.offset, None if records.stop is None else records.stop - self.offset)
        return self.values.iloc[part] if isinstance(self.values, (pd.Series, pd.DataFrame)) else self.values[part]

    @property
    def iloc(self) -> RecordSlice:
        return self


def _records(value: Any, start: int, stop: int, n_records: int) -> Any:
    """Records ``start .. stop - 1`` of a per-record decision (an array or a frame of one row a record, or a dict
    of them), still indexed by record number; any other value whole (indexed the same)."""
    if isinstance(value, dict):
        return {name: _records(part, start, stop, n_records) for name, part in value.items()}
    if isinstance(value, (pd.Series, pd.DataFrame)) and len(value) == n_records:
        return RecordSlice(value.iloc[start:stop], start)
    if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == n_records:
        return RecordSlice(value[start:stop], start)
    return value


def bound_records(bound: Bound, start: int, stop: int, n_records: int) -> Bound:
    """The part of ``bound`` (decisions about all ``n_records`` records) that records ``start .. stop - 1`` need,
    sent with their partition's task instead of the whole."""
    return Bound(_records(bound.quasi, start, stop, n_records), _records(bound.plan, start, stop, n_records))


@dataclass
class PartitionRelease:
    """What one partition's pass 2 gives back: its bucket files (in the order written), its released
    quasi-identifiers, its part of the key's record table (record order) and of the report's sample, and its
    records as the release ledger keeps them (a job with a project; record order, 24 to 32 bytes a record)."""

    index: int
    n_records: int
    columns: list[str]
    guarded: set[str]
    buckets: dict[int, list[str]] = field(default_factory=dict)
    quasi: list[pd.DataFrame] = field(default_factory=list)
    records: str | None = None  # the record table's file (identifiers and record secrets)
    secrets: list[str] = field(default_factory=list)  # the record secrets among its columns
    sample: Any = None
    ledger: ReleaseRecords | None = None


def release_partition(layout: Layout, index: int, offset: int, expected: int, job: JobPlan, bound: Bound, *,
                      spill: str, n_records: int, run_rows: int, chunk_size: int, floats: frozenset[str],
                      key: SpillKey, sample: Any = None) -> PartitionRelease:
    """Pass 2 of partition ``index`` (records ``offset .. offset + expected - 1``), spilled to ``spill``."""
    folder = Path(spill) / f"part-{index:05d}"
    shutil.rmtree(folder, ignore_errors=True)  # what an earlier try of this task left (its worker died)
    folder.mkdir()  # not its parents: when the job has ended and removed ``spill``, this task stops here
    shuffle = ExternalShuffle(folder / "shuffle", n_records, run_rows=run_rows, key=key)
    order_keys = job.randomness.keyed.stream(ROW_ORDER_STREAM, "order")
    result = PartitionRelease(index, 0, [], set(), sample=sample)
    records = RecordTableSpill(folder / "key-records.sealed", key)
    ledger: list[ReleaseRecords] = []
    start = offset
    try:
        frames = (settled(frame, layout.kinds, floats) for frame in layout.frames(index, job.columns))
        for chunk in _rebatch(frames, chunk_size):
            released = release_chunk(job, bound, chunk, start)
            rows, changed = guard_formulas(released.rows)
            result.guarded.update(changed)
            result.columns = result.columns or [str(c) for c in released.rows.columns]
            stop = start + len(rows)
            keys = order_keys.sort_keys(start, stop)
            shuffle.add(keys, pa.Table.from_pandas(_arrow_ready(rows), preserve_index=False))
            if sample is not None:
                sample.add(chunk, released, keys)
            if job.quasi:
                result.quasi.append(compact_frame(released.quasi))
            records.add(released, job)
            if released.records is not None:
                ledger.append(released.records)
            start = stop
    finally:
        shuffle.close_writers()
        path = records.close()
        result.records, result.secrets = (str(path) if path is not None else None), records.secrets
    result.n_records = start - offset
    result.ledger = concatenate(ledger) if ledger else None
    if result.n_records != expected:
        raise ReleaseError(f"Part {index + 1} of the file held {expected:,} records in the first pass and "
                           f"{result.n_records:,} in the second; was the file changed meanwhile? Nothing was published.")
    result.buckets = {bucket: [str(path) for _number, path in segments]
                      for bucket, segments in shuffle._segments.items()}
    return result


def write_bucket(paths: list[str], target: str, header: bool, sep: str, key: SpillKey) -> int:
    """Sort one bucket's spilled rows (``paths`` in record order) by (key, record index) and write them to
    ``target`` as CSV, sealed under ``key``, as :func:`~ppdp_desktop.core.streaming.job.write_streamed_data`
    writes a bucket."""
    parts = [pa.Table.from_batches(list(read_sealed_batches(path, key))) for path in paths]
    table = parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")
    order = np.argsort(table.column(KEY_COLUMN).to_numpy(), kind="stable")
    table = table.drop_columns([KEY_COLUMN]).take(pa.array(order))
    options = pacsv.WriteOptions(include_header=header, delimiter=sep, quoting_style="needed")
    sink = pa.BufferOutputStream()
    pacsv.write_csv(table, sink, write_options=options)
    write_sealed_bytes(target, sink.getvalue(), key)
    return table.num_rows


def read_partition(layout: Layout, index: int, columns: list[str]) -> pd.DataFrame:
    """Pass 1 of partition ``index``: its records' ``columns`` as one frame (empty when it holds none)."""
    frames = list(layout.frames(index, columns))
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
