"""Helper of bench_memory.py (not a test): a census of the large objects alive at two points of the in-memory job.

    PPDP_DATA_DIR=/tmp/x python benchmarks/memory_census.py anonymize DATA --out /tmp/x/rel --in-memory ...

Runs the CLI in-process with ``publish_release`` and ``verify_written`` wrapped: on entering each it walks the
locals of every frame on the stack (and the app's module globals) through the app's own objects, lists each
DataFrame, Series, array or Arrow table of 4 MB or more by the path that holds it (``memory_usage(deep=True)``:
a buffer shared by two holders is counted twice), the dtypes of the job's tables, the RSS, the Arrow pool, and the
RSS after ``malloc_trim`` and ``release_unused`` (what was freed but kept by the allocators). One JSON line per
point on stderr. The trim changes the rest of the run's memory, so this run's peak is not a figure.
"""
import ctypes
import gc
import json
import sys

import numpy as np
import pandas as pd
import pyarrow as pa

MB = 2**20

def size_of(obj):
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(deep=True, index=True).sum())
    if isinstance(obj, (pd.Series, pd.Index)):
        return int(obj.memory_usage(deep=True))
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            step = max(1, obj.size // 10000)  # a sample of the Python objects, scaled up
            return obj.nbytes + sum(sys.getsizeof(x) for x in obj.ravel()[::step]) * step
        return obj.nbytes if obj.base is None else 0
    if isinstance(obj, (pa.Table, pa.RecordBatch, pa.ChunkedArray, pa.Array)):
        return obj.get_total_buffer_size()
    if isinstance(obj, (bytes, bytearray, str)):
        return len(obj)
    if isinstance(obj, (list, tuple)) and len(obj) > 100000:
        step = len(obj) // 1000
        return sys.getsizeof(obj) + sum(sys.getsizeof(x) for x in obj[::step]) * step
    return None

def walk(obj, path, seen, out, depth=0):
    if id(obj) in seen or depth > 6:
        return
    seen.add(id(obj))
    s = size_of(obj)
    if s is not None:
        if s >= 4 * MB:
            out.append((path, type(obj).__name__, round(s / MB, 1)))
        return
    if isinstance(obj, dict):
        for k, v in list(obj.items())[:200]:
            walk(v, f"{path}[{k!r}]", seen, out, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(list(obj)[:200]):
            walk(v, f"{path}[{i}]", seen, out, depth + 1)
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("ppdp_desktop"):
        for k, v in vars(obj).items():
            walk(v, f"{path}.{k}", seen, out, depth + 1)
    elif hasattr(obj, "__slots__") and type(obj).__module__.startswith("ppdp_desktop"):
        for k in obj.__slots__:
            walk(getattr(obj, k, None), f"{path}.{k}", seen, out, depth + 1)

def census(label):
    out, seen = [], set()
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_name
        for k, v in frame.f_locals.items():
            walk(v, f"{name}:{k}", seen, out)
        frame = frame.f_back
    for mod in list(sys.modules.values()):  # module-level caches
        if getattr(mod, "__name__", "").startswith("ppdp_desktop"):
            for k, v in list(vars(mod).items()):
                if not k.startswith("__"):
                    walk(v, f"{mod.__name__}.{k}", seen, out)
    rss = int(open("/proc/self/statm").read().split()[1]) * 4096
    dtypes = {}
    f = sys._getframe(2)
    while f is not None:
        for k, v in f.f_locals.items():
            for path, obj in (("dataset.frame", getattr(getattr(getattr(v, "result", v), "dataset", None), "frame", None)),
                              ("result.table", getattr(getattr(v, "result", v), "table", None)),
                              ("identities", getattr(getattr(v, "result", v), "identities", None)),
                              ("release.table", getattr(v, "table", None) if k == "release" else None)):
                if isinstance(obj, pd.DataFrame) and path not in dtypes:
                    dtypes[path] = {c: [str(obj[c].dtype), round(obj[c].memory_usage(deep=True) / MB, 1)] for c in obj.columns}
        f = f.f_back
    pool = pa.default_memory_pool()
    pool.release_unused()
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    after = int(open("/proc/self/statm").read().split()[1]) * 4096
    print(json.dumps({"at": label, "rss_mb": rss // MB, "rss_after_trim_mb": after // MB, "pool": pool.backend_name,
                      "arrow_pool_mb": pa.total_allocated_bytes() // MB, "arrow_pool_max_mb": pool.max_memory() // MB,
                      "objects": out, "dtypes": dtypes}), file=sys.stderr)

def main() -> int:
    """The CLI with the two census points wrapped in."""
    import ppdp_desktop.cli.commands  # noqa: F401 - imported before the pipeline is wrapped
    import ppdp_desktop.core.release.pipeline as pl
    from ppdp_desktop.cli import main as cli

    verify, publish = pl.verify_written, pl.publish_release

    def verify_counted(*args, **kwargs):
        census("verify_written")
        return verify(*args, **kwargs)

    def publish_counted(*args, **kwargs):
        census("publish_release")
        return publish(*args, **kwargs)

    pl.verify_written, pl.publish_release = verify_counted, publish_counted
    return cli(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
