"""The sealed key file: what an authorized person needs to map a release back, encrypted.

Layout::

    b"PPDPKEY\\x00"        8 bytes, magic
    header length          4 bytes, unsigned big-endian
    header                 UTF-8 JSON, keys sorted (the fields of :class:`KeyHeader`)
    ciphertext             AES-256-GCM(key, nonce, zlib(JSON payload, level 1), aad=all bytes above)

The key is derived from the passphrase (NFC-normalised, UTF-8) with scrypt; its parameters and
salt are in the header. The header holds nothing secret and, being the associated data of the
cipher, cannot be changed unnoticed (release binding, KDF parameters, nonce, length). Opening fails
closed: every problem is a one-line :class:`KeyFileError` and nothing is decoded.
"""
from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import re
import string
import struct
import tempfile
import unicodedata
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from ppdp_desktop.core.errors import KeyFileError, ParameterError

MAGIC = b"PPDPKEY\x00"
FORMAT_VERSION = 1
CIPHER = "AES-256-GCM"
KEY_BYTES, NONCE_BYTES, TAG_BYTES = 32, 12, 16
MIN_PASSPHRASE = 8
MAX_HEADER_BYTES = 64 * 1024
MAX_KDF_MEMORY = 1 << 30  # scrypt needs about 128 * n * r bytes; the default uses 64 MiB
MAX_KDF_WORK = 1 << 25  # n * r * p; the default is 2**19
MAX_CIPHERTEXT = (1 << 31) - 1 + TAG_BYTES  # AES-GCM in `cryptography` takes < 2 GiB per call
_PREFIX = struct.Struct(">8sI")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_COMMON = {"password", "password1", "passw0rd", "12345678", "123456789", "1234567890", "qwertyui", "iloveyou"}


def _kdf_problem(n: Any, r: Any, p: Any, salt: Any) -> str | None:
    """What is unsafe about these scrypt parameters, or None (checked before any derivation)."""
    if not all(type(v) is int for v in (n, r, p)) or not isinstance(salt, bytes):
        return "n, r and p must be integers and the salt bytes"
    for ok, problem in (
        (2**10 <= n <= 2**22 and not n & (n - 1), "n must be a power of two from 2**10 to 2**22"),
        (1 <= r <= 32, "r must be from 1 to 32"),
        (1 <= p <= 16, "p must be from 1 to 16"),
        (16 <= len(salt) <= 64, "the salt must have 16 to 64 bytes"),
        (128 * n * r <= MAX_KDF_MEMORY, f"n * r is too large (scrypt would need over {MAX_KDF_MEMORY >> 20} MiB)"),
        (n * r * p <= MAX_KDF_WORK, f"n * r * p is over {MAX_KDF_WORK}"),
    ):
        if not ok:
            return problem
    return None


@dataclass(frozen=True)
class KdfParams:
    """scrypt parameters (salt: 16 fresh random bytes unless given); out of bounds -> ParameterError."""

    n: int = 2**16
    r: int = 8
    p: int = 1
    salt: bytes = field(default_factory=lambda: os.urandom(16), repr=False)

    def __post_init__(self) -> None:
        problem = _kdf_problem(self.n, self.r, self.p, self.salt)
        if problem:
            raise ParameterError(f"Key file KDF parameters: {problem}")


@dataclass(frozen=True)
class KeyHeader:
    """The clear-text header of a key file (nothing in it is secret)."""

    version: int
    kdf: KdfParams
    cipher: str
    nonce: bytes
    manifest_sha256: str
    created: datetime
    ciphertext_bytes: int

    def to_bytes(self) -> bytes:
        """The canonical header bytes (sorted-key JSON, ASCII)."""
        doc = {
            "version": self.version, "cipher": self.cipher, "nonce": _b64(self.nonce),
            "kdf": {"name": "scrypt", "n": self.kdf.n, "r": self.kdf.r, "p": self.kdf.p, "salt": _b64(self.kdf.salt)},
            "manifest_sha256": self.manifest_sha256, "created": self.created.isoformat(),
            "ciphertext_bytes": self.ciphertext_bytes,
        }
        return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("ascii")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _check_manifest(value: Any) -> str:
    if not isinstance(value, str) or not _HEX64.fullmatch(value.lower()):
        raise KeyFileError(f"{value!r:.80} is not a release manifest hash (64 hexadecimal digits)")
    return value.lower()


def _derive(passphrase: str, kdf: KdfParams) -> bytes:
    secret = unicodedata.normalize("NFC", passphrase).encode("utf-8", "surrogatepass")
    return Scrypt(salt=kdf.salt, length=KEY_BYTES, n=kdf.n, r=kdf.r, p=kdf.p).derive(secret)


def _parse_header(label: str, raw: bytes) -> KeyHeader:
    def bad(detail: str) -> KeyFileError:
        return KeyFileError(f"{label} is damaged (its header {detail})")

    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise bad("is not valid JSON") from None
    if not isinstance(doc, dict):
        raise bad("is not a JSON object")
    version = doc.get("version")
    if type(version) is int and FORMAT_VERSION < version < 10**6:
        raise KeyFileError(
            f"{label} was written by a newer version (format {version}); this app reads format {FORMAT_VERSION}"
        )
    if type(version) is not int or version != FORMAT_VERSION:
        raise bad("has no valid format version")
    try:
        kdf = doc["kdf"]
        params = KdfParams(kdf["n"], kdf["r"], kdf["p"], base64.b64decode(kdf["salt"], validate=True))
        nonce, created = base64.b64decode(doc["nonce"], validate=True), datetime.fromisoformat(doc["created"])
        cipher, manifest, size = doc["cipher"], doc["manifest_sha256"], doc["ciphertext_bytes"]
    except ParameterError as exc:  # checked before any key derivation: no huge scrypt from a forged header
        raise bad(f"has unsafe key-derivation parameters: {str(exc).split(': ', 1)[-1]}") from None
    except (KeyError, TypeError, ValueError):  # binascii.Error is a ValueError
        raise bad("has missing or malformed fields") from None
    header = KeyHeader(version, params, cipher, nonce, manifest, created, size)
    if not (
        cipher == CIPHER and len(nonce) == NONCE_BYTES and isinstance(manifest, str) and _HEX64.fullmatch(manifest)
        and created.tzinfo is not None and type(size) is int and TAG_BYTES <= size <= MAX_CIPHERTEXT
        and header.to_bytes() == raw  # one canonical form: nothing else can hide in the clear part
    ):
        raise bad("has missing or malformed fields")
    return header


def _read(path: str | Path, with_body: bool) -> tuple[KeyHeader, bytes, bytes]:
    """Header, associated data (magic + length + header bytes) and ciphertext of a key file."""
    label = str(path)
    truncated = KeyFileError(f"{label} is truncated or damaged")
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            prefix = f.read(_PREFIX.size)
            if prefix[: len(MAGIC)] != MAGIC[: len(prefix)]:
                raise KeyFileError(f"{label} is not a PPDP key file")
            if len(prefix) < _PREFIX.size:
                raise truncated
            length = _PREFIX.unpack(prefix)[1]
            if not 2 <= length <= MAX_HEADER_BYTES:
                raise KeyFileError(f"{label} is damaged (impossible header length {length})")
            raw = f.read(length)
            if len(raw) < length:
                raise truncated
            header = _parse_header(label, raw)
            rest = size - _PREFIX.size - length
            if rest < header.ciphertext_bytes:
                raise truncated
            if rest > header.ciphertext_bytes:
                raise KeyFileError(f"{label} is damaged ({rest - header.ciphertext_bytes} unexpected bytes at the end)")
            body = f.read(header.ciphertext_bytes) if with_body else b""
            if with_body and len(body) != header.ciphertext_bytes:
                raise truncated
    except OSError as exc:
        raise KeyFileError(f"Cannot read {label}: {exc.strerror or exc}") from None
    return header, prefix + raw, body


def read_header(path: str | Path) -> KeyHeader:
    """Read and check a key file's clear-text header (no passphrase needed); KeyFileError if malformed."""
    return _read(path, with_body=False)[0]


def open_key(path: str | Path, passphrase: str, manifest_sha256: str) -> dict[str, Any]:
    """Decrypt the payload of a key file sealed for the release whose manifest hash is `manifest_sha256`.

    Raises
    ------
    KeyFileError
        Not a key file, damaged, newer format, unsafe KDF parameters, another release's key, wrong
        passphrase or altered content; checked in that order, and nothing is decoded in any case.
    """
    if not isinstance(passphrase, str):
        raise TypeError("the passphrase must be a str")
    expected = _check_manifest(manifest_sha256)
    header, aad, body = _read(path, with_body=True)
    if header.manifest_sha256 != expected:
        raise KeyFileError(
            f"{path} belongs to another release (its manifest is {header.manifest_sha256[:12]}…, "
            f"this release's is {expected[:12]}…)"
        )
    try:
        packed = AESGCM(_derive(passphrase, header.kdf)).decrypt(header.nonce, body, aad)
    except InvalidTag:
        raise KeyFileError(f"Wrong passphrase, or {path} has been altered") from None
    try:
        payload = json.loads(zlib.decompress(packed).decode("utf-8"))
    except (zlib.error, ValueError, RecursionError):
        payload = None
    if not isinstance(payload, dict):
        raise KeyFileError(f"{path} decrypted but its content is unreadable")
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
    payload: dict[str, Any], passphrase: str, manifest_sha256: str, path: str | Path, *,
    kdf: KdfParams | None = None, overwrite: bool = False,
) -> Path:
    """Encrypt `payload` (JSON-serializable) under `passphrase` into `path`, bound to one release; return `path`.

    Written atomically (temporary file in the same folder, fsync, rename; owner-only permissions);
    an existing file is kept unless `overwrite`. `kdf` defaults to ``KdfParams()`` (fresh salt).

    Raises
    ------
    KeyFileError
        Passphrase under 8 characters, bad manifest hash, payload not JSON, missing folder,
        existing file, or the file cannot be written.
    """
    if not isinstance(payload, dict) or not isinstance(passphrase, str):
        raise TypeError("seal needs a dict payload and a str passphrase")
    if len(passphrase) < MIN_PASSPHRASE:
        raise KeyFileError(f"The passphrase must have at least {MIN_PASSPHRASE} characters (it has {len(passphrase)})")
    manifest, target = _check_manifest(manifest_sha256), Path(path)
    if not target.parent.is_dir():
        raise KeyFileError(f"Cannot write {target}: the folder {target.parent} does not exist")
    if not overwrite and os.path.lexists(target):
        raise KeyFileError(f"{target} already exists; choose another name or allow overwriting")
    try:
        plain = _compress(json_pieces(payload))
    except (TypeError, ValueError, RecursionError) as exc:
        raise KeyFileError(f"The key contents cannot be stored as JSON: {exc}") from None
    if len(plain) + TAG_BYTES > MAX_CIPHERTEXT:
        raise KeyFileError("The key contents are too large to seal (over 2 GiB compressed)")
    kdf = kdf if kdf is not None else KdfParams()
    now = datetime.now(timezone.utc).replace(microsecond=0)
    header = KeyHeader(FORMAT_VERSION, kdf, CIPHER, os.urandom(NONCE_BYTES), manifest, now, len(plain) + TAG_BYTES)
    aad = _PREFIX.pack(MAGIC, len(raw := header.to_bytes())) + raw
    body = AESGCM(_derive(passphrase, kdf)).encrypt(header.nonce, plain, aad)
    _write_atomic(target, (aad, body), overwrite)
    return target


def _write_atomic(target: Path, chunks: Iterable[bytes], overwrite: bool) -> None:
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
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


def passphrase_strength(passphrase: str) -> tuple[int, str]:
    """A rough 0..4 score and word ("too short", "weak", "fair", "good", "strong") for the GUI.

    From an entropy estimate: length (repeats discounted) times log2 of the size of the
    character classes used (lower, upper, digits, ASCII punctuation/space, other).
    """
    if len(passphrase) < MIN_PASSPHRASE:
        return 0, "too short"
    if passphrase.lower() in _COMMON:
        return 1, "weak"
    classes = [(string.ascii_lowercase, 26), (string.ascii_uppercase, 26), (string.digits, 10),
               (string.punctuation + " ", 33), ("".join(c for c in passphrase if ord(c) > 127), 100)]
    pool = sum(size for chars, size in classes if any(c in chars for c in passphrase))
    effective = min(len(passphrase), 3 * len(set(passphrase)))
    bits = effective * math.log2(max(pool, 2))
    score = 1 if bits < 40 else 2 if bits < 60 else 3 if bits < 80 else 4
    return score, ("weak", "fair", "good", "strong")[score - 1]
