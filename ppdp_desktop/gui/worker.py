"""The one place core jobs run off the GUI thread (napari's worker, Orange3's ConcurrentWidgetMixin).

A job is a plain function ``fn(progress, cancel)`` from :mod:`ppdp_desktop.core.jobs`. It runs on a
Python thread. Its outcome is posted to the GUI thread through one queued signal and re-emitted
there, so every handler of the public signals runs on the GUI thread whatever it is (a bound method
or a lambda). Progress is only recorded by the job; a GUI timer reads the latest report every
50 ms, so a job may call ``progress`` per row without flooding the event queue, and the stage shown
is never older than 50 ms (a push throttle would drop the last report before a long step). One task at a time: starting a new one
cancels the old one, and the old one's late reports are ignored (a generation counter).
"""
from __future__ import annotations

import math
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from ppdp_desktop.core.errors import Cancelled, PPDPError, os_error_message
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.gui import collector
from ppdp_desktop.gui.wording import window_name

Job = Callable[[Callable[..., None], CancelToken], Any]

PROGRESS_INTERVAL_MS = 50  # the GUI reads the latest progress this often (at most 20 emissions/s)
ETA_AFTER = 0.05  # no ETA before this fraction is done


def estimate_eta(elapsed: float, fraction: float) -> float:
    """Seconds left by linear extrapolation, or NaN before :data:`ETA_AFTER` of the work is done.

    Parameters
    ----------
    elapsed : seconds since the task started.
    fraction : the part done, 0..1.
    """
    if not fraction >= ETA_AFTER:  # also NaN
        return math.nan
    return max(0.0, elapsed * (1.0 - min(fraction, 1.0)) / fraction)


def describe_error(exc: BaseException) -> tuple[str, str]:
    """The one-line message and the details shown for an exception raised by a job.

    A :class:`PPDPError` is an error the user can cause: its message is shown in the window's words
    (:func:`~ppdp_desktop.gui.wording.window_name` names each setting it refers to), with no details. Anything
    else is a bug: "Unexpected error: …" with the traceback as details.
    """
    if isinstance(exc, PPDPError):
        return exc.phrase(window_name), ""
    if os_error_message(exc) is not None:  # a full disk, a read-only folder: the user's to fix
        return os_error_message(exc), ""
    if isinstance(exc, MemoryError):
        message = "Unexpected error: not enough memory to finish; close other programs or use a smaller file."
    else:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = f"Unexpected error: {type(exc).__name__}" + (f": {text}" if text else "")
    return message, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class _Task:
    """One run of a job: its thread, its cancel token and its latest progress report."""

    def __init__(self, generation: int, name: str, fn: Job, post: Callable[[int, str, object], None]) -> None:
        self.generation = generation
        self.name = name
        self.fn = fn
        self.token = CancelToken()
        self.started_at = time.monotonic()
        self.latest: tuple[float, str] | None = None  # replaced whole, so reading it needs no lock
        self._post = post
        self.thread = threading.Thread(target=self._run, name=f"ppdp-{name}", daemon=True)

    def progress(self, fraction: float, message: str = "") -> None:
        """The callback given to the job (worker thread): only records; the GUI polls it."""
        stage = message or (self.latest[1] if self.latest else "")
        self.latest = (min(max(float(fraction), 0.0), 1.0), stage)

    def _run(self) -> None:
        try:
            result = self.fn(self.progress, self.token)
        except Cancelled:
            self._post(self.generation, "cancelled", None)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none escapes the thread
            self._post(self.generation, "cancelled" if self.token.cancelled else "errored", describe_error(exc))
        else:
            self._post(self.generation, "cancelled" if self.token.cancelled else "finished", result)


class Worker(QObject):
    """Runs one core job at a time on a background thread and reports on the GUI thread.

    Signals
    -------
    started(name) : the task began (emitted by :meth:`start`).
    progress(fraction, stage, eta) : fraction 0..1, stage text, seconds left or NaN if unknown.
    finished(name, result) : the job returned ``result``.
    errored(name, message, details) : the job raised; see :func:`describe_error`.
    cancelled(name) : the job stopped on request, or was replaced by a newer task.
    """

    started = Signal(str)
    progress = Signal(float, str, float)
    finished = Signal(str, object)
    errored = Signal(str, str, str)
    cancelled = Signal(str)
    _posted = Signal(int, str, object)  # (generation, outcome kind, payload), from the worker thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # The GUI thread re-takes the interpreter lock after every call into Qt; with Python's default
        # 5 ms switch interval a busy job would delay each of those by up to 5 ms. 1 ms keeps the
        # event loop prompt while a job runs (at a small cost in the job's own speed).
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
        self._generation = 0
        self._task: _Task | None = None
        self._threads: list[threading.Thread] = []
        self._posted.connect(self._on_posted, Qt.ConnectionType.QueuedConnection)
        self._shown: tuple[float, str] | None = None
        self._poll = QTimer(self)
        self._poll.setInterval(PROGRESS_INTERVAL_MS)
        self._poll.timeout.connect(self._on_poll_timeout)

    # --- API --------------------------------------------------------------------------------
    def start(self, name: str, fn: Job) -> None:
        """Run ``fn(progress, cancel)`` in the background; a running task is cancelled first.

        Parameters
        ----------
        name : the task's name, repeated in every signal so that pages can filter.
        fn : the job; it calls ``progress(fraction, message)`` and ``cancel.check()`` between steps.
        """
        if self._task is not None:
            old = self._task
            old.token.cancel()
            self._task = None
            collector.shared().job_ended()
            self.cancelled.emit(old.name)
        self._generation += 1
        task = _Task(self._generation, name, fn, self._post)
        self._task = task
        self._threads = [t for t in self._threads if t.is_alive()] + [task.thread]
        self._shown = None
        self.started.emit(name)
        # Objects alive now (the GUI, the loaded data) move to the collector's permanent generation, so a
        # full collection triggered by the job's allocations cannot pause the GUI thread for long; cycles
        # among them that die later (old figures) are collected once no job has run for a while.
        collector.shared().job_started(task.thread)
        task.thread.start()
        self._poll.start()

    def cancel(self) -> None:
        """Ask the running task to stop; ``cancelled`` follows when it has."""
        if self._task is not None:
            self._task.token.cancel()

    def abandon(self) -> None:
        """Stop waiting for the running task: ``cancelled`` is emitted at once and its late outcome is dropped.

        For a job without side effects whose one long call cannot check the token (reading a file is one
        library call): the user gets the window back now, the thread ends on its own and its result is
        never delivered. A job that writes (a run, an export) is cancelled with :meth:`cancel` instead.
        """
        task = self._task
        if task is None:
            return
        task.token.cancel()
        self._generation += 1  # its outcome, when it comes, belongs to no task
        self._task = None
        self._poll.stop()
        collector.shared().job_ended()
        self.cancelled.emit(task.name)

    def is_running(self) -> bool:
        """Whether a task was started and has not yet delivered its outcome."""
        return self._task is not None

    def wait(self, timeout_ms: int) -> bool:
        """Block until every task thread (also replaced ones) has ended; False on timeout.

        The outcome is delivered to the GUI thread when its event loop next runs.
        """
        deadline = time.monotonic() + max(timeout_ms, 0) / 1000.0
        for thread in list(self._threads):
            thread.join(max(0.0, deadline - time.monotonic()))
        self._threads = [t for t in self._threads if t.is_alive()]
        return not self._threads

    def shutdown(self, timeout_ms: int = 3000) -> bool:
        """Cancel and wait (from the main window's ``closeEvent``); nothing is delivered afterwards."""
        self.cancel()
        self._generation += 1  # late reports of the stopped task are ignored
        if self._task is not None:
            collector.shared().job_ended()
        self._task = None
        self._poll.stop()
        return self.wait(timeout_ms)

    # --- plumbing ---------------------------------------------------------------------------
    def _post(self, generation: int, kind: str, payload: object) -> None:
        """Called on the worker thread: queue a report for the GUI thread."""
        try:
            self._posted.emit(generation, kind, payload)
        except RuntimeError:  # the worker was deleted with the window; nobody listens any more
            pass

    def _on_poll_timeout(self) -> None:
        """On the GUI thread: emit the running task's latest progress if it changed."""
        task = self._task
        latest = task.latest if task is not None else None
        if latest is None or latest == self._shown:
            return
        self._shown = latest
        fraction, stage = latest
        self.progress.emit(fraction, stage, estimate_eta(time.monotonic() - task.started_at, fraction))

    def _on_posted(self, generation: int, kind: str, payload: object) -> None:
        """On the GUI thread: re-emit the current task's outcome, drop a replaced task's."""
        task = self._task
        if task is None or generation != task.generation:
            return
        self._task = None
        self._poll.stop()
        collector.shared().job_ended()
        if kind == "finished":
            self.finished.emit(task.name, payload)
        elif kind == "errored":
            message, details = payload  # type: ignore[misc]
            self.errored.emit(task.name, message, details)
        else:
            self.cancelled.emit(task.name)
