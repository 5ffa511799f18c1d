"""Arrow's memory given back to the system as soon as it is freed (issue 34: the job's peak memory).

pyarrow's default pool (mimalloc) keeps the pages of freed buffers for reuse, so a job that builds a table, frees
it and builds another holds both in its resident memory. Where the C library is glibc (Linux), Arrow allocates
through it (``pa.system_memory_pool()``): the job's phase boundaries hand freed pages back with ``malloc_trim``
(:mod:`.freed_memory`), Arrow's with the rest. jemalloc with a decay of 0, used before, kept ~60 MB of partly used
extents resident after the 1M-record load (the loaded table's text columns scattered over them), which no trim
reaches: the in-memory job's peak fell by ~30 MB with glibc, at the same CPU (``benchmarks/bench_memory.py``).
Elsewhere jemalloc with decay 0, and where pyarrow was built without it (its Windows wheels), the default pool.
"""
from __future__ import annotations

import threading

from ppdp_desktop.core.data.freed_memory import can_return_freed

_lock = threading.Lock()
_done = False


def return_freed_memory() -> bool:
    """Make an allocator that gives freed memory back Arrow's default pool for every allocation from now on (once
    per process; a buffer made before is still freed to its own pool): glibc's where :mod:`.freed_memory` can trim
    it, else jemalloc with decay 0. Whether one of the two is in use."""
    global _done
    import pyarrow as pa

    with _lock:
        if not _done:
            _done = True
            if can_return_freed():
                pa.set_memory_pool(pa.system_memory_pool())
            else:
                try:
                    pool = pa.jemalloc_memory_pool()
                    pa.jemalloc_set_decay_ms(0)
                except (NotImplementedError, pa.ArrowNotImplementedError):  # a pyarrow built without jemalloc
                    return False
                pa.set_memory_pool(pool)
    return pa.default_memory_pool().backend_name in ("jemalloc", "system")
