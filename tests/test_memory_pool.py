"""Arrow's freed memory goes back to the system (issue 34): a job's tables, once freed, leave its resident memory
instead of staying in the pool for reuse (glibc's allocator, trimmed, on Linux; jemalloc where pyarrow has it
elsewhere; its Windows wheels have neither)."""
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
from ppdp_desktop.core.data.freed_memory import return_freed
from ppdp_desktop.core.data.memory_pool import return_freed_memory
if sys.argv[1] == "returning":
    assert return_freed_memory()
pool = pa.default_memory_pool()
base = pa.array(np.arange(32_768, dtype=np.int64))
parts = [pc.add(base, i) for i in range(1000)]  # 1,000 buffers of 256 KB in Arrow's pool
del parts
if sys.argv[1] == "returning":
    return_freed()  # as the job does at its phases' ends
with open("/proc/self/statm") as f:
    print(pool.backend_name, int(f.read().split()[1]) * 4096 // (1 << 20))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident memory from /proc")
def test_freed_arrow_memory_leaves_the_process():
    def resident(mode: str) -> tuple[str, int]:
        out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True).stdout
        backend, megabytes = out.split()
        return backend, int(megabytes)

    backend, returned = resident("returning")
    _, kept = resident("default")
    from ppdp_desktop.core.data.freed_memory import can_return_freed

    assert backend == ("system" if can_return_freed() else "jemalloc")
    assert returned < kept - 150  # MB: the freed buffers' pages stay resident in the default pool (~440 vs ~200)


def test_it_is_safe_to_ask_twice():
    from ppdp_desktop.core.data.memory_pool import return_freed_memory

    first = return_freed_memory()
    assert return_freed_memory() == first
    table = pa.table({"a": [1, 2, 3]})  # the pool in use works
    assert table.column("a").to_pylist() == [1, 2, 3]


CHILD_LOAD = """
import sys
from ppdp_desktop.core.data.loading import load_table
table = load_table(sys.argv[1])
import pyarrow as pa
print(pa.default_memory_pool().backend_name)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc")
def test_a_loaded_table_lives_in_glibcs_heap_where_it_can_be_trimmed(tmp_path):
    """The loader sets the pool before it parses (jemalloc's extents kept ~60 MB of the 1M-record load resident)."""
    from ppdp_desktop.core.data.freed_memory import can_return_freed

    if not can_return_freed():
        pytest.skip("a C library without malloc_trim")
    (tmp_path / "d.csv").write_text("id,sex\n" + "".join(f"P{i},{'FM'[i % 2]}\n" for i in range(100)), encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", CHILD_LOAD, str(tmp_path / "d.csv")], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["system"]
