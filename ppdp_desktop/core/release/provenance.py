"""What a release was made with: the app, Python and the libraries that shape its random draws, the input file,
the project file.

The release's draws are keyed ChaCha20/AES streams (``cryptography``) shaped into values by numpy; pandas and
pyarrow read, type and write the records. A fixed seed gives the same release only with the same versions of
these, so ``release.json`` and the sealed key record them (``provenance``), with the input file's name, size and
SHA-256 and the project file's SHA-256. :func:`differences` says, in words, what differs between a recorded
provenance and another (the one of this run, or of the running app): ``ppdp run`` compares the release it
replaces, and the key-opening paths compare the key, so that a release that differs says why instead of differing
silently. A release written before provenance was recorded has none; it still verifies.
"""
from __future__ import annotations

import json
import platform
import re
import zipfile
from dataclasses import dataclass, field
from importlib import metadata as distributions
from pathlib import Path
from typing import Any

from ppdp_desktop import __version__
from ppdp_desktop.core.data.digest import FileDigest, sha256_of
from ppdp_desktop.core.data.released import META_FILE
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.release.publish import is_our_release

#: the libraries whose versions are recorded, in the order they are shown
LIBRARIES = ("numpy", "pandas", "pyarrow", "cryptography")
#: the key of the provenance block in ``release.json`` and in the key's payload
KEY = "provenance"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_SAME_SEED = "the same seed may not give the same release"


@dataclass(frozen=True)
class Provenance:
    """The versions a release was made with, its input file and its project file (when run from one)."""

    app: str
    python: str
    libraries: dict[str, str] = field(default_factory=dict)
    input: FileDigest | None = None
    project_sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"app": self.app, "python": self.python, "libraries": dict(self.libraries),
                "input": self.input.to_json() if self.input is not None else None,
                "project_sha256": self.project_sha256}

    @classmethod
    def from_json(cls, data: object, where: str = "release.json") -> "Provenance":
        """Read a provenance block; :class:`ReleaseError` naming the field if it is not well formed."""
        def bad(what: str) -> ReleaseError:
            return ReleaseError(f"{where}: the provenance block is malformed ({what}).")

        if not isinstance(data, dict):
            raise bad("not an object")
        for name in ("app", "python"):
            if not isinstance(data.get(name), str) or not data[name]:
                raise bad(f"{name!r} must be a version text")
        libraries = data.get("libraries")
        if not isinstance(libraries, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in libraries.items()):
            raise bad("'libraries' must map each library to its version text")
        missing = [name for name in LIBRARIES if name not in libraries]
        if missing:
            raise bad(f"no version of {missing[0]}")
        entry, digest = data.get("input"), None
        if entry is not None:
            if not isinstance(entry, dict):
                raise bad("'input' must be an object or null")
            name, size, sha = entry.get("name"), entry.get("size"), entry.get("sha256")
            if not isinstance(name, str) or not name or "/" in name or "\\" in name:
                raise bad("'input.name' must be a file name")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise bad("'input.size' must be a number of bytes")
            if not isinstance(sha, str) or not _HEX64.fullmatch(sha):
                raise bad("'input.sha256' must be 64 lower-case hexadecimal digits")
            digest = FileDigest(name, size, sha)
        project = data.get("project_sha256")
        if project is not None and (not isinstance(project, str) or not _HEX64.fullmatch(project)):
            raise bad("'project_sha256' must be 64 lower-case hexadecimal digits or null")
        return cls(data["app"], data["python"], dict(libraries), digest, project)

    def describe(self) -> str:
        """One line: the versions, and the input file when recorded."""
        versions = ", ".join([f"PPDP Desktop {self.app}", f"Python {self.python}",
                              *(f"{name} {self.libraries[name]}" for name in LIBRARIES if name in self.libraries)])
        made = f"made with {versions}"
        if self.input is not None:
            made += f"; input {self.input.name} ({self.input.size:,} bytes, SHA-256 {self.input.sha256})"
        if self.project_sha256 is not None:
            made += f"; project file SHA-256 {self.project_sha256}"
        return made


def _version(name: str) -> str:
    try:
        return distributions.version(name)
    except distributions.PackageNotFoundError:  # a frozen bundle may lack the distribution's metadata
        module = __import__(name)
        return str(getattr(module, "__version__", "unknown"))


def current_provenance(input_file: FileDigest | None = None, project_sha256: str | None = None) -> Provenance:
    """The running app's provenance, with the input file's and project file's digests when known."""
    return Provenance(__version__, platform.python_version(), {name: _version(name) for name in LIBRARIES},
                      input_file, project_sha256)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file (a project file)."""
    try:
        return sha256_of(path)[0]
    except OSError as exc:
        raise ReleaseError(f"{Path(path).name}: cannot be read to compute its SHA-256 ({exc.strerror or exc}).") from None


def differences(old: Provenance, new: Provenance, *, recorded: str = "this release",
                current: str = "you have") -> list[str]:
    """What differs from the recorded provenance ``old`` in ``new``, one sentence each (empty: nothing).

    ``recorded`` names what ``old`` belongs to ("the previous release", "the key's release") and ``current``
    introduces ``new``'s versions ("you have", "this run used"). Versions, then the input file, then the project.
    """
    lines = []
    versions = [("PPDP Desktop", old.app, new.app), ("Python", old.python, new.python)]
    versions += [(name, old.libraries.get(name), new.libraries.get(name)) for name in LIBRARIES]
    for name, before, now in versions:
        if before is not None and now is not None and before != now:
            lines.append(f"{recorded} was made with {name} {before}; {current} {now}: {_SAME_SEED}.")
    if old.input is not None and new.input is not None and old.input.sha256 != new.input.sha256:
        was, now = old.input, new.input
        renamed = f" (it was {was.name}, now {now.name})" if was.name != now.name else ""
        lines.append(f"the input file differs from the one {recorded} was made from{renamed}: {was.size:,} bytes, "
                     f"SHA-256 {was.sha256[:16]}…, now {now.size:,} bytes, SHA-256 {now.sha256[:16]}….")
    if old.project_sha256 and new.project_sha256 and old.project_sha256 != new.project_sha256:
        lines.append(f"the project file has changed since {recorded} was made.")
    return lines


def recorded(block: object, where: str) -> Provenance | None:
    """The provenance block of a release's metadata or a key's payload (None: none recorded, an older version)."""
    return None if block is None else Provenance.from_json(block, where)


def check_provenance(metadata: dict[str, Any]) -> str:
    """``ppdp verify``'s line: the block is present and well formed, or there is none (an older release)."""
    found = recorded(metadata.get(KEY), "release.json")
    if found is None:
        return "provenance: no provenance recorded (a release written by an older version)"
    return f"provenance: {found.describe()}"


def release_provenance(path: str | Path) -> Provenance | None:
    """The provenance recorded in the release folder or ``.zip`` at ``path`` (None without one, or when ``path``
    holds no readable ``release.json``: nothing to compare with). Only ``release.json`` is read."""
    source = Path(path)
    try:
        if source.is_dir():
            text = (source / META_FILE).read_text(encoding="utf-8")
        elif source.is_file() and zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                text = archive.read(META_FILE).decode("utf-8")
        else:
            return None
        meta = json.loads(text)
    except (OSError, KeyError, UnicodeDecodeError, ValueError, zipfile.BadZipFile):
        return None
    return recorded(meta.get(KEY), f"{source.name}/{META_FILE}") if isinstance(meta, dict) else None


@dataclass(frozen=True)
class PreviousRelease:
    """The provenance of the release at a destination, read before a run replaces it (``ppdp run``)."""

    path: Path
    provenance: Provenance | None
    problem: str | None = None  # why there is nothing to compare with, in a sentence (None: nothing to say)

    @classmethod
    def read(cls, path: str | Path) -> "PreviousRelease":
        source = Path(path)
        if not is_our_release(source):
            return cls(source, None)
        try:
            found = release_provenance(source)
        except ReleaseError as exc:
            return cls(source, None, f"the previous release's provenance cannot be read ({exc}); nothing compared.")
        if found is None:
            return cls(source, None, "the previous release records no provenance (written by an older version); "
                                     "nothing compared.")
        return cls(source, found)

    def compare(self, new: Provenance | str | Path | None) -> list[str]:
        """What differs in ``new`` (a provenance, or the release folder just written, whose own is read)."""
        if self.provenance is None:
            return [self.problem] if self.problem else []
        if not isinstance(new, Provenance):
            new = release_provenance(new) if new is not None else None
        return differences(self.provenance, new, recorded="the previous release") if new is not None else []
