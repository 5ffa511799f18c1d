"""Python's cyclic garbage collector paused while many modules import (issue 34).

An import of many modules (the app's method families with pandas, and Pillow for a report) makes ~100k
objects that live as long as the process; their allocations set off young and full collections that traverse
every object alive, and every later full collection traverses them again. :func:`collection_paused` keeps the
collector off for such a block and then moves what is alive out of its sight (``gc.freeze``). Used by the command
line around its parser's imports, by the report's library imports (:mod:`~ppdp_desktop.core.report.preload`)
and by the figures' warm-up (on the window's background thread).
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_pause_lock = threading.Lock()
_pauses = 0  # the collection_paused blocks running now, on any thread
_was_enabled = False  # whether the collector was on when the first of them began


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (an import of many modules), as it was before afterwards;
    what is alive then is moved out of the collector's sight (``gc.freeze``): the imported modules, classes and
    functions live as long as the process, and every later full collection would traverse them again.

    The collector is one for the process: blocks on several threads (or nested) keep it off until the last one
    ends, and one that was off before the first stays off (and nothing is frozen). Nothing is lost: cycles made
    meanwhile are collected by the next collection after it is on again; reference counting frees the rest as
    always (frozen objects too; only a cycle among them would wait for the process's end)."""
    global _pauses, _was_enabled
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.freeze()
                gc.enable()
