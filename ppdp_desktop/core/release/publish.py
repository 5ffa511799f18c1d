"""Putting a finished release and its key in place: safely, and as a pair.

Destinations are checked before any work (:func:`check_destination`): ``--overwrite`` replaces only a
release folder or ``.zip`` of ours (recognised by its ``release.json`` and ``SHA256SUMS``), an empty
folder, and a release's key file of ours (recognised by its magic bytes and header: never a signing key or a
custodian secret, :mod:`.keykinds`); a destination that is, contains or lies inside an input file, or a file another
setting of the job names (the signing key), is refused by name, whatever the flags. Before that, what a killed run
left beside the destinations is put back or removed (:func:`~.leftovers.settle`).

Publication (:func:`publish`) keeps one invariant at every instant: **a release visible under its final
name has its own key under the key's final name.** Both are written completely under hidden temporary
names beside their destinations and flushed to disk first; then, in this order:

1. an old release at the destination is renamed to a hidden backup (the old release disappears first);
2. an old key is renamed to a hidden backup, and the new key renamed into place;
3. the new release is renamed into place (it appears last);
4. the backups are removed.

A failure in 1–3 renames the backups back, so the old pair returns whole. Temporary and backup names
carry the writing process's id (``.NAME.PID.RANDOM.partial`` / ``.NAME.PID.old``); when that process is gone
(killed), the next run into the same place, or the next start of the app, puts an old pair it had moved aside back
before anything else and removes the rest (:mod:`.leftovers`).
"""
from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ppdp_desktop.core.data.checksums import CHECKSUMS_FILE
from ppdp_desktop.core.data.released import META_FILE
from ppdp_desktop.core.errors import ReleaseError, setting_ref
from ppdp_desktop.core.release.keykinds import RELEASE_KEY, describe, kind_of, looks_sealed
from ppdp_desktop.core.release.leftovers import clean_stale, settle

__all__ = ["Hook", "check_destination", "clean_stale", "flush", "is_our_key", "is_our_release", "publish",
           "published", "release_target", "temp_beside"]

#: called with the name of each step of :func:`publish` (tests inject delays and checks here)
Hook = Callable[[str], None]
#: every release (and key) this process has put in place, in order: an error after that must not say "nothing was
#: published" (the command line reads it: :func:`published`)
_PUBLISHED: list[tuple[Path, Path | None]] = []


def published() -> list[tuple[Path, Path | None]]:
    """The releases (with their keys) this process has put in place so far, in order."""
    return list(_PUBLISHED)


def is_our_release(path: Path) -> bool:
    """A release folder (or ``.zip``) written by this app: it holds ``release.json`` and ``SHA256SUMS``."""
    if path.is_dir():
        return (path / META_FILE).is_file() and (path / CHECKSUMS_FILE).is_file()
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
        except (zipfile.BadZipFile, OSError):
            return False
        return {META_FILE, CHECKSUMS_FILE} <= names
    return False


def is_our_key(path: Path) -> bool:
    """A sealed file of this app of any kind (a release's key, a signing key, a custodian secret; damaged or not)."""
    return looks_sealed(path)


def _overlaps(target: Path, source: Path) -> bool:
    """Whether writing ``target`` (a file or a folder) could replace or delete ``source``."""
    target, source = target.resolve(), source.resolve()
    return target == source or target in source.parents


def release_target(out: str | Path, zip_file: bool) -> Path:
    """Where a release goes: the folder ``out``, or ``out.zip`` for a zipped one."""
    out = Path(out)
    return out.with_name(out.name + ".zip") if zip_file and out.suffix.lower() != ".zip" else out


def check_destination(out: Path, key_path: str | Path | None, overwrite: bool,
                      inputs: Iterable[str | Path | None] = (),
                      others: Mapping[str, str | Path | None] | None = None) -> None:
    """Refuse, before any work: an existing release or key without ``overwrite``; with it, anything that is
    not a release or a release's key of ours; a key inside the release; a destination that is or holds an input,
    or a file another setting names (``others``: setting -> path, e.g. ``{"sign": "custodian.ppdpsign"}``).

    What a killed run left beside the destinations is settled first (:func:`~.leftovers.settle`): an old release
    and key it had moved aside are back under their names before they are checked."""
    out = Path(out)
    key = Path(key_path) if key_path is not None else None
    settle(out, key)
    for setting, other in (others or {}).items():
        if not other:
            continue
        if _overlaps(out, Path(other)) or (key is not None and _overlaps(key, Path(other))):
            flag = "out" if _overlaps(out, Path(other)) else "key"
            raise ReleaseError(f"The {'release' if flag == 'out' else 'key file'} {out if flag == 'out' else key} "
                               f"would replace {other}, the file given to {setting_ref(setting)}; a file another "
                               f"setting names is never written over. Choose another {setting_ref(flag)}.",
                               setting=flag, value=str(out if flag == "out" else key), file=str(other))
    for source in (Path(i) for i in inputs if i):
        if _overlaps(out, source):
            raise ReleaseError(f"The release {out} would replace or delete the input file {source}; choose a release "
                               f"folder ({setting_ref('out')}) that does not hold the input.", setting="out",
                               value=str(out), file=str(source))
        if key is not None and _overlaps(key, source):
            raise ReleaseError(f"The key file {key} would replace the input file {source}; choose another key file "
                               f"({setting_ref('key')}).", setting="key", value=str(key), file=str(source))
    if out.exists() or out.is_symlink():
        if not overwrite:
            raise ReleaseError(f"{out} already exists; choose another release folder ({setting_ref('out')}) or allow "
                               f"replacing it ({setting_ref('overwrite')}).", setting="out", value=str(out))
        empty = out.is_dir() and not out.is_symlink() and not any(out.iterdir())
        if out.is_symlink() or not (is_our_release(out) or empty):
            raise ReleaseError(f"{out} exists and is not a release written by PPDP Desktop; {setting_ref('overwrite')} "
                               f"replaces only those. Choose another release folder ({setting_ref('out')}).",
                               setting="out", value=str(out))
    if not out.resolve().parent.is_dir():
        raise ReleaseError(f"The folder {out.resolve().parent} does not exist; create it first or choose another "
                           f"release folder ({setting_ref('out')}).", setting="out", value=str(out))
    if key is None:
        return
    if _overlaps(out, key):
        raise ReleaseError(
            f"The key file {key_path} would be inside the release folder {out}; the key must be kept apart "
            f"from the release: choose a key file ({setting_ref('key')}) outside it.", setting="key", value=str(key_path)
        )
    if key.exists() or key.is_symlink():
        if not overwrite:
            raise ReleaseError(f"The key file {key_path} already exists; choose another key file ({setting_ref('key')}) "
                               f"or allow replacing it ({setting_ref('overwrite')}).", setting="key", value=str(key_path))
        if key.is_symlink() or not key.is_file() or not looks_sealed(key):
            raise ReleaseError(f"{key_path} exists and is not a key file written by PPDP Desktop; "
                               f"{setting_ref('overwrite')} replaces only those. Choose another key file "
                               f"({setting_ref('key')}).", setting="key", value=str(key_path))
        kind = kind_of(key)
        if kind != RELEASE_KEY:
            raise ReleaseError(f"{key_path} is {describe(kind)}, not a release's key file; {setting_ref('overwrite')} "
                               f"replaces a key file only with one of the same kind. Choose another key file "
                               f"({setting_ref('key')}).", setting="key", value=str(key_path))
    if not key.resolve().parent.is_dir():
        raise ReleaseError(f"The folder {key.resolve().parent} for the key file does not exist; create it first.")


def temp_beside(final: Path, kind: str = "partial") -> Path:
    """A hidden name beside ``final`` that :mod:`.leftovers` recognises (``kind``: partial or old)."""
    tag = os.urandom(4).hex() + ".partial" if kind == "partial" else "old"
    return final.with_name(f".{final.name}.{os.getpid()}.{tag}")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def flush(path: Path) -> None:
    """fsync a file, or every file of a folder and the folder itself (so a crash cannot leave a renamed
    but empty release)."""
    paths = sorted(path.rglob("*")) + [path] if path.is_dir() else [path]
    for item in paths:
        try:
            fd = os.open(item, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass  # some file systems cannot fsync a folder
        finally:
            os.close(fd)


def publish(new_release: Path, out: Path, new_key: Path | None, key: Path | None, hook: Hook | None = None) -> None:
    """Rename the written release (and key) into place in the order of the module docstring."""
    step = hook or (lambda _name: None)
    flush(new_release)
    if new_key is not None:
        flush(new_key)
    old_release = temp_beside(out, "old") if out.exists() else None
    old_key = temp_beside(key, "old") if key is not None and key.exists() else None
    moved: list[tuple[Path, Path]] = []
    try:
        step("start")
        if old_release is not None:
            os.replace(out, old_release)
            moved.append((old_release, out))
            step("old release moved aside")
        if new_key is not None and key is not None:
            if old_key is not None:
                os.replace(key, old_key)
                moved.append((old_key, key))
                step("old key moved aside")
            os.replace(new_key, key)
            step("new key in place")
        os.replace(new_release, out)
        _PUBLISHED.append((out, key if new_key is not None else None))
        step("new release in place")
    except BaseException:
        if new_release.exists():  # the new release never went in: bring the old pair back whole
            if new_key is not None and key is not None and not new_key.exists():
                _remove(key)  # the new key went in without its release
            for backup, final in reversed(moved):
                if backup.exists():
                    os.replace(backup, final)
        else:
            for backup, _final in moved:
                _remove(backup)
        raise
    for backup, _final in moved:
        _remove(backup)
    step("done")
