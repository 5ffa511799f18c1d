"""The custodian secret of a project: 32 random bytes that key its persistent randomness and its record digests.

It is made once per project (:func:`create_secret`) and kept on the custodian's computer, sealed under a passphrase
exactly like a signing key (:mod:`.signing`): scrypt and authenticated encryption (:mod:`.keyfile`), bound to a
purpose hash of the project's id instead of a release, so that one project's secret cannot be taken for another's,
nor a release's key or a signing key for a secret; its magic bytes are its own (``PPDPSEC\\0``, since issue 32), so
no ``--overwrite`` of a key replaces it (:mod:`.keykinds`). Its place: ``custodian.secret`` in the project's folder of the
application-data folder (:func:`~ppdp_desktop.core.repeat.appdata.project_folder`).

It never enters a release or its key file. Whoever holds the ledger but not the secret cannot test a guessed
patient number against the ledger's keyed record digests. Losing it costs persistence only: the next release then
draws afresh and counts as independent of the earlier ones.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ppdp_desktop.core.errors import KeyFileError
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.keyheader import SECRET_MAGIC, SIGNING_MAGIC
from ppdp_desktop.core.release.keykinds import SECRET, describe, kind_of
from ppdp_desktop.core.release.signing import PURPOSE as SIGNING_PURPOSE
from ppdp_desktop.core.repeat.appdata import project_folder, project_folder_name

__all__ = ["KIND", "SECRET_BYTES", "SECRET_FILE", "CustodianSecret", "create_secret", "open_secret", "purpose",
           "secret_exists", "secret_path"]

SECRET_FILE = "custodian.secret"
KIND = "ppdp-custodian-secret"
SECRET_BYTES = 32
_PURPOSE_PREFIX = b"PPDP Desktop custodian secret\n"


def purpose(project_id: str) -> str:
    """What a project's secret is sealed to (in place of a release's manifest hash): a hash of the project's id."""
    return hashlib.sha256(_PURPOSE_PREFIX + project_id.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CustodianSecret:
    """An opened custodian secret (in memory only; its ``repr`` never shows the key)."""

    key: bytes = field(repr=False)
    project_id: str

    def __post_init__(self) -> None:
        if not isinstance(self.key, bytes) or len(self.key) != SECRET_BYTES:
            raise ValueError(f"a custodian secret is {SECRET_BYTES} bytes")


def secret_path(project_id: str) -> Path:
    """Where the project's secret is kept: ``project_folder(project_id) / custodian.secret``."""
    return project_folder(project_id) / SECRET_FILE


def secret_exists(project_id: str, path: str | Path | None = None) -> bool:
    """Whether the project has a secret (at ``path``, else at :func:`secret_path`)."""
    return Path(path if path is not None else secret_path(project_id)).is_file()


def create_secret(project_id: str, passphrase: str, path: str | Path | None = None,
                  overwrite: bool = False) -> CustodianSecret:
    """Make the project's secret and seal it under ``passphrase`` into ``path`` (default :func:`secret_path`,
    its folder made owner-only).

    Raises
    ------
    KeyFileError
        A secret is there already (unless ``overwrite``: then it is replaced, and the releases made with it can no
        longer be repeated persistently), the passphrase is under 8 characters, or the file cannot be written.
    """
    project_folder_name(project_id)  # a project id that cannot name a project is refused first
    target = Path(path) if path is not None else project_folder(project_id, create=True) / SECRET_FILE
    if target.exists() and not overwrite:
        raise KeyFileError(f"Project {project_id!r} already has a custodian secret ({target}); open it with its "
                           "passphrase. Replacing it would make the next release independent of the earlier ones.",
                           file=str(target))
    if target.exists() and kind_of(target) != SECRET:
        raise KeyFileError(f"{target} is {describe(kind_of(target))}, not a custodian secret; it is never replaced by "
                           "one. Choose another file.", file=str(target))
    key = os.urandom(SECRET_BYTES)
    payload = {"kind": KIND, "project": project_id, "secret": base64.b64encode(key).decode("ascii")}
    keyfile.seal(payload, passphrase, purpose(project_id), target, overwrite=overwrite, magic=SECRET_MAGIC)
    return CustodianSecret(key, project_id)


def open_secret(project_id: str, passphrase: str, path: str | Path | None = None) -> CustodianSecret:
    """Open the project's secret (at ``path``, else at :func:`secret_path`).

    Raises
    ------
    KeyFileError
        No secret there; a file sealed for something else (another project's secret, a release's key file, a
        signing key); the key file's own refusals (wrong passphrase, damaged, altered).
    """
    target = Path(path) if path is not None else secret_path(project_id)
    if not target.exists():
        raise KeyFileError(f"Project {project_id!r} has no custodian secret at {target}.", file=str(target))
    magic, header = keyfile.peek(target)
    sealed_for = header.manifest_sha256
    if sealed_for == SIGNING_PURPOSE or magic == SIGNING_MAGIC:
        raise KeyFileError(f"{target} is a signing key, not a custodian secret; give project {project_id!r}'s "
                           "custodian secret.", file=str(target))
    if sealed_for != purpose(project_id):
        raise KeyFileError(f"{target} is not project {project_id!r}'s custodian secret: it is sealed for something "
                           "else (another project's secret, or a release's key file).", file=str(target))
    payload = keyfile.open_key(target, passphrase, sealed_for, magic=SECRET_MAGIC)
    if payload.get("kind") != KIND or payload.get("project") != project_id:
        raise KeyFileError(f"{target} is not a custodian secret file.", file=str(target))
    try:
        key = base64.b64decode(str(payload.get("secret")), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != SECRET_BYTES:
        raise KeyFileError(f"{target} decrypted but its content is unreadable", file=str(target))
    return CustodianSecret(key, project_id)
