"""Benchmark (not a test): every method's whole job on two trees side by side, against the pyarrow floor (issue 34).

    git -C /work/main archive BASE | tar -x -C /tmp/A        # the tree to compare with
    python benchmarks/bench_methods_ab.py --a /tmp/A --b . --rounds 3 [partition rr ...]

Each round runs the pyarrow floor once, then each method on tree A and tree B (A B in even rounds, B A in odd
ones), as bench_floor.py runs it (its ``METHOD_ARGS`` and ``PYARROW_FLOOR`` on run.py's 1M x 10 file, seed 34,
``--no-report``, a fresh ``PPDP_DATA_DIR`` each run) from the tree's folder (``python -m`` puts the working
directory before ``PYTHONPATH``), and times the child process (CPU s user + system, and wall).
``PYTHONDONTWRITEBYTECODE`` is passed on as it is set; clear both trees' ``__pycache__`` first (or let both write
them), or one tree pays for compiling the app and the other does not. Prints one JSON object: every run, the best
CPU of each, and each method's best over the best floor per tree.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import child_time  # noqa: E402 - one child process timed (shared by the issue-34 benchmarks)
from bench_floor import METHOD_ARGS, PYARROW_FLOOR  # noqa: E402 - the same contenders as bench_floor --methods
from run import make_csv  # noqa: E402 - the benchmark file, generated once and cached


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="tree A (e.g. main, from git archive)")
    parser.add_argument("--b", type=Path, required=True, help="tree B (e.g. a branch)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("methods", nargs="*", choices=sorted(METHOD_ARGS), metavar="METHOD")
    args = parser.parse_args(argv)
    methods = args.methods or list(METHOD_ARGS)
    trees = {"A": args.a.resolve(), "B": args.b.resolve()}
    data = make_csv(1_000_000)
    runs: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_methods_ab_") as tmp:
        work = Path(tmp)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        base["PPDP_PASSPHRASE"] = "correct horse battery staple"  # personalized seals a key
        for r in range(args.rounds):
            cpu, wall = child_time.timed([sys.executable, "-c", PYARROW_FLOOR, str(data), str(work / "copy.csv")],
                                         base, "bench_methods_ab")
            runs.setdefault("pyarrow", []).append((round(cpu, 2), round(wall, 2)))
            for method in methods:
                for tree in ("AB" if r % 2 == 0 else "BA"):
                    shutil.rmtree(work / "release", ignore_errors=True)
                    (work / "release.ppdpkey").unlink(missing_ok=True)
                    env = {**base, "PYTHONPATH": str(trees[tree]), "PPDP_DATA_DIR": str(work / f"dd_{r}_{method}_{tree}")}
                    cmd = [sys.executable, "-m", "ppdp_desktop", "anonymize", str(data), "--out", str(work / "release"),
                           "--seed", "34", "--no-report", "--quiet", "--method", method,
                           *(a.format(work=work) for a in METHOD_ARGS[method])]
                    here = os.getcwd()
                    os.chdir(trees[tree])  # `python -m` puts the working directory first on sys.path, before PYTHONPATH
                    try:
                        cpu, wall = child_time.timed(cmd, env, f"bench_methods_ab {method} {tree}")
                    finally:
                        os.chdir(here)
                    runs.setdefault(f"{method} {tree}", []).append((round(cpu, 2), round(wall, 2)))
                    print(f"[bench_methods_ab] round {r + 1}: {method} {tree} {cpu:.2f} CPU s", file=sys.stderr)
    floor = min(c for c, _ in runs["pyarrow"])
    best = {k: min(c for c, _ in v) for k, v in runs.items()}
    print(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M"), "load_average": [round(x, 2) for x in os.getloadavg()],
        "trees": {k: str(v) for k, v in trees.items()}, "runs_cpu_wall": runs, "best_cpu": best,
        "ratio_to_pyarrow_cpu": {m: {t: round(best[f"{m} {t}"] / floor, 2) for t in "AB"} for m in methods},
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
