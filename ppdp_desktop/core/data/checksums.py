"""Checksums of a release folder and the manifest hash a sealed key binds to."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ppdp_desktop.core.data.digest import sha256_of
from ppdp_desktop.core.errors import ReleaseError

CHECKSUMS_FILE = "SHA256SUMS"
#: the files a release may hold besides those it lists (its signature signs the manifest itself)
UNLISTED = frozenset({CHECKSUMS_FILE, "SIGNATURE"})


#: the report files of a package (its CSV appendix, the full per-value table, included): they describe the
#: release, so its fingerprint leaves them out
REPORT_FILES = ("report.html", "report.pdf", "report-values.csv")
#: the names a release's data file can have (one of them, by its format: ``release.json``'s ``data_file``)
DATA_FILES = ("release.csv", "release.xlsx", "release.sav", "release.parquet")
#: every file a release may hold, and nothing else (docs/release-format.md): its data file, ``release.json``,
#: ``README.txt``, the reports, ``SHA256SUMS`` and a signature
RELEASE_FILES = frozenset({*DATA_FILES, "release.json", "README.txt", *REPORT_FILES, *UNLISTED})
ALLOWED = (f"its data file ({', '.join(DATA_FILES)}), release.json, README.txt, {', '.join(REPORT_FILES)}, "
           f"{CHECKSUMS_FILE} and SIGNATURE")


def file_digests(folder: Path, names: list[str]) -> dict[str, str]:
    """SHA-256 of each named file of ``folder``."""
    return {name: _sha256(Path(folder) / name) for name in names}


def fingerprint_of(digests: dict[str, str]) -> str:
    """The release fingerprint: SHA-256 of the manifest lines of every file but the reports. The reports
    print it on every page (they cannot hold a hash of themselves), so a printed report is tied to the
    data and ``release.json`` it describes; ``ppdp verify`` prints it for comparison."""
    lines = "".join(f"{digest}  {name}\n" for name, digest in sorted(digests.items()) if name not in REPORT_FILES)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def release_fingerprint(folder: Path) -> str:
    """The fingerprint of a written release, from its ``SHA256SUMS`` (see :func:`fingerprint_of`)."""
    return fingerprint_of(read_manifest(folder))


def write_checksums(folder: Path, known: dict[str, str] | None = None) -> str:
    """Write ``SHA256SUMS`` over every file of ``folder``; return the manifest hash (SHA-256 of it).
    ``known``: digests already computed for some files (not hashed again)."""
    known = known or {}
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in UNLISTED)
    lines = [f"{known.get(name) or _sha256(folder / name)}  {name}\n" for name in names]
    data = "".join(lines).encode("utf-8")
    (folder / CHECKSUMS_FILE).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def manifest_sha256(folder: Path) -> str:
    """The manifest hash a key file binds to: the SHA-256 of the release's ``SHA256SUMS``."""
    path = Path(folder) / CHECKSUMS_FILE
    if not path.is_file():
        raise ReleaseError(f"{folder} has no {CHECKSUMS_FILE}; it is not a complete release.")
    return hashlib.sha256(path.read_bytes()).hexdigest()


#: one manifest line exactly as :func:`write_checksums` writes it: 64 lower-case hex digits, two spaces, a
#: plain file name (no folder, no "..", no control character), LF only
_LINE = re.compile(r"^(?P<digest>[0-9a-f]{64})  (?P<name>[^/\\\x00-\x1f]+)$")


def read_manifest(folder: Path) -> dict[str, str]:
    """``SHA256SUMS`` as ``{name: digest}``, refusing anything :func:`write_checksums` would not write:
    CRLF line ends, other spacing, paths, ``..``, duplicate names, non-UTF-8 bytes."""
    data = (Path(folder) / CHECKSUMS_FILE).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReleaseError(f"{CHECKSUMS_FILE} is not UTF-8 text: the release was altered or damaged.") from None
    if "\r" in text or (text and not text.endswith("\n")):
        raise ReleaseError(f"{CHECKSUMS_FILE} has line ends this app never writes: the release was altered.")
    listed: dict[str, str] = {}
    for number, line in enumerate(text.split("\n")[:-1], start=1):
        match = _LINE.match(line)
        if match is None or match["name"] in (".", "..") or match["name"].startswith("."):
            raise ReleaseError(f"{CHECKSUMS_FILE}, line {number}, is not '<sha256>  <file name>': the release was altered.")
        if match["name"] in listed:
            raise ReleaseError(f"{CHECKSUMS_FILE} lists {match['name']!r} twice: the release was altered.")
        listed[match["name"]] = match["digest"]
    return listed


def check_layout(folder: Path) -> None:
    """The release holds only plain files of :data:`RELEASE_FILES`, one data file among them: no other file, no
    folder, no link, whatever ``SHA256SUMS`` lists (an unsigned release's manifest can be rewritten to list
    anything). The refusal names the entry."""
    folder = Path(folder)
    entries = sorted(folder.iterdir(), key=lambda p: p.name)
    for entry in entries:
        kind = "link" if entry.is_symlink() else "folder" if entry.is_dir() else "file" if entry.is_file() else "entry"
        if entry.name not in RELEASE_FILES or kind != "file":
            raise ReleaseError(f"The {kind} {entry.name!r} is in the release, which may hold only {ALLOWED}: the "
                               f"release was altered; do not open that {kind}.")
    data = [e.name for e in entries if e.name in DATA_FILES]
    if len(data) > 1:
        raise ReleaseError(f"The release holds two data files, {data[0]} and {data[1]}, where it has one: the "
                           "release was altered.")


def check_checksums(folder: Path) -> None:
    """The release's layout (:func:`check_layout`); every file listed in ``SHA256SUMS`` exists with that hash, and
    nothing else is in the folder (no other file, no folder), but the signature."""
    folder = Path(folder)
    manifest_sha256(folder)
    check_layout(folder)
    listed = read_manifest(folder)
    for name, digest in listed.items():
        path = folder / name
        if not path.is_file() or path.is_symlink():
            raise ReleaseError(f"{name} is listed in {CHECKSUMS_FILE} but missing from the release.")
        if _sha256(path) != digest:
            raise ReleaseError(f"{name} does not match its checksum in {CHECKSUMS_FILE}: the release was altered.")
    extra = sorted(p.name for p in folder.iterdir() if p.name not in listed and p.name not in UNLISTED)
    if extra:
        kind = "folder" if (folder / extra[0]).is_dir() else "file"
        raise ReleaseError(f"The {kind} {extra[0]} is in the release but not in {CHECKSUMS_FILE}: the release was altered.")


def _sha256(path: Path) -> str:
    return sha256_of(path)[0]
