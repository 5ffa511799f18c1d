"""Benchmark (not a test): ``ppdp anonymize --streaming`` and ``--engine dask`` on a file larger than memory.

    python benchmarks/bench_streaming.py                        # 100,000,000 rows (about 5 GB), 20-60 min
    python benchmarks/bench_streaming.py --rows 2000000         # the machinery, a few minutes
    python benchmarks/bench_streaming.py --skip-100m            # only the 1M-row in-memory vs streaming part
    python benchmarks/bench_streaming.py --skip-dask --keep     # no Dask run; keep the release folders

Issue 19 ("Files larger than memory"). Sections of the JSON printed on stdout (progress on stderr):

1. ``data``: a ``--rows``-row, 10-column CSV like run.py's (``id, sex, age, region, postcode, blood,
   visits, bmi, admitted, diag``; ``diag`` has 50 Zipf(1.1) values), generated once in batches of
   1,000,000 rows with numpy + pyarrow's CSV writer (never the whole file in memory) and cached as
   ``benchmarks/.cache/stream_patients_<rows>_v<DATA_VERSION>.csv``; the generation time (when it was
   made by this run) and the file size. Before generating, the free disk space must hold the input
   plus 3x its size (the baseline's copy, the release, the external shuffle's runs), else the
   benchmark stops with a message.
2. ``baseline``: pyarrow alone reading the CSV in record batches (``pyarrow.csv.open_csv``, every
   column read as a string: no type inference, the cheapest read) and writing every batch back with
   ``pyarrow.csv.CSVWriter`` (the release's quoting, ``needed``) into a scratch folder beside the cache.
3. ``streaming``: ``ppdp anonymize CSV --out TMP/rel --streaming --method uniform --sensitive diag
   --identifier id --rho1 0.1 --rho2 0.5 --seed 1 --no-report``: wall time, peak RSS, ratios to the
   baseline; targets peak RSS <= 2 GiB and time <= 2x the baseline.
2b. ``floor``: pyarrow alone doing only the steps the issue's design cannot skip (pass 1 over the sensitive
   column, pass 2 over every column with a random sort key and the spill to buckets, each bucket sorted and
   written through a SHA-256 sink, the written sensitive column read back), none of the app's own work: the
   least any streamed release of that design can take, as a ratio to the baseline.
4. ``dask``: the same with ``--engine dask --workers 4`` instead of ``--streaming`` (a LocalCluster;
   the workers are child processes, counted in the tree's RSS).
5. ``in_memory_vs_streaming_1m``: the same command on run.py's 1M-row file
   (``patients_1000000_v1.csv``, reused when present and its header matches, else generated here),
   without and with ``--streaming``; target: within 1.2x either way (``targets_met`` also says whether
   streaming is merely no more than 1.2x slower, as being faster is no failure).

Every job is the CLI in a subprocess (``python -m ppdp_desktop``; the baseline is a ``python -c``
subprocess too, so that the RSS figures are comparable), in its own session, with ``TMPDIR`` set to the
scratch folder beside the cache (the external shuffle's runs stay on the data's disk). Measured: wall
time (start to exit, interpreter start-up included) and the peak RSS of the whole process tree, the
sum of ``VmRSS`` over the process and its descendants (``/proc/<pid>/task/*/children``, recursively)
sampled every 0.2 s (psutil is not in the venv); the sum of ``Pss`` (``smaps_rollup``; shared pages
counted once, split between the processes) is reported beside it, as is ``ru_maxrss`` of the job
(``os.wait4``: the largest single process of the tree that was waited for) and, at the end,
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` of this benchmark (the largest over every job). A job whose
tree grows past ``--kill-above-gb`` (default 12) or runs past ``--timeout`` is killed and recorded as
failed. A failed job (for instance a flag that does not exist yet) is recorded with its exit code and
the last line of its stderr, and the benchmark goes on. Which of the flags ``ppdp anonymize --help``
lists is in ``flags``.

The jobs run in the scratch folder, not the checkout, so ``PYTHONPATH`` chooses the package they import
(``package`` in the JSON), e.g. one commit unpacked with ``git archive`` while the checkout changes:

    git archive HEAD | tar -x -C /tmp/ppdp_head && PYTHONPATH=/tmp/ppdp_head python benchmarks/bench_streaming.py

Outputs and the baseline's copy are removed at the end (``--keep`` keeps them); the input stays cached.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache"
DATA_VERSION = 1  # bump when the generator below changes
M_SENSITIVE = 50
ZIPF_EXPONENT = 1.1
BATCH_ROWS = 1_000_000  # rows generated (and held) at a time
COLUMNS = ["id", "sex", "age", "region", "postcode", "blood", "visits", "bmi", "admitted", "diag"]
RUN_PY_1M = CACHE / "patients_1000000_v1.csv"  # run.py's file, reused for part 5 when present
BYTES_PER_ROW_ESTIMATE = 54  # run.py's 1M-row file: 51.15 bytes a row; ids grow by a digit at 100M
GiB = 1024**3
MB = 1e6
SAMPLE_S = 0.2
TARGETS = {
    "streaming_peak_rss_bytes_max": 2 * GiB,
    "streaming_time_over_baseline_max": 2.0,
    "in_memory_vs_streaming_1m_ratio_max": 1.2,  # streaming / in-memory within [1/1.2, 1.2]
}
FLAGS = ("--streaming", "--chunk-size", "--engine", "--workers", "--scheduler")

REGIONS = ["North", "South", "East", "West", "Central"]
BLOOD = ["O+", "O-", "A+", "A-", "B+", "B-", "AB+", "AB-"]
SEXES = ["F", "M"]


def note(message: str) -> None:
    print(f"[bench_streaming] {datetime.now():%H:%M:%S} {message}", file=sys.stderr, flush=True)


# --- 1. data -----------------------------------------------------------------------------------


def data_path(rows: int) -> Path:
    return CACHE / f"stream_patients_{rows}_v{DATA_VERSION}.csv"


def make_data_in_child(rows: int) -> tuple[Path, dict]:
    """:func:`make_data` in a subprocess: this process stays small (numpy and pyarrow never imported here).

    A job started by ``subprocess`` (vfork + exec on Linux) inherits this process's peak RSS as the
    start of its ``ru_maxrss``, so a benchmark process that had held generated batches would show its
    own peak in every job's ``ru_maxrss``.
    """
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--generate-only", "--rows", str(rows)],
                          stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(done.returncode)
    info = json.loads(done.stdout)
    return Path(info["path"]), info


def check_disk(rows: int, existing: Path | None) -> dict:
    """Free space for the input (unless cached) plus 3x its size; raises SystemExit with a message if not."""
    CACHE.mkdir(exist_ok=True)
    size = existing.stat().st_size if existing is not None else rows * BYTES_PER_ROW_ESTIMATE
    need = 3 * size + (0 if existing is not None else size)
    free = shutil.disk_usage(CACHE).free
    info = {"free_bytes": free, "needed_bytes": need, "input_bytes" + ("" if existing else "_estimate"): size}
    if free < need:
        raise SystemExit(
            f"bench_streaming: not enough disk space in {CACHE}: {free / GiB:.1f} GiB free, "
            f"{need / GiB:.1f} GiB needed ({'the cached input' if existing else 'the input'} of "
            f"{size / GiB:.1f} GiB{'' if existing else ' (estimated)'} + 3x its size for the baseline's copy, "
            f"the release and the external shuffle). Free some space or pass a smaller --rows."
        )
    return info


def _zipf_cdf(m: int):
    import numpy as np

    p = 1.0 / np.arange(1, m + 1) ** ZIPF_EXPONENT
    return np.cumsum(p / p.sum())


def _batch(rng, start: int, n: int):
    """Rows ``start + 1 .. start + n`` as an Arrow table of strings, integers and dates (run.py's columns)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def pick(values: list[str], k: int):
        return pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, k, size=n, dtype=np.int32)),
                                              pa.array(values)).cast(pa.string())

    ids = pc.binary_join_element_wise(
        "P", pc.utf8_lpad(pa.array(np.arange(start + 1, start + n + 1, dtype=np.int64)).cast(pa.string()), 8, "0"), ""
    )
    tenths = np.rint(rng.normal(26.0, 4.0, size=n) * 10).astype(np.int64)  # bmi to one decimal, written "26.0"
    whole, frac = np.divmod(np.abs(tenths), 10)
    bmi = pc.binary_join_element_wise(
        pa.array(np.where(tenths < 0, "-", "")), pa.array(whole).cast(pa.string()), ".",
        pa.array(frac).cast(pa.string()), "",
    )
    days = rng.integers(0, 365 * 6, size=n).astype(np.int32) + np.int32(17897)  # 2019-01-01 = day 17897
    diag_codes = np.minimum(np.searchsorted(_zipf_cdf(M_SENSITIVE), rng.random(n), side="right"), M_SENSITIVE - 1)
    diag = pa.DictionaryArray.from_arrays(pa.array(diag_codes.astype(np.int32)),
                                          pa.array([f"D{i:02d}" for i in range(M_SENSITIVE)])).cast(pa.string())
    return pa.table({
        "id": ids,
        "sex": pick(SEXES, 2),
        "age": pa.array(rng.integers(0, 100, size=n)),
        "region": pick(REGIONS, len(REGIONS)),
        "postcode": pa.array(rng.integers(1000, 10000, size=n)),
        "blood": pick(BLOOD, len(BLOOD)),
        "visits": pa.array(rng.poisson(3.0, size=n)),
        "bmi": bmi,
        "admitted": pa.array(days, type=pa.int32()).cast(pa.date32()),
        "diag": diag,
    })


def make_data(rows: int) -> tuple[Path, dict]:
    """The ``rows``-row CSV, generated batch by batch (cached); its path and the ``data`` section."""
    import numpy as np
    import pyarrow.csv as pacsv

    path = data_path(rows)
    if path.exists():
        size = path.stat().st_size
        note(f"using cached {path.name} ({size / MB:,.0f} MB)")
        return path, {"path": str(path), "rows": rows, "bytes": size, "cached": True,
                      "disk": check_disk(rows, path)}
    disk = check_disk(rows, None)
    note(f"generating {path.name}: {rows:,} rows in batches of {BATCH_ROWS:,} "
         f"({disk['free_bytes'] / GiB:.0f} GiB free, {disk['needed_bytes'] / GiB:.1f} GiB needed)")
    rng = np.random.default_rng(2026)
    tmp = path.with_suffix(".partial")
    start_time = time.perf_counter()
    options = pacsv.WriteOptions(include_header=False, quoting_style="none")  # no value holds a comma or quote
    with open(tmp, "wb") as sink:
        sink.write((",".join(COLUMNS) + "\n").encode())
        writer = None
        for start in range(0, rows, BATCH_ROWS):
            table = _batch(rng, start, min(BATCH_ROWS, rows - start))
            if writer is None:
                writer = pacsv.CSVWriter(sink, table.schema, write_options=options)
            writer.write_table(table)
            if (start // BATCH_ROWS) % 10 == 9:
                note(f"  {start + len(table):,} rows, {time.perf_counter() - start_time:.0f} s")
        if writer is not None:
            writer.close()
    os.replace(tmp, path)
    seconds = time.perf_counter() - start_time
    size = path.stat().st_size
    note(f"wrote {path.name}: {size / MB:,.0f} MB in {seconds:.1f} s")
    return path, {"path": str(path), "rows": rows, "bytes": size, "cached": False,
                  "generation_s": round(seconds, 1), "disk": disk}


def header(path: Path) -> list[str]:
    with open(path, encoding="utf-8-sig") as f:
        return f.readline().strip().split(",")


def data_1m() -> tuple[Path, dict]:
    """run.py's 1M-row file when present with the same columns, else this generator's 1M rows."""
    if RUN_PY_1M.exists() and header(RUN_PY_1M) == COLUMNS:
        note(f"using run.py's {RUN_PY_1M.name}")
        return RUN_PY_1M, {"path": str(RUN_PY_1M), "bytes": RUN_PY_1M.stat().st_size, "source": "run.py"}
    if RUN_PY_1M.exists():
        note(f"{RUN_PY_1M.name} has other columns ({header(RUN_PY_1M)}): generating 1M rows here")
    path, info = make_data_in_child(1_000_000)
    return path, {**info, "source": "bench_streaming.py"}


# --- measuring a process tree ------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """``pid`` and every descendant (children of each of its threads, recursively)."""
    seen, stack = [], [pid]
    while stack:
        p = stack.pop()
        seen.append(p)
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack.extend(int(c) for c in f.read().split())
            except OSError:
                continue
    return seen


def _kb_field(path: str, field: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_memory(pid: int) -> tuple[int, int, int]:
    """(sum of VmRSS, sum of Pss, number of processes) over the tree, in bytes."""
    pids = _descendants(pid)
    rss = sum(_kb_field(f"/proc/{p}/status", "VmRSS:") for p in pids)
    pss = sum(_kb_field(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids)
    return rss * 1024, pss * 1024, len(pids)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][-500:] if lines else ""


PROGRESS = re.compile(r"^ppdp:\s*\d+%\s*(.*)$")  # the CLI's stage lines on stderr ("ppdp:  77% Wrote 1,000 of ...")


class Stages:
    """The CLI's stage lines, read from its stderr file as they come: when each began and ended, peak tree RSS."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.partial = path, 0, ""
        self.stages: dict[str, dict] = {}
        self.current: str | None = None

    def update(self, elapsed: float, rss: int) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            data = b""
        self.offset += len(data)
        lines = re.split(r"[\r\n]", self.partial + data.decode("utf-8", "replace"))
        self.partial = lines.pop()
        for line in lines:
            match = PROGRESS.match(line.strip())
            if match and len(self.stages) < 60:
                label = re.sub(r"\d[\d,.]*", "N", match.group(1)).strip()
                if label != self.current:
                    self.current = label
                    self.stages.setdefault(label, {"from_s": round(elapsed, 1), "to_s": round(elapsed, 1),
                                                   "peak_tree_rss_mb": 0.0})
        if self.current is not None:
            stage = self.stages[self.current]
            stage["to_s"] = round(elapsed, 1)
            stage["peak_tree_rss_mb"] = max(stage["peak_tree_rss_mb"], round(rss / MB, 1))


def run_job(command: list[str], work: Path, name: str, timeout: float, kill_above: int, env: dict) -> dict:
    """Run ``command`` in its own session; wall time, peak tree RSS / PSS, ``ru_maxrss``, or the failure.

    ``stages``: the CLI's progress lines (numbers replaced by N), each with the time it was first seen
    and the time the next one was (to 0.2 s), and the peak tree RSS sampled while it was the last line.
    """
    err_path = work / f"{name}.stderr.txt"
    shown = {"-m": command[2:], "-c": ["python", "-c", "<script>", *command[3:]]}.get(command[1], command)
    result: dict = {"command": " ".join(shown)}
    killed = None
    finished = False
    with open(err_path, "w+b") as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, cwd=work, env=env,
                                 start_new_session=True)
        peak_rss = peak_pss = procs = 0
        stages = Stages(err_path)
        try:
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid:
                    finished = True
                    break
                rss, pss, n = tree_memory(child.pid)
                peak_rss, peak_pss, procs = max(peak_rss, rss), max(peak_pss, pss), max(procs, n)
                elapsed = time.perf_counter() - start
                stages.update(elapsed, rss)
                if killed is None and (rss > kill_above or elapsed > timeout):
                    killed = (f"killed: tree RSS {rss / GiB:.1f} GiB > {kill_above / GiB:.1f} GiB" if rss > kill_above
                              else f"killed: timeout after {timeout:g} s")
                    os.killpg(child.pid, signal.SIGKILL)
                time.sleep(SAMPLE_S)
        finally:  # this benchmark stopped (Ctrl-C, SIGTERM): the job must not outlive it
            if not finished:
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                    os.waitpid(child.pid, 0)
                except OSError:
                    pass
        seconds = time.perf_counter() - start
        child.returncode = code = os.waitstatus_to_exitcode(status)
        try:  # the workers of a LocalCluster may outlive their parent: end the whole session
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    result.update(
        seconds=round(seconds, 2),
        peak_tree_rss_bytes=peak_rss,
        peak_tree_rss_mb=round(peak_rss / MB, 1),
        peak_tree_pss_mb=round(peak_pss / MB, 1),
        max_processes=procs,
        ru_maxrss_mb=round(usage.ru_maxrss * 1024 / MB, 1),  # kB on Linux
        exit_code=code,
        ok=code == 0 and killed is None,
    )
    if stages.stages:
        result["stages"] = stages.stages
    if not result["ok"]:
        if killed:
            result["error"] = killed
        elif code < 0:
            result["error"] = f"killed by signal {-code} ({signal.Signals(-code).name})"
        else:
            result["error"] = _last_line(stderr) or f"exit code {code}"
        result["stderr_last_line"] = _last_line(stderr)
    return result


def best(runs: list[dict]) -> dict:
    """The fastest successful run, with every run's time and peak RSS; else the last failure."""
    good = [r for r in runs if r["ok"]]
    pick = dict(min(good, key=lambda r: r["seconds"]) if good else runs[-1])
    pick["runs_s"] = [r["seconds"] for r in runs]
    pick["runs_peak_tree_rss_mb"] = [r["peak_tree_rss_mb"] for r in runs]
    if good and len(good) < len(runs):
        pick["failed_runs"] = len(runs) - len(good)
    return pick


# --- the jobs ----------------------------------------------------------------------------------

# pyarrow alone: read in record batches (every column a string), write every batch back.
BASELINE = """\
import sys
import pyarrow as pa, pyarrow.csv as pacsv
src, dst, block = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, encoding="utf-8-sig") as f:
    names = f.readline().strip().split(",")
reader = pacsv.open_csv(src, read_options=pacsv.ReadOptions(block_size=block),
                        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}))
rows = 0
with pacsv.CSVWriter(dst, reader.schema, write_options=pacsv.WriteOptions(quoting_style="needed")) as writer:
    for batch in reader:
        writer.write_batch(batch)
        rows += batch.num_rows
print(rows)
"""

# pyarrow alone doing only the steps a streamed release cannot skip, with none of the app's work (no typing,
# no plan, no draws, no formula guard, no key): pass 1 reads the sensitive column; pass 2 reads every column as
# a string, gives each record a random 64-bit sort key and spills the records to buckets of about 1,000,000 by
# the key's top bits (Arrow IPC streams, as the app does); each bucket is read back, sorted by its key and
# written as CSV through a SHA-256 sink; the written file's sensitive column is read back. Its time over the
# baseline's is the least any streamed release that keeps the design can take.
FLOOR = """\
import hashlib, math, os, sys
import numpy as np, pyarrow as pa, pyarrow.csv as pacsv, pyarrow.ipc as ipc
src, folder, block = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src, encoding="utf-8-sig") as f:
    names = f.readline().strip().split(",")
def reader(path, columns=None):
    return pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=block),
                          convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                               include_columns=columns or []))
n = sum(batch.num_rows for batch in reader(src, ["diag"]))  # pass 1
bits = max(0, math.ceil(math.log2(n / 1_000_000))) if n > 1_000_000 else 0
writers, rng = {}, np.random.default_rng(1)
for batch in reader(src):  # pass 2 and the spill
    keys = rng.integers(0, 2**64, batch.num_rows, dtype=np.uint64)
    batch = pa.Table.from_batches([batch]).append_column("k", pa.array(keys))
    bucket = (keys >> np.uint64(64 - bits)).astype(np.int64) if bits else np.zeros(len(keys), np.int64)
    order = np.argsort(bucket, kind="stable")
    edges = np.searchsorted(bucket[order], np.arange((1 << bits) + 1))
    taken = batch.take(pa.array(order))
    for b in np.flatnonzero(np.diff(edges)):
        if b not in writers:
            writers[b] = ipc.new_stream(os.path.join(folder, f"b{b}.arrows"), taken.schema)
        writers[b].write_table(taken.slice(int(edges[b]), int(edges[b + 1] - edges[b])))
for w in writers.values():
    w.close()
class Hashing:
    def __init__(self, handle):
        self.handle, self.digest, self.closed = handle, hashlib.sha256(), False
    def write(self, data):
        data = bytes(data); self.digest.update(data); return self.handle.write(data)
    def flush(self): self.handle.flush()
    def writable(self): return True
    def close(self): self.closed = True
out = os.path.join(folder, "release.csv")
with open(out, "wb") as handle:  # sort each bucket, write, hash
    sink = Hashing(handle)
    for i, b in enumerate(sorted(writers)):
        path = os.path.join(folder, f"b{b}.arrows")
        with ipc.open_stream(path) as r:
            table = r.read_all()
        os.unlink(path)
        table = table.take(pa.array(np.argsort(table.column("k").to_numpy(), kind="stable"))).drop_columns(["k"])
        pacsv.write_csv(table, sink, write_options=pacsv.WriteOptions(include_header=i == 0, quoting_style="needed"))
back = sum(batch.num_rows for batch in reader(out, ["diag"]))  # the read-back
assert back == n, (back, n)
print(n, sink.digest.hexdigest())
"""


def cli_command(data: Path, out: Path, extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "ppdp_desktop", "anonymize", str(data), "--out", str(out), *extra,
            "--method", "uniform", "--sensitive", "diag", "--identifier", "id",
            "--rho1", "0.1", "--rho2", "0.5", "--seed", "1", "--no-report"]


def anonymize_runs(data: Path, scratch: Path, name: str, extra: list[str], runs: int, args, env: dict) -> dict:
    out = scratch / f"{name}_rel"
    results = []
    for run in range(runs):
        shutil.rmtree(out, ignore_errors=True)
        note(f"{name}: run {run + 1} of {runs}: ppdp anonymize {' '.join(extra) or '(in memory)'}")
        r = run_job(cli_command(data, out, extra), scratch, name, args.timeout, args.kill_above, env)
        if r["ok"]:
            files = [p for p in out.rglob("*") if p.is_file()] if out.is_dir() else []
            r["release_mb"] = round(sum(p.stat().st_size for p in files) / MB, 1)
            note(f"  {r['seconds']:.1f} s, tree peak RSS {r['peak_tree_rss_mb']:,.0f} MB "
                 f"(PSS {r['peak_tree_pss_mb']:,.0f}, ru_maxrss {r['ru_maxrss_mb']:,.0f}), "
                 f"release {r['release_mb']} MB")
        else:
            note(f"  FAILED after {r['seconds']:.1f} s (exit {r['exit_code']}): {r['error']}")
        results.append(r)
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)
    return best(results)


def cli_flags(env: dict) -> dict[str, bool]:
    help_text = subprocess.run([sys.executable, "-m", "ppdp_desktop", "anonymize", "--help"], capture_output=True,
                               text=True, env=env, cwd=env.get("TMPDIR", ROOT)).stdout  # as the jobs import it
    return {flag: flag in help_text.split() or f"{flag} " in help_text or f"{flag}=" in help_text for flag in FLAGS}


def imported_package(env: dict) -> str | None:
    """The folder of the ``ppdp_desktop`` the jobs import (``PYTHONPATH`` may name another copy, e.g. a commit)."""
    code = "import ppdp_desktop, os; print(os.path.dirname(ppdp_desktop.__file__))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=env.get("TMPDIR", ROOT))
    return done.stdout.strip() or None


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                              check=True).stdout.strip() + (" (dirty)" if subprocess.run(
                                  ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                  text=True, cwd=ROOT).stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000_000, help="rows of the large file (default 100,000,000)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each job on the large file (default 1)")
    parser.add_argument("--runs-1m", type=int, default=3, help="runs of each 1M-row job (default 3)")
    parser.add_argument("--chunk-size", type=int, default=None, help="passed to --streaming jobs (default: the CLI's)")
    parser.add_argument("--workers", type=int, default=4, help="--workers of the Dask job (default 4)")
    parser.add_argument("--skip-dask", action="store_true", help="no --engine dask job")
    parser.add_argument("--skip-streaming", action="store_true", help="no --streaming job on the large file")
    parser.add_argument("--skip-floor", action="store_true", help="no pyarrow-alone floor job on the large file")
    parser.add_argument("--skip-100m", action="store_true", help="only the 1M-row part (no large file)")
    parser.add_argument("--skip-1m", action="store_true", help="no 1M-row part")
    parser.add_argument("--generate-only", action="store_true",
                        help="only make (or find) the cached --rows file; print its 'data' section")
    parser.add_argument("--keep", action="store_true", help="keep the release folders and the baseline's copy")
    parser.add_argument("--baseline-block-mb", type=float, default=16.0,
                        help="pyarrow's block_size of the baseline's reader (default 16 MB)")
    parser.add_argument("--timeout", type=float, default=3 * 3600.0, help="seconds per job before it is killed")
    parser.add_argument("--kill-above-gb", type=float, default=12.0,
                        help="kill a job whose tree's RSS grows past this (GiB, default 12)")
    args = parser.parse_args(argv)
    args.kill_above = int(args.kill_above_gb * GiB)
    if args.generate_only:
        print(json.dumps(make_data(args.rows)[1]))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))  # so that run_job kills its job

    CACHE.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench_streaming_", dir=CACHE))  # beside the cache: the same disk
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONUNBUFFERED": "1"}
    flags = cli_flags(env)
    streaming = ["--streaming"] + (["--chunk-size", str(args.chunk_size)] if args.chunk_size else [])
    dask = ["--engine", "dask", "--workers", str(args.workers)]
    out: dict = {
        "date": datetime.now().isoformat(timespec="minutes"),
        "commit": git_commit(),
        "package": imported_package(env),  # not the checkout's when PYTHONPATH names another copy
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_average_start": [round(x, 2) for x in os.getloadavg()]},
        "flags": flags,
        "rss_sampling": f"sum of VmRSS over the process tree every {SAMPLE_S} s (/proc; psutil not installed)",
        "targets": TARGETS,
    }
    missing = [flag for flag in ("--streaming", "--engine", "--workers") if not flags[flag]]
    if missing:
        note(f"ppdp anonymize --help does not list {', '.join(missing)} (yet): those jobs will fail")
        out["flags_missing"] = missing
    met: dict[str, bool | None] = {}
    try:
        if not args.skip_100m:
            data, out["data"] = make_data_in_child(args.rows)
            # 2. baseline
            copy = scratch / "baseline_copy.csv"
            note(f"baseline: pyarrow read (strings) + CSVWriter of {data.name}")
            base = best([run_job([sys.executable, "-c", BASELINE, str(data), str(copy),
                                  str(int(args.baseline_block_mb * MB))], scratch, "baseline", args.timeout,
                                 args.kill_above, env)])
            base["reader"] = (f"pyarrow.csv.open_csv, every column as string, block_size "
                              f"{args.baseline_block_mb:g} MB; CSVWriter quoting_style='needed'")
            if copy.exists():
                base["copy_bytes"] = copy.stat().st_size
            if not args.keep:
                copy.unlink(missing_ok=True)
            note(f"  {base['seconds']:.1f} s, tree peak RSS {base['peak_tree_rss_mb']:,.0f} MB"
                 + ("" if base["ok"] else f" FAILED: {base['error']}"))
            out["baseline"] = base
            # 2b. the floor: pyarrow alone doing the steps a streamed release cannot skip
            if not args.skip_floor:
                floor_dir = scratch / "floor"
                floor_dir.mkdir(exist_ok=True)
                note("floor: pyarrow alone: pass 1, pass 2 + spill, sort + write + SHA-256, read-back")
                floor = best([run_job([sys.executable, "-c", FLOOR, str(data), str(floor_dir),
                                       str(int(args.baseline_block_mb * MB))], scratch, "floor", args.timeout,
                                      args.kill_above, env)])
                shutil.rmtree(floor_dir, ignore_errors=True)
                if floor["ok"] and base["ok"]:
                    floor["time_over_baseline"] = round(floor["seconds"] / base["seconds"], 2)
                note(f"  {floor['seconds']:.1f} s ({floor.get('time_over_baseline', '?')}x the baseline), tree peak "
                     f"RSS {floor['peak_tree_rss_mb']:,.0f} MB" + ("" if floor["ok"] else f" FAILED: {floor['error']}"))
                out["floor"] = floor
            # 3. streaming
            if not args.skip_streaming:
                s = anonymize_runs(data, scratch, "streaming", streaming, args.runs, args, env)
                if s["ok"] and base["ok"]:
                    s["time_over_baseline"] = round(s["seconds"] / base["seconds"], 2)
                    s["rss_over_baseline"] = round(s["peak_tree_rss_bytes"] / base["peak_tree_rss_bytes"], 2)
                met["streaming_peak_rss"] = (s["ok"]
                                             and s["peak_tree_rss_bytes"] <= TARGETS["streaming_peak_rss_bytes_max"])
                met["streaming_time"] = (s["ok"] and base["ok"]
                                         and s["time_over_baseline"] <= TARGETS["streaming_time_over_baseline_max"])
                out["streaming"] = s
            # 4. dask
            if not args.skip_dask:
                d = anonymize_runs(data, scratch, "dask", dask, args.runs, args, env)
                if d["ok"] and base["ok"]:
                    d["time_over_baseline"] = round(d["seconds"] / base["seconds"], 2)
                    d["rss_over_baseline"] = round(d["peak_tree_rss_bytes"] / base["peak_tree_rss_bytes"], 2)
                out["dask"] = d
        # 5. 1M rows: in memory vs streaming
        if not args.skip_1m:
            path, info = data_1m()
            section = {"data": info}
            section["in_memory"] = anonymize_runs(path, scratch, "in_memory_1m", [], args.runs_1m, args, env)
            section["streaming"] = anonymize_runs(path, scratch, "streaming_1m", streaming, args.runs_1m, args, env)
            a, b = section["in_memory"], section["streaming"]
            if a["ok"] and b["ok"]:
                section["streaming_over_in_memory_time"] = round(b["seconds"] / a["seconds"], 3)
                section["streaming_over_in_memory_rss"] = round(b["peak_tree_rss_bytes"] / a["peak_tree_rss_bytes"], 3)
                limit = TARGETS["in_memory_vs_streaming_1m_ratio_max"]
                ratio = section["streaming_over_in_memory_time"]
                met["in_memory_vs_streaming_1m"] = 1 / limit <= ratio <= limit  # the "either way"
                met["in_memory_vs_streaming_1m_streaming_not_slower"] = ratio <= limit  # faster is no failure
            else:
                met["in_memory_vs_streaming_1m"] = met["in_memory_vs_streaming_1m_streaming_not_slower"] = False
            out["in_memory_vs_streaming_1m"] = section
    finally:
        if args.keep:
            note(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    out["ru_maxrss_children_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / MB, 1)
    out["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    out["targets_met"] = met
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
