"""``ppdp anonymize --engine dask``: a streamed release whose two passes run on a Dask cluster.

The input is cut into partitions the workers read on their own (:mod:`.dask_partitions`: byte ranges of whole
records of a CSV file, runs of row groups of a Parquet file). Pass 1 reads the plan's columns of every partition
on the workers, in parallel, and learns each partition's record count (so each knows the index of its first
record); the plan is then made, verified and bound on this computer exactly as for ``--streaming``. Pass 2 runs
one task a partition (:func:`~.dask_tasks.release_partition`): the plan applied from the partition's first
record index, with its slice of the bound decisions, the released rows spilled with their keyed sort keys to
bucket files of the task's own. One task a bucket then sorts it by (key, record index) and writes it as a part
of the CSV (:func:`~.dask_tasks.write_bucket`), and this computer joins the parts in bucket order into the data
file, computing its SHA-256 as it writes. Every draw is keyed by record index, so the data file is byte for byte
the in-memory release's for the same seed, whatever the partitions. Everything else (checks, ``release.json``,
README, the reports, checksums, the read-back verification, the key, the zip, the atomic publish, the release
ledger's row: each partition's ledger records come back to this computer in record order) is the one publish
pipeline's (:func:`~ppdp_desktop.core.release.pipeline.publish_release`), through
:func:`~ppdp_desktop.core.streaming.release.write_streamed_release` with this engine's pass 2 as its writer.

Without ``--scheduler``, a LocalCluster of worker processes is started on this computer and closed at the end,
also on an error or a cancel. With one, its workers must import the same ``ppdp_desktop`` and see the data file
and the output's folder at the same paths (a shared file system); the job (its plan and its secret seed, and for a
project the keys of its custodian secret) is sent to them, so use a cluster you trust, over TLS when it is not on
your own network.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from itertools import accumulate
from pathlib import Path
from typing import Any

import pyarrow as pa

from ppdp_desktop.core.data.streamed import StreamedFile
from ppdp_desktop.core.errors import InputError, ReleaseError
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.streaming.dask_cluster import Call, check_workers, n_workers, open_client, run_tasks
from ppdp_desktop.core.streaming.dask_partitions import Layout, layout_of, settled
from ppdp_desktop.core.streaming.dask_tasks import bound_records, read_partition, release_partition, write_bucket
from ppdp_desktop.core.streaming.job import CHUNK_SIZE, StreamedData
from ppdp_desktop.core.streaming.passes import join_compact
from ppdp_desktop.core.streaming.release import StreamedRelease, write_streamed_release
from ppdp_desktop.core.streaming.sealed_spill import SealedBatchWriter, SpillKey, read_sealed_batches, read_sealed_bytes

#: the most records a bucket of the release's order holds (one bucket is sorted in a worker's memory)
BUCKET_ROWS = 1_000_000
_COPY = 8 << 20  # bytes copied at a time from a part into the data file


@dataclass
class ClusterFile(StreamedFile):
    """A :class:`StreamedFile` whose batches (pass 1) are its partitions, read by the cluster's workers; it
    keeps each partition's record count for pass 2."""

    client: Any = None
    layout: Layout | None = None
    window: int = 2
    cancel: CancelToken | None = None
    counts: dict[int, int] = field(default_factory=dict)

    @property
    def hashes_while_reading(self) -> bool:
        """No: the workers read byte ranges, so this computer hashes the file in a thread during pass 1."""
        return False

    @classmethod
    def on(cls, source: StreamedFile, client: Any, layout: Layout, window: int, cancel: CancelToken) -> ClusterFile:
        own = {f.name: getattr(source, f.name) for f in fields(StreamedFile)}
        return cls(**own, client=client, layout=layout, window=window, cancel=cancel)

    def partitions(self) -> Layout:
        """The file's partitions (given by :meth:`on`)."""
        if self.layout is None:
            raise ReleaseError(f"{self.name}: was not cut into partitions for the Dask cluster.")
        return self.layout

    def batches(self, size: int, columns: list[str] | None = None):
        """``(start, frame)``: each partition's records (``columns``, typed by their kinds), in record order."""
        wanted = self.columns if columns is None else list(columns)
        unknown = [c for c in wanted if c not in self.columns]
        if unknown:
            raise InputError(f"{self.name}: has no column {unknown[0]!r}.")
        layout = self.partitions()
        calls: Iterator[Call] = ((read_partition, (layout, k, wanted), {}) for k in range(layout.n_partitions))
        start = 0
        for k, frame in run_tasks(self.client, calls, window=self.window, cancel=self.cancel or CancelToken(),
                                  ordered=True):
            self.counts[k] = len(frame)
            if len(frame):
                yield start, settled(frame, self.kinds, self.floats) if self.settled else frame
                start += len(frame)
        if start == 0:
            raise InputError(f"{self.name}: has no data rows; it needs at least one row of data.")


def write_dask_release(source: StreamedFile, settings: AnonymizationSettings, out: str | Path, *,
                       scheduler: str | None = None, workers: int | None = None, partitions: int | None = None,
                       chunk_size: int = CHUNK_SIZE, progress: Progress = no_progress,
                       cancel: CancelToken | None = None, **options: Any) -> StreamedRelease:
    """:func:`~ppdp_desktop.core.streaming.release.write_streamed_release` with both passes on a Dask cluster.

    Parameters
    ----------
    source : StreamedFile
        The data file (CSV or Parquet), from :func:`~ppdp_desktop.core.data.streamed.open_streamed`.
    settings, out
        As for ``write_streamed_release``; so are ``options`` (``overwrite``, ``sep``, ``bom``, ``zip_file``,
        ``key_path``, ``passphrase``, ``hook``, ``signer``, ``include_report``, ``model_target``, ``inputs``,
        ``project_file``).
    scheduler : str, optional
        The address of a running Dask scheduler; without it a LocalCluster of ``workers`` processes (one a core
        by default) is started on this computer and closed at the end.
    partitions : int, optional
        Parts the file is cut into (default: one per ``chunk_size`` records, at least two per worker).

    Returns
    -------
    StreamedRelease
        The published release; its data file is the in-memory release's, byte for byte, for a fixed seed.
    """
    cancel = cancel or CancelToken()
    if chunk_size < 1:
        raise ReleaseError(f"The chunk size must be at least one record; got {chunk_size}.")
    if partitions is not None and partitions < 1:
        raise ReleaseError(f"The file must be cut into at least one partition; got {partitions}.")
    progress(0.0, "Starting the Dask cluster" if scheduler is None else f"Connecting to {scheduler}")
    with open_client(scheduler, workers) as client:
        workers = n_workers(client)
        check_workers(client, readable=[str(source.source.resolve())])
        parts = partitions or max(2 * workers, math.ceil(source.estimated_records / chunk_size))
        layout = layout_of(source, parts)
        cluster_file = ClusterFile.on(source, client, layout, 2 * workers, cancel)
        return write_streamed_release(cluster_file, settings, out, chunk_size=chunk_size, progress=progress,
                                      cancel=cancel, writer=write_cluster_data, **options)


def write_cluster_data(source: ClusterFile, job, bound, target: Path, spill: Path, *, sep: str, bom: bool,
                       chunk_size: int, n_records: int, progress: Progress = no_progress,
                       cancel: CancelToken | None = None, sample: Any = None,
                       spill_key: SpillKey | None = None) -> StreamedData:
    """Pass 2 on the cluster (a :data:`~ppdp_desktop.core.streaming.job.DataWriter`): the data file ``target``
    in the release's order, as :func:`~ppdp_desktop.core.streaming.job.write_streamed_data` writes it. Every
    file the workers spill (their buckets, their parts of the key's record table and of the data file) is sealed
    under ``spill_key`` (:mod:`.sealed_spill`), sent to them with the job."""
    cancel = cancel or CancelToken()
    spill_key = spill_key if spill_key is not None else SpillKey()
    client, layout = source.client, source.partitions()
    counts = [source.counts.get(k, 0) for k in range(layout.n_partitions)]
    if sum(counts) != n_records:
        raise ReleaseError(f"The partitions held {sum(counts):,} records but the first pass read {n_records:,}.")
    check_workers(client, writable=[str(spill.resolve())])
    workers = n_workers(client)
    # buckets of at most BUCKET_ROWS records, and at least two per worker, so the sorting is shared out too
    run_rows = min(max(chunk_size, BUCKET_ROWS), max(1, math.ceil(n_records / (2 * workers))))
    job_on_workers = client.scatter(job, broadcast=True, hash=False)
    offsets = [0, *accumulate(counts)]
    common = dict(spill=str(spill), n_records=n_records, run_rows=run_rows, chunk_size=chunk_size,
                  floats=frozenset(source.floats), sample=sample, key=spill_key)
    calls: Iterator[Call] = ((release_partition, (layout, k, offsets[k], counts[k], job_on_workers,
                                  bound_records(bound, offsets[k], offsets[k + 1], n_records)), common)
             for k in range(len(counts)) if counts[k])
    done, released = {}, 0
    for k, part in run_tasks(client, calls, window=2 * workers, cancel=cancel, ordered=False):
        done[k] = part
        released += part.n_records
        progress(0.8 * released / max(1, n_records), f"Released {released:,} of {n_records:,} records (pass 2)")
    parts = [done[k] for k in sorted(done)]
    digest, written = _write_buckets(client, parts, target, spill, sep, bom, 2 * workers, cancel,
                                     lambda rows: progress(0.8 + 0.2 * rows / max(1, n_records),
                                                           f"Wrote {rows:,} of {n_records:,} records"), spill_key)
    if written != n_records:
        raise ReleaseError(f"{written:,} records were written but {n_records:,} were read; nothing was published.")
    if sample is not None:
        for part in parts:
            _absorb(sample, part.sample)
    columns = parts[0].columns
    guarded = set().union(*(part.guarded for part in parts))
    records, secrets = _record_table(parts, spill, spill_key)
    ledger = [part.ledger for part in parts if part.ledger is not None]  # partition order: record order
    if ledger and sum(len(part) for part in ledger) != n_records:
        raise ReleaseError(f"The partitions gave the ledger {sum(len(part) for part in ledger):,} records of the "
                           f"{n_records:,} released; nothing was published.")
    return StreamedData(digest, written, columns, [c for c in columns if c in guarded],
                        join_compact([q for part in parts for q in part.quasi], written), records, sample=sample,
                        secrets=secrets, ledger=ledger, spill_key=spill_key)


def _write_buckets(client: Any, parts: list, target: Path, spill: Path, sep: str, bom: bool, window: int,
                   cancel: CancelToken, wrote, key: SpillKey) -> tuple[str, int]:
    """One task a bucket writes it as a part of the CSV (the first with the header); the parts are joined here in
    bucket order into ``target`` (after the byte-order mark if ``bom``): its SHA-256 and the records written."""
    buckets: dict[int, list[str]] = {}
    for part in parts:  # each bucket's files in record order: partition by partition, as each wrote them
        for bucket, paths in part.buckets.items():
            buckets.setdefault(bucket, []).extend(paths)
    order = sorted(buckets)
    merges: Iterator[Call] = ((write_bucket, (buckets[b], str(spill / f"bucket-{b:05d}.csv.sealed"), i == 0, sep),
                               {"key": key}) for i, b in enumerate(order))
    digest, written = hashlib.sha256(), 0
    with open(target, "wb") as handle:
        if bom:
            digest.update(b"\xef\xbb\xbf")
            handle.write(b"\xef\xbb\xbf")
        for i, rows in run_tasks(client, merges, window=window, cancel=cancel, ordered=True):
            _append(spill / f"bucket-{order[i]:05d}.csv.sealed", handle, digest, key)
            for path in buckets[order[i]]:
                Path(path).unlink(missing_ok=True)
            written += rows
            wrote(written)
    return digest.hexdigest(), written


def _append(part: Path, handle, digest, key: SpillKey) -> None:
    for block in read_sealed_bytes(part, key):
        digest.update(block)
        handle.write(block)
    part.unlink()


def _absorb(sample: Any, part: Any) -> None:
    """Add a partition's report sample (chunks gathered in record order) to the job's."""
    for name, value in vars(part).items():
        if isinstance(value, list):
            getattr(sample, name).extend(value)


def _record_table(parts: list, spill: Path, key: SpillKey) -> tuple[Path | None, list[str]]:
    """The partitions' parts of the key's record table joined in record order, in the types of the first (as
    ``write_streamed_data`` gives it), sealed under ``key``; None without one. Also the record secrets among its
    columns."""
    path, writer, schema, secrets = None, None, None, []
    try:
        for part in parts:
            if part.records is None:
                continue
            for batch in read_sealed_batches(part.records, key):
                if writer is None or schema is None:  # the first batch: both set together
                    path, schema, secrets = spill / "key-records.sealed", batch.schema, part.secrets
                    writer = SealedBatchWriter(path, schema, key)
                if batch.schema != schema:  # a partition whose first records held other types
                    batch = pa.RecordBatch.from_arrays([c.cast(f.type) for c, f in zip(batch.columns, schema)],
                                                       schema=schema)
                writer.write_batch(batch)
    finally:
        if writer is not None:
            writer.close()
    return path, secrets


__all__ = ["ClusterFile", "write_cluster_data", "write_dask_release"]
