"""Loading the report's libraries ahead of time, on a thread, while the data loads (Qt-free)."""
from __future__ import annotations

import threading

from ppdp_desktop.core.collection import collection_paused
from ppdp_desktop.core.evaluation.figures import warm_up

_lock = threading.Lock()
_imported = False


def import_report_libraries() -> None:
    """Import the report's libraries (Pillow and the renderers, the PDF writer) and load the figures' font, with the garbage
    collector off meanwhile (:func:`~ppdp_desktop.core.collection.collection_paused`: ~200 modules whose
    objects live as long as the process, which collections would only traverse). Only the first call does anything."""
    global _imported
    with _lock:
        if _imported:  # once: the modules are imported, and what was alive then is frozen already
            return
        with collection_paused():
            warm_up()
            import ppdp_desktop.core.report.files  # noqa: F401 - the PDF writer and the renderers
        _imported = True


def prepare_in_background() -> threading.Thread:
    """:func:`import_report_libraries` on a daemon thread, e.g. while the data loads (reading releases the
    interpreter lock); ``build_report`` waits for the warm-up before it draws."""
    thread = threading.Thread(target=import_report_libraries, name="report preparation", daemon=True)
    thread.start()
    return thread
