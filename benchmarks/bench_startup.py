"""Benchmark (not a test): start-up of ``ppdp --help`` and of the window, against their floors (issue 34).

    python benchmarks/bench_startup.py              # 3 rounds
    python benchmarks/bench_startup.py --rounds 5

Each figure is a whole child process, run in rounds (every contender once per round, in turn), with its CPU
seconds (user + system, ``getrusage(RUSAGE_CHILDREN)`` before and after) and wall seconds:

- ``help``: ``python -m ppdp_desktop --help``; its floor ``imports``: ``import numpy, pandas, pyarrow``;
- ``window``: ``python -m ppdp_desktop.gui.app --quit-when-shown`` (offscreen), which quits once the event loop
  has shown the first page; its floor ``bare``: an empty PySide6 QMainWindow shown the same way.

"Cold" here is a new process with a warm page cache (the files were read before) and the app's bytecode
compiled, as installed (``PYTHONDONTWRITEBYTECODE`` is dropped for the children); ``bench_bundle.py`` times the
bundle after dropping the page cache. Prints one JSON object: every run, the best, and the ratios help/imports and
window/bare. Targets (issue 34): help within 1.2x of the imports; the window shown in under 1 s.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import child_time  # one child process timed (shared by the issue-34 benchmarks)

BARE = """
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([])
window = QMainWindow()
window.show()
QTimer.singleShot(0, app.quit)
app.exec()
"""

CONTENDERS = {
    "imports": [sys.executable, "-c", "import numpy, pandas, pyarrow"],
    "help": [sys.executable, "-m", "ppdp_desktop", "--help"],
    "bare": [sys.executable, "-c", BARE],
    "window": [sys.executable, "-m", "ppdp_desktop.gui.app", "--quit-when-shown"],
}


def timed(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``cmd`` to its end; its CPU seconds (user + system) and wall seconds."""
    cpu, wall = child_time.timed(cmd, env, "bench_startup")
    return {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PPDP_DATA_DIR": tmp}
        # an installed app runs from its compiled bytecode: the untimed first run writes it (a shell that set
        # PYTHONDONTWRITEBYTECODE would otherwise time the compiling of every module of the app, ~0.3 CPU s)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for cmd in CONTENDERS.values():  # warm the page cache once, untimed
            timed(cmd, env)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in CONTENDERS}
        for _ in range(args.rounds):
            for name, cmd in CONTENDERS.items():
                runs[name].append(timed(cmd, env))
    best = {name: {m: min(r[m] for r in rs) for m in ("cpu_s", "wall_s")} for name, rs in runs.items()}
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M"), "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()], "runs": runs, "best": best,
        "help_over_imports": {m: round(best["help"][m] / best["imports"][m], 2) for m in ("cpu_s", "wall_s")},
        "window_over_bare": {m: round(best["window"][m] / best["bare"][m], 2) for m in ("cpu_s", "wall_s")},
        "targets": {"help_over_imports": 1.2, "window_wall_s": 1.0},
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
