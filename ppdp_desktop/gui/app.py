"""``ppdp-desktop``: start the window (``--demo`` opens it with the embedded demo data).

``--selftest`` runs the headless demo job (see :mod:`ppdp_desktop.core.selftest`) and then checks
that the window itself can be built and drawn (Qt plugins, fonts, the matplotlib canvas), so a
bundle missing any of them fails on the target PC at install time rather than in front of a user.
``--quit-when-shown`` prints ``shown`` once the window is on screen and quits (start-up timing).
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ppdp-desktop", description="PPDP Desktop window")
    parser.add_argument("--demo", action="store_true", help="open with the embedded demo data loaded")
    parser.add_argument("--selftest", action="store_true", help="run the demo job headless and check the window; "
                        "exit 0 only if everything passed")
    parser.add_argument("--quit-when-shown", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("data", nargs="?", help="a data file to open")
    args = parser.parse_args(argv)
    if args.selftest:
        return selftest()

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from ppdp_desktop.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("PPDP Desktop")
    window = MainWindow()
    if args.demo:
        window.load_demo()
    elif args.data:
        window.load_data(args.data)
    window.show()
    if args.quit_when_shown:
        def shown() -> None:
            print("shown", flush=True)
            app.quit()

        QTimer.singleShot(0, shown)  # runs once the event loop has drawn the first frame
    return app.exec()


def selftest() -> int:
    """The core self-test, then the window built, shown and drawn offscreen if there is no screen."""
    from ppdp_desktop.cli.selftest import run

    code = run()
    if code != 0:
        return code
    start = time.perf_counter()
    try:
        detail = _window_check()
    except Exception as exc:  # report, never a traceback
        print(f"FAIL build and draw the window               {time.perf_counter() - start:6.2f} s  "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"ok   build and draw the window               {time.perf_counter() - start:6.2f} s  {detail}")
    return 0


def _window_check() -> str:
    import os

    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg  # noqa: F401 - the report's canvas
    from PySide6.QtWidgets import QApplication

    from ppdp_desktop.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow()
    window.resize(1100, 720)
    window.show()
    app.processEvents()
    image = window.grab().toImage()
    window.close()
    if image.isNull() or image.width() < 100:
        raise RuntimeError("the window could not be drawn")
    colours = len({image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 37)})
    if colours < 3:
        raise RuntimeError("the window was drawn blank")
    return f"{image.width()}x{image.height()} px, platform {app.platformName()}"


if __name__ == "__main__":
    sys.exit(main())
