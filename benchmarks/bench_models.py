"""Benchmark (not a test): "does my analysis survive?" (``compare_models``) on the 1M-row file.

    python benchmarks/bench_models.py                  # 1,000,000 rows, best of 3
    python benchmarks/bench_models.py --rows 100000 --runs 1

The 10-column file is the one ``run.py`` generates (cached in benchmarks/.cache/). Two releases of it:

* ``uniform``: uniform perturbation of ``diag`` at rho = (0.1, 0.5), ``id`` an identifier. Target ``diag``
  (50 classes); predictors sex, age, region, blood, visits, bmi and admitted (dates, one-hot: the 30 most
  frequent days and "other"); postcode is read as a code and left out.
* ``generalized``: the same job with k = 5 on the quasi-identifiers age, sex, region (age in 10- and 20-year
  ranges), so the release model is trained and tested on ranges.

Each ``compare_models`` call samples 200,000 records (seeded), encodes them, and fits a CART tree and a
logistic regression twice (original and release). Timed: the whole call (best of ``--runs``, ``gc.collect()``
before each), and once its parts: ``model_data`` (align, sample, split, encode) and the four fits. Prints
one JSON object on stdout; progress notes go to stderr. No target was set for this figure; the report's own
figures are in bench_report.py.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ppdp_desktop.core.anonymize import anonymize  # noqa: E402
from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.evaluation.model_data import model_data  # noqa: E402
from ppdp_desktop.core.evaluation.model_utility import MAX_ROWS, _logit, _tree_accuracy, compare_models  # noqa: E402
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, SensitivitySettings  # noqa: E402
from run import make_csv  # noqa: E402 - the benchmark file, generated once and cached

SEED = 0


def note(message: str) -> None:
    print(f"[bench_models] {message}", file=sys.stderr, flush=True)


def timed(fn):
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def parts(result) -> dict[str, float]:
    """The call taken apart once: encoding, then each fit (as compare_models makes them)."""
    encode_s, data = timed(lambda: model_data(result, None, SEED, MAX_ROWS, 0.3))
    values, freq = np.unique(data.y_original, return_counts=True)
    positive = values[np.argmax(freq)]
    return {
        "model_data_s": round(encode_s, 3),
        "tree_original_s": round(timed(lambda: _tree_accuracy(data.x_original, data.y_original, data.x_test,
                                                              data.y_test, SEED))[0], 3),
        "tree_release_s": round(timed(lambda: _tree_accuracy(data.x_release, data.y_release, data.x_test_release,
                                                             data.y_test, SEED))[0], 3),
        "logistic_original_s": round(timed(lambda: _logit(data.x_original, data.y_original == positive,
                                                          data.x_test))[0], 3),
        "logistic_release_s": round(timed(lambda: _logit(data.x_release, data.y_release == positive,
                                                         data.x_test_release))[0], 3),
        "design_columns": {"original": len(data.terms), "release": len(data.terms_release)},
    }


def case(result, runs: int) -> dict:
    times, comparison = [], None
    for _ in range(runs):
        seconds, comparison = timed(lambda: compare_models(result, seed=SEED))
        times.append(seconds)
    assert compare_models(result, seed=SEED) == comparison, "same seed, different figures"
    return {
        "compare_models_s": round(min(times), 3),
        "compare_models_runs_s": [round(t, 3) for t in times],
        **parts(result),
        "n_train": comparison.n_train,
        "n_test": comparison.n_test,
        "sampled": comparison.sampled,
        "baseline": round(comparison.baseline, 4),
        "tree_accuracy": [round(a, 4) for a in comparison.tree],
        "logistic_accuracy": [round(a, 4) for a in comparison.logistic],
        "odds_ratios_shown": len(comparison.odds),
        "notes": comparison.notes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    path = make_csv(args.rows)
    note(f"loading {path.name}")
    load_s, dataset = timed(lambda: load_table(path))
    settings = AnonymizationSettings("diag", method="uniform", identifiers=["id"],
                                     sensitivity=SensitivitySettings(rho1=0.1, rho2=0.5), seed=1)
    generalized = replace(settings, quasi=["age", "sex", "region"],
                          protection=ProtectionSettings(k=5, intervals={"age": [10, 20]}))
    out: dict = {"rows": args.rows, "max_rows": MAX_ROWS, "load_s": round(load_s, 3), "cases": {}}
    for name, job in (("uniform", settings), ("generalized", generalized)):
        note(f"anonymize ({name})")
        anonymize_s, result = timed(lambda job=job: anonymize(dataset, job))
        note(f"compare_models ({name}), {args.runs} run(s)")
        out["cases"][name] = {"anonymize_s": round(anonymize_s, 3), **case(result, args.runs)}
    out["target_s"] = None
    out["target_met"] = None
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
