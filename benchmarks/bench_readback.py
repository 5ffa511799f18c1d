"""Benchmark of the in-memory job's read-back (not a test): ``ppdp anonymize --no-report`` of two code trees, A B A B.

    python benchmarks/bench_readback.py --before /tmp/base --after .            # 1,000,000 x 10, 2 rounds
    python benchmarks/bench_readback.py --before /tmp/base --after . --profile  # and the read-back's share

Each round runs ``ppdp anonymize --in-memory --method uniform --no-report`` as a whole child process with
``PYTHONPATH`` set to the ``--before`` tree, then the ``--after`` one (``git archive COMMIT ppdp_desktop | tar -x``
gives a tree), on ``run.py``'s generated 10-column CSV; it reports each child's CPU seconds (user + system, from
``os.wait4``) and wall seconds. The releases of the two trees must be byte-identical (compared here). With
``--profile``, one more run of each tree under cProfile gives the cumulative seconds of the release's read-back
(``TableSource.read_back``) and of ``verify_written``. Prints one JSON object on stdout.
"""
from __future__ import annotations

import argparse
import filecmp
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ARGS = ["--in-memory", "--identifier", "id", "--seed", "1", "--method", "uniform", "--sensitive", "diag",
        "--theta", "3", "--no-report"]
#: the profiled functions whose cumulative seconds are reported (pstats' (file suffix, name))
PROFILED = {"read_back": ("release/pipeline.py", "read_back"), "verify_written": ("release/pipeline.py", "verify_written"),
            "publish_release": ("release/pipeline.py", "publish_release")}


def run(tree: Path, data: Path, out: Path, profile: Path | None = None) -> tuple[float, float]:
    """CPU and wall seconds of one ``ppdp anonymize`` child with ``tree`` first on its path."""
    shutil.rmtree(out, ignore_errors=True)
    appdata = out.parent / f"{out.name}.appdata"  # fresh each run: the ledger's earlier releases would count
    shutil.rmtree(appdata, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "PPDP_DATA_DIR": str(appdata)}
    script = out.parent / "ppdp_cli.py"
    script.write_text("import sys\nfrom ppdp_desktop.cli import main\nsys.exit(main())\n")
    prefix = ["-m", "cProfile", "-o", str(profile)] if profile is not None else []
    command = [sys.executable, *prefix, str(script), "anonymize", str(data), "--out", str(out), *ARGS]
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{tree}: exit {child.returncode}: {child.stderr.read().decode()[-2000:] if child.stderr else ''}")
    return usage.ru_utime + usage.ru_stime, wall


def profiled(path: Path) -> dict[str, float]:
    """The cumulative seconds of :data:`PROFILED` in a cProfile dump."""
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    found = {}
    for label, (suffix, name) in PROFILED.items():
        found[label] = round(sum(v[3] for (file, _, func), v in stats.items() if file.endswith(suffix) and func == name), 2)
    return found


def _meta(folder: Path) -> dict:
    """release.json but for when, where and by which app it was made (as tests/test_golden_releases.py compares)."""
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    return {k: v for k, v in meta.items() if k not in ("created", "app", "provenance")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the tree holding ppdp_desktop before the change")
    parser.add_argument("--after", type=Path, default=HERE.parent, help="the tree after it (default: this one)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args(argv)
    from run import make_csv

    data = make_csv(options.rows)
    trees = {"before": options.before.resolve(), "after": options.after.resolve()}
    result: dict[str, object] = {"rows": options.rows, "args": ARGS}
    with tempfile.TemporaryDirectory(prefix="bench_readback.") as work:
        cpu: dict[str, list[float]] = {k: [] for k in trees}
        wall: dict[str, list[float]] = {k: [] for k in trees}
        for _ in range(options.rounds):  # A B A B
            for label, tree in trees.items():
                c, w = run(tree, data, Path(work) / label)
                cpu[label].append(round(c, 2))
                wall[label].append(round(w, 2))
        same = filecmp.cmp(Path(work) / "before" / "release.csv", Path(work) / "after" / "release.csv", shallow=False)
        same = same and _meta(Path(work) / "before") == _meta(Path(work) / "after")
        result.update(cpu_s=cpu, wall_s=wall, identical_release=same,
                      cpu_ratio_after_before=round(min(cpu["after"]) / min(cpu["before"]), 3))
        if options.profile:
            result["profile_cumulative_s"] = {}
            for label, tree in trees.items():
                dump = Path(work) / f"{label}.prof"
                run(tree, data, Path(work) / label, dump)
                result["profile_cumulative_s"][label] = profiled(dump)  # type: ignore[index]
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
