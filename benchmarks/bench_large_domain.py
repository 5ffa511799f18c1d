"""Benchmark (not a test): whole ``ppdp anonymize`` jobs on a sensitive column of 50, 15,000 and 70,000 values.

    python benchmarks/bench_large_domain.py                      # 1,000,000 rows, m = 50, 15000, 70000, 3 methods
    python benchmarks/bench_large_domain.py --rows 20000 --domains 50 300 2000   # the machinery, in a minute
    python benchmarks/bench_large_domain.py --domains 50 15000 --methods partition --timeout 300 --runs 2
    PYTHONPATH=/tmp/ppdp_at_commit python benchmarks/bench_large_domain.py   # another copy of the package

Issue 18 ("Diagnosis codes at full size: 70,000-value domains without dense matrices"). The data are
run.py's 10-column file (``patients_<rows>_v1.csv``, whose ``diag`` has 50 Zipf(1.1) values) and, for
each larger domain size m, the same rows with ``diag`` replaced by ICD-10-like codes (``E11.93``: a
letter, two digits, a dot, two digits; one distinct code per value), Zipf(1.1) over the m codes with
every code present at least once (each code once, the other rows drawn from the law, then shuffled
with a fixed seed), cached as ``benchmarks/.cache/patients_<rows>_codes<m>_v1.csv``.

Each job (``--method METHOD --rho1 0.1 --rho2 0.5``, identifiers pseudonymized, a sealed key, the
report written) runs in its own process, which calls the CLI in-process and then records its own peak
RSS (``ru_maxrss``). The child runs under an address-space limit (``--memory-limit-gb``, default 12;
RLIMIT_AS) and a wall-time limit (``--timeout``, default 600 s), so a job that would blow up fails
with a recorded error instead of taking the machine down. A failed job is recorded and the benchmark
goes on. The jobs run outside the checkout (their working directory is a temporary folder), so
``PYTHONPATH`` chooses the package they import, e.g. a commit unpacked with ``git archive``; the JSON
names the package folder the jobs imported.

Prints one JSON object: per method and m, the best wall time (s, the child process's start to end,
interpreter start-up included), peak RSS (MB), the sizes of release.json, report.html and report.pdf
(MB), the number of files in the release folder, or the error; and per method and m > 50 the ratios
to the same job at m = 50 with the issue's targets: wall time within 2x, peak RSS within 1.5x,
release.json under 10 MB.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import CACHE, M_SENSITIVE, make_csv, zipf_probabilities  # noqa: E402 - run.py's file, cached

DATA_VERSION = 1  # bump when the generated codes change
METHODS = ("uniform", "finegrain", "partition")
DOMAINS = (M_SENSITIVE, 15_000, 70_000)
TARGETS = {"time_ratio_max": 2.0, "rss_ratio_max": 1.5, "release_json_mb_max": 10.0}
PASSPHRASE = "correct horse battery staple"
MB = 1e6
PACKAGES: set[str] = set()  # where the jobs imported ppdp_desktop from

# The child: the CLI in-process, then its own peak RSS (kB on Linux) written to the file named by
# PPDP_BENCH_RSS_FILE, whatever the outcome (a MemoryError under the address-space limit included).
CHILD = """\
import json, os, resource, sys
code, package = 1, None
try:
    import ppdp_desktop
    package = os.path.dirname(ppdp_desktop.__file__)
    from ppdp_desktop.cli import main
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
finally:
    with open(os.environ["PPDP_BENCH_RSS_FILE"], "w") as out:
        json.dump({"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "package": package}, out)
sys.exit(code)
"""


def note(message: str) -> None:
    print(f"[bench_large_domain] {message}", file=sys.stderr, flush=True)


# --- data --------------------------------------------------------------------------------------

ICD_LETTERS = "ABCDEFGHIJKLMNOPQRSTVWXYZ"  # ICD-10 chapters' letters (U is reserved)


def icd_codes(m: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` distinct ICD-10-like codes (``A00.00`` .. ``Z99.99``, 250,000 possible), in random order."""
    capacity = len(ICD_LETTERS) * 100 * 100
    if m > capacity:
        raise ValueError(f"at most {capacity:,} codes")
    picks = rng.choice(capacity, size=m, replace=False)  # random order: the frequent codes are anywhere
    letters = np.array(list(ICD_LETTERS))[picks // 10_000]
    category = np.char.zfill(((picks // 100) % 100).astype(str), 2)
    sub = np.char.zfill((picks % 100).astype(str), 2)
    return np.char.add(np.char.add(np.char.add(letters, category), "."), sub).astype(object)


_BASE: dict[int, object] = {}  # rows -> run.py's frame, read once per process


def make_domain_csv(rows: int, m: int) -> Path:
    """run.py's ``rows``-row file with an ``m``-value ``diag`` (m = 50: the file itself), cached."""
    base_path = make_csv(rows)
    if m == M_SENSITIVE:
        return base_path
    if m > rows:
        raise ValueError(f"{m:,} values cannot all be present in {rows:,} rows")
    path = CACHE / f"patients_{rows}_codes{m}_v{DATA_VERSION}.csv"
    if path.exists():
        note(f"using cached {path.name} ({path.stat().st_size / MB:.0f} MB)")
        return path
    import pandas as pd

    if rows not in _BASE:
        note(f"reading {base_path.name}")
        _BASE[rows] = pd.read_csv(base_path, dtype=str, keep_default_na=False)  # written back as read
    frame = _BASE[rows].copy()
    note(f"generating {path.name} ...")
    rng = np.random.default_rng(18_000 + m)
    codes = icd_codes(m, rng)
    # Every code once (the Zipf ranks in order), then the other rows from Zipf(1.1); shuffled.
    ranks = np.concatenate([np.arange(m), rng.choice(m, size=rows - m, p=zipf_probabilities(m))])
    rng.shuffle(ranks)
    frame["diag"] = codes[ranks]
    tmp = path.with_suffix(".partial")
    frame.to_csv(tmp, index=False)
    os.replace(tmp, path)
    note(f"wrote {path.name} ({path.stat().st_size / MB:.0f} MB, {len(np.unique(ranks)):,} distinct codes)")
    return path


# --- one job -----------------------------------------------------------------------------------


def _limit_memory(limit_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


def _size_mb(path: Path) -> float | None:
    return round(path.stat().st_size / MB, 3) if path.exists() else None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][-500:] if lines else ""


def job(data: Path, work: Path, method: str, timeout: float, memory_limit: int) -> dict:
    """One ``ppdp anonymize`` run in its own process: wall time, peak RSS, release sizes, or the error."""
    shutil.rmtree(work, ignore_errors=True)  # a fresh folder: the job also writes files beside the release
    work.mkdir(parents=True)
    out, key, rss_file, err_file = work / "release", work / "release.ppdpkey", work / "rss.txt", work / "stderr.txt"
    command = [sys.executable, "-c", CHILD,
               "anonymize", str(data), "--out", str(out), "--key", str(key), "--sensitive", "diag",
               "--identifier", "id", "--method", method, "--rho1", "0.1", "--rho2", "0.5", "--quiet"]
    env = {**os.environ, "PPDP_PASSPHRASE": PASSPHRASE, "PPDP_BENCH_RSS_FILE": str(rss_file)}
    result: dict = {}
    with open(err_file, "w+b") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                 preexec_fn=lambda: _limit_memory(memory_limit), start_new_session=True,
                                 cwd=work)  # not the checkout: PYTHONPATH may name another copy of the package
        try:
            code = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:  # a timeout, or this benchmark stopped (Ctrl-C, SIGTERM): the job must not outlive it
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)  # the child's own session: it and anything it started
                child.wait()
        seconds = time.perf_counter() - start
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    result["seconds"] = round(seconds, 2)
    try:
        child_report = json.loads(rss_file.read_text())
    except (OSError, ValueError):
        child_report = {}  # killed before it could write it
    kb = child_report.get("maxrss_kb")
    result["peak_rss_mb"] = round(kb * 1024 / MB, 1) if kb is not None else None  # ru_maxrss is in kB
    if child_report.get("package"):
        PACKAGES.add(child_report["package"])
    if code is None:
        result.update(ok=False, error=f"timeout: killed after {timeout:g} s", exit_code=None)
        return result
    result["exit_code"] = code
    if code != 0:
        if code < 0:
            reason = f"killed by signal {-code} ({signal.Signals(-code).name})"
        else:
            reason = _last_line(stderr) or f"exit code {code}"
        result.update(ok=False, error=reason)
        return result
    files = [p for p in out.rglob("*") if p.is_file()] if out.is_dir() else []
    result.update(
        ok=True,
        release_json_mb=_size_mb(out / "release.json"),
        report_html_mb=_size_mb(out / "report.html"),
        report_pdf_mb=_size_mb(out / "report.pdf"),
        # the key file, the custodian's report and whatever else the job wrote next to the release folder
        beside_release_mb={p.name: _size_mb(p) for p in sorted(work.iterdir())
                           if p.is_file() and p not in (rss_file, err_file)},
        release_folder_mb=round(sum(p.stat().st_size for p in files) / MB, 1),
        release_files=len(files),
    )
    return result


def best(runs: list[dict]) -> dict:
    """The fastest successful run (every run's time and RSS kept alongside), else the last failure."""
    good = [r for r in runs if r["ok"]]
    if not good:
        return {**runs[-1], "runs_s": [r["seconds"] for r in runs]}
    pick = dict(min(good, key=lambda r: r["seconds"]))
    pick["runs_s"] = [r["seconds"] for r in runs]
    pick["runs_peak_rss_mb"] = [r["peak_rss_mb"] for r in runs]
    if len(good) < len(runs):
        pick["failed_runs"] = len(runs) - len(good)
    return pick


def ratios(jobs: dict[str, dict], baseline: int) -> dict[str, dict]:
    """Per m other than the baseline: time and RSS over the baseline's, release.json size, pass/fail."""
    base = jobs.get(str(baseline))
    out: dict[str, dict] = {}
    for m, r in jobs.items():
        if m == str(baseline):
            continue
        row: dict = {"ok": r["ok"]}
        if base is None or not base["ok"]:
            row["note"] = f"no successful m = {baseline} job to compare with"
        if r["ok"] and base is not None and base["ok"]:
            row["time_ratio"] = round(r["seconds"] / base["seconds"], 2)
            row["rss_ratio"] = round(r["peak_rss_mb"] / base["peak_rss_mb"], 2)
        row["release_json_mb"] = r.get("release_json_mb")
        row["time_ok"] = r["ok"] and row.get("time_ratio", float("inf")) <= TARGETS["time_ratio_max"]
        row["rss_ok"] = r["ok"] and row.get("rss_ratio", float("inf")) <= TARGETS["rss_ratio_max"]
        row["release_json_ok"] = r["ok"] and (row["release_json_mb"] or float("inf")) < TARGETS["release_json_mb_max"]
        row["pass"] = row["time_ok"] and row["rss_ok"] and row["release_json_ok"]
        if not r["ok"]:
            row["error"] = r["error"]
        out[m] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--domains", type=int, nargs="+", default=list(DOMAINS),
                        help=f"sizes of the sensitive column's domain (default {' '.join(map(str, DOMAINS))}); "
                             f"the ratios are to the smallest")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--runs", type=int, default=1, help="runs of each job; the fastest is kept (default 1)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per job before it is killed")
    parser.add_argument("--memory-limit-gb", type=float, default=12.0, help="address-space limit of each job")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))  # so that job() kills its child
    domains = sorted(set(args.domains))
    if M_SENSITIVE not in domains:
        note(f"no m = {M_SENSITIVE} in --domains: the ratios are to m = {domains[0]}")
    baseline = M_SENSITIVE if M_SENSITIVE in domains else domains[0]
    memory_limit = int(args.memory_limit_gb * 1024**3)

    data: dict[int, Path | str] = {}
    for m in domains:
        try:
            data[m] = make_domain_csv(args.rows, m)
        except ValueError as error:
            note(f"m = {m}: {error}")
            data[m] = str(error)
    _BASE.clear()

    jobs: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_large_domain_") as tmp:
        for method in args.methods:
            jobs[method] = {}
            for m in domains:
                if isinstance(data[m], str):
                    jobs[method][str(m)] = {"ok": False, "error": data[m]}
                    continue
                runs = []
                for run in range(args.runs):
                    note(f"{method}, m = {m:,}: run {run + 1} of {args.runs}")
                    r = job(data[m], Path(tmp) / "job", method, args.timeout, memory_limit)
                    if r["ok"]:
                        note(f"  {r['seconds']:.1f} s, {r['peak_rss_mb']:.0f} MB peak RSS, "
                             f"release.json {r['release_json_mb']} MB")
                    else:
                        note(f"  FAILED after {r['seconds']:.1f} s: {r['error']}")
                    runs.append(r)
                jobs[method][str(m)] = best(runs)
    out = {
        "rows": args.rows,
        "domains": domains,
        "runs": args.runs,
        "timeout_s": args.timeout,
        "memory_limit_gb": args.memory_limit_gb,
        "cpus": os.cpu_count(),
        "job": "anonymize --sensitive diag --identifier id --method METHOD --rho1 0.1 --rho2 0.5 --key K --quiet"
               " (with the report)",
        "package": sorted(PACKAGES),
        "targets": TARGETS,
        "jobs": jobs,
        "vs_baseline": {"baseline_m": baseline, **{method: ratios(jobs[method], baseline) for method in jobs}},
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
