"""Differential privacy by individual-ranking microaggregation (dp-microagg): time and utility.

``python benchmarks/bench_dp.py`` prints JSON. Targets (issue: DP microaggregation):
(a) 1,000,000 rows x 8 numeric attributes through ``anonymize`` (plan + verify + apply + release
table) under 3 s; (b) 100,000 rows of a categorical attribute over a 500-leaf taxonomy under 5 s;
(c) adult ``age`` relative error for epsilon in {1, 10} and k in {10, 25, 50, 100} against plain
Laplace (seed 003 section 4; mean of 3 seeds); (d) the cost of the exact discrete Laplace sampler (issue 20,
point 4) against the floating-point inverse-CDF Laplace it replaced, per draw and per 1M-row column
(``python benchmarks/bench_dp.py noise`` runs (d) alone).
"""
from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.privacy.randomness import RandomSource
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.taxonomy.io import from_dict

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult.csv"
TARGETS = {"numeric_1m_x8_s": 3.0, "categorical_100k_500_leaves_s": 5.0}


def best(fn, repeat: int = 3) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), [round(t, 3) for t in times]


def stages(dataset: Dataset, settings: AnonymizationSettings) -> dict[str, float]:
    """prepare / verify / apply on their own (best of 3 each)."""
    method = get_method("dp-microagg")
    plan = method.prepare(dataset, settings)
    return {
        "prepare_s": round(best(lambda: method.prepare(dataset, settings))[0], 3),
        "verify_s": round(best(plan.verify)[0], 4),
        "apply_s": round(best(lambda: plan.apply(dataset.frame, RandomSource(1)))[0], 3),
    }


def numeric(n: int = 1_000_000, m: int = 8) -> dict[str, object]:
    rng = np.random.default_rng(0)
    columns = {f"x{j}": rng.integers(0, 1000, n) if j % 2 else rng.normal(50.0, 15.0, n).clip(0, 100) for j in range(m)}
    frame = pd.DataFrame(columns)
    domains = {c: (0.0, 1000.0) if j % 2 else (0.0, 100.0) for j, c in enumerate(frame.columns)}
    dataset = Dataset(frame)
    settings = AnonymizationSettings("", method="dp-microagg", seed=1,
                                     options=DPSettings(list(frame.columns), 1.0, 25, domains))
    total, runs = best(lambda: anonymize(dataset, settings))
    return {"n": n, "attributes": m, "k": 25, "anonymize_s": round(total, 3), "runs_s": runs, **stages(dataset, settings)}


def taxonomy_500() -> dict:
    groups = [{"label": f"G{g:02d}", "children": [{"label": f"L{g:02d}-{i:02d}"} for i in range(25)]} for g in range(20)]
    return {"attribute": "dx", "root": {"label": "*", "children": groups}}


def categorical(n: int = 100_000) -> dict[str, object]:
    taxonomy = from_dict(taxonomy_500())
    leaves = taxonomy.leaf_labels()
    rng = np.random.default_rng(0)
    weights = 1.0 / np.arange(1, len(leaves) + 1)
    codes = rng.choice(len(leaves), size=n, p=weights / weights.sum())
    dataset = Dataset(pd.DataFrame({"dx": pd.Categorical.from_codes(codes, categories=leaves)}))
    out: dict[str, object] = {"n": n, "leaves": len(leaves), "labels": len(taxonomy) - 1, "k": 25}
    for candidates in ("covering", "taxonomy"):
        settings = AnonymizationSettings("", method="dp-microagg", seed=1,
                                         options=DPSettings(["dx"], 1.0, 25, {}, {"dx": taxonomy}, candidates))
        total, runs = best(lambda settings=settings: anonymize(dataset, settings))
        out[candidates] = {"anonymize_s": round(total, 3), "runs_s": runs, **stages(dataset, settings)}
    return out


def adult_age() -> dict[str, object]:
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.methods.dp.evaluation import LAPLACE, METHOD, RANKING, compare_dp

    dataset = load_table(ADULT)
    out: dict[str, object] = {}
    for epsilon in (1.0, 10.0):
        rows = [r for s in (0, 1, 2) for r in compare_dp(dataset, ["age"], epsilon, [10, 25, 50, 100], {"age": (17, 90)}, seed=s,
                                                      run=anonymize)]

        def mean(method: str, field: str, k: int | None = None, rows: list = rows) -> float:
            return round(float(np.mean([getattr(r, field) for r in rows if r.method == method and (k is None or r.k == k)])), 4)

        out[f"epsilon={epsilon:g}"] = {
            "plain_laplace": {"re": mean(LAPLACE, "relative_error"), "jsd": mean(LAPLACE, "jsd")},
            **{f"k={k}": {"re": mean(METHOD, "relative_error", k), "jsd": mean(METHOD, "jsd", k),
                          "variance_variation": mean(METHOD, "variance_variation", k),
                          "ranking_re": mean(RANKING, "relative_error", k)} for k in (10, 25, 50, 100)},
        }
    return out


def noise() -> dict[str, object]:
    """Draws per second of the released discrete Laplace (exact, integers, keyed; about 8 words per draw) and of the
    floating-point Laplace (one word per draw, kept for the plain baseline), for the clusters of a 1M-row column at
    k = 25 (40,000) and k = 10 (100,000) and for 1,000,000 draws; t = 146 (adult age, epsilon 1, M 2: grid step 1)
    and t = 20,000 (a default grid of about b / 100 to b / 1000)."""
    from ppdp_desktop.core.methods.dp.noise import DISCRETE_LAPLACE_DRAW, LAPLACE_DRAW, discrete_laplace, laplace_noise
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness

    keyed = KeyedRandomness(1)
    out: dict[str, object] = {}
    for n in (40_000, 100_000, 1_000_000):
        row: dict[str, object] = {}
        floating = best(lambda n=n: laplace_noise(keyed.stream("x", LAPLACE_DRAW), 0, n, 5.84))[0]
        row["float_laplace_s"] = round(floating, 4)
        for t in (146, 20_000):
            exact = best(lambda n=n, t=t: discrete_laplace(keyed.stream("x", DISCRETE_LAPLACE_DRAW), 0, n, t))[0]
            row[f"discrete_t={t}_s"] = round(exact, 4)
            row[f"discrete_t={t}_us_per_draw"] = round(exact / n * 1e6, 2)
            row[f"discrete_t={t}_vs_float"] = round(exact / floating, 1)
        out[f"draws={n}"] = row
    return out


def main() -> int:
    if sys.argv[1:] == ["noise"]:
        print(json.dumps({"noise": noise()}, indent=2))
        return 0
    out: dict[str, object] = {"numeric": numeric(), "categorical": categorical(), "noise": noise()}
    if ADULT.is_file():
        out["adult_age"] = adult_age()
    out["targets"] = TARGETS
    out["targets_met"] = {
        "numeric_1m_x8_s": out["numeric"]["anonymize_s"] < TARGETS["numeric_1m_x8_s"],
        "categorical_100k_500_leaves_s": out["categorical"]["covering"]["anonymize_s"] < TARGETS["categorical_100k_500_leaves_s"],
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
