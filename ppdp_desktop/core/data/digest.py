"""The SHA-256 of an input file, computed while the file is read where possible.

A release records the name, size and SHA-256 of the file it was made from (its provenance,
:mod:`ppdp_desktop.core.release.provenance`), so that a later run can say when the input differs: in the sealed
key, and in ``release.json`` only keyed with this computer's secret (published, they would let anyone who knows
every cell but one test guesses of that cell: :mod:`ppdp_desktop.core.release.installation`). Hashing is
done on the bytes as they are read, not in an extra pass, wherever the reader reads the file from start to end:

* the in-memory loader hashes the bytes it read (a text file) — :func:`digest_of_bytes`;
* a streamed CSV job hashes pass 1's bytes through :class:`HashingReader`, which pyarrow's streaming CSV
  reader reads from;
* a reader that jumps about the file (Parquet: the footer, then column chunks; Excel, SPSS and Stata through
  their libraries; the Dask engine, whose workers read byte ranges) cannot be hashed that way: the file is then
  hashed by a read of its own (:func:`digest_file`), for a large file in a thread while the job's first pass runs
  (:class:`BackgroundDigest`).
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, overload

from ppdp_desktop.core.errors import InputError

#: bytes read at a time when a file is hashed on its own, into one buffer reused from block to block (a new 8 MiB
#: block per read held two at a time, 16 MB of the in-memory job's peak as it checks its release: issue 34)
BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class FileDigest:
    """An input file as recorded in a release: its name (no folder), size in bytes and SHA-256 (hex)."""

    name: str
    size: int
    sha256: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "size": self.size, "sha256": self.sha256}


def digest_of_bytes(path: str | Path, data: bytes) -> FileDigest:
    """The digest of a file whose whole content ``data`` was read by the loader."""
    return FileDigest(Path(path).name, len(data), hashlib.sha256(data).hexdigest())


@overload
def sha256_of(path: str | Path, stop: None = None) -> tuple[str, int]: ...


@overload
def sha256_of(path: str | Path, stop: threading.Event | None) -> tuple[str, int] | None: ...


def sha256_of(path: str | Path, stop: threading.Event | None = None) -> tuple[str, int] | None:
    """The SHA-256 (hex) and size of the file at ``path``, read a block at a time; None if ``stop`` is set
    meanwhile. Raises OSError as reading does."""
    digest, size = hashlib.sha256(), 0
    buffer = bytearray(BLOCK_BYTES)
    block = memoryview(buffer)
    with open(path, "rb", buffering=0) as handle:
        while read := handle.readinto(buffer):
            if stop is not None and stop.is_set():
                return None
            digest.update(block[:read])
            size += read
    return digest.hexdigest(), size


def digest_file(path: str | Path, stop: threading.Event | None = None) -> FileDigest | None:
    """The digest of the file at ``path``, read a block at a time (None if ``stop`` is set meanwhile)."""
    source = Path(path)
    try:
        found = sha256_of(source, stop)
    except OSError as exc:
        raise InputError(f"{source.name}: cannot be read to compute its SHA-256 ({exc.strerror or exc}).") from None
    return None if found is None else FileDigest(source.name, found[1], found[0])


class ForwardReader:
    """The file protocol pyarrow's ``PythonFile`` uses, for a reader that reads a file once from its start:
    readable, not seekable, ``tell`` the bytes read so far (``size``), closing its ``handle``."""

    handle: BinaryIO
    size: int

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def writable(self) -> bool:
        return False

    def tell(self) -> int:
        return self.size

    @property
    def closed(self) -> bool:
        return self.handle.closed

    def close(self) -> None:
        self.handle.close()


class HashingReader(ForwardReader):
    """A read-only binary file that hashes every byte read from it, in order (for pyarrow's streaming readers,
    which read a file once from its start to its end). :meth:`digest` is the file's only once the reader has
    reached the end, having read as many bytes as the file holds."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.handle = self.path.open("rb")
        self._sha, self.size, self._ended = hashlib.sha256(), 0, False

    def read(self, n: int = -1) -> bytes:
        data = self.handle.read(n)
        if data:
            self._sha.update(data)
            self.size += len(data)
        elif n != 0:
            self._ended = True
        return data

    def __enter__(self) -> HashingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def digest(self) -> FileDigest | None:
        """The file's digest if every byte of it was read, else None."""
        if not self._ended:
            return None
        try:
            if self.path.stat().st_size != self.size:  # the file changed while it was read
                return None
        except OSError:
            return None
        return FileDigest(self.path.name, self.size, self._sha.hexdigest())


class BackgroundDigest:
    """:func:`digest_file` in a thread (started at once), for a file the job reads in another way meanwhile.

    Hashing releases the interpreter lock, so it runs beside the job's first pass. :meth:`result` waits for it;
    :meth:`stop` ends it early (a cancelled or failed job).
    """

    def __init__(self, path: str | Path) -> None:
        self._stop = threading.Event()
        self._digest: FileDigest | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(Path(path),), name="ppdp-input-sha256", daemon=True)
        self._thread.start()

    def _run(self, path: Path) -> None:
        try:
            self._digest = digest_file(path, self._stop)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._error = exc

    def result(self) -> FileDigest | None:
        """The digest (None if stopped); the reading error, if any, is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._digest

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
