"""Progress reporting and cancellation for long jobs, free of Qt.

A job receives a ``progress(fraction, message)`` callback and a :class:`CancelToken`; the GUI
adapts both to signals in its worker. ``subrange`` maps a sub-step onto part of the progress
range (Orange3's ``wrap_callback``).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from ppdp_desktop.core.errors import Cancelled


class Progress(Protocol):
    def __call__(self, fraction: float, message: str = "") -> None: ...


def no_progress(fraction: float, message: str = "") -> None:
    """A progress callback that ignores everything."""


class CancelToken:
    """A flag the GUI sets and the job checks between steps; it never kills a thread."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancellation was requested."""
        if self._event.is_set():
            raise Cancelled("The job was cancelled; nothing was written.")


def subrange(progress: Callable[..., None], start: float, end: float) -> Callable[..., None]:
    """Return a callback that maps ``[0, 1]`` onto ``[start, end]`` of ``progress``."""

    def wrapped(fraction: float, message: str = "") -> None:
        progress(start + (end - start) * min(max(fraction, 0.0), 1.0), message)

    return wrapped
