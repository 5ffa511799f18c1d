"""Modules imported ahead on a background thread (issue 34: an import on the window's thread stalls it)."""
from __future__ import annotations

import sys

import pytest

pytest.importorskip("PySide6")

from ppdp_desktop.gui.preload import import_in_background  # noqa: E402


def test_modules_are_imported_on_another_thread(monkeypatch):
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    thread = import_in_background("colorsys")
    thread.join(10)
    assert not thread.is_alive() and "colorsys" in sys.modules


def test_a_module_that_fails_is_left_for_its_real_use():
    thread = import_in_background("ppdp_desktop_no_such_module", "colorsys")
    thread.join(10)
    assert not thread.is_alive()  # no exception escapes the thread; the page's own import reports it


def test_every_module_named_ahead_exists():
    """A misspelt name would be skipped without a word (the real import reports errors): each one imports."""
    import importlib

    from ppdp_desktop.gui.preload import EXPORT_MODULES

    for name in EXPORT_MODULES:
        importlib.import_module(name)
