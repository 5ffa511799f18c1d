"""What a row of the release ledger holds (:class:`LedgerEntry` in, :class:`LedgerRelease` out), and the two facts
that settle a pending row: whether its release is in place (:func:`manifest_of`) and whether its writer still runs
(:func:`writer_alive`). The ledger itself: :mod:`.ledger`."""
from __future__ import annotations

import hashlib
import json
import os
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.data.checksums import CHECKSUMS_FILE
from ppdp_desktop.core.errors import ReleaseError

if TYPE_CHECKING:  # only named in annotations: the window's start (leftovers.sweep) then imports no numpy
    from ppdp_desktop.core.repeat.records import ReleaseRecords

__all__ = ["LedgerEntry", "LedgerRelease", "dumps", "manifest_of", "writer_alive"]


@dataclass
class LedgerEntry:
    """What the job knows of a release before it is published (the ledger adds the date, ordinal and folder)."""

    project_id: str
    method: str
    parameters: dict[str, Any]
    records: ReleaseRecords
    persistent: bool
    stable_pseudonyms: bool = False
    cumulative: dict[str, Any] = field(default_factory=dict)
    budget: float | None = None
    override_reason: str | None = None
    node: list[int] | None = None
    signer: str | None = None


@dataclass(frozen=True)
class LedgerRelease:
    """A published release as the ledger keeps it; its records are read when asked for (:meth:`records`)."""

    id: int
    created: str
    project_id: str
    method: str
    parameters: dict[str, Any]
    ordinal: int
    folder: str
    manifest: str
    signer: str | None
    persistent: bool
    stable_pseudonyms: bool
    cumulative: dict[str, Any]
    budget: float | None
    override_reason: str | None
    node: list[int] | None
    n_records: int = 0
    _load: Callable[[int], ReleaseRecords] | None = field(default=None, repr=False, compare=False)

    def records(self) -> ReleaseRecords:
        """The release's records (read from the ledger now)."""
        if self._load is None:
            raise ReleaseError(f"The records of release {self.id} of project {self.project_id!r} are not at hand.")
        return self._load(self.id)

    def to_json(self) -> dict[str, Any]:
        """Every field but the record arrays (``n_records`` instead)."""
        return {"id": self.id, "created": self.created, "project_id": self.project_id, "method": self.method,
                "parameters": self.parameters, "ordinal": self.ordinal, "folder": self.folder,
                "manifest": self.manifest, "signer": self.signer, "persistent": self.persistent,
                "stable_pseudonyms": self.stable_pseudonyms, "cumulative": self.cumulative, "budget": self.budget,
                "override_reason": self.override_reason, "node": self.node, "n_records": self.n_records}


def manifest_of(folder: str | Path) -> str | None:
    """The SHA-256 (hex) of the ``SHA256SUMS`` of a release folder or ``.zip``; None when there is none to read."""
    path = Path(folder)
    try:
        if path.is_dir():
            return hashlib.sha256((path / CHECKSUMS_FILE).read_bytes()).hexdigest()
        if path.is_file():
            with zipfile.ZipFile(path) as archive:
                return hashlib.sha256(archive.read(CHECKSUMS_FILE)).hexdigest()
    except (OSError, KeyError, zipfile.BadZipFile, ValueError):
        return None
    return None


def writer_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a process of another user counts as running)."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process there
        import ctypes

        kernel = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return ctypes.get_last_error() == 5  # access denied: it exists
        try:
            code = ctypes.c_ulong()
            return bool(kernel.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
        finally:
            kernel.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


def _json_value(value: Any) -> Any:
    """JSON's fallback for numpy numbers and arrays (and anything else with ``tolist``/``item``)."""
    for name in ("tolist", "item"):
        if hasattr(value, name):
            return getattr(value, name)()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} cannot be kept in the ledger")


def dumps(value: Any) -> str:
    """``value`` as the ledger's JSON text (numpy numbers as numbers, infinities as ``Infinity``)."""
    return json.dumps(value, default=_json_value, ensure_ascii=False, separators=(",", ":"))
