"""Signed releases: the custodian's Ed25519 key pair, so a recipient can check who made a release.

The private key lives in a file sealed exactly like a release's key file (scrypt + authenticated
encryption, :mod:`.keyfile`), bound to a fixed purpose hash instead of a release, under magic bytes of its own
(``PPDPSIG\\0``; one made before issue 32 has the release key's and is told apart by its purpose hash), so that
``--overwrite`` never writes one kind over the other (:mod:`.keykinds`). A signed release holds
``SIGNATURE`` (JSON: algorithm, public key, fingerprint, signature) beside ``SHA256SUMS``; the signature
covers the manifest's bytes, and the manifest covers every other file, so one check vouches for all of
them. ``release.json`` and README.txt name the signer's fingerprint; ``ppdp verify --signer FINGERPRINT``
refuses a release not signed by that key. The fingerprint is the SHA-256 of the raw public key, shown as
eight groups of four hex digits (``3f1a 9c0e …``), the first 128 bits.
"""
from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from ppdp_desktop.core.data.bounded_json import read_json
from ppdp_desktop.core.data.checksums import CHECKSUMS_FILE
from ppdp_desktop.core.errors import KeyFileError, ReleaseError, setting_ref
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.keyheader import SIGNING_MAGIC
from ppdp_desktop.core.release.keyheader import SIGNING_PURPOSE as PURPOSE  # what the file is sealed to
from ppdp_desktop.core.release.keykinds import SIGNING_KEY, describe, kind_of

SIGNATURE_FILE = "SIGNATURE"
#: a signature file is a few hundred bytes; more is not one this app wrote
MAX_SIGNATURE_BYTES = 64 * 1024
ALGORITHM = "Ed25519"
_CONTEXT = b"PPDP Desktop release manifest\n"  # signed before the manifest, so the signature means one thing


def fingerprint(public: bytes) -> str:
    """``3f1a 9c0e …``: the first 128 bits of the SHA-256 of the raw public key, in groups of four."""
    digest = hashlib.sha256(public).hexdigest()[:32]
    return " ".join(digest[i:i + 4] for i in range(0, 32, 4))


def normalize_fingerprint(text: str) -> str:
    """A fingerprint as typed (any spacing or case) in the form :func:`fingerprint` prints."""
    digits = "".join(c for c in str(text).lower() if not c.isspace() and c not in ":-")
    if len(digits) != 32 or any(c not in "0123456789abcdef" for c in digits):
        raise ReleaseError(f"{text!r} is not a signer fingerprint (32 hexadecimal digits, e.g. '3f1a 9c0e ...').")
    return " ".join(digits[i:i + 4] for i in range(0, 32, 4))


@dataclass(frozen=True)
class SigningKey:
    """An opened signing key (the private key is in memory only) and the file it came from (so that no release
    or key is written over it)."""

    private: Ed25519PrivateKey
    path: Path | None = None

    @property
    def public_bytes(self) -> bytes:
        return self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_bytes)


def check_signing_key_target(path: str | Path, overwrite: bool) -> None:
    """Refuse, before a signing key is made, a ``path`` that exists unless ``overwrite`` is given and it is a
    signing key itself (a release's key or a custodian secret is never replaced by one)."""
    target = Path(path)
    if not (target.exists() or target.is_symlink()):
        return
    if not overwrite:
        raise KeyFileError(f"{target} already exists; choose another file ({setting_ref('overwrite')} replaces only "
                           "a signing key file).", file=str(target))
    kind = kind_of(target) if target.is_file() and not target.is_symlink() else None
    if kind != SIGNING_KEY:
        raise KeyFileError(f"{target} is {describe(kind)}, not a signing key file; {setting_ref('overwrite')} "
                           "replaces only a signing key file. Choose another file.", file=str(target))


def new_signing_key(path: str | Path, passphrase: str, overwrite: bool = False) -> SigningKey:
    """Make a key pair and seal its private key into ``path`` under ``passphrase`` (``overwrite``: replacing a
    signing key there, never a file of another kind: :func:`check_signing_key_target`)."""
    check_signing_key_target(path, overwrite)
    private = Ed25519PrivateKey.generate()
    raw = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    keyfile.seal({"kind": "ppdp-signing-key", "algorithm": ALGORITHM, "private": base64.b64encode(raw).decode()},
                 passphrase, PURPOSE, path, overwrite=overwrite, magic=SIGNING_MAGIC)
    return SigningKey(private, Path(path))


def open_signing_key(path: str | Path, passphrase: str) -> SigningKey:
    """Open a signing key file (refused with the key file's own messages, or if it is of another kind)."""
    keyfile.read_header(path)  # a damaged or foreign file says so in the key file's words
    kind = kind_of(path)
    if kind != SIGNING_KEY:
        raise KeyFileError(f"{Path(path).name} is {describe(kind)}, not a signing key; make one with "
                           "ppdp signing-key FILE.")
    payload = keyfile.open_key(path, passphrase, PURPOSE, magic=SIGNING_MAGIC)
    if payload.get("kind") != "ppdp-signing-key" or payload.get("algorithm") != ALGORITHM:
        raise KeyFileError(f"{Path(path).name} is not a signing key file.")
    return SigningKey(Ed25519PrivateKey.from_private_bytes(base64.b64decode(payload["private"])), Path(path))


def sign_folder(folder: Path, key: SigningKey) -> None:
    """Write ``SIGNATURE`` over the folder's ``SHA256SUMS``."""
    manifest = (Path(folder) / CHECKSUMS_FILE).read_bytes()
    entry = {"algorithm": ALGORITHM, "public_key": base64.b64encode(key.public_bytes).decode(),
             "fingerprint": key.fingerprint,
             "signature": base64.b64encode(key.private.sign(_CONTEXT + manifest)).decode()}
    (Path(folder) / SIGNATURE_FILE).write_text(json.dumps(entry, indent=2) + "\n", encoding="utf-8")


def check_signature(folder: Path, signer: str | None = None) -> str | None:
    """Verify ``SIGNATURE`` if the release has one; return the signer's fingerprint (None if unsigned).

    Raises
    ------
    ReleaseError
        A damaged or wrong signature, or (with ``signer``) a release unsigned or signed by another key.
    """
    path = Path(folder) / SIGNATURE_FILE
    expected = normalize_fingerprint(signer) if signer is not None else None  # "" is malformed, never "no check"
    if not path.exists() and not path.is_symlink():
        if expected:
            raise ReleaseError(f"The release is not signed, but {setting_ref('signer', expected)} was asked for; "
                               "refuse it.", setting="signer", value=expected)
        return None
    if path.is_symlink() or not path.is_file():
        raise ReleaseError(f"{SIGNATURE_FILE} is not a plain file (a folder or a link): the release was altered.")
    try:
        entry = read_json(path, SIGNATURE_FILE, error=ReleaseError, max_bytes=MAX_SIGNATURE_BYTES)
        if not isinstance(entry, dict):
            raise ValueError("not a JSON object")
        public = base64.b64decode(entry["public_key"], validate=True)
        signature = base64.b64decode(entry["signature"], validate=True)
        if entry.get("algorithm") != ALGORITHM:
            raise ValueError(f"algorithm {entry.get('algorithm')!r}")
        Ed25519PublicKey.from_public_bytes(public).verify(signature, _CONTEXT + (Path(folder) / CHECKSUMS_FILE).read_bytes())
    except InvalidSignature:
        raise ReleaseError(f"The {SIGNATURE_FILE} does not match {CHECKSUMS_FILE}: the release was altered after it "
                           "was signed.") from None
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ReleaseError(f"{SIGNATURE_FILE} is damaged ({exc}).") from None
    found = fingerprint(public)
    if entry.get("fingerprint") is not None and entry.get("fingerprint") != found:
        raise ReleaseError(f"{SIGNATURE_FILE} names the fingerprint {entry.get('fingerprint')!r}, but its public key's "
                           f"is {found}: the release was altered.")
    if expected and found != expected:
        raise ReleaseError(f"The release is signed by {found}, not by {expected}; refuse it.")
    return found
