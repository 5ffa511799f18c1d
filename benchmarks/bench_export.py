"""Benchmark of the release writers (not a test): ``formats.write_table`` vs pandas' own writers.

    python benchmarks/bench_export.py              # 1,000,000 rows x 10 columns, best of 3
    python benchmarks/bench_export.py --rows 100000 --runs 1

The table has the 10 columns of ``run.py``'s generated CSV (id, sex, age, region, postcode, blood,
visits, bmi, admitted, diag), with the sensitive ``diag`` as a Categorical and ``id`` replaced by an
Arrow string pseudonym column, as in a release. Times ``write_table(..., "csv")`` against
``DataFrame.to_csv(index=False)`` and ``write_table(..., "parquet")`` against
``DataFrame.to_parquet(index=False)``, alternating the two in each of the runs. Prints one JSON object on stdout;
progress notes go to stderr. Target: each within 1.5x of pandas' own writer.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data.formats import write_table

TARGET_RATIO = 1.5
M_SENSITIVE = 50
REGIONS = np.array(["North", "South", "East", "West", "Central"])
BLOOD = np.array(["O+", "O-", "A+", "A-", "B+", "B-", "AB+", "AB-"])
SEXES = np.array(["F", "M"])


def note(message: str) -> None:
    print(f"[bench_export] {message}", file=sys.stderr, flush=True)


def make_table(rows: int, seed: int = 2026) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, M_SENSITIVE + 1) ** 1.1
    diag_values = np.array([f"D{i:02d}" for i in range(M_SENSITIVE)])
    days = rng.integers(0, 365 * 6, size=rows)
    bmi = np.round(rng.normal(26.0, 4.0, size=rows), 1)
    bmi[rng.random(rows) < 0.02] = np.nan
    pseudonyms = np.char.add("R", np.array([os.urandom(8).hex() for _ in range(rows)]))
    return pd.DataFrame(
        {
            "pseudonym": pd.Series(pseudonyms, dtype=pd.ArrowDtype(pa.string())),
            "sex": SEXES[rng.integers(0, 2, size=rows)],
            "age": rng.integers(0, 100, size=rows),
            "region": REGIONS[rng.integers(0, len(REGIONS), size=rows)],
            "postcode": rng.integers(1000, 10000, size=rows),
            "blood": BLOOD[rng.integers(0, len(BLOOD), size=rows)],
            "visits": rng.poisson(3.0, size=rows),
            "bmi": bmi,
            "admitted": np.datetime_as_string(np.datetime64("2019-01-01") + days.astype("timedelta64[D]")),
            "diag": pd.Categorical(diag_values[rng.choice(M_SENSITIVE, size=rows, p=p / p.sum())]),
        }
    )


def interleaved(fns: list, runs: int) -> list[list[float]]:
    """Wall times of ``runs`` rounds, each calling every function once in turn (fair under drifting load)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for fn, bucket in zip(fns, times):
            gc.collect()
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    note(f"generating {args.rows:,} rows x 10 columns")
    table = make_table(args.rows)
    work = Path(tempfile.mkdtemp(prefix="bench_export."))
    result: dict[str, object] = {"rows": args.rows, "columns": table.shape[1], "runs": args.runs}
    try:
        cases = {
            "csv": (lambda: write_table(table, work / "a.csv", "csv"), lambda: table.to_csv(work / "b.csv", index=False)),
            "parquet": (
                lambda: write_table(table, work / "a.parquet", "parquet"),
                lambda: table.to_parquet(work / "b.parquet", index=False),
            ),
        }
        met = True
        for fmt, (ours, theirs) in cases.items():
            note(f"{fmt}: write_table and pandas, interleaved, best of {args.runs}")
            runs_ours, runs_pandas = interleaved([ours, theirs], args.runs)
            t_ours, t_pandas = min(runs_ours), min(runs_pandas)
            runs_ours, runs_pandas = [round(t, 4) for t in runs_ours], [round(t, 4) for t in runs_pandas]
            ratio = t_ours / t_pandas
            met = met and ratio <= TARGET_RATIO
            result[fmt] = {
                "write_table_s": round(t_ours, 4),
                "write_table_runs_s": runs_ours,
                "pandas_s": round(t_pandas, 4),
                "pandas_runs_s": runs_pandas,
                "ratio_write_table_over_pandas": round(ratio, 3),
                "file_mb": round((work / f"a.{fmt}").stat().st_size / 1e6, 1),
                "pandas_file_mb": round((work / f"b.{fmt}").stat().st_size / 1e6, 1),
            }
        result["target_ratio_max"] = TARGET_RATIO
        result["target_met"] = met
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
