"""Benchmark (not a test): what the report adds to a whole ``ppdp anonymize`` job on the 1M-row file.

    python benchmarks/bench_report_overhead.py              # 1,000,000 rows, 3 runs of each, alternating
    python benchmarks/bench_report_overhead.py --rows 100000 --runs 1

Runs the same job (uniform perturbation of ``diag`` at rho = (0.1, 0.5), identifiers pseudonymized, a
sealed key) as a separate process, with and without ``--no-report``, alternately, and prints one JSON
object: every wall and CPU time (user + system of the whole process), the best and the median of each, and
their ratios. Target (issues 17 and 34): the job with its report within 1.3x of the job without, in CPU
seconds as well as wall. The 10-column file is the one ``run.py`` generates.

Each run has its own empty ``PPDP_DATA_DIR``: with one shared folder (or the user's own) every run's release
joined the ledger of the runs before it, and the cumulative check of the same patients' releases grew from run to
run (the job without its report measured 3.1-3.9 -> 5.1-5.8 CPU s on a ledger of earlier benchmark runs). The
children run from compiled bytecode (:mod:`child_time`).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from child_time import compile_app, timed  # noqa: E402 - whole processes timed alike in every benchmark
from run import make_csv  # noqa: E402 - the benchmark file, generated once and cached

TARGET_RATIO = 1.3


def note(message: str) -> None:
    print(f"[bench_report_overhead] {message}", file=sys.stderr, flush=True)


def job(data: Path, work: Path, report: bool) -> tuple[float, float]:
    """One ``ppdp anonymize`` run in its own process and its own empty ledger folder; its wall time and its CPU time
    (user + system) in seconds."""
    for path in work.iterdir():  # the release, its key, every custodian file beside them and the ledger folder
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    (work / "data").mkdir()
    command = [sys.executable, "-c", "import sys; from ppdp_desktop.cli import main; sys.exit(main(sys.argv[1:]))",
               "anonymize", str(data), "--out", str(work / "release"), "--key", str(work / "release.ppdpkey"),
               "--sensitive", "diag", "--identifier", "id", "--method", "uniform", "--rho1", "0.1", "--rho2", "0.5",
               "--quiet"]
    if not report:
        command.append("--no-report")
    env = {**os.environ, "PPDP_PASSPHRASE": "correct horse battery staple", "PPDP_DATA_DIR": str(work / "data")}
    seconds, wall = timed(command, env, "bench_report_overhead")
    return wall, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    data = make_csv(args.rows)
    times: dict[str, list[float]] = {"no_report": [], "report": []}
    cpu: dict[str, list[float]] = {"no_report": [], "report": []}
    compile_app(dict(os.environ))
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            for kind in ("no_report", "report"):  # A B A B
                note(f"run {run + 1} of {args.runs}: {kind}")
                wall, seconds = job(data, Path(tmp), kind == "report")
                times[kind].append(wall)
                cpu[kind].append(seconds)
    best = {k: min(v) for k, v in times.items()}
    median = {k: statistics.median(v) for k, v in times.items()}
    out = {
        "rows": args.rows,
        "runs_s": {k: [round(t, 2) for t in v] for k, v in times.items()},
        "best_s": {k: round(t, 2) for k, t in best.items()},
        "median_s": {k: round(t, 2) for k, t in median.items()},
        "ratio_best": round(best["report"] / best["no_report"], 3),
        "ratio_median": round(median["report"] / median["no_report"], 3),
        "cpu_runs_s": {k: [round(t, 2) for t in v] for k, v in cpu.items()},
        "cpu_median_s": {k: round(statistics.median(v), 2) for k, v in cpu.items()},
        "cpu_ratio_median": round(statistics.median(cpu["report"]) / statistics.median(cpu["no_report"]), 3),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "target_ratio": TARGET_RATIO,
    }
    out["target_met"] = out["ratio_median"] <= TARGET_RATIO and out["cpu_ratio_median"] <= TARGET_RATIO
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
