"""A streamed job's spill files, encrypted at rest under a key of the job's that exists only in memory.

A job larger than memory spills to disk: the records in the release's order (:mod:`.shuffle`), the key's record
table (identifiers and original values, in record order) and, on Dask, each bucket's part of the data file. These
lie in a hidden folder beside the output, often a shared drive, and a process killed with ``kill -9`` (or a power
cut) cannot remove them. So each spill file is sealed as it is written:

* the key: 32 random bytes made when the job starts (:class:`SpillKey`), held in the job's memory and in its
  Dask workers' memory only (sent with the job, as its secret seed is), never written anywhere;
* each record batch (a whole Arrow IPC stream, so dictionaries and types come back exactly) or block of bytes is
  one frame: AES-256-GCM with a fresh random 96-bit nonce, the file's random id and the frame's number as
  associated data (frames cannot be reordered or moved between files), its length in front; a closing frame marks
  the end, so a file cut short does not read as complete.

Why this and not a private temporary folder (mode 0700) on the local disk: the spill must be on the output's disk
(the data can be larger than the system's temporary disk, which is often in memory, and a Dask cluster's workers
reach only the shared output folder), and a private folder still holds plaintext after a crash, readable by an
administrator, a backup or whoever gets the disk until someone cleans it; under a key that died with the process,
what a crash leaves is random bytes. The leftovers are removed as well, at the next run into the place or the next
start of the app (:mod:`ppdp_desktop.core.release.leftovers`).
"""
from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ppdp_desktop.core.errors import ReleaseError

__all__ = ["SpillKey", "SealedBatchWriter", "open_sealed", "read_sealed_batches", "read_sealed_bytes",
           "write_sealed_bytes"]

_MAGIC = b"PPDPSPL1"
_ID_BYTES, _NONCE_BYTES = 16, 12
_LENGTH = struct.Struct(">I")
_END = b"end"
#: bytes of a byte stream sealed per frame (:func:`write_sealed_bytes`)
BLOCK = 8 << 20


@dataclass(frozen=True)
class SpillKey:
    """The job's spill key: 32 random bytes, in memory only (``repr`` never shows them)."""

    key: bytes = field(default_factory=lambda: os.urandom(32), repr=False)

    def cipher(self) -> AESGCM:
        return AESGCM(self.key)


class _Sealer:
    """Frames written to an open file: length, nonce, ciphertext (with the tag)."""

    def __init__(self, handle: BinaryIO, key: SpillKey) -> None:
        self.handle, self.cipher, self.number = handle, key.cipher(), 0
        self.file_id = os.urandom(_ID_BYTES)
        handle.write(_MAGIC + self.file_id)

    def frame(self, data: bytes, end: bool = False) -> None:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self.cipher.encrypt(nonce, data, self._aad(self.number, end))
        self.handle.write(_LENGTH.pack(len(sealed)) + nonce + sealed)
        self.number += 1

    def _aad(self, number: int, end: bool) -> bytes:
        return self.file_id + struct.pack(">Q", number) + (_END if end else b"")


class SealedBatchWriter:
    """Write Arrow record batches (or tables) to ``path``, each sealed as a frame; :meth:`close` seals the end."""

    def __init__(self, path: str | Path, schema: pa.Schema, key: SpillKey) -> None:
        self.path, self.schema = Path(path), schema
        self._handle = open(self.path, "xb")  # noqa: SIM115 - closed by close()
        self._sealer = _Sealer(self._handle, key)

    def write_table(self, table: pa.Table | pa.RecordBatch) -> None:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, self.schema) as writer:
            writer.write(table)
        self._sealer.frame(sink.getvalue().to_pybytes())

    write_batch = write_table

    def close(self) -> None:
        """Seal the end and close the file (again: nothing)."""
        if self._handle.closed:
            return
        try:
            self._sealer.frame(b"", end=True)
        finally:
            self._handle.close()


def _frames(path: str | Path, key: SpillKey) -> Iterator[bytes]:
    """The plaintext of each frame of the sealed file ``path``, checked; a damaged or cut file is a ReleaseError."""
    cipher = key.cipher()
    damaged = ReleaseError(f"The job's spill file {path} is damaged or was cut short; nothing was published.")
    with open(path, "rb") as handle:
        head = handle.read(len(_MAGIC) + _ID_BYTES)
        if len(head) != len(_MAGIC) + _ID_BYTES or not head.startswith(_MAGIC):
            raise damaged
        file_id, number = head[len(_MAGIC):], 0
        while True:
            prefix = handle.read(_LENGTH.size + _NONCE_BYTES)
            if len(prefix) != _LENGTH.size + _NONCE_BYTES:
                raise damaged
            sealed = handle.read(_LENGTH.unpack(prefix[:_LENGTH.size])[0])
            nonce = prefix[_LENGTH.size:]
            aad = file_id + struct.pack(">Q", number)
            try:
                yield cipher.decrypt(nonce, sealed, aad)
            except InvalidTag:
                try:
                    cipher.decrypt(nonce, sealed, aad + _END)
                except InvalidTag:
                    raise damaged from None
                if handle.read(1):
                    raise damaged from None
                return
            number += 1


def read_sealed_batches(path: str | Path, key: SpillKey) -> Iterator[pa.RecordBatch]:
    """The record batches of a file written by :class:`SealedBatchWriter`, in order."""
    for plain in _frames(path, key):
        with pa.ipc.open_stream(pa.py_buffer(plain)) as reader:
            yield from reader


@dataclass
class SealedStream:
    """A sealed file's schema and its batches (read once, as they come): what ``keyfile.seal`` takes as records."""

    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]

    def read_all(self) -> pa.Table:
        return pa.Table.from_batches(list(self.batches), schema=self.schema)


def open_sealed(path: str | Path, key: SpillKey, schema: pa.Schema | None = None) -> SealedStream:
    """The sealed file ``path`` as a :class:`SealedStream`; ``schema``: the writer's (else the first batch's)."""
    batches = read_sealed_batches(path, key)
    if schema is not None:
        return SealedStream(schema, batches)
    first = next(batches, None)
    if first is None:
        raise ReleaseError(f"The job's spill file {path} holds no records and no schema was given.")

    def again() -> Iterator[pa.RecordBatch]:
        yield first
        yield from batches

    return SealedStream(first.schema, again())


def write_sealed_bytes(path: str | Path, data: bytes | memoryview, key: SpillKey) -> None:
    """Write ``data`` sealed to ``path`` (:data:`BLOCK` bytes a frame)."""
    view = memoryview(data)
    with open(path, "xb") as handle:
        sealer = _Sealer(handle, key)
        for start in range(0, len(view), BLOCK):
            sealer.frame(bytes(view[start:start + BLOCK]))
        sealer.frame(b"", end=True)


def read_sealed_bytes(path: str | Path, key: SpillKey) -> Iterator[bytes]:
    """The blocks of a file written by :func:`write_sealed_bytes`, in order."""
    yield from _frames(path, key)
