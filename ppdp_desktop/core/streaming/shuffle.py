"""The release's row order for a table larger than memory: an external sort by each record's keyed sort key.

Records arrive in chunks (in any order of chunks), each with its random 64-bit sort key. They are spilled to
``2**bits`` bucket files by the top bits of the key (Arrow IPC, sealed under the job's spill key:
:mod:`.sealed_spill`, in a temporary folder beside the output), so
bucket ``b`` holds exactly the keys of one range, in the order the records arrived. Reading the buckets in order
and sorting each by (key, arrival) gives the records sorted by (key, record index) — the order the in-memory job
uses (``np.argsort(keys, kind="stable")``) — while holding one bucket at a time. The keys are uniform, so the
buckets are of about equal size: ``bits`` is chosen so that one holds about :data:`RUN_ROWS` records.
"""
from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.privacy.keyed import key_order
from ppdp_desktop.core.streaming.sealed_spill import SealedBatchWriter, SpillKey, read_sealed_batches

#: records a bucket holds on average (one bucket is in memory at a time)
RUN_ROWS = 1_000_000
KEY_COLUMN = "__key"
_FEW_PROBE = 4_096  # values looked at to tell a text column of few distinct values


def spill_ready(table: pa.Table) -> pa.Table:
    """``table`` with dictionary columns decoded and null-typed columns as text: the same CSV bytes, and a
    schema that does not depend on which values a chunk happens to hold."""
    columns = []
    for column in table.columns:
        kind = column.type
        if pa.types.is_dictionary(kind):
            column = column.cast(kind.value_type)
            kind = column.type
        if pa.types.is_null(kind) or pa.types.is_string(kind):
            column = column.cast(pa.large_string())
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def _take(column: pa.ChunkedArray, order: pa.Array) -> pa.ChunkedArray:
    """``column``'s values in ``order``. A text column of few distinct values is gathered as its dictionary codes
    and decoded after (in cache), which is about 2.5x faster than gathering its strings at random."""
    if pa.types.is_large_string(column.type) and len(column) > _FEW_PROBE:
        probe = column.slice(0, _FEW_PROBE)
        if pc.count_distinct(probe).as_py() <= _FEW_PROBE // 2:
            return column.dictionary_encode().take(order).cast(column.type)
    return column.take(order)


class ExternalShuffle:
    """Spill chunks of records with their sort keys; read them back sorted by (key, arrival), a bucket at a time."""

    def __init__(self, folder: Path, n_records: int, run_rows: int = RUN_ROWS, key: SpillKey | None = None) -> None:
        self.folder = Path(folder)
        self.key = key if key is not None else SpillKey()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.bits = max(0, math.ceil(math.log2(max(1, n_records) / run_rows))) if n_records > run_rows else 0
        self.bits = min(self.bits, 16)
        self._writers: dict[tuple[int, int], SealedBatchWriter] = {}
        self._segments: dict[int, list[tuple[int, Path]]] = {}
        self._schemas: dict[int, pa.Schema] = {}
        self.n_spilled = 0

    @property
    def n_buckets(self) -> int:
        return 1 << self.bits

    def add(self, keys: np.ndarray, table: pa.Table) -> None:
        """Spill the records of ``table`` (one a row) with their sort ``keys`` (uint64)."""
        keys = np.asarray(keys, dtype=np.uint64)
        table = spill_ready(table).append_column(KEY_COLUMN, pa.array(keys, type=pa.uint64()))
        if self.bits == 0:
            self._write(0, table)
        else:
            bucket = (keys >> np.uint64(64 - self.bits)).astype(np.int64)
            order = np.argsort(bucket, kind="stable")
            edges = np.searchsorted(bucket[order], np.arange(self.n_buckets + 1))
            taken = table.take(pa.array(order))
            for b in np.flatnonzero(np.diff(edges)):
                self._write(int(b), taken.slice(int(edges[b]), int(edges[b + 1] - edges[b])))
        self.n_spilled += table.num_rows

    def _write(self, bucket: int, table: pa.Table) -> None:
        segments = self._segments.setdefault(bucket, [])
        if not segments or self._schemas.get(segments[-1][0]) != table.schema:
            # a chunk whose columns came out of another type (int64 then float64): a new segment of this bucket
            number = len(self._schemas)
            path = self.folder / f"bucket-{bucket:05d}-{number:06d}.arrows"
            self._schemas[number] = table.schema
            self._writers[(bucket, number)] = SealedBatchWriter(path, table.schema, self.key)
            segments.append((number, path))
        number = segments[-1][0]
        self._writers[(bucket, number)].write_table(table)

    def close_writers(self) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers.clear()

    def sorted_tables(self) -> Iterator[pa.Table]:
        """The spilled records sorted by (key, arrival), a bucket at a time, without the key column."""
        self.close_writers()
        for bucket in range(self.n_buckets):
            parts = []
            for number, path in self._segments.get(bucket, []):
                parts.append(pa.Table.from_batches(list(read_sealed_batches(path, self.key)), schema=self._schemas[number]))
                path.unlink()
            if not parts:
                continue
            table = parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")
            keys = table.column(KEY_COLUMN).to_numpy()
            order = pa.array(key_order(keys))
            yield pa.table([_take(column, order) for column in table.drop_columns([KEY_COLUMN]).columns],
                           names=table.column_names[:-1])

    def remove(self) -> None:
        self.close_writers()
        shutil.rmtree(self.folder, ignore_errors=True)


__all__ = ["ExternalShuffle", "RUN_ROWS", "spill_ready"]
