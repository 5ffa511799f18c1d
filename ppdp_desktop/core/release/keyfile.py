"""The sealed key file: what an authorized person needs to map a release back, encrypted.

Layout (format 2)::

    magic                  8 bytes: b"PPDPKEY\\x00" (a release's key), b"PPDPSIG\\x00" (a signing key) or
                           b"PPDPSEC\\x00" (a custodian secret); before issue 32 all three began with the first
    header length          4 bytes, unsigned big-endian
    header                 UTF-8 JSON, keys sorted (the fields of :class:`KeyHeader`)
    segments               the plaintext below, sealed segment by segment (:mod:`.keystream`, STREAM over
                           AES-256-GCM, associated data = all bytes above)

The plaintext: the payload as zlib-compressed JSON (8-byte big-endian length first), then one byte, 1 if an
Arrow IPC stream with zstd-compressed buffers follows (the *record table*: one row per original record, in
record order), else 0. Nothing is ever held whole in memory, so a key has no size limit. Format 1 (one
AES-256-GCM call over the zlib-compressed JSON, under 2 GiB) is still read.

The key is derived from the passphrase (NFC-normalised, UTF-8) with scrypt; its parameters and
salt are in the header. The header holds nothing secret and, being the associated data of the
cipher, cannot be changed unnoticed (release binding, KDF parameters, nonce, segment size). Opening fails
closed: every problem is a one-line :class:`KeyFileError` and nothing is returned.
"""
from __future__ import annotations

import contextlib
import json
import os
import struct
import tempfile
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from ppdp_desktop.core.data.bounded_json import parse_json
from ppdp_desktop.core.errors import KeyFileError, ParameterError
from ppdp_desktop.core.release.keyheader import (
    CIPHER,
    FORMAT_V1,
    FORMAT_VERSION,
    HEX64,
    KIND_NAMES,
    MAGIC,
    MAGICS,
    MAX_HEADER_BYTES,
    MAX_SEGMENT_BYTES,
    MIN_SEGMENT_BYTES,
    SEGMENT_BYTES,
    SIGNING_MAGIC,
    SIGNING_PURPOSE,
    KdfParams,
    KeyHeader,
    parse_header,
)
from ppdp_desktop.core.release.keyrecords import Records, read_records, record_source, write_records
from ppdp_desktop.core.release.keystream import PREFIX_BYTES, TAG_BYTES, SegmentReader, SegmentWriter, segment_key
from ppdp_desktop.core.release.passphrase_policy import MIN_PASSPHRASE  # how strong it must be: that module

KEY_BYTES = 32
#: the key under which :func:`open_key` returns the record table (a payload may not use it)
RECORDS = "records"
_PREFIX = struct.Struct(">8sI")
_LENGTH = struct.Struct(">Q")


def _check_manifest(value: Any) -> str:
    if not isinstance(value, str) or not HEX64.fullmatch(value.lower()):
        raise KeyFileError(f"{value!r:.80} is not a release manifest hash (64 hexadecimal digits)")
    return value.lower()


def _derive(passphrase: str, kdf: KdfParams) -> bytes:
    secret = unicodedata.normalize("NFC", passphrase).encode("utf-8", "surrogatepass")
    return Scrypt(salt=kdf.salt, length=KEY_BYTES, n=kdf.n, r=kdf.r, p=kdf.p).derive(secret)


@contextlib.contextmanager
def _opened(path: str | Path) -> Iterator[tuple[BinaryIO, KeyHeader, bytes, int]]:
    """The open file just after its header, the header, the associated data (magic + length + header bytes)
    and the number of bytes after the header; checks what needs no passphrase. Read errors -> KeyFileError."""
    label = str(path)
    truncated = KeyFileError(f"{label} is truncated or damaged")
    try:
        _check_regular(path, label)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            prefix = f.read(_PREFIX.size)
            if not any(prefix[: len(m)] == m[: len(prefix)] for m in MAGICS):
                raise KeyFileError(f"{label} is not a PPDP key file")
            if len(prefix) < _PREFIX.size:
                raise truncated
            length = _PREFIX.unpack(prefix)[1]
            if not 2 <= length <= MAX_HEADER_BYTES:
                raise KeyFileError(f"{label} is damaged (impossible header length {length})")
            raw = f.read(length)
            if len(raw) < length:
                raise truncated
            header = parse_header(label, raw)
            rest = size - _PREFIX.size - length
            expected = header.ciphertext_bytes if header.version == FORMAT_V1 else TAG_BYTES
            if rest < expected:
                raise truncated
            if header.version == FORMAT_V1 and rest > expected:
                raise KeyFileError(f"{label} is damaged ({rest - expected} unexpected bytes at the end)")
            yield f, header, prefix + raw, rest
    except OSError as exc:
        raise KeyFileError(f"Cannot read {label}: {exc.strerror or exc}") from None


def _check_regular(path: str | Path, label: str) -> None:
    """A key is read from a regular file only: a FIFO or a device would block or never end."""
    import stat

    if not stat.S_ISREG(os.stat(path).st_mode):  # a missing file: the OSError of the caller says so
        raise KeyFileError(f"Cannot read {label}: it is not a regular file (a folder, a device or a pipe); give the key "
                           "file itself.")


def read_header(path: str | Path) -> KeyHeader:
    """Read and check a key file's clear-text header (no passphrase needed); KeyFileError if malformed."""
    return peek(path)[1]


def peek(path: str | Path) -> tuple[bytes, KeyHeader]:
    """A sealed file's magic (which kind of file it is: :data:`~.keyheader.MAGICS`) and checked header, read
    without the passphrase; KeyFileError if it is not a well-formed sealed file."""
    with _opened(path) as (_, header, aad, _):
        return aad[: len(MAGIC)], header


def open_key(path: str | Path, passphrase: str, manifest_sha256: str, *, magic: bytes = MAGIC) -> dict[str, Any]:
    """Decrypt the payload of a key file sealed for the release whose manifest hash is `manifest_sha256`.

    ``magic``: the kind of file expected (a signing key or a custodian secret gives its own); one of another kind is
    refused by name (a file of the first, shared magic is checked by its binding, as before issue 32).

    Returns
    -------
    dict
        The payload; the record table, if the key has one, under :data:`RECORDS` as a ``pyarrow.Table``
        (row ``i`` is record ``i``).

    Raises
    ------
    KeyFileError
        Not a key file, damaged, newer format, unsafe KDF parameters, another release's key, wrong
        passphrase, altered, cut short or extended; checked in that order, and nothing is returned in any case.
    """
    if not isinstance(passphrase, str):
        raise TypeError("the passphrase must be a str")
    expected = _check_manifest(manifest_sha256)
    with _opened(path) as (f, header, aad, rest):
        found = aad[: len(MAGIC)]
        if found == MAGIC and header.manifest_sha256 == SIGNING_PURPOSE:  # a signing key made before issue 32
            found = SIGNING_MAGIC
        if found not in (magic, MAGIC):
            raise KeyFileError(f"{path} is {KIND_NAMES[found]}, not {KIND_NAMES[magic]}")
        if header.manifest_sha256 != expected:
            raise KeyFileError(
                f"{path} belongs to another release (its manifest is {header.manifest_sha256[:12]}…, "
                f"this release's is {expected[:12]}…)"
            )
        key = _derive(passphrase, header.kdf)
        if header.version == FORMAT_V1:
            return _open_v1(f, header, aad, key, str(path))
        if header.segment_bytes is None:  # parse_header checked it is there (well_formed): for the type
            raise KeyFileError(f"{path} is damaged (its header has missing or malformed fields)")
        reader = SegmentReader(f, rest, segment_key(key, header.nonce), header.nonce, aad, header.segment_bytes,
                               str(path))
        return _read_plaintext(reader, rest, str(path))


def _unreadable(label: str) -> KeyFileError:
    return KeyFileError(f"{label} decrypted but its content is unreadable")


def _load_payload(packed: bytes, label: str) -> dict[str, Any]:
    try:
        payload = parse_json(zlib.decompress(packed), label, error=KeyFileError, max_bytes=None)
    except (zlib.error, KeyFileError):
        payload = None
    if not isinstance(payload, dict):
        raise _unreadable(label)
    return payload


def _open_v1(f: BinaryIO, header: KeyHeader, aad: bytes, key: bytes, label: str) -> dict[str, Any]:
    if header.ciphertext_bytes is None:  # parse_header checked it is there (well_formed): for the type
        raise KeyFileError(f"{label} is damaged (its header has missing or malformed fields)")
    body = f.read(header.ciphertext_bytes)
    if len(body) != header.ciphertext_bytes:
        raise KeyFileError(f"{label} is truncated or damaged")
    try:
        packed = AESGCM(key).decrypt(header.nonce, body, aad)
    except InvalidTag:
        raise KeyFileError(f"Wrong passphrase, or {label} has been altered") from None
    return _load_payload(packed, label)


def _read_plaintext(reader: SegmentReader, limit: int, label: str) -> dict[str, Any]:
    """The payload (and record table) of a format-2 plaintext; every segment is authenticated first."""
    head = reader.read(_LENGTH.size)
    length = _LENGTH.unpack(head)[0] if len(head) == _LENGTH.size else -1
    if not 0 <= length <= limit:
        reader.rest_is_empty()  # a damaged file says so before a well-sealed one is called unreadable
        raise _unreadable(label)
    packed = reader.read(length)
    flag = reader.read(1)
    if len(packed) != length or flag not in (b"\x00", b"\x01"):
        reader.rest_is_empty()
        raise _unreadable(label)
    payload = _load_payload(packed, label)
    if flag == b"\x01":
        try:
            payload[RECORDS] = read_records(reader)
        except ValueError:
            reader.rest_is_empty()
            raise _unreadable(label) from None
    if not reader.rest_is_empty():
        raise _unreadable(label)
    return payload


#: list items encoded per call to the JSON encoder: each call holds the interpreter lock, so a 1M-entry
#: pseudonym list encoded at once would freeze the window for a quarter of a second
JSON_PIECE = 20_000


def dumps_in_pieces(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))``, the same text, but
    long lists are encoded :data:`JSON_PIECE` items at a time, so other threads (the window) run in between."""
    return "".join(json_pieces(value))


def json_pieces(value: Any) -> Iterator[str]:
    """The text of :func:`dumps_in_pieces` as consecutive pieces of at most :data:`JSON_PIECE` list items.
    Sealing compresses them one by one, so no step joins or copies the whole text (a 1M-record key is
    32 MB of JSON: joining it held the interpreter lock, and froze the window, for 60-140 ms)."""
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        yield "{"
        for i, (k, v) in enumerate(value.items()):
            yield ("," if i else "") + _plain(k) + ":"
            yield from json_pieces(v)
        yield "}"
    elif isinstance(value, list) and len(value) > JSON_PIECE:
        for i in range(0, len(value), JSON_PIECE):
            yield ("[" if i == 0 else ",") + _plain(value[i:i + JSON_PIECE])[1:-1]
        yield "]"
    else:
        yield _plain(value)


def _compress(pieces: Iterable[str]) -> bytes:
    """``zlib.compress("".join(pieces).encode("utf-8"), 1)``, one piece at a time (each step short for the
    window; zlib releases the interpreter lock while it compresses)."""
    packer = zlib.compressobj(1)
    parts = [packer.compress(piece.encode("utf-8")) for piece in pieces]
    return b"".join(parts) + packer.flush()


def _plain(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def seal(
    payload: dict[str, Any], passphrase: str, manifest_sha256: str, path: str | Path, records: Records | None = None,
    *, kdf: KdfParams | None = None, overwrite: bool = False, segment_bytes: int = SEGMENT_BYTES,
    magic: bytes = MAGIC,
) -> Path:
    """Encrypt `payload` (JSON-serializable) and `records` under `passphrase` into `path`, bound to one release.

    Written atomically (temporary file in the same folder, fsync, rename; owner-only permissions);
    an existing file is kept unless `overwrite`. Nothing is held whole in memory: the payload is compressed,
    then the record table is written and sealed batch by batch, segment by segment.

    Parameters
    ----------
    payload : dict
        JSON-serializable; it may not use the key :data:`RECORDS`.
    records : pyarrow.Table, iterable of pyarrow.RecordBatch, pyarrow.RecordBatchReader or (schema, batches), optional
        The record table: one row per original record, in record order (row ``i`` is record ``i``). Batches are
        consumed once, as they come (a generator reading the records in order is fine); give ``(schema, batches)``
        to fix the column types, else the first batch's are used and later batches cast to them. Batches that
        yield nothing mean no record table.
    kdf : KdfParams, optional
        Defaults to ``KdfParams()`` (fresh salt).
    segment_bytes : int
        Plaintext bytes per sealed segment (tests use small ones).
    magic : bytes
        The kind of file (:data:`~.keyheader.MAGICS`): a release's key by default; a signing key and a custodian
        secret give their own, so that ``--overwrite`` can tell them apart (:mod:`.keykinds`).

    Returns
    -------
    Path
        `path`.

    Raises
    ------
    KeyFileError
        Passphrase under 8 characters, bad manifest hash, payload not JSON, missing folder,
        existing file, record batches that do not fit together, or the file cannot be written.
    """
    if not isinstance(payload, dict) or not isinstance(passphrase, str):
        raise TypeError("seal needs a dict payload and a str passphrase")
    if type(segment_bytes) is not int or not MIN_SEGMENT_BYTES <= segment_bytes <= MAX_SEGMENT_BYTES:
        raise ParameterError(
            f"segment_bytes must be from {MIN_SEGMENT_BYTES} to {MAX_SEGMENT_BYTES}; got {segment_bytes!r}")
    if len(passphrase) < MIN_PASSPHRASE:
        raise KeyFileError(f"The passphrase must have at least {MIN_PASSPHRASE} characters (it has {len(passphrase)})")
    if magic not in MAGICS:
        raise ParameterError(f"magic must be one of {MAGICS}; got {magic!r}")
    if RECORDS in payload:
        raise KeyFileError(f"The key contents may not have an entry {RECORDS!r}: it is the record table's name")
    manifest, target = _check_manifest(manifest_sha256), Path(path)
    if not target.parent.is_dir():
        raise KeyFileError(f"Cannot write {target}: the folder {target.parent} does not exist")
    if not overwrite and os.path.lexists(target):
        raise KeyFileError(f"{target} already exists; choose another name or allow overwriting")
    try:
        packed = _compress(json_pieces(payload))
    except (TypeError, ValueError, RecursionError) as exc:
        raise KeyFileError(f"The key contents cannot be stored as JSON: {exc}") from None
    source = record_source(records)
    kdf = kdf if kdf is not None else KdfParams()
    now = datetime.now(UTC).replace(microsecond=0)
    prefix = os.urandom(PREFIX_BYTES)
    header = KeyHeader(FORMAT_VERSION, kdf, CIPHER, prefix, manifest, now, segment_bytes=segment_bytes)
    aad = _PREFIX.pack(magic, len(raw := header.to_bytes())) + raw
    key = segment_key(_derive(passphrase, kdf), header.nonce)

    def write(f: BinaryIO) -> None:
        f.write(aad)
        sink = SegmentWriter(f, key, header.nonce, aad, segment_bytes)
        sink.write(_LENGTH.pack(len(packed)) + packed + (b"\x00" if source is None else b"\x01"))
        if source is not None:
            write_records(sink, *source)
        sink.finish()

    _write_atomic(target, write, overwrite)
    return target


def _write_atomic(target: Path, write: Callable[[BinaryIO], None], overwrite: bool) -> None:
    """Call ``write`` on a temporary file beside ``target``, then move it there (nothing is left on failure)."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if not overwrite and os.path.lexists(target):
            raise FileExistsError
        os.replace(tmp, target)
        tmp = None
    except FileExistsError:
        raise KeyFileError(f"{target} already exists; choose another name or allow overwriting") from None
    except OSError as exc:
        raise KeyFileError(f"Cannot write {target}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

