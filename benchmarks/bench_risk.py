"""Prosecutor re-identification risk (``analyse_risk``): time and memory on a large table.

``python benchmarks/bench_risk.py`` prints JSON. Synthetic table: 1,000,000 rows x 5 quasi-identifiers
(age 0-99, sex of 2, postcode of 1,000 values as text, admission year of 20, a 30-value category with
about 5 % missing). Target: ``analyse_risk`` under 2 s (best of 3); peak memory reported as the extra
Python allocations (tracemalloc, one separate run) and the process's maximum resident set size.
"""
from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd

from ppdp_desktop.core.privacy.risk import analyse_risk, naive_linkage

TARGET_S = 2.0
QUASI = ["age", "sex", "postcode", "admission_year", "category"]


def best(fn, repeat: int = 3) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), [round(t, 3) for t in times]


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    postcodes = np.array([f"{1000 + i}" for i in range(1000)], dtype=object)
    categories = np.array([f"cat{i:02d}" for i in range(30)], dtype=object)
    category = categories[rng.integers(0, 30, n)]
    category[rng.random(n) < 0.05] = None
    return pd.DataFrame({
        "age": rng.integers(0, 100, n),
        "sex": rng.choice(np.array(["F", "M"], dtype=object), n),
        "postcode": postcodes[rng.integers(0, 1000, n)],
        "admission_year": rng.integers(2000, 2020, n),
        "category": category,
    })


def peak_traced(fn) -> float:
    """Largest extra memory Python allocated while ``fn`` ran (MB)."""
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return round(peak / 2**20, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    frame = synthetic(args.rows)
    print(f"table: {args.rows:,} rows built", file=sys.stderr)
    total, runs = best(lambda: analyse_risk(frame, QUASI, 0.2, 5), args.repeat)
    analysis = analyse_risk(frame, QUASI, 0.2, 5)
    released = frame.assign(age=np.random.default_rng(1).permutation(frame["age"].to_numpy()))
    linkage_s, linkage_runs = best(lambda: naive_linkage(frame, released, QUASI), args.repeat)
    out = {
        "n": args.rows,
        "quasi_identifiers": QUASI,
        "analyse_risk_s": round(total, 3),
        "runs_s": runs,
        "analyse_risk_peak_traced_mb": peak_traced(lambda: analyse_risk(frame, QUASI, 0.2, 5)),
        "naive_linkage_s": round(linkage_s, 3),
        "naive_linkage_runs_s": linkage_runs,
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "n_classes": analysis.n_classes,
        "sample_uniques": analysis.sample_uniques,
        "records_above_threshold": analysis.records_above_threshold,
        "target_s": TARGET_S,
        "target_met": total < TARGET_S,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
