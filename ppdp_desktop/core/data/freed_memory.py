"""Handing freed memory back to the operating system between a job's phases (issue 34's memory).

glibc's ``malloc`` keeps the pages of freed blocks: the heap keeps what a phase's temporaries used, and the size above
which a block gets its own mapping (returned when freed) rises with every large block freed, up to 32 MB. A phase's
freed temporaries therefore stay in the process's RSS and the next phase's peak adds to them (15-25 MB a phase of the
1M-record in-memory job). :func:`return_freed` gives them back (``malloc_trim(0)``) at a phase's end: a few
milliseconds, a few times a job. Where the C library has no ``malloc_trim`` (Windows, macOS, musl) it does nothing
(those allocators return large blocks themselves). Arrow's pool is :mod:`.memory_pool`'s (jemalloc with decay 0:
its freed buffers go back at once); this module is for what numpy, pandas and Python free through ``malloc``.
"""
from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from functools import cache

__all__ = ["can_return_freed", "return_freed"]


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the process's C library has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def can_return_freed() -> bool:
    """Whether :func:`return_freed` can hand freed memory back (the C library is glibc)."""
    return _malloc_trim() is not None


def return_freed() -> bool:
    """Give the memory freed so far back to the operating system (see the module docstring); whether the C library's
    heap could be asked (glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
