"""Reading a data file: ``load_table`` (every cell read as text by pyarrow, then each column typed), the
import dialog's preview (first 100 rows) and the first look (``inspect_file``), against bare pandas.

``python benchmarks/bench_load.py [--rows N]`` prints JSON. Synthetic CSV: N rows (default 1,000,000) x 10
columns: a record id, age, a 5-digit postcode with leading zeros, income with decimals, sex, a 50-value
diagnosis, a 7-value category, a small integer, a float in [0, 1) and an ISO admission date (65 MB).
Target: ``load_table`` under 1 s for 1M rows (pandas' ``read_csv``, which loses the leading zeros, is the
reference, not the target) and the preview and first look under 0.1 s whatever the file's size.
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)
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
