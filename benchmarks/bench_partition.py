"""Perturbation partitioning: plan + apply time (and peak memory) on Zipf data.

``python benchmarks/bench_partition.py`` prints JSON. Targets (issue: PP): 500,000 records with
m = 50 under 1 s; 1,000,000 records over m = 15,000 values (ICD-sized) under 10 s and 2 GB.
"""
from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.privacy.randomness import RandomSource
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings


def zipf_column(n: int, m: int, seed: int = 0) -> pd.Series:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, m + 1)
    codes = rng.choice(m, size=n, p=weights / weights.sum())
    return pd.Series(pd.Categorical.from_codes(codes, categories=[f"C{i:05d}" for i in range(m)]))


def run(n: int, m: int, rho1: float, rho2: float) -> dict[str, float]:
    dataset = Dataset(pd.DataFrame({"dx": zipf_column(n, m)}))
    settings = AnonymizationSettings("dx", "partition", sensitivity=SensitivitySettings(rho1=rho1, rho2=rho2))
    method = get_method("partition")
    start = time.perf_counter()
    plan = method.prepare(dataset, settings)
    planned = time.perf_counter()
    plan.verify()
    verified = time.perf_counter()
    plan.apply(dataset.frame, RandomSource(1))
    done = time.perf_counter()
    return {"n": n, "m": m, "rho1": rho1, "rho2": rho2, "subtables": len(plan.members),
            "plan_s": planned - start, "verify_s": verified - planned, "apply_s": done - verified,
            "plan_apply_s": (planned - start) + (done - verified), "eps_part": plan.partition.eps_part,
            "eps_unpartitioned": plan.partition.eps_unpartitioned}


def main() -> int:
    results = [run(500_000, 50, 1 / 13, 1 / 3), run(1_000_000, 15_000, 0.001, 0.05)]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"runs": results, "peak_rss_mb": peak_mb,
                      "targets": {"m50_500k_s": 1.0, "m15000_1m_s": 10.0, "memory_mb": 2048}}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
