"""Benchmark (not a test): peak memory of the in-memory job per input byte, and where it is reached (issue 34).

    python benchmarks/bench_memory.py                        # run.py's 1M x 10 CSV, 2 rounds A B A B
    python benchmarks/bench_memory.py --rows 5000000 --rounds 1
    python benchmarks/bench_memory.py --probe                # and one probed in-process run: the peak's stack

Each figure is a whole child process, its peak RSS (``ru_maxrss`` of that child alone, from ``os.wait4``) divided
by the input file's size in bytes:

(a) ``pyarrow``: the floor, ``pyarrow.csv`` reading the file and writing it again;
(b) ``ppdp``: ``ppdp anonymize --in-memory --method uniform --no-report`` (``PPDP_DATA_DIR`` in a temporary folder).

With ``--probe``, one more ``ppdp`` child runs the CLI in-process with a thread that reads the process's RSS
(``/proc/self/statm``) and Arrow's pool every 5 ms together with the main thread's stack (its frames in
``ppdp_desktop``); it reports the RSS and the stack at the peak, and the largest RSS reached inside each of the
job's phases. Prints one JSON object. Target (issue 34): peak RSS <= 6 bytes per input byte at 1M and 5M rows.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

PYARROW_FLOOR = """
import sys
import pyarrow.csv as pc
table = pc.read_csv(sys.argv[1])
pc.write_csv(table, sys.argv[2])
"""

#: the probed child: the CLI in-process, a sampling thread beside it; writes its findings as JSON to argv[1]
PROBE = r"""
import json, os, sys, threading, time
import pyarrow as pa
PAGE = os.sysconf("SC_PAGE_SIZE")
main_id = threading.get_ident()
samples = []  # (seconds, rss bytes, arrow bytes, stack)
done = threading.Event()

def stack():
    frame = sys._current_frames().get(main_id)
    names = []
    while frame is not None:
        code = frame.f_code
        if "ppdp_desktop" in code.co_filename:
            names.append(f"{code.co_filename.split('ppdp_desktop/')[-1]}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return names[::-1]

def sample():
    start = time.perf_counter()
    with open("/proc/self/statm") as statm:
        while not done.is_set():
            statm.seek(0)
            rss = int(statm.read().split()[1]) * PAGE
            samples.append((round(time.perf_counter() - start, 3), rss, pa.total_allocated_bytes(), stack()))
            time.sleep(0.005)

thread = threading.Thread(target=sample, daemon=True)
thread.start()
from ppdp_desktop.cli import main
code = main(sys.argv[2:])
done.set()
thread.join()
peak = max(samples, key=lambda s: s[1])
rises = {}  # the RSS each innermost place added (the sum of rises while it ran), and the RSS when it last ran
for before, after in zip(samples, samples[1:]):
    place = " > ".join(n.rsplit(":", 1)[0].split("/")[-1] for n in after[3][-3:]) or "(start-up)"
    grown, last = rises.get(place, (0, 0))
    rises[place] = (grown + max(after[1] - before[1], 0), after[1])
phases = sorted(([p, g, r] for p, (g, r) in rises.items() if g >= (8 << 20)), key=lambda x: -x[1])
with open(sys.argv[1], "w") as out:
    json.dump({"exit": code, "peak_rss": peak[1], "peak_arrow": peak[2], "peak_at_s": peak[0], "peak_stack": peak[3],
               "timeline": [[s[0], s[1] >> 20, s[2] >> 20] for s in samples[::20]],
               "arrow_max": max(s[2] for s in samples),
               "rises": phases}, out)
"""


def note(message: str) -> None:
    print(f"[bench_memory] {message}", file=sys.stderr, flush=True)


def job_args(data: Path, out: Path) -> list[str]:
    """``ppdp anonymize``'s arguments for the in-memory uniform job without its report."""
    columns = data.open(encoding="utf-8").readline().strip().split(",")
    sensitive = "diag" if "diag" in columns else columns[-1]
    return ["anonymize", str(data), "--out", str(out), "--in-memory", "--identifier", "id", "--sensitive", sensitive,
            "--method", "uniform", "--rho1", "0.1", "--rho2", "0.5", "--seed", "34", "--no-report", "--quiet"]


def peak_of(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Run ``cmd`` to its end: its peak RSS (bytes; ``ru_maxrss`` is in kB on Linux), CPU and wall seconds."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        error = child.stderr.read().decode(errors="replace").strip().splitlines()[-1:] if child.stderr else ""
        raise SystemExit(f"bench_memory: {' '.join(cmd[:4])} failed: {error}")
    return {"peak_rss": usage.ru_maxrss * 1024, "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "wall_s": round(wall, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the generated file (run.py's data)")
    parser.add_argument("--data", type=Path, help="a CSV of your own instead of the generated one")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of A B (default 2)")
    parser.add_argument("--probe", action="store_true", help="and one probed run: the stack at the peak")
    args = parser.parse_args(argv)
    if args.data is None:  # made in a child: a child's ru_maxrss keeps its parent's RSS from before its exec, so
        # generating 5M rows here (2 GB of pandas) would show as every contender's peak
        made = subprocess.run([sys.executable, "-c", f"import run; print(run.make_csv({args.rows}))"], cwd=HERE,
                              check=True, capture_output=True, text=True)
        args.data = Path(made.stdout.strip().splitlines()[-1])
    size = args.data.stat().st_size
    runs: dict[str, list[dict[str, float]]] = {"pyarrow": [], "ppdp": []}
    with tempfile.TemporaryDirectory(prefix="bench_memory_") as tmp:
        work = Path(tmp)
        env = {**os.environ, "PPDP_DATA_DIR": str(work / "data_dir")}
        commands = {"pyarrow": [sys.executable, "-c", PYARROW_FLOOR, str(args.data), str(work / "copy.csv")],
                    "ppdp": [sys.executable, "-m", "ppdp_desktop", *job_args(args.data, work / "release")]}
        for round_ in range(args.rounds):
            for kind, cmd in commands.items():
                note(f"round {round_ + 1} of {args.rounds}: {kind}")
                shutil.rmtree(work / "release", ignore_errors=True)
                shutil.rmtree(work / "data_dir", ignore_errors=True)
                runs[kind].append(peak_of(cmd, env))
        probe = None
        if args.probe:
            note("probed run")
            shutil.rmtree(work / "release", ignore_errors=True)
            shutil.rmtree(work / "data_dir", ignore_errors=True)
            found = work / "probe.json"
            peak_of([sys.executable, "-c", PROBE, str(found), *job_args(args.data, work / "release")], env)
            probe = json.loads(found.read_text())
            mb = 2**20
            probe["peak_rss_mb"] = round(probe.pop("peak_rss") / mb)
            probe["peak_arrow_mb"] = round(probe.pop("peak_arrow") / mb)
            probe["arrow_max_mb"] = round(probe.pop("arrow_max") / mb)
            probe["rises"] = [{"place": p, "rss_added_mb": round(g / mb), "rss_mb": round(r / mb)}
                              for p, g, r in probe["rises"]]
    best = {kind: min(r["peak_rss"] for r in rs) for kind, rs in runs.items()}
    out = {
        "data": str(args.data), "bytes": size, "machine": f"{platform.node()} {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d %H:%M"), "runs": runs,
        "peak_rss_mb": {kind: round(b / 2**20) for kind, b in best.items()},
        "bytes_per_input_byte": {kind: round(b / size, 2) for kind, b in best.items()},
        "target_bytes_per_input_byte": 6.0, "probe": probe,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
