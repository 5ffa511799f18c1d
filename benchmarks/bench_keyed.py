"""Keyed, record-addressed randomness (issue 19, point 1): throughput in records per second.

``python benchmarks/bench_keyed.py [--records N] [--repeat R]`` prints one JSON object.
Measures, for N = 10,000,000 records (best and median of R runs, plus the first, cold run):

* ``uniforms``: ``stream.uniforms(0, N)`` alone;
* ``sort_keys``: the per-record 64-bit shuffle keys;
* ``perturbation``: the draws of a uniform perturbation with m = 50 values, keep = u < p and
  replacement = integers(high=m) (two streams), and the release ``where(keep, codes, replacement)``;
  ``perturbation_bernoulli`` is the same with the integer-compare keep mask
  (``stream.bernoulli``), ``perturbation_chunked`` the same computed in chunks of 1,000,000 records
  (as a streamed job would: the result is identical, checked);
* ``pcg64_baseline``: the same perturbation with numpy's PCG64 (the generator being retired).

Target (issue 19): perturbation >= 40 M records/s on this machine.
"""
from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np

from ppdp_desktop.core.privacy.keyed import KeyedRandomness

TARGET_RECORDS_PER_S = 40e6
M = 50
P_KEEP = 0.5


def measure(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall times of ``repeat`` calls of ``fn`` (the first one is the cold run)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def summary(n: int, times: list[float]) -> dict:
    return {
        "records_per_s_best": n / min(times),
        "records_per_s_median": n / float(np.median(times)),
        "records_per_s_first": n / times[0],
        "seconds_best": min(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, repeat = args.records, args.repeat

    keyed = KeyedRandomness(20240601)
    keep_stream = keyed.stream("diag", "keep")
    value_stream = keyed.stream("diag", "replacement")
    shuffle_stream = keyed.stream("", "shuffle")
    codes = np.random.default_rng(0).integers(0, M, size=n).astype(np.int64)

    def perturb(start: int = 0, stop: int = n) -> np.ndarray:
        keep = keep_stream.uniforms(start, stop) < P_KEEP
        return np.where(keep, codes[start:stop], value_stream.integers(start, stop, M))

    def perturb_bernoulli(start: int = 0, stop: int = n) -> np.ndarray:
        keep = keep_stream.bernoulli(start, stop, P_KEEP)
        return np.where(keep, codes[start:stop], value_stream.integers(start, stop, M))

    chunk = 1_000_000

    def perturb_chunked() -> np.ndarray:
        return np.concatenate([perturb_bernoulli(a, min(a + chunk, n)) for a in range(0, n, chunk)])

    def pcg64() -> np.ndarray:
        rng = np.random.default_rng(1)
        keep = rng.random(n) < P_KEEP
        return np.where(keep, codes, rng.integers(0, M, size=n))

    assert np.array_equal(perturb(), perturb_chunked())
    report = {
        "records": n,
        "m": M,
        "p_keep": P_KEEP,
        "repeat": repeat,
        "uniforms": summary(n, measure(lambda: keep_stream.uniforms(0, n), repeat)),
        "sort_keys": summary(n, measure(lambda: shuffle_stream.sort_keys(0, n), repeat)),
        "perturbation": summary(n, measure(perturb, repeat)),
        "perturbation_bernoulli": summary(n, measure(perturb_bernoulli, repeat)),
        "perturbation_chunked": summary(n, measure(perturb_chunked, repeat)),
        "pcg64_baseline": summary(n, measure(pcg64, repeat)),
        "target_perturbation_records_per_s": TARGET_RECORDS_PER_S,
    }
    report["target_met"] = report["perturbation"]["records_per_s_median"] >= TARGET_RECORDS_PER_S
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
