"""Reading a data file: ``load_table`` (every cell read as text by pyarrow, then each column typed), the
import dialog's preview (first 100 rows) and the first look (``inspect_file``), against bare pandas.

``python benchmarks/bench_load.py [--rows N]`` prints JSON. Synthetic CSV: N rows (default 1,000,000) x 10
columns: a record id, age, a 5-digit postcode with leading zeros, income with decimals, sex, a 50-value
diagnosis, a 7-value category, a small integer, a float in [0, 1) and an ISO admission date (65 MB).
Target: ``load_table`` under 1 s for 1M rows (pandas' ``read_csv``, which loses the leading zeros, is the
reference, not the target) and the preview and first look under 0.1 s whatever the file's size.

``python benchmarks/bench_load.py --paired [--before TREE] [--rounds 2]`` (issue 34) compares whole child processes
in rounds A B C A B C on run.py's 1M x 10 CSV (``--data FILE`` for another): (a) ``pyarrow.csv.read_csv`` of the
file with the options ``load_table`` parses it with (every column text, empty cells null), (b) ``load_table`` of
the tree ``--before`` (a checkout whose ``ppdp_desktop`` is imported, e.g. /work/main) and (c) of this tree. Each
gets the CPU seconds of the whole process (``getrusage(RUSAGE_CHILDREN)``), the CPU seconds of the read alone
(``time.process_time`` around the call, imports left out) and its peak RSS (``ru_maxrss``), as bytes per input
byte: the whole process's and the read's own (peak minus the peak after the imports). Target: the read's CPU within
1.5x pyarrow's.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.inspection import inspect_file
from ppdp_desktop.core.data.loading import load_table


def best(fn, repeat: int = 3) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), [round(t, 3) for t in times]


def synthetic_csv(path: Path, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    days = pd.date_range("2000-01-01", periods=3000).strftime("%Y-%m-%d").to_numpy()
    pd.DataFrame({
        "id": np.arange(n), "age": rng.integers(18, 90, n),
        "zip": pd.Series(rng.integers(0, 99_999, n)).map("{:05d}".format),
        "income": rng.normal(50_000, 10_000, n).round(2), "sex": rng.choice(["M", "F"], n),
        "dx": rng.choice([f"d{i}" for i in range(50)], n), "a1": rng.choice(list("abcdefg"), n),
        "a2": rng.integers(0, 5, n), "w": rng.random(n), "admitted": rng.choice(days, n),
    }).to_csv(path, index=False)


PAIRED_CHILD = """
import json, resource, sys, time
mode, path = sys.argv[1], sys.argv[2]
if mode == "pyarrow":
    import pyarrow as pa
    import pyarrow.csv as pcsv
    with open(path, "rb") as handle:
        width = len(handle.readline().split(b","))
    names = [f"c{i}" for i in range(width)]
    def read():
        return pcsv.read_csv(path, read_options=pcsv.ReadOptions(column_names=names, skip_rows=1),
                             parse_options=pcsv.ParseOptions(delimiter=",", newlines_in_values=True),
                             convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                                                 strings_can_be_null=True, null_values=[""],
                                                                 quoted_strings_can_be_null=True))
else:
    from ppdp_desktop.core.data.loading import load_table
    def read():
        return load_table(path)
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
start = time.process_time()
result = read()
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"read_cpu_s": cpu, "peak_rss": peak, "imported_rss": imported}))
"""


def paired(data: Path, before: Path | None, rounds: int) -> dict:
    """Whole processes A B C A B C: pyarrow's read, ``load_table`` of ``before`` and of this tree."""
    import os
    import resource
    import subprocess

    here = Path(__file__).resolve().parent.parent
    size = data.stat().st_size
    contenders = {"pyarrow": None, **({"before": before} if before else {}), "after": here}
    runs: dict[str, list[dict]] = {k: [] for k in contenders}
    for _ in range(rounds):
        for name, tree in contenders.items():
            env = dict(os.environ, PYTHONPATH=str(tree) if tree else "")
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            begun = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", PAIRED_CHILD, "pyarrow" if tree is None else "load",
                                  str(data.resolve())], env=env, capture_output=True, text=True, check=True,
                                 cwd=str(tree or data.resolve().parent)).stdout  # "-c" imports from the cwd first
            wall = time.perf_counter() - begun
            done = resource.getrusage(resource.RUSAGE_CHILDREN)
            child = json.loads(out.strip().splitlines()[-1])
            runs[name].append({
                "process_cpu_s": round(done.ru_utime - used.ru_utime + done.ru_stime - used.ru_stime, 3),
                "wall_s": round(wall, 3), "read_cpu_s": round(child["read_cpu_s"], 3),
                "peak_rss_b_per_b": round(child["peak_rss"] / size, 2),
                "read_rss_b_per_b": round((child["peak_rss"] - child["imported_rss"]) / size, 2),
            })
    best = {k: min(r["read_cpu_s"] for r in v) for k, v in runs.items()}
    return {"data": str(data), "bytes": size, "rounds": rounds, "runs": runs,
            "read_cpu_over_pyarrow": {k: round(v / best["pyarrow"], 2) for k, v in best.items() if k != "pyarrow"},
            "load_average": os.getloadavg()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--paired", action="store_true", help="whole processes: pyarrow's read against load_table")
    parser.add_argument("--before", type=Path, help="with --paired: a tree whose load_table is compared too")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data", type=Path, help="with --paired: the CSV (default: run.py's 1M x 10 file)")
    args = parser.parse_args(argv)
    if args.paired:
        if args.data is None:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from run import make_csv

            args.data = make_csv(args.rows)
        json.dump(paired(args.data, args.before, args.rounds), sys.stdout, indent=2)
        print()
        return 0
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.csv"
        synthetic_csv(path, args.rows)
        pandas_s, pandas_runs = best(lambda: pd.read_csv(path, keep_default_na=False, na_values=[""]))
        load_s, load_runs = best(lambda: load_table(path))
        preview_s, _ = best(lambda: load_table(path, rows=100), repeat=5)
        inspect_s, _ = best(lambda: inspect_file(path), repeat=5)
        kinds = {c: a.kind.value for c, a in load_table(path).schema.attributes.items()}
        report = {
            "rows": args.rows, "file_mb": round(path.stat().st_size / 1e6, 1),
            "pandas_read_csv_s": round(pandas_s, 3), "pandas_runs": pandas_runs,
            "load_table_s": round(load_s, 3), "load_runs": load_runs,
            "load_vs_pandas": round(load_s / pandas_s, 2),
            "preview_100_rows_s": round(preview_s, 4), "inspect_file_s": round(inspect_s, 4),
            "kinds": kinds,
        }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
