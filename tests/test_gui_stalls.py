"""The window never does heavy work on the GUI thread (issue 17, point 7): checked by structure, never by time.

The figures' renderer (Pillow) is imported and warmed up on a background thread, and matplotlib never; the
report's figures are drawn and decoded in the worker and reach the report page as images; the sensitive
column's values are counted on a thread as soon as the column is tagged. ``benchmarks/bench_gui_stalls.py``
measures the gaps themselves.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.gui.pages import sensitivity_page  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

# Run in a fresh interpreter: the test process has long imported the renderer (other tests draw figures).
SESSION = r"""
import importlib.abc, json, os, sys, tempfile, threading

imported = {}  # renderer (or matplotlib) module -> imported on the GUI (main) thread?
WATCHED = ("matplotlib", "mpl_toolkits", "PIL", "ppdp_desktop.core.evaluation.chart_png")


class Spy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in WATCHED or name in WATCHED:
            imported.setdefault(name, threading.current_thread() is threading.main_thread())
        return None  # only watches; the usual finders import


sys.meta_path.insert(0, Spy())
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QLabel

app = QApplication([])
from ppdp_desktop.gui.main_window import MainWindow
from ppdp_desktop.gui.screenshots import wait_until

window = MainWindow(QSettings(os.path.join(tempfile.mkdtemp(), "settings.ini"), QSettings.Format.IniFormat))
window.show()
warming = lambda: any(t.name == "figure warm-up" and t.is_alive() for t in threading.enumerate())
wait_until(lambda: "ppdp_desktop.core.evaluation.chart_png" in sys.modules and not warming(), 60)
at_start = dict(imported)

from ppdp_desktop.core.evaluation import chart_png  # already imported (by the warm-up): no import here

draws = []  # each chart drawn: on the GUI thread?
_render = chart_png.render_png
def render_png(chart, dpi, compress_level=1):
    draws.append(threading.current_thread() is threading.main_thread())
    return _render(chart, dpi, compress_level)
chart_png.render_png = render_png

from ppdp_desktop.gui import figure_images

decodes = []  # each PNG decoded: on the GUI thread?
_decode = figure_images.decode_png
def decode_png(png):
    decodes.append(threading.current_thread() is threading.main_thread())
    return _decode(png)
figure_images.decode_png = decode_png

window.load_demo()  # the demo's roles come with it
wait_until(lambda: window.state.dataset is not None, 60)
for step in (1, 2, 3, 4):
    window.go_to(step)
wait_until(lambda: window.state.outcome is not None, 120)
reports = window.state.outcome.reports
drawn_before_shown = all(set(r.images) == set(r.figures) and r.images for r in reports)
decoded_before_shown = sorted(map(list, window.state.figure_images)) == sorted(
    [i, name] for i, r in enumerate(reports) for name in r.figures)
window.go_to(5)
app.processEvents()
page = window.pages[5]
labels = [page.tabs.widget(i).widget() for i in range(page.tabs.count())]
print(json.dumps({
    "at_start": at_start,
    "imported": imported,
    "draws": draws,
    "drawn_before_shown": drawn_before_shown,
    "decodes": decodes,
    "decoded_before_shown": decoded_before_shown,
    "figures": len(reports[0].figures),
    "labels_with_images": sum(isinstance(l, QLabel) and not l.pixmap().isNull() for l in labels),
    "report_page_shown": page.isVisible() and not page.content.isHidden(),
}))
window.close()
"""


@pytest.fixture(scope="module")
def session() -> dict:
    """The window started, warmed up and driven through a run to its report page in a new interpreter."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", SESSION], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_figures_renderer_is_imported_off_the_gui_thread(session):
    assert "ppdp_desktop.core.evaluation.chart_png" in session["at_start"]  # warmed up once the window was on screen
    on_gui = sorted(name for name, main in session["imported"].items() if main)
    assert on_gui == [], f"imported on the GUI thread: {on_gui}"


def test_matplotlib_is_never_loaded(session):
    assert not [name for name in session["imported"] if name.split(".")[0] in ("matplotlib", "mpl_toolkits")]


def test_report_figures_are_drawn_in_the_worker_and_only_shown(session):
    assert session["draws"], "the run drew no figure"
    assert not any(session["draws"]), "a figure was drawn on the GUI thread"
    assert session["drawn_before_shown"]  # PNG images, ready before the page shows them
    assert session["decoded_before_shown"]  # and decoded: Qt's PNG reader would hold the lock on any thread
    assert session["decodes"] and not any(session["decodes"]), "a PNG was decoded on the GUI thread"
    assert session["report_page_shown"]
    assert session["labels_with_images"] == session["figures"] > 0


def test_the_sensitive_column_is_counted_on_a_thread_when_tagged(window, qtbot, monkeypatch):
    calls = []  # (column, counted on the GUI thread?)
    count = sensitivity_page.count_values

    def spy(dataset, column):
        calls.append((column, threading.current_thread() is threading.main_thread()))
        return count(dataset, column)

    monkeypatch.setattr(sensitivity_page, "count_values", spy)
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    calls.clear()
    window.go_to(1)
    window.state.set_role("sex", Role.SENSITIVE)  # as the role combo box does
    qtbot.waitUntil(lambda: ("sex", False) in calls, timeout=30_000)
    window.go_to(2)
    page = window.pages[2]
    assert calls == [("sex", False)]  # counted once, off the GUI thread; showing the page took that count
    assert sorted(page.model.labels) == sorted(window.state.dataset.frame["sex"].dropna().unique())
    window.go_to(1)
    window.go_to(2)  # shown again: not counted again
    assert calls == [("sex", False)]
