"""Arrow's freed memory goes back to the system (issue 34): a job's tables, once freed, leave its resident memory
instead of staying in the pool for reuse (where pyarrow has jemalloc; its Windows wheels do not)."""
from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest

CHILD = """
import sys
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from ppdp_desktop.core.data.memory_pool import return_freed_memory
if sys.argv[1] == "returning":
    assert return_freed_memory()
pool = pa.default_memory_pool()
base = pa.array(np.arange(32_768, dtype=np.int64))
parts = [pc.add(base, i) for i in range(1000)]  # 1,000 buffers of 256 KB in Arrow's pool
del parts
with open("/proc/self/statm") as f:
    print(pool.backend_name, int(f.read().split()[1]) * 4096 // (1 << 20))
"""


def _jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _jemalloc(), reason="resident memory from /proc, jemalloc")
def test_freed_arrow_memory_leaves_the_process():
    def resident(mode: str) -> tuple[str, int]:
        out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True).stdout
        backend, megabytes = out.split()
        return backend, int(megabytes)

    backend, returned = resident("returning")
    _, kept = resident("default")
    assert backend == "jemalloc"
    assert returned < kept - 150  # MB: the freed buffers' pages stay resident in the default pool (~440 vs ~200)


def test_it_is_safe_to_ask_twice():
    from ppdp_desktop.core.data.memory_pool import return_freed_memory

    first = return_freed_memory()
    assert return_freed_memory() == first
    table = pa.table({"a": [1, 2, 3]})  # the pool in use works
    assert table.column("a").to_pylist() == [1, 2, 3]
