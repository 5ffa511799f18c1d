"""Randomized response under a linking-attack bound: risk and optimization times.

``python benchmarks/bench_rr.py`` prints JSON. Targets (issue: RR): adult-sized data (30k-45k rows,
QI domains 16 x 7 x 2 x 5, S with 7 values) risk + optimization under 5 s; risk evaluation for a QI
space of 1,000,000 cells under 2 s.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from ppdp_desktop.core.methods.rr.parameters import optimal_parameters
from ppdp_desktop.core.methods.rr.risk import contingency, max_risk

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult.csv"


def best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    out: dict[str, object] = {}
    rng = np.random.default_rng(0)
    dims = [100, 100, 100, 2]
    n = 2_000_000
    codes = [rng.integers(0, d, n) for d in dims]
    counts = contingency(codes, dims)
    out["risk_1m_cells_s"] = {"qi": best(lambda: max_risk(counts, [0.9, 0.9, 0.9], None)),
                              "both": best(lambda: max_risk(counts, [0.9, 0.9, 0.9], 0.9))}
    if ADULT.is_file():
        from ppdp_desktop.core.data.domain import encode_column
        from ppdp_desktop.core.data.loading import load_table

        frame = load_table(ADULT).frame
        cols = ["education", "marital-status", "sex", "race", "workclass"]
        enc = [encode_column(frame[c], c) for c in cols]
        counts = contingency([c for _, c in enc], [d.m for d, _ in enc])
        out["adult_dims"] = [d.m for d, _ in enc]
        out["adult_risk_plus_optimization_s"] = {
            f"l={l}": best(lambda l=l: optimal_parameters(counts, l, "both")) for l in (2, 3, 4, 5)
        }
    out["targets"] = {"adult_s": 5.0, "risk_1m_cells_s": 2.0}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
