"""What a killed publication leaves beside its destinations, put back or removed.

Every temporary name of a job carries its process id (:func:`~.publish.temp_beside`): ``.NAME.PID.RANDOM.partial``
(the release, the key, the spill of a streamed job, the custodian's report being written) and ``.NAME.PID.old`` (an
old release or key moved aside while the new pair is renamed in). Nothing is touched while its process runs.

When the process is gone, :func:`settle` first **puts back** an old pair it had moved aside: the old release and its
key come back under their names, unless the new release reached its name (then the new pair is complete and the
backups are what it replaced). Only then are the temporary names removed (:func:`clean_stale`). A backup is never
removed while its final name is empty, so the last complete copy of a release is never deleted, even when a run is
killed in the middle of an ``--overwrite`` and the next one is killed too.

A job also writes its destinations to a small file of its own in the application-data folder
(``running/PID.json``) while it runs; :func:`sweep` settles those of processes that are gone, so that the next
start of the app (the command line or the window) removes what a killed job left, wherever it wrote.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from ppdp_desktop.core.repeat.appdata import data_dir, private_folder
from ppdp_desktop.core.repeat.ledger_rows import manifest_of, writer_alive

__all__ = ["RUNNING", "clean_stale", "registered", "settle", "stale_backups", "sweep"]

#: the application-data folder's folder of running jobs' destinations
RUNNING = "running"
_OURS = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.(?P<tag>[^.]+\.partial|old)$")
#: a temporary file a key is sealed into beside its own temporary name (``keyfile._write_atomic``)
_SEALING = re.compile(r"^\.(?P<inner>\..+\.\d+\.[^.]+\.partial)\.[^.]+\.tmp$")


def _ours(entry: str) -> re.Match[str] | None:
    sealing = _SEALING.match(entry)
    return _OURS.match(sealing["inner"] if sealing else entry)


def _stale(parent: Path, name: str, old: bool) -> list[Path]:
    """Our hidden names beside ``parent / name`` whose process is gone: backups (``old``) or temporary names."""
    if not parent.is_dir():
        return []
    found = []
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            match = _ours(entry.name)
            if match and match["name"] == name and (match["tag"] == "old") == old and not writer_alive(int(match["pid"])):
                found.append(entry)
    return sorted(found, key=_mtime, reverse=True)  # the most recent first


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def stale_backups(final: Path) -> list[Path]:
    """The backups (``.NAME.PID.old``) of ``final`` whose process is gone, the most recent first."""
    final = Path(final)
    return _stale(final.absolute().parent, final.name, old=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def settle(out: Path, key: Path | None = None) -> list[str]:
    """Put back the old release ``out`` and key ``key`` a killed publication had moved aside, then remove what it
    left (:func:`clean_stale`); return a sentence for each file put back.

    If ``out`` is in place, the new release reached it (it goes in last, after its key): the backups are what it
    replaced and are removed. Otherwise the most recent backup of each comes back; a key found in place without
    a backup of its own is the new key of a release that never reached its name, and is removed when it is
    bound to another release than the one put back.
    """
    out = Path(out)
    key = Path(key) if key is not None else None
    told: list[str] = []
    releases = stale_backups(out)
    keys = stale_backups(key) if key is not None else []
    if out.exists() or out.is_symlink():
        for backup in releases + keys:  # the new pair is complete: these are what it replaced
            _remove(backup)
    elif releases or keys:
        if releases:
            os.replace(releases[0], out)
            told.append(f"{out} was put back: a run killed while replacing it had moved it aside")
        if key is not None and keys:
            os.replace(keys[0], key)  # over the new key of a release that never reached its name
            told.append(f"{key} was put back with it")
        elif key is not None and releases and key.is_file() and _bound_elsewhere(key, out):
            key.unlink()
        for backup in releases[1:] + keys[1:]:  # older leftovers of earlier killed runs: the one put back is newer
            _remove(backup)
    clean_stale(out, key)
    return told


def _bound_elsewhere(key: Path, release: Path) -> bool:
    """Whether the key file ``key`` is sealed to another release than ``release`` (False when unsure)."""
    from ppdp_desktop.core.errors import KeyFileError
    from ppdp_desktop.core.release.keyfile import read_header

    manifest = manifest_of(release)
    try:
        return manifest is not None and read_header(key).manifest_sha256 != manifest
    except KeyFileError:
        return False


def clean_stale(*finals: Path | None) -> list[Path]:
    """Remove the hidden temporary names (``.partial``, and a key's sealing file) beside each final path whose
    process is gone. Backups (``.old``) are left to :func:`settle`, which puts them back first."""
    removed = []
    for final in (Path(f) for f in finals if f is not None):
        for entry in _stale(final.absolute().parent, final.name, old=False):
            _remove(entry)
            removed.append(entry)
    return removed


# --- the running jobs' destinations, settled at the next start ------------------------------------------------
def _running() -> Path:
    return data_dir() / RUNNING


def _text(path: Path | None) -> str | None:
    return None if path is None else str(Path(path).absolute())


@contextlib.contextmanager
def registered(out: Path, key: Path | None, *others: Path | None) -> Iterator[None]:
    """While the block runs, keep this process's destinations (the release ``out``, its ``key``, ``others`` such
    as the custodian's report) in the application-data folder, so that the next start settles them if the process
    is killed (:func:`sweep`)."""
    doc = {"pid": os.getpid(), "release": _text(out), "key": _text(key),
           "others": [_text(p) for p in others if p is not None]}
    entry = None
    try:
        folder = private_folder(_running())
        entry = folder / f"{os.getpid()}.{os.urandom(4).hex()}.json"
        entry.write_text(json.dumps(doc), encoding="utf-8")
    except OSError:
        entry = None  # an application-data folder that cannot be written: the next run into the place settles it
    try:
        yield
    finally:
        if entry is not None:
            entry.unlink(missing_ok=True)


def sweep() -> list[str]:
    """Settle the destinations of jobs whose process is gone (:func:`settle`); return what was put back. Called
    when the app starts; never raises (a leftover that cannot be removed now is tried again next time)."""
    told: list[str] = []
    folder = _running()
    try:
        entries = sorted(folder.glob("*.json"))
    except OSError:
        return told
    for entry in entries:
        try:
            pid = int(entry.name.split(".", 1)[0])
            if writer_alive(pid):
                continue
            doc = json.loads(entry.read_text(encoding="utf-8"))
            release, key, others = doc["release"], doc["key"], doc["others"]
            if isinstance(release, str):
                told += settle(Path(release), Path(key) if isinstance(key, str) else None)
            clean_stale(*(Path(p) for p in others if isinstance(p, str)))
            entry.unlink(missing_ok=True)
        except (OSError, ValueError, KeyError, AttributeError, TypeError, RecursionError):
            with contextlib.suppress(OSError):
                entry.unlink(missing_ok=True)
    return told
