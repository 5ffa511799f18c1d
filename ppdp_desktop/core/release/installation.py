"""This installation's provenance secret: the key of the keyed digests a release publishes instead of its input's.

A release must not publish its input file's SHA-256 or size: someone who knows every cell of the input but one
rebuilds the file for each guess of that cell, hashes it, and learns the true value from the one that matches
(on adult.csv: a target's exact age, 1 of 74 candidates). Yet ``ppdp run`` must tell whether the input changed
since the release it replaces. So ``release.json`` holds HMAC-SHA256 of the input's (SHA-256, size) and of the
project file's SHA-256 under a secret that never leaves this computer, with a fresh random nonce a release:

* **who can test a guess**: only someone holding this file (the custodian's own account on this computer, or
  whoever has broken into it, who can then read the input file itself); without it, HMAC's outputs are random
  numbers that fit every candidate file alike (HMAC-SHA256 is a pseudo-random function);
* **what is public**: the installation's identifier (a keyed hash of a fixed text, 64 bits), so a later run can
  say "made on another computer" instead of "changed"; it shows which releases came from one installation and
  nothing about their data. The nonce keeps two releases of the same file from carrying the same keyed digest.

The secret is 32 bytes from the operating system's generator (:func:`secrets.token_bytes`), written once, as 64
hex digits, to ``provenance.secret`` in the user's configuration folder (``PPDP_CONFIG_DIR`` when set), readable
by its owner only (mode 0600 on POSIX; the per-user ``%LOCALAPPDATA%`` folder on Windows). Nothing exports it;
losing it only means that the next run cannot compare with the releases made before.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import sys
import tempfile
from pathlib import Path
from typing import Literal, overload

from ppdp_desktop.core.errors import ReleaseError

#: the environment variable that names the configuration folder instead of the platform's default
CONFIG_VARIABLE = "PPDP_CONFIG_DIR"
SECRET_FILE = "provenance.secret"
ALGORITHM = "HMAC-SHA256"
_DOMAIN = b"PPDP Desktop provenance v1\x00"
_SECRET_BYTES = 32


def config_dir() -> Path:
    """The user's configuration folder of PPDP Desktop (``PPDP_CONFIG_DIR`` when set)."""
    override = os.environ.get(CONFIG_VARIABLE)
    if override:
        return Path(override)
    if sys.platform == "win32":  # per user and per computer: not the roaming profile
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "PPDP Desktop"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "PPDP Desktop"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "ppdp-desktop"


def secret_path() -> Path:
    return config_dir() / SECRET_FILE


def _unreadable(path: Path, why: str) -> ReleaseError:
    return ReleaseError(f"This computer's provenance secret {path} {why}. Delete it and a new one is made (the "
                        f"releases made before can then not be compared with the next), or set {CONFIG_VARIABLE} "
                        "to a folder of yours.")


def _read(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="ascii").strip()
        if os.name == "posix" and path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)  # readable by its owner only, as it was written
    except (OSError, UnicodeDecodeError) as exc:
        raise _unreadable(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != _SECRET_BYTES:
        raise _unreadable(path, "is damaged (it is not 64 hexadecimal digits)")
    return secret


def _create(path: Path) -> None:
    """Write a new secret to ``path`` unless another process has just done so (the first one written wins)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, partial = tempfile.mkstemp(prefix=".provenance-", suffix=".partial", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(handle, "w", encoding="ascii") as out:
            out.write(secrets.token_bytes(_SECRET_BYTES).hex() + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(partial, path)  # never replaces a secret already there
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(partial, path)
    finally:
        Path(partial).unlink(missing_ok=True)


@overload
def installation_secret(create: Literal[True] = True) -> bytes: ...


@overload
def installation_secret(create: bool) -> bytes | None: ...


def installation_secret(create: bool = True) -> bytes | None:
    """This installation's secret, made on first use when ``create`` (else None when there is none).

    Raises :class:`ReleaseError`, naming the file and what to do, when it cannot be read or made."""
    path = secret_path()
    if not path.is_file():
        if not create:
            return None
        try:
            _create(path)
        except OSError as exc:
            raise ReleaseError(f"This computer's provenance secret cannot be written to {path} "
                               f"({exc.strerror or exc}); set {CONFIG_VARIABLE} to a folder of yours.") from None
    return _read(path)


def installation_id(secret: bytes) -> str:
    """The public name of the installation that holds ``secret``: 16 hex digits that reveal nothing of it."""
    return hmac.new(secret, _DOMAIN + b"installation", hashlib.sha256).hexdigest()[:16]


def keyed_digest(secret: bytes, label: str, nonce: str, sha256: str, size: int | None = None) -> str:
    """HMAC-SHA256 under ``secret`` of a file's SHA-256 (hex) and size (when given), for ``label`` ("input",
    "project") and a release's ``nonce`` (hex): what ``release.json`` publishes instead of the digest."""
    message = (_DOMAIN + label.encode("ascii") + b"\x00" + bytes.fromhex(nonce) + bytes.fromhex(sha256)
               + (b"" if size is None else size.to_bytes(8, "big")))
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def new_nonce() -> str:
    return secrets.token_hex(16)


def ledger_identity_secret() -> bytes:
    """The 32-byte key of the release ledger's identity digests on this computer: derived from this installation's
    secret (made on first use), so the same patient has the same digest in every release made here and nobody
    without this computer's secret can test a guessed patient number against the ledger."""
    return hmac.new(installation_secret(), b"PPDP Desktop release ledger identities v1", hashlib.sha256).digest()
