"""Comparing a recorded provenance (:mod:`.provenance`) with this run's or this app's, in words.

``ppdp run`` reads the provenance of the release it replaces before replacing it (:class:`PreviousRelease`) and
says what differs: versions (the same seed may not give the same release), the input file, the project file. The
files are compared through the plain digests this run computed: with the previous release's keyed digests under
this computer's secret (:mod:`.installation`), or its plain ones (a release of an earlier version); a release made
on another computer gets "cannot tell". The key-opening paths compare the key's versions with the running app's.
"""
from __future__ import annotations

import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

from ppdp_desktop.core.data.bounded_json import parse_json, read_json
from ppdp_desktop.core.data.digest import digest_file
from ppdp_desktop.core.data.released import MAX_META_BYTES, META_FILE
from ppdp_desktop.core.errors import PPDPError, ReleaseError
from ppdp_desktop.core.release.provenance import KEY, LIBRARIES, Provenance
from ppdp_desktop.core.release.provenance import recorded as recorded_block
from ppdp_desktop.core.release.publish import is_our_release

_SAME_SEED = "the same seed may not give the same release"


def _keyed_match(old: Provenance, label: str, sha256: str, size: int | None = None) -> bool | None:
    """Whether ``old``'s keyed digest of the file ``label`` is that of ``sha256`` (None: cannot tell, or no keyed
    digests recorded)."""
    return old.keyed.matches(label, sha256, size) if old.keyed is not None else None


def _file_lines(old: Provenance, new: Provenance, recorded: str) -> list[str]:
    """Whether the input file and the project file of ``new`` (plain digests) are those ``old`` recorded."""
    changed, unknown = [], []
    if new.input is not None and (old.input is not None or (old.keyed and old.keyed.input)):
        same = (old.input.sha256 == new.input.sha256 if old.input is not None
                else _keyed_match(old, "input", new.input.sha256, new.input.size))
        renamed = f" (it was {old.name}, now {new.name})" if old.name and old.name != new.name else ""
        if same is None:
            unknown.append("the input file")
        elif not same:
            changed.append(f"the input file differs from the one {recorded} was made from{renamed}.")
    if new.project_sha256 is not None and (old.project_sha256 or (old.keyed and old.keyed.project)):
        same = (old.project_sha256 == new.project_sha256 if old.project_sha256
                else _keyed_match(old, "project", new.project_sha256))
        if same is None:
            unknown.append("the project file")
        elif not same:
            changed.append(f"the project file has changed since {recorded} was made.")
    if unknown:
        changed.insert(0, f"cannot tell whether {' or '.join(unknown)} changed since {recorded} was made: it was made "
                          "on another computer (its digests are keyed with that computer's secret, which never "
                          "leaves it).")
    return changed


def differences(old: Provenance, new: Provenance, *, recorded: str = "this release",
                current: str = "you have") -> list[str]:
    """What differs from the recorded provenance ``old`` in ``new``, one sentence each (empty: nothing).

    ``recorded`` names what ``old`` belongs to ("the previous release", "the key's release") and ``current``
    introduces ``new``'s versions ("you have", "this run used"). Versions, then the input file, then the project;
    the files are compared when ``new`` holds their plain digests, with ``old``'s plain digests (a key, an earlier
    release) or its keyed ones (this computer's secret: "cannot tell" for a release made on another computer).
    """
    lines = []
    versions: list[tuple[str, str | None, str | None]] = [("PPDP Desktop", old.app, new.app),
                                                          ("Python", old.python, new.python)]
    versions += [(name, old.libraries.get(name), new.libraries.get(name)) for name in LIBRARIES]
    for name, before, now in versions:
        if before is not None and now is not None and before != now:
            lines.append(f"{recorded} was made with {name} {before}; {current} {now}: {_SAME_SEED}.")
    return lines + _file_lines(old, new, recorded)


def release_provenance(path: str | Path) -> Provenance | None:
    """The provenance recorded in the release folder or ``.zip`` at ``path`` (None without one, or when ``path``
    holds no readable ``release.json``: nothing to compare with). Only ``release.json`` is read."""
    source = Path(path)
    try:
        if source.is_dir():
            meta = read_json(source / META_FILE, error=ReleaseError, max_bytes=MAX_META_BYTES)
        elif source.is_file() and zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                if archive.getinfo(META_FILE).file_size > MAX_META_BYTES:
                    return None
                meta = parse_json(archive.read(META_FILE), META_FILE, error=ReleaseError, max_bytes=MAX_META_BYTES)
        else:
            return None
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, ReleaseError):
        return None
    return recorded_block(meta.get(KEY), f"{source.name}/{META_FILE}") if isinstance(meta, dict) else None


@dataclass(frozen=True)
class PreviousRelease:
    """The provenance of the release at a destination, read before a run replaces it (``ppdp run``)."""

    path: Path
    provenance: Provenance | None
    problem: str | None = None  # why there is nothing to compare with, in a sentence (None: nothing to say)

    @classmethod
    def read(cls, path: str | Path) -> PreviousRelease:
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

    def compare(self, new: Provenance | str | Path | None, input_path: str | Path | None = None) -> list[str]:
        """What differs in ``new``: the run's provenance with its plain digests (a release folder just written:
        its versions only, since its ``release.json`` holds none). ``input_path``: the input file, hashed here
        only if ``new`` lacks its digest and the previous release records one to compare with."""
        if self.provenance is None:
            return [self.problem] if self.problem else []
        if not isinstance(new, Provenance):
            new = release_provenance(new) if new is not None else None
        if new is None:
            return []
        old = self.provenance
        try:
            recorded_input = old.input is not None or (old.keyed is not None and old.keyed.input is not None)
            if new.input is None and input_path is not None and recorded_input:
                new = replace(new, input=digest_file(input_path))
            return differences(old, new, recorded="the previous release")
        except PPDPError as exc:  # the input unreadable now, this computer's secret damaged: said, not raised
            return [f"the input file was not compared with the previous release's: {exc}"]
