"""Benchmark (not a test): the sparse Anatomy baseline at 1,000,000 records (was the opt-in timing test
``tests/test_anatomy_sparse.py::test_timing_one_million_records``, issue 18; moved here by issue 29).

    .venv/bin/python benchmarks/bench_anatomy.py                  # 1,000,000 records, m = 50, 15,000, 70,000
    .venv/bin/python benchmarks/bench_anatomy.py --rows 100000 --domains 50

For each domain size m: ``anatomize`` of n Zipf(1.1) codes (every value at least once) with l = 2, then 200
count queries (``anatomy_count_estimates`` under random masks of selectivity 50 %, 10 %, 2 %, 30 %, in turn).
Best of ``--runs`` each, ``gc.collect()`` before every run. Prints one JSON object; progress on stderr.
Target: each step in seconds at 1M records and 70,000 values (the dense version built a groups x m array).
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ppdp_desktop.core.methods.baselines.anatomy import anatomize, anatomy_count_estimates

TARGET_S = 10.0
L = 2
QUERIES = 200


def zipf_codes(n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` codes over ``m`` values: each value once, the rest Zipf(1.1)."""
    w = 1 / np.arange(1, m + 1) ** 1.1
    w /= w.sum()
    return np.concatenate([np.arange(m), rng.choice(m, size=n - m, p=w)])


def best_of(runs: int, work: Callable[[], object]) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), result


def measure(n: int, m: int, runs: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    codes = zipf_codes(n, m, rng)
    anatomize_s, release = best_of(runs, lambda: anatomize(codes, L, np.random.default_rng(1)))
    masks = [rng.random(n) < s for s in np.resize([0.5, 0.1, 0.02, 0.3], QUERIES)]
    queries_s, _ = best_of(runs, lambda: [anatomy_count_estimates(release, mask) for mask in masks])
    return {"m": m, "anatomize_s": round(anatomize_s, 3), "queries_200_s": round(queries_s, 3),
            "groups": int(release.n_groups), "group_sizes": np.unique(release.group_sizes).tolist()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--domains", type=int, nargs="+", default=[50, 15_000, 70_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    results = []
    for m in args.domains:
        print(f"m = {m:,}", file=sys.stderr, flush=True)
        results.append(measure(args.rows, m, args.runs))
    worst = max(max(float(r["anatomize_s"]), float(r["queries_200_s"])) for r in results)
    print(json.dumps({"rows": args.rows, "l": L, "runs": args.runs, "results": results,
                      "target_s": TARGET_S, "target_met": worst <= TARGET_S}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
