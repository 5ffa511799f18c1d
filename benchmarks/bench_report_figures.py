"""Benchmark (not a test): each kind of the 1M uniform job's report figures, built and drawn as PNG.

    PYTHONPATH=tree python benchmarks/bench_report_figures.py     # one tree; alternate two trees A B A B

50 values (40 bars shown), best of 5 process-CPU timings after a warm-up, and the PNG's size. Works on any tree
whose ``figures`` module has ``distribution_figure``, ``retention_figure``, ``posterior_figure``,
``class_size_figure`` and ``figure_png`` (matplotlib's figures before issue 34's fourth session, charts after).
"""
from __future__ import annotations

import time

import numpy as np

from ppdp_desktop.core.evaluation import figures as F


def main() -> int:
    n = 50
    values = [f"D{i:02d}" for i in range(n)]
    counts = np.sort(np.random.default_rng(1).integers(1000, 40000, n).astype(float))[::-1]
    makers = {
        "distribution": lambda: F.distribution_figure(values, counts, counts * 1.01, counts * 0.98, counts * 1.03),
        "retention": lambda: F.retention_figure(values, counts, np.linspace(0.3, 0.6, n), np.eye(n) * 0.35),
        "posterior": lambda: F.posterior_figure(values, np.linspace(0.1, 0.45, n), np.full(n, 0.5), counts / counts.sum()),
        "class sizes": lambda: F.class_size_figure({1: 30, 2: 40, 60: 999_000}, {2: 10, 7: 700, 80: 999_000}, 5),
    }
    F.warm_up()
    F.figure_png(makers["class sizes"]())
    out = []
    for name, make in makers.items():
        best_build, best_draw, size = float("inf"), float("inf"), 0
        for _ in range(5):
            start = time.process_time()
            figure = make()
            built = time.process_time()
            png = F.figure_png(figure)
            drawn = time.process_time()
            best_build, best_draw, size = min(best_build, built - start), min(best_draw, drawn - built), len(png)
        out.append(f"{name}: build {best_build * 1000:.0f} ms, draw {best_draw * 1000:.0f} ms, {size // 1000} kB")
    print("; ".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
