"""Checksums of a release folder and the manifest hash a sealed key binds to."""
from __future__ import annotations

import hashlib
from pathlib import Path

from ppdp_desktop.core.errors import ReleaseError

CHECKSUMS_FILE = "SHA256SUMS"


def write_checksums(folder: Path) -> str:
    """Write ``SHA256SUMS`` over every file of ``folder``; return the manifest hash (SHA-256 of it)."""
    lines = [f"{_sha256(folder / name)}  {name}\n" for name in sorted(p.name for p in folder.iterdir() if p.is_file())]
    data = "".join(lines).encode("utf-8")
    (folder / CHECKSUMS_FILE).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def manifest_sha256(folder: Path) -> str:
    """The manifest hash a key file binds to: the SHA-256 of the release's ``SHA256SUMS``."""
    path = Path(folder) / CHECKSUMS_FILE
    if not path.is_file():
        raise ReleaseError(f"{folder} has no {CHECKSUMS_FILE}; it is not a complete release.")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_checksums(folder: Path) -> None:
    """Every file listed in ``SHA256SUMS`` exists with that hash, and no other file is present."""
    folder = Path(folder)
    manifest_sha256(folder)
    listed = {}
    try:
        listing = (folder / CHECKSUMS_FILE).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ReleaseError(f"{CHECKSUMS_FILE} is not UTF-8 text: the release was altered or damaged.") from None
    for line in listing.splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    for name, digest in listed.items():
        path = folder / name
        if not path.is_file():
            raise ReleaseError(f"{name} is listed in {CHECKSUMS_FILE} but missing from the release.")
        if _sha256(path) != digest:
            raise ReleaseError(f"{name} does not match its checksum in {CHECKSUMS_FILE}: the release was altered.")
    extra = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in listed and p.name != CHECKSUMS_FILE)
    if extra:
        raise ReleaseError(f"{extra[0]} is in the release folder but not in {CHECKSUMS_FILE}.")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
