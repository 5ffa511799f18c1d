"""return_freed hands the heap's freed pages back on glibc (the in-memory job calls it between its phases) and does
nothing, without failing, where the C library has no malloc_trim."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from ppdp_desktop.core.data import freed_memory
from ppdp_desktop.core.data.freed_memory import return_freed

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss_pages() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap only")
def test_freed_heap_pages_go_back_on_glibc():
    if freed_memory._malloc_trim() is None:
        pytest.skip("this C library has no malloc_trim (musl)")
    np.ones(1 << 21)  # a 16 MiB block mapped apart and freed: glibc now keeps blocks up to that size on its heap
    blocks = [np.ones(1 << 16) for _ in range(200)]  # 100 MiB in 512 KiB blocks, on the heap
    del blocks[:-1]  # the last one keeps the heap's top in place: freeing alone gives nothing back
    before = _rss_pages()
    assert return_freed() is True
    assert (before - _rss_pages()) * PAGE > 50 << 20


def test_nothing_asked_without_malloc_trim(monkeypatch):
    monkeypatch.setattr(freed_memory, "_malloc_trim", lambda: None)
    assert return_freed() is False
