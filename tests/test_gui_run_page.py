"""The run page: the GUI stays responsive during a real run, cancel works, errors are dialogs.

Responsive means structural, not timed: the run works on the worker's thread and the GUI thread shows its stages
while it works. How long the event loop goes without a tick (the largest gap) and how soon a cancel lands are
figures, measured by ``benchmarks/bench_gui_stalls.py`` and ``benchmarks/bench_run_page.py``."""
from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt, QThread, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from ppdp_desktop.core.data.dataset import Dataset  # noqa: E402
from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.jobs import run_job  # noqa: E402
from ppdp_desktop.gui.pages.run_page import RunPage, format_eta  # noqa: E402
from ppdp_desktop.gui.state import WizardState  # noqa: E402

N_VALUES = 40


def make_dataset(n: int, seed: int = 7) -> Dataset:
    """``n`` records: an identifier, a sensitive diagnosis with 40 values (skewed), and others."""
    rng = np.random.default_rng(seed)
    values = np.array([f"D{i:02d}" for i in range(N_VALUES)])
    weights = rng.dirichlet(np.full(N_VALUES, 2.0))
    frame = pd.DataFrame(
        {
            "patient_id": np.char.add("P", np.arange(n).astype(str)),
            "diagnosis": pd.Categorical(values[rng.choice(N_VALUES, n, p=weights)]),
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["F", "M"], n),
            "weight": rng.normal(75.0, 12.0, n).round(1),
        }
    )
    return Dataset(frame)


@pytest.fixture(scope="module")
def big() -> Dataset:
    return make_dataset(500_000)


def make_page(qtbot, dataset: Dataset, theta: float = 3.0) -> tuple[RunPage, WizardState]:
    state = WizardState()
    state.set_dataset(dataset, None)
    state.set_role("diagnosis", Role.SENSITIVE)
    state.set_role("patient_id", Role.IDENTIFIER)
    state.project.method = "finegrain"
    state.project.theta = theta
    page = RunPage(state)
    qtbot.addWidget(page)
    return page, state


def close(state: WizardState) -> None:
    assert state.worker.shutdown(5000)


def test_gui_stays_responsive_during_a_run(qtbot):
    """Structural, never timed: the real run (``run_job``) works on the worker's thread, not the GUI's, and while it
    works the GUI thread shows the stages it reports. The job waits, at its first stage, until the page shows that
    stage, which only a free GUI thread can do (the wait's 60 s is a safety net, not a bound). How long the GUI
    thread goes without an event is a figure: ``benchmarks/bench_gui_stalls.py --only run-page``."""
    gui_thread = threading.current_thread()
    seen: dict[str, object] = {}
    shown = threading.Event()

    def job(dataset, settings, progress, cancel):
        seen["thread"] = threading.current_thread()
        seen["qt thread is the GUI's"] = QThread.currentThread() is QApplication.instance().thread()

        def report(fraction: float, message: str = "") -> None:
            progress(fraction, message)
            if message and "stage" not in seen:
                seen["stage"] = message
                seen["shown while the job waited"] = shown.wait(60)

        return run_job(dataset, settings, report, cancel)

    state = WizardState()
    state.set_dataset(make_dataset(50_000), None)
    state.set_role("diagnosis", Role.SENSITIVE)
    state.set_role("patient_id", Role.IDENTIFIER)
    state.project.method = "finegrain"
    state.project.theta = 3.0
    page = RunPage(state, job=job)
    qtbot.addWidget(page)
    # connected after the page's own slot: called once the page has put the stage on screen
    state.worker.progress.connect(lambda f, stage, eta: shown.set() if stage and stage == seen.get("stage")
                                  and page.stage_label.text() == stage else None)
    completes = []
    page.complete_changed.connect(lambda: completes.append(page.is_complete()))
    try:
        assert not page.is_complete()
        qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
        assert page.cancel_button.isEnabled() and not page.run_button.isEnabled()
        qtbot.waitUntil(lambda: state.outcome is not None, timeout=120_000)
    finally:
        shown.set()  # never leave the worker waiting
        close(state)
    assert seen["thread"] is not gui_thread and seen["qt thread is the GUI's"] is False
    assert seen["shown while the job waited"] is True, f"the GUI thread never showed {seen.get('stage')!r}"
    assert completes == [True] and page.is_complete()
    assert state.outcome.main.settings.method == "finegrain"
    assert page.progress_bar.value() == 1000
    assert page.summary_label.text().startswith("Done: finegrain on 50,000 records in ")
    assert not page.cancel_button.isEnabled() and page.run_button.isEnabled()


def test_worker_and_page_keep_the_gui_responsive_with_a_busy_python_job(qtbot):
    """Our side alone: a CPU-bound pure-Python job (it yields the GIL) never stalls the GUI."""

    def busy(dataset, settings, progress, cancel):
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < 0.6:
            sum(i * i for i in range(2_000))
            cancel.check()
            progress(elapsed / 0.6, "Busy")
        return None

    gc.collect()  # a full collection over the big tables of earlier tests would stall any thread
    state = WizardState()
    state.set_dataset(make_dataset(100), None)
    state.set_role("diagnosis", Role.SENSITIVE)
    page = RunPage(state, job=busy)
    qtbot.addWidget(page)
    ticks: list[float] = []
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    try:
        with qtbot.waitSignal(state.worker.finished, timeout=5000):
            page.start()
    finally:
        timer.stop()
        close(state)
    assert len(ticks) >= 20  # the GUI thread kept processing events (its largest gap: bench_run_page.py)
    assert page.stage_label.text() == "Done"


def test_cancel_stops_the_run_and_changes_nothing(qtbot, big):
    page, state = make_page(qtbot, big)
    progressed = []
    state.worker.progress.connect(lambda f, stage, eta: progressed.append(f))
    try:
        page.start()
        qtbot.waitUntil(lambda: bool(progressed), timeout=2000)
        with qtbot.waitSignal(state.worker.cancelled, timeout=20000) as blocker:  # latency: bench_run_page.py
            qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    finally:
        close(state)
    assert blocker.args == ["run"]
    assert state.outcome is None and not page.is_complete()
    assert page.stage_label.text() == "Cancelled; nothing was changed."
    assert not page.cancel_button.isEnabled() and page.run_button.isEnabled()


def test_infeasible_parameter_is_a_dialog_then_a_rerun_works(qtbot):
    page, state = make_page(qtbot, make_dataset(5_000), theta=1000.0)
    try:
        with qtbot.waitSignal(state.worker.errored, timeout=10000) as blocker:
            page.start()
        name, message, details = blocker.args
        assert name == "run" and "needs protection" in message and details == ""
        box = page.error_box
        assert isinstance(box, QMessageBox) and box.isVisible()
        assert not box.isModal() or box.windowModality() != Qt.WindowModality.ApplicationModal
        assert box.text() == message and box.icon() == QMessageBox.Icon.Warning
        assert page.error_label.text() == message
        assert state.outcome is None and page.run_button.isEnabled()

        state.project.theta = 3.0
        with qtbot.waitSignal(state.worker.finished, timeout=30000):
            qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    finally:
        close(state)
    assert state.outcome is not None and page.is_complete()
    assert page.error_label.text() == ""


def test_missing_sensitive_column_is_shown_before_anything_runs(qtbot):
    state = WizardState()
    state.set_dataset(make_dataset(100), None)
    page = RunPage(state)
    qtbot.addWidget(page)
    started = []
    state.worker.started.connect(started.append)
    page.start()
    assert started == [] and not state.worker.is_running()
    assert "sensitive" in page.error_label.text()
    assert page.error_box is not None and page.error_box.text() == page.error_label.text()


def test_compared_methods_run_after_the_chosen_one_with_an_injected_job(qtbot):
    state = WizardState()
    state.set_dataset(make_dataset(100), None)
    state.set_role("diagnosis", Role.SENSITIVE)
    state.project.compare = ["finegrain", "uniform"]
    seen = []

    def job(dataset, settings, progress, cancel):
        seen.append([s.method for s in settings])
        progress(0.5, "Halfway")
        raise ZeroDivisionError("division by zero")

    page = RunPage(state, job=job)
    qtbot.addWidget(page)
    with qtbot.waitSignal(state.worker.errored, timeout=2000):
        page.start()
    assert seen == [["finegrain", "uniform"]]
    assert page.error_box.text().startswith("Unexpected error")
    assert "ZeroDivisionError" in page.error_box.detailedText()


def test_format_eta():
    assert format_eta(float("nan")) == ""
    assert format_eta(12.4) == "about 12 s left"
    assert format_eta(0.2) == "about 1 s left"
    assert format_eta(185) == "about 3 min left"
