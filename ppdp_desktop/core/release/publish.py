"""Putting a finished release and its key in place: safely, and as a pair.

Destinations are checked before any work (:func:`check_destination`): ``--overwrite`` replaces only a
release folder or ``.zip`` of ours (recognised by its ``release.json`` and ``SHA256SUMS``), an empty
folder, and a key file of ours (recognised by its magic bytes); a destination that is, contains or lies inside an input
file is refused by name, whatever the flags.

Publication (:func:`publish`) keeps one invariant at every instant: **a release visible under its final
name has its own key under the key's final name.** Both are written completely under hidden temporary
names beside their destinations and flushed to disk first; then, in this order:

1. an old release at the destination is renamed to a hidden backup (the old release disappears first);
2. an old key is renamed to a hidden backup, and the new key renamed into place;
3. the new release is renamed into place (it appears last);
4. the backups are removed.

A failure in 1–3 renames the backups back, so the old pair returns whole. Temporary and backup names
carry the writing process's id (``.NAME.PID.RANDOM.partial`` / ``.NAME.PID.old``); :func:`clean_stale`
removes those of processes that no longer run (a killed run), so nothing is left behind for long.
"""
from __future__ import annotations

import os
import re
import shutil
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from ppdp_desktop.core.data.checksums import CHECKSUMS_FILE
from ppdp_desktop.core.data.released import META_FILE
from ppdp_desktop.core.errors import ReleaseError, setting_ref
from ppdp_desktop.core.release.keyfile import MAGIC

#: called with the name of each step of :func:`publish` (tests inject delays and checks here)
Hook = Callable[[str], None]
_OURS = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.(?:[^.]+\.partial|old)$")


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
    """A sealed key file of this app (it starts with the key file's magic bytes)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def _overlaps(target: Path, source: Path) -> bool:
    """Whether writing ``target`` (a file or a folder) could replace or delete ``source``."""
    target, source = target.resolve(), source.resolve()
    return target == source or target in source.parents


def release_target(out: str | Path, zip_file: bool) -> Path:
    """Where a release goes: the folder ``out``, or ``out.zip`` for a zipped one."""
    out = Path(out)
    return out.with_name(out.name + ".zip") if zip_file and out.suffix.lower() != ".zip" else out


def check_destination(out: Path, key_path: str | Path | None, overwrite: bool,
                      inputs: Iterable[str | Path | None] = ()) -> None:
    """Refuse, before any work: an existing release or key without ``overwrite``; with it, anything that is
    not a release or key of ours; a key inside the release; a destination that is or holds an input."""
    out = Path(out)
    key = Path(key_path) if key_path is not None else None
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
        if key.is_symlink() or not key.is_file() or not is_our_key(key):
            raise ReleaseError(f"{key_path} exists and is not a key file written by PPDP Desktop; "
                               f"{setting_ref('overwrite')} replaces only those. Choose another key file "
                               f"({setting_ref('key')}).", setting="key", value=str(key_path))
    if not key.resolve().parent.is_dir():
        raise ReleaseError(f"The folder {key.resolve().parent} for the key file does not exist; create it first.")


def temp_beside(final: Path, kind: str = "partial") -> Path:
    """A hidden name beside ``final`` that :func:`clean_stale` recognises (``kind``: partial or old)."""
    tag = os.urandom(4).hex() + ".partial" if kind == "partial" else "old"
    return final.with_name(f".{final.name}.{os.getpid()}.{tag}")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process: leave its files alone
    return True


def clean_stale(*finals: Path | None) -> list[Path]:
    """Remove the hidden temporary and backup files of ours beside each final path whose process is gone."""
    removed = []
    for final in (Path(f) for f in finals if f is not None):
        parent = final.resolve().parent
        if not parent.is_dir():
            continue
        for entry in parent.iterdir():
            match = _OURS.match(entry.name)
            if not match or match["name"] != final.name or _alive(int(match["pid"])):
                continue
            _remove(entry)
            removed.append(entry)
    return removed


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
