"""Modules a page will need imported ahead, on a background thread (issue 34: no stall over 100 ms).

Importing a module made of Python code on the window's thread holds the window for the whole import
(zxcvbn's frequency lists: 70-120 ms, at the first character of a passphrase). On another thread its code
lets go of the interpreter every switch interval, so the window keeps painting meanwhile; what the import
made is then frozen (:func:`~ppdp_desktop.gui.collector.freeze_survivors`), as it lives on.
"""
from __future__ import annotations

import importlib
import threading

from ppdp_desktop.gui.collector import freeze_survivors

#: what an export imports on its worker the first time (the report's writers, the release's checks,
#: cryptography): ~270 modules, whose objects made a full collection in the export's thread
EXPORT_MODULES = ("ppdp_desktop.core.release.pipeline", "ppdp_desktop.core.release.analysis",
                  "ppdp_desktop.core.report.files", "ppdp_desktop.core.report.document", "zxcvbn")


def import_now(*modules: str) -> None:
    """Import ``modules`` in turn on this (background) thread, then freeze what they made. A module that fails
    to import is left for its first real use to report (the page that needs it shows the error then)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the real import later raises it where it is shown
            return
    freeze_survivors()


def import_in_background(*modules: str) -> threading.Thread:
    """:func:`import_now` on a daemon thread, which is returned."""
    thread = threading.Thread(target=import_now, args=modules, name="ppdp preload", daemon=True)
    thread.start()
    return thread
