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


def import_in_background(*modules: str) -> threading.Thread:
    """Import ``modules`` in turn on a daemon thread, and return it. A module that fails to import is left for
    its first real use to report (the page that needs it shows the error then)."""
    def run() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the real import later raises it where it is shown
                return
        freeze_survivors()

    thread = threading.Thread(target=run, name="ppdp preload", daemon=True)
    thread.start()
    return thread
