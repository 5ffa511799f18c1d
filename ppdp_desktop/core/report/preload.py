"""Loading the report's libraries ahead of time, on a thread, while the data loads (Qt-free)."""
from __future__ import annotations

import threading

from ppdp_desktop.core.evaluation.figures import warm_up


def prepare_in_background() -> threading.Thread:
    """Import the report's libraries (matplotlib, fpdf2) and warm matplotlib up on a daemon thread, e.g.
    while the data loads (reading releases the interpreter lock); ``build_report`` waits for the warm-up
    before it draws."""
    def prepare() -> None:
        warm_up()
        import ppdp_desktop.core.report.files  # noqa: F401 - fpdf2 and the renderers

    thread = threading.Thread(target=prepare, name="report preparation", daemon=True)
    thread.start()
    return thread
