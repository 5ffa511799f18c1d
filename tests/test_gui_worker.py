"""The background worker: results on the GUI thread, errors, cancel, replacement, shutdown."""
from __future__ import annotations

import gc
import math
import threading
import time
import weakref

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QThread  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ppdp_desktop.core.errors import ParameterError  # noqa: E402
from ppdp_desktop.gui.worker import Worker, describe_error, estimate_eta  # noqa: E402


def looping_job(progress, cancel, seconds: float = 10.0) -> str:
    """A job that checks for cancellation every ~10 ms (and reports progress)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        cancel.check()
        progress((time.monotonic() - start) / seconds, "Looping")
        time.sleep(0.01)
    return "looped"


@pytest.fixture
def worker(qtbot):
    worker = Worker()
    yield worker
    worker.shutdown(2000)


def test_finished_is_delivered_on_the_gui_thread(qtbot, worker):
    app = QApplication.instance()
    seen = {}

    def on_finished(name, result):
        seen["main"] = QThread.currentThread() == app.thread()
        seen["py_main"] = threading.current_thread() is threading.main_thread()

    worker.finished.connect(on_finished)
    job_thread = {}

    def job(progress, cancel):
        job_thread["main"] = threading.current_thread() is threading.main_thread()
        progress(0.5, "Half")
        return 42

    with qtbot.waitSignal(worker.started, timeout=1000):
        with qtbot.waitSignal(worker.finished, timeout=2000) as blocker:
            worker.start("sum", job)
    assert blocker.args == ["sum", 42]
    assert job_thread == {"main": False}
    assert seen == {"main": True, "py_main": True}
    assert not worker.is_running()


def test_user_error_has_message_and_no_details(qtbot, worker):
    def job(progress, cancel):
        raise ParameterError("The tolerance theta must be greater than 1; got 0.5.")

    with qtbot.waitSignal(worker.errored, timeout=2000) as blocker:
        worker.start("run", job)
    assert blocker.args == ["run", "The tolerance theta must be greater than 1; got 0.5.", ""]


def test_bug_is_unexpected_error_with_traceback(qtbot, worker):
    def job(progress, cancel):
        return 1 / 0

    with qtbot.waitSignal(worker.errored, timeout=2000) as blocker:
        worker.start("run", job)
    name, message, details = blocker.args
    assert name == "run"
    assert message.startswith("Unexpected error")
    assert "ZeroDivisionError" in message
    assert "Traceback" in details and "1 / 0" in details


def test_cancel_arrives_within_a_second(qtbot, worker):
    ticks = []
    worker.progress.connect(lambda f, stage, eta: ticks.append((f, stage, eta)))
    worker.start("loop", looping_job)
    qtbot.waitUntil(lambda: bool(ticks), timeout=2000)
    finished = []
    worker.finished.connect(lambda *args: finished.append(args))
    start = time.monotonic()
    with qtbot.waitSignal(worker.cancelled, timeout=1000) as blocker:
        worker.cancel()
    assert time.monotonic() - start < 1.0
    assert blocker.args == ["loop"]
    assert not finished and not worker.is_running()
    assert ticks[0][1] == "Looping" and 0.0 <= ticks[0][0] <= 1.0


def test_new_task_replaces_the_old_one(qtbot, worker):
    finished, cancelled = [], []
    worker.finished.connect(lambda name, result: finished.append((name, result)))
    worker.cancelled.connect(cancelled.append)
    release = threading.Event()

    def stubborn(progress, cancel):  # ignores the cancel request: its result must be dropped
        release.wait(5)
        return "old"

    worker.start("old", stubborn)
    with qtbot.waitSignal(worker.finished, timeout=2000) as blocker:
        worker.start("new", lambda progress, cancel: "new")
    release.set()
    assert worker.wait(2000)
    qtbot.wait(50)  # let any late report of the old task reach the event loop
    assert blocker.args == ["new", "new"]
    assert finished == [("new", "new")]
    assert cancelled == ["old"]


def test_shutdown_stops_a_running_job(qtbot, worker):
    stopped = threading.Event()

    def job(progress, cancel):
        try:
            looping_job(progress, cancel)
        finally:
            stopped.set()

    delivered = []
    worker.finished.connect(lambda *args: delivered.append(args))
    worker.cancelled.connect(delivered.append)
    worker.start("loop", job)
    assert worker.is_running()
    assert worker.shutdown(1000)
    assert stopped.is_set() and not worker.is_running()
    qtbot.wait(50)
    assert delivered == []  # nothing reaches a window that is closing


def test_progress_is_throttled(qtbot, worker):
    emitted = []
    worker.progress.connect(lambda f, stage, eta: emitted.append(f))

    def job(progress, cancel):
        start = time.monotonic()
        while time.monotonic() - start < 0.3:
            progress(min(1.0, (time.monotonic() - start) / 0.3))
        return None

    with qtbot.waitSignal(worker.finished, timeout=2000):
        worker.start("busy", job)
    assert 1 <= len(emitted) <= 10  # ~20 per second at most


def test_eta_and_error_helpers():
    assert math.isnan(estimate_eta(1.0, 0.01))
    assert estimate_eta(2.0, 0.5) == pytest.approx(2.0)
    assert estimate_eta(2.0, 1.0) == 0.0
    assert describe_error(ParameterError("bad theta")) == ("bad theta", "")
    message, details = describe_error(KeyError())
    assert message == "Unexpected error: KeyError" and "KeyError" in details


def test_objects_alive_at_a_task_start_stay_frozen_until_the_window_is_idle(qtbot, worker, monkeypatch):
    """Frozen when a task starts (its full collections skip them), still frozen after it (a collection right
    then would pause the window), collected with the rest once no task has run for the idle time."""
    from ppdp_desktop.gui import collector

    idle = collector.IdleCollector(idle_ms=200)  # its own: threads of other tests' jobs do not hold it back
    monkeypatch.setattr(collector, "_shared", idle)
    cycle: list = []
    cycle.append(cycle)  # garbage only a full collection finds
    dead = weakref.ref(_Node(cycle))
    release = threading.Event()
    worker.start("hold", lambda progress, cancel: release.wait(5))
    assert gc.get_freeze_count() > 0  # objects alive at start are skipped by full collections
    del cycle
    with qtbot.waitSignal(worker.finished, timeout=2000):
        release.set()
    gc.collect()  # what the program's own collections do: the frozen cycle is not found
    assert gc.get_freeze_count() > 0 and dead() is not None
    before = idle.collections
    qtbot.waitUntil(lambda: idle.collections > before, timeout=3000)
    assert dead() is None  # the idle collection found it
    assert gc.get_freeze_count() > 0  # and froze what survived again


def test_no_idle_collection_while_another_task_runs(qtbot, worker, monkeypatch):
    """Two workers (a run and the risk panel's): the first one's end does not collect while the second runs."""
    from ppdp_desktop.gui import collector

    idle = collector.IdleCollector(idle_ms=50)
    monkeypatch.setattr(collector, "_shared", idle)
    other = Worker()
    try:
        release, hold = threading.Event(), threading.Event()
        worker.start("quick", lambda progress, cancel: release.wait(5))
        other.start("long", lambda progress, cancel: hold.wait(5))
        before = idle.collections
        with qtbot.waitSignal(worker.finished, timeout=2000):
            release.set()
        qtbot.wait(300)
        assert idle.collections == before
        with qtbot.waitSignal(other.finished, timeout=2000):
            hold.set()
        qtbot.waitUntil(lambda: idle.collections > before, timeout=3000)
    finally:
        other.shutdown(2000)


class _Node:
    """An object that can be weakly referenced, kept alive only by a reference cycle."""

    def __init__(self, cycle: list) -> None:
        cycle.append(self)


def test_abandon_reports_cancelled_at_once_and_drops_the_late_result(qtbot, worker):
    """A read cannot check the token mid-call: Cancel gives the window back now, and its result never arrives."""
    gate = threading.Event()
    seen = []
    worker.finished.connect(lambda name, result: seen.append(("finished", name)))
    worker.cancelled.connect(lambda name: seen.append(("cancelled", name)))
    worker.start("load", lambda progress, cancel: gate.wait(30) and "read")
    worker.abandon()
    assert seen == [("cancelled", "load")] and not worker.is_running()
    gate.set()
    assert worker.wait(10_000)
    qtbot.wait(100)  # the thread's late report reaches the event loop, and is dropped
    assert seen == [("cancelled", "load")]
