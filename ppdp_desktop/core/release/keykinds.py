"""Which kind of sealed file a path holds: a release's key, a signing key or a custodian secret.

``--overwrite`` replaces a sealed file only with one of the same kind (a release's key is never written over a
signing key, nor the other way round), so the kind must be known before anything is written. Since issue 32 each
kind has its own magic bytes (:data:`~.keyheader.MAGICS`). Files written before share the release key's magic and
are told apart by what their clear-text header is bound to: a signing key to the fixed signing purpose hash, a
custodian secret to its project's purpose hash, which is not known here, so an older custodian secret is
recognised by its place (``custodian.secret``, or inside the application-data folder's ``projects`` folder).
A file whose header cannot be read is of no known kind and is never replaced.
"""
from __future__ import annotations

from pathlib import Path

from ppdp_desktop.core.errors import KeyFileError
from ppdp_desktop.core.release.keyfile import peek
from ppdp_desktop.core.release.keyheader import KIND_NAMES, MAGIC, MAGICS, SECRET_MAGIC, SIGNING_MAGIC, SIGNING_PURPOSE
from ppdp_desktop.core.repeat.appdata import PROJECTS, data_dir

__all__ = ["RELEASE_KEY", "SECRET", "SIGNING_KEY", "describe", "kind_of", "looks_sealed"]

RELEASE_KEY, SIGNING_KEY, SECRET = MAGIC, SIGNING_MAGIC, SECRET_MAGIC
#: the file name of a custodian secret (:mod:`.custodian_secret`), kept here to avoid an import cycle
_SECRET_NAME = "custodian.secret"


def looks_sealed(path: str | Path) -> bool:
    """Whether the file begins with the magic bytes of one of the app's sealed files (damaged or not)."""
    try:
        with Path(path).open("rb") as handle:
            return handle.read(len(MAGIC)) in MAGICS
    except OSError:
        return False


def kind_of(path: str | Path) -> bytes | None:
    """The kind of the sealed file at ``path`` (:data:`RELEASE_KEY`, :data:`SIGNING_KEY` or :data:`SECRET`), or
    None when it is not a readable, well-formed sealed file of ours."""
    try:
        magic, header = peek(path)
    except KeyFileError:
        return None
    if magic != MAGIC:
        return magic
    if header.manifest_sha256 == SIGNING_PURPOSE:
        return SIGNING_KEY
    return SECRET if _secret_place(Path(path)) else RELEASE_KEY


def _secret_place(path: Path) -> bool:
    if path.name == _SECRET_NAME:
        return True
    try:
        return (data_dir() / PROJECTS).resolve() in path.resolve().parents
    except OSError:
        return False


def describe(kind: bytes | None) -> str:
    """``kind`` in words (``a signing key file``); None: a damaged or foreign file."""
    return KIND_NAMES[kind] if kind is not None else "a sealed file of no kind this app can read (damaged, or not ours)"
