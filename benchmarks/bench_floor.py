"""Benchmark (not a test): the app's whole job against two floors on the same file (issue 34).

    python benchmarks/bench_floor.py                     # the 1M-row x 10-column file of run.py, 2 rounds
    python benchmarks/bench_floor.py --rows 100000 --rounds 1
    python benchmarks/bench_floor.py --data FILE.csv     # a file of your own

Each figure is a whole child process (interpreter start-up and imports included), run in rounds A B C A B C
so that a busy machine weighs on every contender alike (``--methods``: every method too, each with its own
options on run.py's file, against the pyarrow floor); each gets its CPU seconds (user + system, from
``getrusage(RUSAGE_CHILDREN)`` before and after) and its wall seconds:

(a) ``pyarrow``: the pyarrow floor, ``pyarrow.csv`` reading the file and writing it again;
(b) ``design``: the app's design floor in pyarrow only: read, shuffle the rows (``Table.take`` of a
    permutation), write, SHA-256 of the written bytes, read the written file back;
(c) ``ppdp``: ``ppdp anonymize --method uniform --no-report`` on it (``PPDP_DATA_DIR`` in a temporary folder,
    so the machine's release ledger is not touched).

Prints one JSON object: every run, the best of each, and the ratios c/a and c/b (of CPU and of wall).
Targets (issue 34): c/b within 1.3x, c/a within 5x.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import child_time  # noqa: E402 - one child process timed (shared by the issue-34 benchmarks)
from run import make_csv  # noqa: E402 - the benchmark file, generated once and cached

PYARROW_FLOOR = """
import sys
import pyarrow.csv as pc
table = pc.read_csv(sys.argv[1])
pc.write_csv(table, sys.argv[2])
"""

DESIGN_FLOOR = """
import hashlib, sys
import numpy as np
import pyarrow.csv as pc
table = pc.read_csv(sys.argv[1])
order = np.random.default_rng(34).permutation(table.num_rows)
pc.write_csv(table.take(order), sys.argv[2])
digest = hashlib.sha256()
with open(sys.argv[2], "rb") as handle:
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
back = pc.read_csv(sys.argv[2])
assert back.num_rows == table.num_rows, "the written file lost rows"
print(digest.hexdigest())
"""

CONTENDERS = ("pyarrow", "design", "ppdp")
#: each method's own options on run.py's file (``--methods``: every method against the pyarrow floor, target 5x)
METHOD_ARGS = {
    "uniform": ["--sensitive", "diag", "--rho1", "0.1", "--rho2", "0.5"],
    "finegrain": ["--identifier", "id", "--sensitive", "diag", "--theta", "3"],
    "partition": ["--identifier", "id", "--sensitive", "diag", "--rho1", "0.1", "--rho2", "0.5", "--quasi", "sex,region"],
    "rr": ["--identifier", "id", "--sensitive", "diag", "--quasi", "sex,region", "--l", "3"],
    "personalized": ["--identifier", "id", "--sensitive", "diag", "--graded", "age", "--categories", "4", "--key",
                     "{work}/release.ppdpkey"],
    "dp-microagg": ["--identifier", "id", "--attributes", "age,bmi", "--epsilon", "1", "--k", "10"],
    "generalization": ["--identifier", "id", "--quasi", "age,sex,region", "--k-anonymity", "5", "--suppression", "0.05",
                       "--intervals", "age=5"],
}


def note(message: str) -> None:
    print(f"[bench_floor] {message}", file=sys.stderr, flush=True)


def command(kind: str, data: Path, work: Path, columns: list[str]) -> list[str]:
    """The child process of one contender (``pyarrow``, ``design``, ``ppdp`` or a method's name), writing under
    ``work``."""
    if kind == "pyarrow":
        return [sys.executable, "-c", PYARROW_FLOOR, str(data), str(work / "copy.csv")]
    if kind == "design":
        return [sys.executable, "-c", DESIGN_FLOOR, str(data), str(work / "shuffled.csv")]
    job = [sys.executable, "-m", "ppdp_desktop", "anonymize", str(data), "--out", str(work / "release"), "--seed", "34",
           "--no-report", "--quiet"]
    if kind in METHOD_ARGS:
        return [*job, "--method", kind, *(a.format(work=work) for a in METHOD_ARGS[kind])]
    sensitive = "diag" if "diag" in columns else columns[-1]
    return [*job, "--sensitive", sensitive, "--method", "uniform", "--rho1", "0.1", "--rho2", "0.5"]


def timed(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``cmd`` to its end; its CPU seconds (user + system) and wall seconds."""
    cpu, wall = child_time.timed(cmd, env, "bench_floor")
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated file (run.py's data)")
    parser.add_argument("--data", type=Path, help="a CSV of your own instead of the generated one")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of A B C (default 2)")
    parser.add_argument("--methods", nargs="*", choices=sorted(METHOD_ARGS), metavar="METHOD",
                        help="also time these methods (none named: every method) on run.py's file")
    args = parser.parse_args(argv)
    contenders = (*CONTENDERS, *([] if args.methods is None else (args.methods or list(METHOD_ARGS))))
    data = args.data or make_csv(args.rows)
    columns = data.open(encoding="utf-8").readline().strip().split(",")
    runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in contenders}
    with tempfile.TemporaryDirectory(prefix="bench_floor_") as tmp:
        work = Path(tmp)
        base = {**os.environ, "PPDP_PASSPHRASE": "correct horse battery staple"}  # personalized seals a key
        child_time.compile_app(base)
        for round_ in range(args.rounds):
            for kind in contenders:
                note(f"round {round_ + 1} of {args.rounds}: {kind}")
                shutil.rmtree(work / "release", ignore_errors=True)
                (work / "release.ppdpkey").unlink(missing_ok=True)
                env = {**base, "PPDP_DATA_DIR": str(work / f"data_dir_{round_}_{kind}")}  # no earlier run's node kept
                runs[kind].append(timed(command(kind, data, work, columns), env))
    best = {kind: {m: min(r[m] for r in rs) for m in ("cpu_s", "wall_s")} for kind, rs in runs.items()}

    def ratio(a: str, b: str, m: str) -> float:
        return round(best[a][m] / best[b][m], 2)

    out = {
        "data": str(data), "bytes": data.stat().st_size, "machine": f"{platform.node()} {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d %H:%M"), "load_average": [round(x, 2) for x in os.getloadavg()],
        "runs": runs, "best": best,
        "ppdp_over_pyarrow": {"cpu": ratio("ppdp", "pyarrow", "cpu_s"), "wall": ratio("ppdp", "pyarrow", "wall_s")},
        "ppdp_over_design": {"cpu": ratio("ppdp", "design", "cpu_s"), "wall": ratio("ppdp", "design", "wall_s")},
        "design_over_pyarrow": {"cpu": ratio("design", "pyarrow", "cpu_s")},
        "methods_over_pyarrow_cpu": {kind: ratio(kind, "pyarrow", "cpu_s") for kind in contenders[len(CONTENDERS):]},
        "targets": {"ppdp_over_design": 1.3, "ppdp_over_pyarrow_any_method": 5.0},
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
