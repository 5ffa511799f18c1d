"""Benchmark of the report (not a test): build_report + drawing its figures + write_html + write_pdf, 1M rows.

    python benchmarks/bench_report.py                 # 1,000,000 rows, best of 3
    python benchmarks/bench_report.py --rows 100000 --runs 1

The table: a 40-value Zipf sensitive column ``diag`` and four condition columns (``sex``, ``region``,
``age_band``, ``year``); fine-grain perturbation with theta = 3, seed 1. The figures are drawn once as PNG
(``render_images``), which the HTML and the PDF then embed. ``reports_from_release`` (rebuilding the
report from a written release) is timed as well, for reference. Prints one JSON object on stdout; progress
notes go to stderr. Target: all of it < 15 s (issue 17's end-to-end target is in bench_report_overhead.py).
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.schema import Schema
from ppdp_desktop.core.release.package import read_release, write_release
from ppdp_desktop.core.report.build import build_report, warm_up
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.files import write_html, write_pdf
from ppdp_desktop.core.report.from_release import reports_from_release
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

TARGET_S = 15.0


def note(message: str) -> None:
    print(f"[bench_report] {message}", file=sys.stderr, flush=True)


def make_frame(rows: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, 41) ** 1.1
    diag = np.array([f"diagnosis {i:02d}" for i in range(40)], dtype=object)
    regions = np.array([f"region {i}" for i in range(10)], dtype=object)
    return pd.DataFrame({
        "diag": pd.Series(diag[rng.choice(40, rows, p=weights / weights.sum())], dtype="str"),
        "sex": pd.Series(np.array(["F", "M"], dtype=object)[rng.integers(0, 2, rows)], dtype="str"),
        "region": pd.Series(regions[rng.integers(0, 10, rows)], dtype="str"),
        "age_band": rng.integers(0, 10, rows) * 10,
        "year": rng.integers(2015, 2023, rows),
    })


def best(fn, runs: int) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), times, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    note(f"making {args.rows:,} rows")
    frame = make_frame(args.rows)
    dataset = Dataset(frame, Path("bench.csv"), Schema.infer(frame))
    settings = AnonymizationSettings("diag", method="finegrain", sensitivity=SensitivitySettings(theta=3), seed=1)
    result = anonymize(dataset, settings)
    warm_up()
    plan = result.plan
    note("build_report")
    build_s, build_runs, report = best(lambda: build_report(result), args.runs)

    def drawn():
        fresh = build_report(result)
        started = time.perf_counter()
        fresh.render_images()
        return time.perf_counter() - started, fresh

    note("render_images")
    draws = [drawn() for _ in range(args.runs)]
    draw_s, report = min(draws, key=lambda d: d[0])
    context = ReportContext.from_anonymization(result)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        note("write_html")
        html_s, html_runs, _ = best(lambda: write_html([report], context, tmp_path / "report.html"), args.runs)
        note("write_pdf")
        pdf_s, pdf_runs, _ = best(lambda: write_pdf([report], context, tmp_path / "report.pdf"), args.runs)
        html_mb = (tmp_path / "report.html").stat().st_size / 1e6
        pdf_mb = (tmp_path / "report.pdf").stat().st_size / 1e6
        note("reports_from_release")
        release = read_release(write_release(result, tmp_path / "release"))
        source_s, source_runs, _ = best(lambda: reports_from_release(frame, release), args.runs)
    total = build_s + draw_s + html_s + pdf_s
    out = {
        "rows": args.rows,
        "values": int(plan.domain.m),
        "figures": len(report.figures),
        "build_report_s": round(build_s, 3),
        "build_report_runs_s": [round(t, 3) for t in build_runs],
        "render_images_s": round(draw_s, 3),
        "write_html_s": round(html_s, 3),
        "write_html_runs_s": [round(t, 3) for t in html_runs],
        "write_pdf_s": round(pdf_s, 3),
        "write_pdf_runs_s": [round(t, 3) for t in pdf_runs],
        "html_mb": round(html_mb, 2),
        "pdf_mb": round(pdf_mb, 2),
        "reports_from_release_s": round(source_s, 3),
        "reports_from_release_runs_s": [round(t, 3) for t in source_runs],
        "total_s": round(total, 3),
        "target_s": TARGET_S,
        "target_met": total < TARGET_S,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
