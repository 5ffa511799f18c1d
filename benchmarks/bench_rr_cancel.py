"""rr on realistic data (issue 31, point 7): how soon a job too large to plan is refused, and how soon Cancel lands.

    .venv/bin/python benchmarks/bench_rr_cancel.py            # about 1.5 min on 2 busy cores
    .venv/bin/python benchmarks/bench_rr_cancel.py --cancels 3
    .venv/bin/python benchmarks/bench_rr_cancel.py --whole-run   # also the longest stretch without a cancel check

* ``refusal``: the 5,000-row clinical export (``tests/clinical_data.py``: sex, birth date with 4,562 values,
  postcode; sensitive ICD-10 code; l = 3) through ``ppdp anonymize`` in this process: seconds from the command to its
  exit (reading the .xlsx included) and of the job alone after loading (``anonymize`` to its refusal). Before issue
  31 the same job ran the optimizer for minutes (the CLI reported 765 s before failing).
* ``cancel``: a ward just within rr's limits (sex, birth month with 900 values, 30 postcodes, 12 ICD-10 codes; 87
  million steps per evaluation of the risk) anonymized on a thread; Cancel at several moments of the planning; the
  seconds from ``cancel()`` to the job's end (``Cancelled`` raised), and one evaluation of the risk at this size.
* ``planning``: the clinical export with the birth month instead of the day (28.5 million steps): the optimizer's
  evaluations, SLSQP iterations and seconds, as the progress phases assume (``rr/pace.py``).
* ``whole_run`` (``--whole-run``, 40 s more): the same job through the window's ``run_job`` (plan, release, report):
  the longest stretches between two checks of the cancel token, and the stage each began in.

Prints one JSON object; notes on stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from clinical_data import clinical_frame, write_clinical_xlsx  # noqa: E402

from ppdp_desktop.cli import main as cli_main  # noqa: E402
from ppdp_desktop.core.anonymize import anonymize  # noqa: E402
from ppdp_desktop.core.data.dataset import Dataset  # noqa: E402
from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.errors import Cancelled, ParameterError  # noqa: E402
from ppdp_desktop.core.methods.rr import limits  # noqa: E402
from ppdp_desktop.core.methods.rr import parameters as rr_parameters  # noqa: E402
from ppdp_desktop.core.methods.rr.risk import contingency  # noqa: E402
from ppdp_desktop.core.methods.rr.settings import RRSettings  # noqa: E402
from ppdp_desktop.core.progress import CancelToken  # noqa: E402
from ppdp_desktop.core.settings import AnonymizationSettings  # noqa: E402

SENSITIVE = "Hauptdiagnose (ICD-10)"


def note(text: str) -> None:
    print(f"[bench_rr_cancel] {text}", file=sys.stderr, flush=True)


def refusal(folder: Path) -> dict:
    data = write_clinical_xlsx(folder / "klinik.xlsx")
    args = ["anonymize", str(data), "--header-row", "2", "--method", "rr", "--sensitive", SENSITIVE,
            "--quasi", "Geschlecht,Geburtsdatum,PLZ", "--l", "3", "--out", str(folder / "release")]
    err = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err):
        code = cli_main(args)
    command_s = time.perf_counter() - start
    dataset = load_table(data, header_row=2)
    settings = AnonymizationSettings(SENSITIVE, "rr", quasi=["Geschlecht", "Geburtsdatum", "PLZ"],
                                     options=RRSettings(l=3.0))
    start = time.perf_counter()
    try:
        anonymize(dataset, settings)
        refused = False
    except ParameterError:
        refused = True
    return {"command_s": round(command_s, 2), "exit_code": code, "job_after_loading_s": round(time.perf_counter() - start, 3),
            "refused": refused, "message": err.getvalue().strip()}


def ward(n: int = 20_000, seed: int = 5) -> pd.DataFrame:
    """As tests/test_gui_rr_planning.py's: just within the limits."""
    rng = np.random.default_rng(seed)
    icd = [f"{c}{i:02d}.{j}" for c, i, j in zip("IEJCKSFNIAMR", range(10, 22), range(12))]
    return pd.DataFrame({
        "Geschlecht": rng.choice(["weiblich", "männlich", "divers"], n, p=[0.51, 0.485, 0.005]),
        "Geburtsmonat": [f"{1930 + m // 12}-{m % 12 + 1:02d}" for m in rng.integers(0, 900, n)],
        "PLZ": [f"{z:05d}" for z in rng.integers(1000, 1030, n)],
        SENSITIVE: rng.choice(icd, n),
    })


def cancel_latency(delays: list[float]) -> dict:
    dataset = Dataset(ward())
    settings = AnonymizationSettings(SENSITIVE, "rr", quasi=["Geschlecht", "Geburtsmonat", "PLZ"],
                                     options=RRSettings(l=3.0))
    latencies, stages = [], []
    for delay in delays:
        token, planning, ended, last = CancelToken(), threading.Event(), {}, {}

        def progress(fraction: float, message: str = "", planning=planning, last=last) -> None:
            last["stage"] = message
            if message.startswith("Planning: "):
                planning.set()

        def job(token=token, ended=ended, progress=progress) -> None:
            try:
                anonymize(dataset, settings, progress, token)
            except Cancelled:
                pass
            ended["at"] = time.perf_counter()

        thread = threading.Thread(target=job, daemon=True)
        thread.start()
        planning.wait(120)
        time.sleep(delay)
        stages.append(last.get("stage", ""))
        cancelled_at = time.perf_counter()
        token.cancel()
        thread.join(120)
        if ended["at"] < cancelled_at:  # a fast machine: the job was over before the cancel
            stages[-1] += " (finished before the cancel)"
            note(f"cancel {delay:.1f} s into planning: the job had finished")
            continue
        latencies.append(ended["at"] - cancelled_at)
        note(f"cancel {delay:.1f} s into planning ({stages[-1]!r}): ended {latencies[-1]:.3f} s later")
    dims = [3, 900, 30, 12]
    codes = [dataset.frame[c].astype("category").cat.codes.to_numpy() for c in dataset.frame.columns]
    problem = rr_parameters._Problem(contingency(codes, dims), "both")
    x = np.full(problem.ds.size, 0.5)
    problem.risks(x)
    evaluations = []
    for _ in range(3):
        start = time.perf_counter()
        problem.risks(x)
        evaluations.append(time.perf_counter() - start)
    return {"dims": dims, "risk_steps": limits.risk_steps(dims), "delays_s": delays,
            "stage_at_cancel": stages, "cancel_to_end_s": [round(v, 3) for v in latencies],
            "cancel_to_end_max_s": round(max(latencies), 3), "cancel_to_end_median_s": round(statistics.median(latencies), 3),
            "one_risk_evaluation_s": round(min(evaluations), 3)}


def planning() -> dict:
    frame = clinical_frame()
    frame["Geburtsmonat"] = [f"{d.year}-{d.month:02d}" for d in frame["Geburtsdatum"]]
    columns = ["Geschlecht", "Geburtsmonat", "PLZ", SENSITIVE]
    codes = [frame[c].astype("category").cat.codes.to_numpy() for c in columns]
    dims = [int(c.max()) + 1 for c in codes]
    counts = contingency(codes, dims)
    from scipy import optimize

    iterations, original = [], optimize.minimize

    def counted(*args, **kwargs):
        result = original(*args, **kwargs)
        iterations.append(int(result.nit))
        return result

    reports = []
    optimize.minimize = counted
    try:
        start = time.perf_counter()
        rr_parameters.optimal_parameters(counts, 3.0, "both", progress=lambda f, m="": reports.append((f, m)))
        seconds = time.perf_counter() - start
    finally:
        optimize.minimize = original
    return {"dims": dims, "risk_steps": limits.risk_steps(dims), "seconds": round(seconds, 2),
            "evaluations": len(reports) - 1, "slsqp_iterations": iterations,
            "distinct_fractions": len({f for f, _ in reports}),
            "stages": list(dict.fromkeys(m for _, m in reports))}


def whole_run() -> dict:
    frame = clinical_frame()
    frame["Geburtsmonat"] = [f"{d.year}-{d.month:02d}" for d in frame["Geburtsdatum"]]
    from ppdp_desktop.core.jobs import run_job

    checks, original = [], CancelToken.check

    def check(self) -> None:
        checks.append(time.perf_counter())
        original(self)

    reports: list[tuple[float, str]] = []
    settings = AnonymizationSettings(SENSITIVE, "rr", quasi=["Geschlecht", "Geburtsmonat", "PLZ"],
                                     options=RRSettings(l=3.0), seed=1)
    CancelToken.check = check  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        run_job(Dataset(frame[["Geschlecht", "Geburtsmonat", "PLZ", SENSITIVE]]), [settings],
                lambda f, m="": reports.append((time.perf_counter(), m)), CancelToken())
        end = time.perf_counter()
    finally:
        CancelToken.check = original  # type: ignore[method-assign]
    points = [start, *checks, end]
    gaps = sorted(((b - a, a) for a, b in zip(points, points[1:])), reverse=True)[:5]
    stage = lambda at: next((m for t, m in reversed(reports) if t <= at), "")  # noqa: E731
    return {"seconds": round(end - start, 1), "checks": len(checks),
            "longest_without_a_check": [{"s": round(g, 2), "stage": stage(at)} for g, at in gaps]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cancels", type=int, default=4,
                        help="how many cancels to time (0.5 s, 2 s, 5 s, 10 s, 20 s into the planning)")
    parser.add_argument("--whole-run", action="store_true", help="also time the stretches without a cancel check")
    args = parser.parse_args()
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as folder:
        note("refusal of the clinical job")
        out["refusal"] = refusal(Path(folder))
    note("planning with the birth month")
    out["planning"] = planning()
    note("cancel latency just within the limits")
    out["cancel"] = cancel_latency([0.5, 2.0, 5.0, 10.0, 20.0][: max(args.cancels, 1)])
    if args.whole_run:
        note("the whole run with the birth month")
        out["whole_run"] = whole_run()
    out["targets"] = {"cancel_to_end_max_s": 1.0, "refusal_job_after_loading_s": 1.0}
    out["targets_met"] = (out["cancel"]["cancel_to_end_max_s"] <= 1.0
                          and out["refusal"]["job_after_loading_s"] <= 1.0)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
