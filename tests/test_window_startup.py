"""The window's first page before everything else (issue 34): the window is shown with only the load page built and
without numpy, pandas, pyarrow, the method families, scipy, scikit-learn, matplotlib or the lookup dialog; the other
pages are built just after, one per turn of the event loop with their imports on a background thread, and the wizard
steps through them as before. Not timed (the figures are in benchmarks/bench_startup.py and bench_gui_stalls.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

#: the child scripts' common end: the window runs until its other six pages are made, then returns
WAIT_FOR_PAGES = """
def done():  # the other pages are made once their imports are done, on a background thread: wait for them
    if window.stack.count() == 7:
        app.quit()
    else:
        QTimer.singleShot(50, done)

QTimer.singleShot(50, done)
app.exec()
"""

PROBE = """
import os, sys, tempfile
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
from ppdp_desktop.gui.main_window import MainWindow

HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "sklearn", "matplotlib", "ppdp_desktop.core.methods.perturbation",
         "ppdp_desktop.core.methods.dp", "ppdp_desktop.core.methods.partition", "ppdp_desktop.gui.lookup_dialog")

def heavy():
    return ",".join(m for m in HEAVY if m in sys.modules)

app = QApplication([])
window = MainWindow(QSettings(os.path.join(tempfile.mkdtemp(), "settings.ini"), QSettings.Format.IniFormat))
window.show()
print("SHOWN", window.stack.count(), heavy())
""" + WAIT_FOR_PAGES + """print("LATER", window.stack.count(), heavy())
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


APP_PROBE = """
import sys
from ppdp_desktop.gui import app

HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "matplotlib", "ppdp_desktop.gui.pages.roles_page")


class Watch:  # the moment the app says "shown" (its first page on screen), which heavy modules are in
    def write(self, text):
        if text.startswith("shown"):
            sys.__stdout__.write("AT_SHOWN " + ",".join(m for m in HEAVY if m in sys.modules) + "\\n")
        return len(text)

    def flush(self):
        pass


sys.stdout = Watch()
app.main(["--quit-when-shown"])
"""


def test_ppdp_desktop_shows_its_first_page_without_numpy_pandas_or_pyarrow(tmp_path):
    """``ppdp-desktop`` as started (the leftovers swept, the core imported before Qt): when the first page is on
    screen, numpy, pandas and pyarrow have not been imported (they were half of the start-up; bench_startup.py)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PPDP_DATA_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", APP_PROBE], capture_output=True, text=True, env=env, check=True,
                         timeout=120)
    assert [x for x in run.stdout.splitlines() if x.startswith("AT_SHOWN")] == ["AT_SHOWN "]


def test_each_step_title_is_its_page_title():
    from ppdp_desktop.gui.pages.steps import STEPS

    assert [step.page_class().title for step in STEPS] == [step.title for step in STEPS]


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


TURNS_PROBE = """
import os, sys, tempfile, threading
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
from ppdp_desktop.gui.main_window import MainWindow

WATCHED = ("scipy", "ppdp_desktop.gui.pages.method_page", "ppdp_desktop.gui.pages.run_page")
threads = {}

class Watcher:  # first import of a watched module: on which thread
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED:
            threads.setdefault(name, "gui" if threading.current_thread() is threading.main_thread() else "background")
        return None

sys.meta_path.insert(0, Watcher())
turned = []  # per page made after the first: whether the event loop ran an event posted when the page before was made
real_add = MainWindow._add_page

def add_page(self, page):
    if len(self._pages) > 0:
        turned.append(self.__dict__.pop("_probe_turned", [False])[0])
    real_add(self, page)
    flag = self.__dict__["_probe_turned"] = [False]
    QTimer.singleShot(0, lambda: flag.__setitem__(0, True))  # runs once the event loop turns

MainWindow._add_page = add_page
app = QApplication([])
window = MainWindow(QSettings(os.path.join(tempfile.mkdtemp(), "settings.ini"), QSettings.Format.IniFormat))
window.show()
""" + WAIT_FOR_PAGES + """print("TURNED", ",".join(str(t) for t in turned))
print("THREADS", ",".join(f"{n}={threads.get(n, 'before' if n in sys.modules else 'never')}" for n in WATCHED))
window.close()
"""


def test_the_later_pages_are_built_one_per_turn_with_their_imports_on_a_background_thread(tmp_path):
    """Between two pages the event loop runs what waits (the window answers: bench_gui_stalls.py has the timings),
    and the method families and the page modules are imported off the GUI thread; scipy, if at all (a method family
    imports it where it is used: the window's first pages need none of it)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PPDP_DATA_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", TURNS_PROBE], capture_output=True, text=True, env=env, check=True,
                         timeout=120)
    lines = {x.split(" ")[0]: x.split(" ")[1] for x in run.stdout.splitlines() if x.startswith(("TURNED", "THREADS"))}
    assert lines["TURNED"] == ",".join(["True"] * 6)  # six pages after the first, each on a turn of its own
    assert lines["THREADS"] in (f"scipy={where},ppdp_desktop.gui.pages.method_page=background,"
                                "ppdp_desktop.gui.pages.run_page=background" for where in ("background", "never"))
