"""The record table of a key file: an Arrow IPC stream with zstd-compressed buffers, one row per original
record in record order (record index = row number).

:func:`record_source` accepts what :func:`~ppdp_desktop.core.release.keyfile.seal` takes as ``records``;
:func:`write_records` writes it batch by batch into a file-like sink (the key file's sealed segments) and
:func:`read_records` reads it back from a file-like source.
"""
from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import BinaryIO, TypeAlias

import pyarrow as pa

from ppdp_desktop.core.errors import KeyFileError

__all__ = ["BATCH_ROWS", "Records", "read_records", "record_source", "write_records"]

#: rows per Arrow record batch written: small batches are joined up to it, large ones cut to it
BATCH_ROWS = 1 << 18
COMPRESSION = "zstd"

#: what ``seal(..., records=...)`` takes: a table, batches in record order (consumed once), a reader, or a
#: ``(schema, batches)`` pair
Records: TypeAlias = pa.Table | pa.RecordBatchReader | Iterable[pa.RecordBatch] | tuple[pa.Schema, Iterable[pa.RecordBatch]]


def record_source(records: Records | None) -> tuple[pa.Schema, Iterator[pa.RecordBatch]] | None:
    """``records`` as ``(schema, batches)``; None for no record table (None, or batches without any batch).

    The schema is the pair's, the table's or reader's, else the first batch's; a later batch with other column
    types is cast to it (KeyFileError if it cannot be).
    """
    if records is None:
        return None
    if isinstance(records, pa.Table):
        return records.schema, iter(records.to_batches(max_chunksize=BATCH_ROWS))
    if isinstance(records, pa.RecordBatchReader):
        return records.schema, iter(records)
    if isinstance(records, pa.RecordBatch):
        return records.schema, iter([records])
    if isinstance(records, tuple) and len(records) == 2 and isinstance(records[0], pa.Schema):
        return records[0], iter(records[1])
    if not isinstance(records, Iterable) or isinstance(records, (str, bytes, dict)):
        raise TypeError(f"records must be a pyarrow Table, an iterable of RecordBatch or (schema, batches); "
                        f"got {type(records).__name__}")
    batches = iter(records)
    first = next(batches, None)
    if first is None:
        return None
    if not isinstance(first, pa.RecordBatch):
        raise TypeError(f"records must yield pyarrow RecordBatch objects; got {type(first).__name__}")
    return first.schema, _chain(first, batches)


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest


def write_records(sink: BinaryIO | io.RawIOBase, schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
    """Write ``batches`` (cast to ``schema``) as one zstd-compressed Arrow IPC stream; return the row count."""
    rows = waiting_rows = 0
    waiting: list[pa.RecordBatch] = []
    options = pa.ipc.IpcWriteOptions(compression=COMPRESSION)
    with pa.ipc.new_stream(sink, schema, options=options) as writer:
        for number, batch in enumerate(batches, 1):
            batch = _conform(batch, schema, number)
            rows += batch.num_rows
            waiting_rows += batch.num_rows
            waiting.append(batch)
            if waiting_rows >= BATCH_ROWS:
                _flush(writer, schema, waiting)
                waiting, waiting_rows = [], 0
        _flush(writer, schema, waiting)
    return rows


def _flush(writer: pa.ipc.RecordBatchStreamWriter, schema: pa.Schema, batches: list[pa.RecordBatch]) -> None:
    if not batches:
        return
    table = pa.Table.from_batches(batches, schema)
    if len(batches) > 1:
        table = table.combine_chunks()
    writer.write_table(table, max_chunksize=BATCH_ROWS)


def _conform(batch: object, schema: pa.Schema, number: int) -> pa.RecordBatch:
    if not isinstance(batch, pa.RecordBatch):
        raise TypeError(f"records must yield pyarrow RecordBatch objects; item {number} is {type(batch).__name__}")
    if batch.schema.equals(schema):
        return batch
    if batch.schema.names != schema.names:
        raise KeyFileError(f"Record batch {number} has the columns {batch.schema.names}, not {schema.names}")
    try:
        columns = [column.cast(field.type) for column, field in zip(batch.columns, schema)]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise KeyFileError(f"Record batch {number} does not fit the record table's column types "
                           f"({str(exc).splitlines()[0]})") from None
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def read_records(source: BinaryIO | io.RawIOBase) -> pa.Table:
    """The record table of an Arrow IPC stream read from ``source`` (pyarrow errors -> ValueError)."""
    try:
        with pa.ipc.open_stream(source) as reader:
            return reader.read_all()
    except pa.ArrowException as exc:
        raise ValueError(str(exc)) from None
