"""The window's first page before everything else (issue 34): the window is shown with only the load page built and
without the method families, scipy, scikit-learn, matplotlib or the lookup dialog; the other pages are built just after,
and the wizard steps through them as before. Not timed (the figures are in benchmarks/bench_startup.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

PROBE = """
import os, sys, tempfile
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
from ppdp_desktop.gui.main_window import MainWindow

HEAVY = ("scipy", "sklearn", "matplotlib", "ppdp_desktop.core.methods.perturbation", "ppdp_desktop.core.methods.dp",
         "ppdp_desktop.core.methods.partition", "ppdp_desktop.gui.lookup_dialog")

def heavy():
    return ",".join(m for m in HEAVY if m in sys.modules)

app = QApplication([])
window = MainWindow(QSettings(os.path.join(tempfile.mkdtemp(), "settings.ini"), QSettings.Format.IniFormat))
window.show()
print("SHOWN", window.stack.count(), heavy())
QTimer.singleShot(3000, app.quit)  # long after the pages' own timer: the event loop runs both, in order
app.exec()
print("LATER", window.stack.count(), heavy())
window.close()
"""


def _lines(tmp_path) -> dict[str, list[str]]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PPDP_DATA_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    return {x.split(" ")[0]: x.split(" ")[1:] for x in run.stdout.splitlines() if x.startswith(("SHOWN", "LATER"))}


def test_the_window_is_shown_with_its_first_page_only_and_none_of_the_heavy_libraries(tmp_path):
    lines = _lines(tmp_path)
    assert lines["SHOWN"] == ["1", ""]  # one page built, nothing heavy imported
    pages, imported = lines["LATER"]
    assert pages == "7"  # the other pages were built once the event loop ran, with nobody asking
    assert "ppdp_desktop.core.methods.perturbation" in imported.split(",")  # step 4 lists every method


def _next(qtbot, window) -> None:
    qtbot.waitUntil(window.next.isEnabled, timeout=120_000)
    qtbot.mouseClick(window.next, Qt.MouseButton.LeftButton)


def test_the_pages_built_after_the_window_is_shown_step_as_before(window, qtbot):
    assert window.stack.count() == 1  # the load page only, until the event loop runs
    qtbot.waitUntil(lambda: window.stack.count() == 7, timeout=30_000)
    qtbot.mouseClick(window.stack.widget(0).demo_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    for _ in range(3):
        _next(qtbot, window)
    assert window.stack.currentIndex() == 3
    method_page = window.stack.currentWidget()
    assert method_page.title == "Method" and method_page.isVisible()
    assert len(method_page.cards) >= 7  # every registered method has its card
    assert [window.steps.item(i).text() for i in range(4)] == [
        "1. Load data", "2. Roles & taxonomies", "3. Sensitivity & choices", "4. Method"]


def test_data_opened_before_the_other_pages_are_built_reaches_them(window, qtbot):
    assert window.stack.count() == 1
    demo = next(a for a in window.menuBar().actions()[0].menu().actions() if a.text() == "Open the &demo data")
    demo.trigger()  # File > Open the demo data, before the event loop has built the other pages
    assert window.stack.count() == 7  # data on its way: its pages first
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    _next(qtbot, window)
    roles = window.stack.currentWidget()
    assert roles.title == "Roles & taxonomies"
    assert roles.table.rowCount() == len(window.state.dataset.frame.columns)
