"""OpenSSH signatures (SSHSIG, Ed25519) of a file, made with ``cryptography``: checkable on the target PC
with ``ssh-keygen -Y verify``, which Linux, macOS and Windows (OpenSSH 8.1 or later) already have.

The format is OpenSSH's ``PROTOCOL.sshsig``: the signature covers the string "SSHSIG", the namespace, an
empty reserved field, the hash algorithm's name and the SHA-512 of the message, each length-prefixed. The
key is the project's own release key (a ``ppdp signing-key`` file, opened by the app's own code), so there
is one signing key handling, not two; only the envelope differs from a signed release's ``SIGNATURE``.
:func:`verify` is the same check in Python, for a machine without ``ssh-keygen``.
"""
from __future__ import annotations

import base64
import hashlib
import struct

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

NAMESPACE = "file"  # ssh-keygen's convention for signed files (-n file)
PRINCIPAL = "ppdp-release"  # the name in allowed_signers that ssh-keygen -Y verify -I asks for
_MAGIC = b"SSHSIG"
_VERSION = 1
_HASH = "sha512"
_KEY_TYPE = b"ssh-ed25519"
_BEGIN, _END = "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"


class SignatureError(ValueError):
    """A signature that is damaged, of another format, or not by the expected key."""


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _read_string(blob: bytes, at: int) -> tuple[bytes, int]:
    if at + 4 > len(blob):
        raise SignatureError("truncated signature")
    (size,) = struct.unpack(">I", blob[at:at + 4])
    end = at + 4 + size
    if end > len(blob):
        raise SignatureError("truncated signature")
    return blob[at + 4:end], end


def public_blob(public: bytes) -> bytes:
    """The raw 32-byte Ed25519 public key in SSH's wire form (what ``ssh-ed25519 AAAA...`` encodes)."""
    return _string(_KEY_TYPE) + _string(public)


def public_key_line(public: bytes, comment: str = PRINCIPAL) -> str:
    """``ssh-ed25519 AAAA... comment``: the public key as OpenSSH writes it."""
    return f"ssh-ed25519 {base64.b64encode(public_blob(public)).decode()} {comment}"


def allowed_signers_line(public: bytes, principal: str = PRINCIPAL) -> str:
    """One line of an ``allowed_signers`` file (``ssh-keygen -Y verify -f``), limited to ``-n file``."""
    return f'{principal} namespaces="{NAMESPACE}" ' + public_key_line(public).rsplit(" ", 1)[0]


def ssh_fingerprint(public: bytes) -> str:
    """``SHA256:...``: the fingerprint ``ssh-keygen -l`` and ``-Y verify`` print for this key."""
    digest = hashlib.sha256(public_blob(public)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def _signed_data(message: bytes, namespace: str) -> bytes:
    return (_MAGIC + _string(namespace.encode()) + _string(b"") + _string(_HASH.encode())
            + _string(hashlib.sha512(message).digest()))


def sign(private: Ed25519PrivateKey, message: bytes, namespace: str = NAMESPACE) -> str:
    """The armored SSHSIG signature of ``message`` (the text of a ``.sig`` file)."""
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    signature = private.sign(_signed_data(message, namespace))
    blob = (_MAGIC + struct.pack(">I", _VERSION) + _string(public_blob(public)) + _string(namespace.encode())
            + _string(b"") + _string(_HASH.encode()) + _string(_string(_KEY_TYPE) + _string(signature)))
    text = base64.b64encode(blob).decode()
    lines = [text[i:i + 70] for i in range(0, len(text), 70)]
    return "\n".join([_BEGIN, *lines, _END]) + "\n"


def verify(armored: str, message: bytes, public: bytes, namespace: str = NAMESPACE) -> None:
    """Check an armored SSHSIG signature of ``message`` by the raw Ed25519 key ``public``.

    Raises
    ------
    SignatureError
        The signature is damaged, by another key, for another namespace, or does not match ``message``.
    """
    body = armored.strip()
    if not (body.startswith(_BEGIN) and body.endswith(_END)):
        raise SignatureError("not an SSH signature (no BEGIN/END SSH SIGNATURE lines)")
    try:
        blob = base64.b64decode("".join(body[len(_BEGIN):-len(_END)].split()), validate=True)
    except ValueError as exc:
        raise SignatureError(f"damaged signature ({exc})") from None
    if blob[:6] != _MAGIC or blob[6:10] != struct.pack(">I", _VERSION):
        raise SignatureError("not an SSHSIG version 1 signature")
    key, at = _read_string(blob, 10)
    space, at = _read_string(blob, at)
    _reserved, at = _read_string(blob, at)
    hash_name, at = _read_string(blob, at)
    wrapped, at = _read_string(blob, at)
    if key != public_blob(public):
        raise SignatureError(f"signed by another key ({ssh_fingerprint(_key_of(key))}, not {ssh_fingerprint(public)})")
    if space != namespace.encode() or hash_name != _HASH.encode():
        raise SignatureError(f"namespace {space!r} / hash {hash_name!r}, expected {namespace!r} / {_HASH!r}")
    kind, inner = _read_string(wrapped, 0)
    signature, _ = _read_string(wrapped, inner)
    if kind != _KEY_TYPE:
        raise SignatureError(f"a {kind!r} signature, not Ed25519")
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, _signed_data(message, namespace))
    except InvalidSignature:
        raise SignatureError("the signature does not match the file: it was changed after signing") from None


def _key_of(blob: bytes) -> bytes:
    kind, at = _read_string(blob, 0)
    key, _ = _read_string(blob, at)
    return key
