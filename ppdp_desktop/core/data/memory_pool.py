"""Arrow's memory given back to the system as soon as it is freed (issue 34: the job's peak memory).

pyarrow's default pool (mimalloc) keeps the pages of freed buffers for reuse, so a job that builds a table, frees
it and builds another holds both in its resident memory. jemalloc with a decay of 0 returns them at once: on the
1M-row benchmark (``benchmarks/bench_memory.py``) the in-memory job's peak fell from ~700 MB to ~580 MB, with the
same CPU seconds. Where pyarrow was built without jemalloc (its Windows wheels), the default pool stays.
"""
from __future__ import annotations

import threading

_lock = threading.Lock()
_done = False


def return_freed_memory() -> bool:
    """Make jemalloc with decay 0 Arrow's default pool for every allocation from now on (once per process; a buffer
    made before is still freed to its own pool). Whether jemalloc is in use."""
    global _done
    import pyarrow as pa

    with _lock:
        if not _done:
            _done = True
            try:
                pool = pa.jemalloc_memory_pool()
                pa.jemalloc_set_decay_ms(0)
            except (NotImplementedError, pa.ArrowNotImplementedError):  # a pyarrow built without jemalloc
                return False
            pa.set_memory_pool(pool)
    return pa.default_memory_pool().backend_name == "jemalloc"
