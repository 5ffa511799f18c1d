"""Python's cyclic garbage collector kept from pausing the window (issue 34: no stall over 100 ms).

A full collection walks every object the collector tracks while it holds the interpreter lock: with Qt,
pandas, pyarrow, scipy and the report's libraries imported, 100-600 ms in which the window cannot paint, whichever thread
set it off (seen in the window's constructor, between two runs, after an export). Nearly all of those objects
live as long as the program (modules, classes, functions), so they are moved to the collector's permanent
generation (``gc.freeze``) as soon as they exist: after the start-up imports (:func:`freeze_survivors` in the
window's constructor), after each background import (the later pages, the figures' renderer) and whenever a job starts
(the window and the data in use then). Automatic collections walk only what was made since.

Frozen objects are still freed by their reference counts; only cycles among them that die later (a finished
run's figures: about 2 MB a run) wait for :class:`IdleCollector`'s one full collection, made once no job has
run for :data:`IDLE_COLLECT_MS`, after which everything still alive is frozen again.
"""
from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject, QTimer

#: how long after the last job the frozen objects' dead cycles are collected (ms): a full collection is one
#: pause of 0.1-0.6 s, so it waits until the window has been left alone for a while
IDLE_COLLECT_MS = 60_000


def freeze_survivors() -> None:
    """Move every object alive now to the permanent generation (skipped by every collection from now on).

    For a moment when what was just made lives on (imports, the window): an O(1) call, safe on any thread."""
    gc.freeze()


def collect_frozen() -> int:
    """One full collection over every object, frozen ones included, then freeze what survived; the number of
    unreachable objects found. Holds the interpreter for the whole collection: only when nothing is waiting."""
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    return found


class IdleCollector(QObject):
    """Freezes the objects alive when a job starts; collects the frozen ones once no job has run for a while.

    One for the whole program (:func:`shared`): every worker (a run, the risk panel's, a comparison's) calls
    :meth:`job_started` with the job's thread and :meth:`job_ended` on the GUI thread; the collection waits
    until none of those threads is alive (a job whose worker went away without saying so included)."""

    def __init__(self, parent: QObject | None = None, idle_ms: int = IDLE_COLLECT_MS) -> None:
        super().__init__(parent)
        self.collections = 0  # full collections made (for tests)
        self._jobs: list[threading.Thread] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(idle_ms)
        self._timer.timeout.connect(self._collect)

    def set_idle_ms(self, idle_ms: int) -> None:
        """Wait ``idle_ms`` after the last job instead (tests)."""
        self._timer.setInterval(idle_ms)

    def job_started(self, thread: threading.Thread) -> None:
        """A job starts on ``thread``: what is alive now (the window, the data) is skipped by its collections."""
        self._jobs = [t for t in self._jobs if t.is_alive()] + [thread]
        self._timer.stop()
        freeze_survivors()

    def job_ended(self) -> None:
        """A job ended (or was let go of): the full collection waits for :data:`IDLE_COLLECT_MS`, and for
        every job's thread to end."""
        self._timer.start()

    def stop(self) -> None:
        """No collection later (the window closes)."""
        self._timer.stop()

    def _collect(self) -> None:
        self._jobs = [t for t in self._jobs if t.is_alive()]
        if self._jobs:
            self._timer.start()  # a job still runs: wait again
            return
        collect_frozen()
        self.collections += 1


_shared: IdleCollector | None = None


def shared() -> IdleCollector:
    """The program's one :class:`IdleCollector` (made on first use, on the GUI thread)."""
    global _shared
    if _shared is None:
        _shared = IdleCollector()
    return _shared
