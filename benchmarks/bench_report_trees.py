"""Benchmark (not a test): the report's overhead in two source trees, whole processes alternated A B A B.

    python benchmarks/bench_report_trees.py /tmp/A /path/to/B            # 1,000,000 rows, 2 rounds
    python benchmarks/bench_report_trees.py /tmp/A . --rounds 3 --rows 100000

Runs ``bench_report_overhead.py``'s job (``ppdp anonymize`` uniform, identifiers pseudonymized, a sealed key) with
and without ``--no-report`` for each tree (``PYTHONPATH=tree``), alternately, each in its own process with a fresh,
empty ``PPDP_DATA_DIR`` and compiled bytecode (``PYTHONDONTWRITEBYTECODE`` dropped; one untimed run per tree first
compiles it and caches the file). Prints every run (wall, CPU = user + system) with the load average, then per tree
the medians and the ratio with / without the report: what issue 34's 1.3x is about, compared between a branch and
the commit it was made from on a shared machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import make_csv  # noqa: E402 - the benchmark file, generated once and cached


def job(tree: Path, data: Path, report: bool) -> tuple[float, float]:
    """One job of ``tree`` in its own process and its own ledger folder: wall and CPU seconds."""
    work = Path(tempfile.mkdtemp(prefix="ppdp-bench-trees-"))
    try:
        (work / "data").mkdir()
        command = [sys.executable, "-c", "import sys; from ppdp_desktop.cli import main; sys.exit(main(sys.argv[1:]))",
                   "anonymize", str(data), "--out", str(work / "release"), "--key", str(work / "release.ppdpkey"),
                   "--sensitive", "diag", "--identifier", "id", "--method", "uniform", "--rho1", "0.1", "--rho2", "0.5",
                   "--quiet", *([] if report else ["--no-report"])]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPATH=str(tree), PPDP_DATA_DIR=str(work / "data"), PPDP_PASSPHRASE="correct horse battery staple")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, cwd=tempfile.gettempdir())
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs=2, type=Path, help="the two source trees, A (before) and B (after)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    data = make_csv(args.rows)
    trees = {"A": args.trees[0].resolve(), "B": args.trees[1].resolve()}
    for tree in trees.values():
        job(tree, data, True)  # bytecode compiled, the file in the page cache
    runs: dict[tuple[str, bool], list[tuple[float, float]]] = {(t, r): [] for t in trees for r in (False, True)}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            for report in (False, True):
                load = os.getloadavg()[0]
                runs[(name, report)].append(job(tree, data, report))
                wall, cpu = runs[(name, report)][-1]
                print(f"{name} {'report' if report else 'no-report'}: wall {wall:.2f} s, CPU {cpu:.2f} s, load {load:.1f}",
                      flush=True)
    for name in trees:
        cpu = [statistics.median(c for _, c in runs[(name, r)]) for r in (False, True)]
        wall = [statistics.median(w for w, _ in runs[(name, r)]) for r in (False, True)]
        print(f"{name} ({trees[name]}): CPU median {cpu[0]:.2f} / {cpu[1]:.2f} s, ratio {cpu[1] / cpu[0]:.3f}, extra "
              f"{cpu[1] - cpu[0]:.2f} s; wall median {wall[0]:.2f} / {wall[1]:.2f} s, ratio {wall[1] / wall[0]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
