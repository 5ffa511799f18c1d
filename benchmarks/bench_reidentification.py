"""The whole job with and without k-anonymity: what protecting the quasi-identifiers costs.

``python benchmarks/bench_reidentification.py [--rows N]`` prints JSON. Target (re-identification issue):
the job with k (risk analysis before and after, optimal generalization of 5 quasi-identifiers with 5
levels each, the fail-closed re-check) within 1.5x of the same job without k (which still measures the
risk). Data: ``bench_generalization.make_data("small_domains")`` (1,000,000 records, about 262,000
distinct quasi-identifier combinations) plus a 50-value Zipf sensitive column; fine-grain perturbation,
theta 3; best of 3.
"""
from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_generalization import make_data, zipf  # noqa: E402
from ppdp_desktop.core.anonymize import anonymize  # noqa: E402
from ppdp_desktop.core.data.dataset import Dataset  # noqa: E402
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, SensitivitySettings  # noqa: E402


def best(fn, repeat: int) -> tuple[float, list[float], object]:
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), [round(t, 3) for t in times], result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frame, hierarchies = make_data("small_domains", args.rows)
    rng = np.random.default_rng(1)
    frame["diagnosis"] = [f"D{i:02d}" for i in zipf(rng, 50, args.rows)]
    dataset = Dataset(frame)
    quasi = list(hierarchies)
    base = AnonymizationSettings("diagnosis", "finegrain", quasi=quasi, sensitivity=SensitivitySettings(theta=3.0),
                                 seed=1)
    without_s, without_runs, plain = best(lambda: anonymize(dataset, base), args.repeat)
    out = {"rows": args.rows, "quasi_identifiers": quasi, "without_k_s": round(without_s, 3),
           "without_k_runs_s": without_runs}
    for k in (5, 50):
        settings = replace(base, protection=ProtectionSettings(k=k, suppression=0.05, hierarchies=dict(hierarchies)))
        with_s, with_runs, result = best(lambda settings=settings: anonymize(dataset, settings), args.repeat)
        g = result.reidentification.generalization
        out[f"k{k}"] = {"with_k_s": round(with_s, 3), "runs_s": with_runs, "ratio": round(with_s / without_s, 2),
                        "levels": g.levels, "suppressed": g.suppressed, "precision": round(g.precision, 4),
                        "sample_uniques_before": result.reidentification.before.sample_uniques,
                        "sample_uniques_after": result.reidentification.after.sample_uniques}
    out["sample_uniques_without_k"] = plain.reidentification.after.sample_uniques
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["target_ratio_max"] = 1.5
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
