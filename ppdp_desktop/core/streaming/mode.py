"""When to stream: a file larger than about a third of the free memory is read in batches.

A table in memory takes several times its file's size (about 410 MB for the 51 MB 1M-row benchmark CSV with
its report), so a file above a third of the free memory is streamed (:mod:`ppdp_desktop.core.streaming`)
unless the user says otherwise. ``PPDP_AVAILABLE_MEMORY`` (bytes) stands in for the free memory (tests, and a
custodian who wants to leave room for other work).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ppdp_desktop.core.data.loading import FORMATS
from ppdp_desktop.core.data.streamed import STREAMED_FORMATS

MEMORY_VARIABLE = "PPDP_AVAILABLE_MEMORY"
SHARE = 3  # stream a file larger than 1/SHARE of the free memory


def available_memory() -> int | None:
    """Bytes of memory free for this job (None when the system does not say)."""
    given = os.environ.get(MEMORY_VARIABLE)
    if given:
        try:
            return int(given)
        except ValueError:
            return None
    if sys.platform.startswith("linux"):
        try:
            for line in Path("/proc/meminfo").read_text().splitlines():
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            return None
    if sys.platform == "win32":
        import ctypes

        class _Status(ctypes.Structure):
            _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong), ("total", ctypes.c_ulonglong),
                        ("available", ctypes.c_ulonglong), ("page_total", ctypes.c_ulonglong),
                        ("page_available", ctypes.c_ulonglong), ("virtual_total", ctypes.c_ulonglong),
                        ("virtual_available", ctypes.c_ulonglong), ("extended", ctypes.c_ulonglong)]

        status = _Status()
        status.length = ctypes.sizeof(_Status)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
            return int(status.available)
        return None
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


@dataclass(frozen=True)
class ModeChoice:
    """Whether to stream ``path`` and why, in a sentence for the user (empty when nothing was decided for them)."""

    streaming: bool
    reason: str = ""


def choose_mode(path: str | Path, asked: bool = False, refused: bool = False) -> ModeChoice:
    """Stream when ``asked``, never when ``refused``, else when the file is larger than a third of the free memory
    and of a format that can be read in batches."""
    if asked:
        return ModeChoice(True)
    source = Path(path)
    if refused or FORMATS.get(source.suffix.lower()) not in STREAMED_FORMATS or not source.is_file():
        return ModeChoice(False)
    free = available_memory()
    size = source.stat().st_size
    if free is None or size * SHARE <= free:
        return ModeChoice(False)
    return ModeChoice(True, f"{source.name} ({size / 2**20:,.0f} MB) is larger than a third of the free memory "
                            f"({free / 2**20:,.0f} MB), so it is streamed: read in batches, never held whole.")
