"""The clear-text header of a key file: its format version, KDF parameters, cipher, nonce and release binding.

It holds nothing secret; it is the associated data of every sealed part, so it cannot be changed unnoticed.
:func:`parse_header` accepts only the one canonical form (sorted-key compact JSON) of a well-formed header, and
checks the KDF parameters before anything is derived from them (no huge scrypt from a forged header).
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ppdp_desktop.core.data.bounded_json import parse_json
from ppdp_desktop.core.errors import KeyFileError, ParameterError
from ppdp_desktop.core.release.keystream import PREFIX_BYTES, TAG_BYTES

__all__ = ["CIPHER", "FORMAT_VERSION", "KIND_NAMES", "MAGIC", "MAGICS", "SECRET_MAGIC", "SIGNING_MAGIC",
           "SIGNING_PURPOSE", "KdfParams", "KeyHeader", "parse_header"]

#: the magic bytes of each kind of sealed file. A release's key file keeps the first one; before issue 32 signing
#: keys and custodian secrets began with it too (such a file is told apart by its header: :mod:`.keykinds`)
MAGIC = b"PPDPKEY\x00"
SIGNING_MAGIC = b"PPDPSIG\x00"
SECRET_MAGIC = b"PPDPSEC\x00"
MAGICS = (MAGIC, SIGNING_MAGIC, SECRET_MAGIC)
#: what a signing key file is sealed to, in place of a release's manifest hash (it belongs to no release)
SIGNING_PURPOSE = hashlib.sha256(b"PPDP Desktop release signing key").hexdigest()
#: what a file of each magic is, in messages
KIND_NAMES = {MAGIC: "a release's key file", SIGNING_MAGIC: "a signing key file", SECRET_MAGIC: "a custodian secret"}
FORMAT_VERSION = 2
CIPHER = "AES-256-GCM-STREAM"
SEGMENT_BYTES = 4 << 20  # plaintext bytes per sealed segment
MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES = 16, 64 << 20  # what a header may ask for (bounds what opening allocates)
MAX_HEADER_BYTES = 64 * 1024
MAX_KDF_MEMORY = 1 << 30  # scrypt needs about 128 * n * r bytes; the default uses 64 MiB
MAX_KDF_WORK = 1 << 25  # n * r * p; the default is 2**19
# format 1: one AES-256-GCM call over the whole compressed payload
FORMAT_V1, CIPHER_V1, NONCE_BYTES_V1 = 1, "AES-256-GCM", 12
MAX_CIPHERTEXT = (1 << 31) - 1 + TAG_BYTES  # AES-GCM in `cryptography` takes < 2 GiB per call
HEX64 = re.compile(r"[0-9a-f]{64}")


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
    """The clear-text header of a key file (nothing in it is secret).

    ``nonce`` is the 7-byte STREAM nonce prefix in format 2 (with ``segment_bytes``, the plaintext bytes of a
    segment), the 12-byte AES-GCM nonce in format 1 (with ``ciphertext_bytes``, the length of the body).
    """

    version: int
    kdf: KdfParams
    cipher: str
    nonce: bytes
    manifest_sha256: str
    created: datetime
    ciphertext_bytes: int | None = None
    segment_bytes: int | None = None

    def to_bytes(self) -> bytes:
        """The canonical header bytes (sorted-key JSON, ASCII)."""
        doc = {
            "version": self.version, "cipher": self.cipher, "nonce": _b64(self.nonce),
            "kdf": {"name": "scrypt", "n": self.kdf.n, "r": self.kdf.r, "p": self.kdf.p, "salt": _b64(self.kdf.salt)},
            "manifest_sha256": self.manifest_sha256, "created": self.created.isoformat(),
        }
        if self.version == FORMAT_V1:
            doc["ciphertext_bytes"] = self.ciphertext_bytes
        else:
            doc["segment_bytes"] = self.segment_bytes
        return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("ascii")

    def well_formed(self) -> bool:
        """Whether the fields that depend on the format version are in range."""
        if self.version == FORMAT_V1:
            size = self.ciphertext_bytes
            return (self.cipher == CIPHER_V1 and len(self.nonce) == NONCE_BYTES_V1 and type(size) is int
                    and TAG_BYTES <= size <= MAX_CIPHERTEXT)
        segment = self.segment_bytes
        return (self.cipher == CIPHER and len(self.nonce) == PREFIX_BYTES and type(segment) is int
                and MIN_SEGMENT_BYTES <= segment <= MAX_SEGMENT_BYTES)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def parse_header(label: str, raw: bytes) -> KeyHeader:
    """The header of the key file ``label`` from its bytes ``raw``; a one-line KeyFileError if it is not well formed
    (a newer format is named as such)."""
    def bad(detail: str) -> KeyFileError:
        return KeyFileError(f"{label} is damaged (its header {detail})")

    try:
        doc = parse_json(raw, label, error=KeyFileError, max_bytes=None)
    except KeyFileError:
        raise bad("is not valid JSON") from None
    if not isinstance(doc, dict):
        raise bad("is not a JSON object")
    version = doc.get("version")
    if type(version) is int and FORMAT_VERSION < version < 10**6:
        raise KeyFileError(
            f"{label} was written by a newer version (format {version}); this app reads formats 1 and {FORMAT_VERSION}"
        )
    if type(version) is not int or version not in (FORMAT_V1, FORMAT_VERSION):
        raise bad("has no valid format version")
    sized = "ciphertext_bytes" if version == FORMAT_V1 else "segment_bytes"
    try:
        kdf = doc["kdf"]
        params = KdfParams(kdf["n"], kdf["r"], kdf["p"], base64.b64decode(kdf["salt"], validate=True))
        nonce, created = base64.b64decode(doc["nonce"], validate=True), datetime.fromisoformat(doc["created"])
        cipher, manifest, size = doc["cipher"], doc["manifest_sha256"], doc[sized]
    except ParameterError as exc:  # checked before any key derivation: no huge scrypt from a forged header
        raise bad(f"has unsafe key-derivation parameters: {str(exc).split(': ', 1)[-1]}") from None
    except (KeyError, TypeError, ValueError):  # binascii.Error is a ValueError
        raise bad("has missing or malformed fields") from None
    header = KeyHeader(version, params, cipher, nonce, manifest, created, **{sized: size})
    if not (
        isinstance(manifest, str) and HEX64.fullmatch(manifest) and created.tzinfo is not None and header.well_formed()
        and header.to_bytes() == raw  # one canonical form: nothing else can hide in the clear part
    ):
        raise bad("has missing or malformed fields")
    return header
