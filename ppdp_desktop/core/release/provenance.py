"""What a release was made with: the app, Python and the libraries that shape its random draws, the input file,
the project file.

The release's draws are keyed ChaCha20/AES streams (``cryptography``) shaped into values by numpy; pandas and
pyarrow read, type and write the records. A fixed seed gives the same release only with the same versions of
these, so ``release.json`` and the sealed key record them (``provenance``).

The input file is the other half: did it change since the last release? Its SHA-256 and size must not be public
(they let anyone who knows every cell but one test guesses of that cell: :mod:`.installation`), so

* the sealed key holds them (the input's name, size and SHA-256, the project file's SHA-256): only the custodian,
  with the passphrase, reads them;
* ``release.json`` holds the input's *name* and ``keyed``: HMAC-SHA256 of the input's (SHA-256, size) and of the
  project file's SHA-256 under this installation's secret, with a fresh nonce, and the installation's public id.

:mod:`.provenance_compare` says, in words, what differs between a recorded provenance and another: ``ppdp run``
compares the release it replaces (on this computer through the keyed digests), the key-opening paths compare the
key's versions with the running app's. Releases of earlier versions published the plain digest:
they still verify, and :func:`oracle_warning` says what that field gives away. A release written before provenance
was recorded has none; it still verifies.
"""
from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field, replace
from importlib import metadata as distributions
from pathlib import Path
from typing import Any, TypeGuard

from ppdp_desktop import __version__
from ppdp_desktop.core.data.digest import FileDigest, sha256_of
from ppdp_desktop.core.errors import PPDPError, ReleaseError
from ppdp_desktop.core.release import installation

#: the libraries whose versions are recorded, in the order they are shown
LIBRARIES = ("numpy", "pandas", "pyarrow", "cryptography")
#: the key of the provenance block in ``release.json`` and in the key's payload
KEY = "provenance"
_HEX = {16: re.compile(r"[0-9a-f]{16}"), 32: re.compile(r"[0-9a-f]{32}"), 64: re.compile(r"[0-9a-f]{64}")}


def _hex(value: object, digits: int) -> TypeGuard[str]:
    return isinstance(value, str) and _HEX[digits].fullmatch(value) is not None


@dataclass(frozen=True)
class Keyed:
    """The keyed digests of ``release.json`` (:mod:`.installation`): which installation made them, the release's
    nonce, and the MACs of the input file and of the project file (None: not recorded)."""

    installation: str
    nonce: str
    input: str | None = None
    project: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"algorithm": installation.ALGORITHM, "installation": self.installation, "nonce": self.nonce,
                "input": self.input, "project": self.project}

    @classmethod
    def from_json(cls, data: object, bad) -> Keyed:
        if not isinstance(data, dict) or data.get("algorithm") != installation.ALGORITHM:
            raise bad(f"'keyed' must be an object with \"algorithm\": \"{installation.ALGORITHM}\"")
        if not _hex(data.get("installation"), 16) or not _hex(data.get("nonce"), 32):
            raise bad("'keyed' needs an installation of 16 and a nonce of 32 lower-case hexadecimal digits")
        for name in ("input", "project"):
            if data.get(name) is not None and not _hex(data[name], 64):
                raise bad(f"'keyed.{name}' must be 64 lower-case hexadecimal digits or null")
        return cls(data["installation"], data["nonce"], data.get("input"), data.get("project"))

    def matches(self, label: str, sha256: str, size: int | None = None) -> bool | None:
        """Whether the file of this ``sha256`` (and ``size``) is the one keyed as ``label``; None when this
        computer cannot tell (the release was made on another one: its secret is not this computer's)."""
        secret = installation.installation_secret(create=False)
        if secret is None or installation.installation_id(secret) != self.installation:
            return None
        recorded = self.input if label == "input" else self.project
        return recorded == installation.keyed_digest(secret, label, self.nonce, sha256, size)


@dataclass(frozen=True)
class Provenance:
    """The versions a release was made with, its input file and its project file (when run from one).

    ``input`` and ``project_sha256`` are the plain digests: the key's payload holds them (and releases of earlier
    versions published them); ``release.json`` now holds the input's name (``input_name``) and ``keyed``."""

    app: str
    python: str
    libraries: dict[str, str] = field(default_factory=dict)
    input: FileDigest | None = None
    project_sha256: str | None = None
    input_name: str | None = None
    keyed: Keyed | None = None

    @property
    def name(self) -> str | None:
        """The input file's name (no folder), however recorded."""
        return self.input.name if self.input is not None else self.input_name

    @property
    def publishes_digest(self) -> bool:
        """Whether this block holds a plain digest (in a ``release.json``: an oracle for the input)."""
        return self.input is not None or self.project_sha256 is not None

    def public_json(self) -> dict[str, Any]:
        """The block of ``release.json``: versions, the input's name and the keyed digests, no plain digest."""
        return {"app": self.app, "python": self.python, "libraries": dict(self.libraries),
                "input": {"name": self.name} if self.name is not None else None,
                "keyed": self.keyed.to_json() if self.keyed is not None else None}

    def to_json(self) -> dict[str, Any]:
        """The block of the sealed key: the public one with the plain digests."""
        block = self.public_json()
        block["input"] = self.input.to_json() if self.input is not None else block["input"]
        block["project_sha256"] = self.project_sha256
        return block

    def sealed(self) -> Provenance:
        """This provenance with the keyed digests of its input and project file under this installation's secret
        (made on first use) and a fresh nonce; unchanged when it records neither."""
        if self.input is None and self.project_sha256 is None:
            return self
        secret = installation.installation_secret()
        nonce = installation.new_nonce()
        mac_input = (installation.keyed_digest(secret, "input", nonce, self.input.sha256, self.input.size)
                     if self.input is not None else None)
        mac_project = (installation.keyed_digest(secret, "project", nonce, self.project_sha256)
                       if self.project_sha256 is not None else None)
        keyed = Keyed(installation.installation_id(secret), nonce, mac_input, mac_project)
        return replace(self, input_name=self.name, keyed=keyed)

    @classmethod
    def from_json(cls, data: object, where: str = "release.json") -> Provenance:
        """Read a provenance block (of ``release.json``, this version's or an earlier one's, or of a key);
        :class:`ReleaseError` naming the field if it is not well formed."""
        def bad(what: str) -> ReleaseError:
            return ReleaseError(f"{where}: the provenance block is malformed ({what}).")

        if not isinstance(data, dict):
            raise bad("not an object")
        for key in ("app", "python"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise bad(f"{key!r} must be a version text")
        libraries = data.get("libraries")
        if not isinstance(libraries, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in libraries.items()):
            raise bad("'libraries' must map each library to its version text")
        missing = [name for name in LIBRARIES if name not in libraries]
        if missing:
            raise bad(f"no version of {missing[0]}")
        entry = data.get("input")
        digest: FileDigest | None = None
        name: str | None = None
        if entry is not None:
            if not isinstance(entry, dict):
                raise bad("'input' must be an object or null")
            entry_name = entry.get("name")
            if not isinstance(entry_name, str) or not entry_name or "/" in entry_name or "\\" in entry_name:
                raise bad("'input.name' must be a file name")
            name = entry_name
            if "size" in entry or "sha256" in entry:  # the plain digest: a key's, or an earlier release's
                size, sha = entry.get("size"), entry.get("sha256")
                if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                    raise bad("'input.size' must be a number of bytes")
                if not _hex(sha, 64):
                    raise bad("'input.sha256' must be 64 lower-case hexadecimal digits")
                digest = FileDigest(name, size, sha)
        project = data.get("project_sha256")
        if project is not None and not _hex(project, 64):
            raise bad("'project_sha256' must be 64 lower-case hexadecimal digits or null")
        keyed = Keyed.from_json(data["keyed"], bad) if data.get("keyed") is not None else None
        return cls(data["app"], data["python"], dict(libraries), digest, project, name, keyed)

    def describe(self) -> str:
        """One line: the versions, and the input file's name and how its digest is kept (never the digest)."""
        versions = ", ".join([f"PPDP Desktop {self.app}", f"Python {self.python}",
                              *(f"{name} {self.libraries[name]}" for name in LIBRARIES if name in self.libraries)])
        made = f"made with {versions}"
        if self.name is not None:
            made += f"; input {self.name}"
        if self.keyed is not None:
            files = [what for what, mac in (("the input file's", self.keyed.input),
                                            ("the project file's", self.keyed.project)) if mac is not None]
            made += (f"; {' and '.join(files) or 'no'} digest{'s' if len(files) > 1 else ''} published only keyed "
                     f"(HMAC-SHA256) with the secret of installation {self.keyed.installation}, which never leaves "
                     "that computer")
        return made


def _version(name: str) -> str:
    try:
        return distributions.version(name)
    except distributions.PackageNotFoundError:  # a frozen bundle may lack the distribution's metadata
        module = __import__(name)
        return str(getattr(module, "__version__", "unknown"))


def current_provenance(input_file: FileDigest | None = None, project_sha256: str | None = None) -> Provenance:
    """The running app's provenance, with the input file's and project file's plain digests when known (sealed
    into the key; ``release.json`` gets :meth:`Provenance.public_json` of :meth:`Provenance.sealed`)."""
    return Provenance(__version__, platform.python_version(), {name: _version(name) for name in LIBRARIES},
                      input_file, project_sha256)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file (a project file)."""
    try:
        digest = sha256_of(path)
    except OSError as exc:
        raise ReleaseError(f"{Path(path).name}: cannot be read to compute its SHA-256 ({exc.strerror or exc}).") from None
    assert digest is not None  # no stop event was given: sha256_of reads the whole file
    return digest[0]


def recorded(block: object, where: str) -> Provenance | None:
    """The provenance block of a release's metadata or a key's payload (None: none recorded, an older version)."""
    return None if block is None else Provenance.from_json(block, where)


def oracle_warning(metadata: dict[str, Any]) -> str | None:
    """What the plain digest published by a release of an earlier version gives away (None: it publishes none)."""
    try:
        found = recorded(metadata.get(KEY), "release.json")
    except PPDPError:
        return None
    if found is None or not found.publishes_digest:
        return None
    if found.input is not None:
        published = "its input file's SHA-256 and size" + (
            " (and its project file's SHA-256)" if found.project_sha256 else "")
        attack = ("anyone who knows every cell of the input but one can rebuild the file for each guess of that cell "
                  "and test the guess against them")
    else:
        published = "its project file's SHA-256"
        attack = "anyone who knows the project file but one setting can test guesses of that setting against it"
    return (f"this release publishes {published}: {attack} (it was written by an earlier version; PPDP Desktop "
            f"{__version__} keeps them in the sealed key and publishes only keyed digests)")


def check_provenance(metadata: dict[str, Any]) -> str:
    """``ppdp verify``'s line: the block is present and well formed, or there is none (an older release); a
    block that publishes a plain digest (an earlier version) still verifies, with the warning that it is one."""
    found = recorded(metadata.get(KEY), "release.json")
    if found is None:
        return "provenance: no provenance recorded (a release written by an older version)"
    warning = oracle_warning(metadata)
    return f"provenance: {found.describe()}" + (f"; WARNING: {warning}" if warning else "")
