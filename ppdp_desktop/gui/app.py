"""``ppdp-desktop``: start the window (``--demo`` opens it with the embedded demo data).

``--selftest`` runs the headless demo job (see :mod:`ppdp_desktop.core.selftest`) and then checks
that the window itself can be built and drawn (Qt plugins, fonts), so a
bundle missing any of them fails on the target PC at install time rather than in front of a user.
``--quit-when-shown`` prints ``shown`` once the window is on screen and quits (start-up timing).

On Linux, Qt's X11 (xcb) platform plugin needs a few libraries that a desktop does not always have
(``libxcb-cursor0`` above all); without them Qt aborts with a generic message. So before Qt starts,
:func:`xcb_problem` looks for them and the window refuses to start with the one line that says which
package to install.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time
from collections.abc import Mapping, Sequence
from ctypes.util import find_library

#: What Qt 6's xcb plugin loads that a desktop may lack: ``find_library`` name -> shared object.
XCB_LIBRARIES = {"xcb-cursor": "libxcb-cursor.so.0", "xcb-icccm": "libxcb-icccm.so.4", "xcb-keysyms": "libxcb-keysyms.so.1"}
XCB_INSTALL = "sudo apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1"


def _loadable(soname: str) -> bool:
    """Whether the dynamic loader finds ``soname`` (also inside a bundle, where find_library cannot look)."""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def xcb_problem(environ: Mapping[str, str] | None = None, platform: str | None = None) -> str | None:
    """The line to print instead of starting Qt when its xcb plugin will be used and cannot load; else None.

    Only when Qt will certainly use xcb: on Linux, with ``QT_QPA_PLATFORM`` unset (and an X display,
    no Wayland one: Qt may then pick Wayland, which needs none of these) or set to ``xcb``.
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return None
    chosen = environ.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if chosen == "":
        if not environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
            return None
    elif chosen != "xcb":
        return None
    missing = [so for name, so in XCB_LIBRARIES.items() if not _loadable(so) and not find_library(name)]
    if not missing:
        return None
    return (f"ppdp-desktop: the window cannot start: Qt's X11 platform plugin cannot find {', '.join(missing)}; "
            f"install the libraries it needs with: {XCB_INSTALL}  (the command line, ppdp, works without them)")


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
    problem = xcb_problem()
    if problem is not None:  # Qt would abort the process with a message that names no package
        print(problem, file=sys.stderr)
        return 1

    _core_before_qt()
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from ppdp_desktop.core.release.leftovers import sweep
    from ppdp_desktop.gui.main_window import MainWindow

    for line in sweep():  # what a killed job left: an old release it had moved aside is put back, the rest removed
        print(f"ppdp-desktop: note: {line}.", file=sys.stderr)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("PPDP Desktop")
    window = MainWindow()
    if args.demo:
        window.load_demo()
    elif args.data:
        window.load_data(args.data)
    window.show()
    install_error_dialog(window)
    if args.quit_when_shown:
        def shown() -> None:
            print("shown", flush=True)
            app.quit()

        QTimer.singleShot(0, shown)  # runs once the event loop has drawn the first frame
    return app.exec()


def _core_before_qt() -> None:
    """Import the core the first page needs before Qt: PySide6 reads the source of every module imported after it
    (looking for its feature switches). Since issue 34 that core is light (no numpy, pandas or pyarrow: those come
    with the first file, on the worker's thread, or with the later pages, on a background thread)."""
    import ppdp_desktop.core.project  # noqa: F401
    import ppdp_desktop.core.release.leftovers  # noqa: F401


def install_error_dialog(window) -> None:
    """The last line of defence: an exception escaping a slot reaches a dialog (and the terminal), and the
    window stays usable, instead of only a traceback the user never sees. :func:`main` installs it; tests do
    not, so that pytest-qt's own hook still fails a test on an exception in a slot."""
    import traceback

    from PySide6.QtWidgets import QMessageBox

    from ppdp_desktop.gui.worker import describe_error

    showing = False

    def show(exc_type, exc, tb) -> None:
        nonlocal showing
        traceback.print_exception(exc_type, exc, tb)
        if issubclass(exc_type, KeyboardInterrupt) or showing:  # one dialog at a time; the terminal has the rest
            return
        message, _details = describe_error(exc)
        showing = True
        try:
            QMessageBox.critical(window, "Something went wrong", f"{message}\n\nWhat you were doing may not have "
                                 "finished. The window stays usable; if this keeps happening, please report it with "
                                 "the text printed in the terminal.")
        finally:
            showing = False

    sys.excepthook = show


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
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    problem = xcb_problem()
    if problem is not None:
        raise RuntimeError(problem.removeprefix("ppdp-desktop: "))
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
