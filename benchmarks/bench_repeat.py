"""Benchmark (not a test): repeated releases of the same patients (issue 30). Prints one JSON object.

    .venv/bin/python benchmarks/bench_repeat.py --baseline 7998258     # everything: about 6 minutes on 2 cores
    .venv/bin/python benchmarks/bench_repeat.py --part scenario        # a) only (about 1 minute)
    .venv/bin/python benchmarks/bench_repeat.py --part timing --rows 100000 --runs 1   # a quick b)

It needs the shared Adult file (``../shared/data/adult/adult.csv``, ';'-separated, 30,162 records) and writes
only into a temporary folder, with its own ``PPDP_DATA_DIR`` and ``PPDP_CONFIG_DIR`` (a fresh ledger, a fresh
custodian secret and installation secret), removed at the end.

a) ``scenario``: the issue's acceptance test, from the command line. Adult gets a ``patient_id`` column
   (P00000, ...). Release 1 of it, then release 2 of the same records with the rows reordered and 1,000 records
   added (copies of existing rows with new patient ids), both ``ppdp anonymize --identifier patient_id --project
   adult-monthly --sensitive occupation --method uniform --rho1 0.1 --rho2 0.5`` with a sealed key (its passphrase
   from a file seals the custodian secret on the first release and opens it on the next), no ``--seed``; release
   2 sets ``--budget 3``. Measured on the two release folders:

   * ``same_by_patient``: the share of release 1's patients whose released occupation is the same in release 2,
     the records matched by patient number (decoded from each release's pseudonyms with ``ppdp lookup --file``
     and the key);
   * ``same_by_unchanged_columns``: the attacker's view, without any key: the records whose unchanged columns
     (every released column but occupation and the pseudonym) are unique in both releases, linked by them, and
     the share of those with the same released occupation;

   then release 2's ``repeated_release`` (release.json) and the summary's lines, a third release (release 2's
   file with 500 patients' occupation changed, so their fresh draws compose: 2 x 2.197 > 3) that must be refused
   with one line, and ``ppdp history``. The same two releases are then made in-process
   (``core.anonymize.anonymize`` with ``RepeatSettings(keys=PersistentKeys(secret))``, release 1 recorded in the
   ledger as the publish pipeline records it), reading ``result.applied.columns["occupation"]`` per patient,
   for uniform and fine-grain at rho = (0.1, 0.5) and fine-grain at theta = 3, each with a custodian secret and
   without one (fresh draws); fine-grain at theta = 3 once more on the same records merely reordered; partitioning
   at rho = (0.1, 0.5) (one sub-table) and at (0.13, 0.25) (three sub-tables: the kept layout, a stage added where
   a protected share rose, ``rederived`` counting those records) and rr (occupation randomized at l = 5 behind
   sex and race), each on both; and uniform
   (rho) and fine-grain (theta) with release 2 = release 1 plus 5 patients holding a new occupation, a value the
   column did not hold (a new value makes a new plan and every patient's draw fresh).

b) ``timing``: the 1M-row job (Adult repeated with new patient ids, in memory): CPU seconds
   (``time.process_time``) of ``anonymize()`` without a project (``settings.repeat`` default), with a project and
   a custodian secret (persistent draws) and with a project but no secret, uniform and fine-grain at rho = (0.1,
   0.5), median of ``--runs`` runs alternating. The ledger: ``Ledger.begin`` + ``mark_published`` of a
   1M-record release (a fresh ledger each run), and the cumulative guarantee of a 1M-record release against 3
   earlier 1M-record releases (reading them from the ledger, then ``cumulative_guarantee``), wall seconds, median
   of 5. ``cli_job``: the whole ``ppdp anonymize`` of the same 1M rows as a CSV (uniform, no key, no report) as a
   process, CPU (its rusage) and wall seconds, median of ``--runs`` alternating: with persistent draws
   (``PPDP_SECRET_PASSPHRASE``; from the second run on, the ledger holds the earlier runs' 1M-record releases),
   with the project but no secret, and with ``--baseline COMMIT``'s code (extracted with ``git archive``; 7998258
   is the last commit before issue 30, whose jobs had no project).

Targets (issue 30): >= 95 % of the matched records keep their released value; persistent draws keep the 1M-row
job within 10 % of its time without a project; the ledger adds < 50 ms.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult" / "adult.csv"
PPDP = Path(sys.executable).parent / "ppdp"
SENSITIVE = "occupation"
PROJECT = "adult-monthly"
PASSPHRASE = "umber quarry lantern fjord 57 okapi"
TARGET_SAME, TARGET_RATIO, TARGET_LEDGER_S = 0.95, 1.10, 0.050


def note(message: str) -> None:
    print(f"[bench_repeat] {message}", file=sys.stderr, flush=True)


def adult(ids_from: int = 0) -> pd.DataFrame:
    frame = pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)
    frame.insert(0, "patient_id", [f"P{i:05d}" for i in range(ids_from, ids_from + len(frame))])
    return frame


def second_month(first: pd.DataFrame, added: int = 1000) -> pd.DataFrame:
    """The same records reordered, plus ``added`` copies of existing rows with new patient ids."""
    rng = np.random.default_rng(2)
    extra = first.iloc[rng.choice(len(first), added, replace=False)].copy()
    extra["patient_id"] = [f"P{i:05d}" for i in range(len(first), len(first) + added)]
    return pd.concat([first, extra]).sample(frac=1.0, random_state=3).reset_index(drop=True)


def third_month(second: pd.DataFrame, changed: int = 500) -> pd.DataFrame:
    """``second`` with ``changed`` patients' occupation moved to the next value."""
    third = second.copy()
    values = sorted(third[SENSITIVE].unique())
    rows = np.arange(0, len(third), len(third) // changed)[:changed]
    third.loc[rows, SENSITIVE] = [values[(values.index(v) + 1) % len(values)] for v in third.loc[rows, SENSITIVE]]
    return third


# --- a) the scenario from the command line ------------------------------------------------------------------
def ppdp(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(PPDP), *args], env=env, capture_output=True, text=True)


def anonymize_args(data: Path, out: Path, passphrase: Path, *extra: str) -> list[str]:
    return ["anonymize", str(data), "--out", str(out), "--key", f"{out}.ppdpkey", "--passphrase-file", str(passphrase),
            "--identifier", "patient_id", "--sensitive", SENSITIVE, "--method", "uniform", "--rho1", "0.1", "--rho2",
            "0.5", "--project", PROJECT, "--no-report", *extra]


def by_patient(env: dict, release: Path, passphrase: Path) -> pd.Series:
    """Release's occupation per patient, the pseudonyms decoded with the key (``ppdp lookup --file``)."""
    decoded = release.parent / f"{release.name}-decoded.csv"
    done = ppdp(env, "lookup", str(release), f"{release}.ppdpkey", "--file", str(release / "release.csv"), "--out",
                str(decoded), "--passphrase-file", str(passphrase))
    if done.returncode:
        raise SystemExit(f"ppdp lookup failed: {done.stderr.strip()}")
    table = pd.read_csv(decoded, dtype=str, keep_default_na=False)
    patient = next(c for c in table.columns if c.startswith("patient_id "))
    value = next(c for c in table.columns if c.startswith(f"{SENSITIVE} "))
    return pd.Series(table[value].to_numpy(), index=table[patient].to_numpy())


def linked_by_unchanged_columns(a: pd.DataFrame, b: pd.DataFrame, pseudonym: str = "pseudonym") -> dict:
    """The attacker without a key: records unique by their unchanged columns in both releases, linked by them."""
    columns = [c for c in a.columns if c not in (SENSITIVE, pseudonym)]
    a, b = (t[~t.duplicated(columns, keep=False)] for t in (a, b))
    linked = a.merge(b, on=columns, suffixes=("_1", "_2"))
    same = float((linked[f"{SENSITIVE}_1"] == linked[f"{SENSITIVE}_2"]).mean())
    return {"linked_records": len(linked), "same_share": round(same, 4)}


def repeat_lines(stdout: str) -> list[str]:
    """The summary's lines about this release among the project's releases (from "Records are recognised" on)."""
    lines = [line.strip() for line in stdout.splitlines()]
    start = next((i for i, line in enumerate(lines) if line.startswith("Records are recognised")), len(lines))
    return [line for line in lines[start:] if not line.startswith(("sealed key", "custodian's report", "its full"))]


def scenario_cli(work: Path) -> dict:
    env = {**os.environ, "PPDP_DATA_DIR": str(work / "data"), "PPDP_CONFIG_DIR": str(work / "config")}
    env.pop("PPDP_PASSPHRASE", None)
    env.pop("PPDP_SECRET_PASSPHRASE", None)
    passphrase = work / "passphrase.txt"
    passphrase.write_text(PASSPHRASE + "\n", encoding="utf-8")
    first = adult()
    second = second_month(first)
    files = {name: work / f"{name}.csv" for name in ("month1", "month2", "month3")}
    for name, frame in (("month1", first), ("month2", second), ("month3", third_month(second))):
        frame.to_csv(files[name], sep=";", index=False)
    out = {"data": f"{ADULT.name}: {len(first):,} records; release 2: {len(second):,} (reordered, 1,000 added)"}
    runs = {}
    for ordinal, (name, extra) in enumerate((("month1", ()), ("month2", ("--budget", "3"))), start=1):
        note(f"ppdp anonymize, release {ordinal}")
        start = time.perf_counter()
        done = ppdp(env, *anonymize_args(files[name], work / f"r{ordinal}", passphrase, *extra))
        if done.returncode:
            raise SystemExit(f"release {ordinal} failed ({done.returncode}): {done.stderr.strip()}")
        runs[ordinal] = {"seconds": round(time.perf_counter() - start, 2), "summary": repeat_lines(done.stdout)}
    out["releases"] = runs
    a, b = (by_patient(env, work / f"r{i}", passphrase) for i in (1, 2))
    out["same_by_patient"] = round(float((a == b.reindex(a.index)).mean()), 4)
    out["matched_by_patient"] = int(b.index.isin(a.index).sum())
    a, b = (pd.read_csv(work / f"r{i}" / "release.csv", dtype=str, keep_default_na=False) for i in (1, 2))
    out["same_by_unchanged_columns"] = linked_by_unchanged_columns(a, b)
    block = json.loads((work / "r2" / "release.json").read_text(encoding="utf-8"))["repeated_release"]
    out["release2_repeated_release"] = block
    note("ppdp anonymize, release 3 (500 values changed: past the budget)")
    third = ppdp(env, *anonymize_args(files["month3"], work / "r3", passphrase))
    out["release3"] = {"exit_status": third.returncode, "stderr": third.stderr.strip().splitlines(),
                       "folder_written": (work / "r3").exists()}
    out["history"] = ppdp(env, "history", PROJECT).stdout.strip().splitlines()
    out["target_met"] = (out["same_by_patient"] >= TARGET_SAME and block.get("ordinal") == 2
                         and third.returncode == 1 and not (work / "r3").exists()
                         and len(out["release3"]["stderr"]) == 1 and "budget" in third.stderr)
    return out


# --- a) the same releases in-process, per method ---------------------------------------------------------------
def scenario_in_process(work: Path) -> dict:
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.rr.settings import RRSettings
    from ppdp_desktop.core.privacy.persistent import PersistentKeys
    from ppdp_desktop.core.repeat.ledger import Ledger
    from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings, SensitivitySettings

    os.environ["PPDP_DATA_DIR"], os.environ["PPDP_CONFIG_DIR"] = str(work / "data-in-process"), str(work / "config")
    keys, folders = PersistentKeys(os.urandom(32)), iter(range(1_000_000))
    first = adult()
    newcomers = first.iloc[:5].assign(patient_id=[f"N{i}" for i in range(5)], occupation="Astronaut")
    months = {"reordered_plus_1000": second_month(first), "same_records_reordered": first.sample(frac=1.0, random_state=4),
              "plus_5_with_a_new_value": pd.concat([first, newcomers]).sample(frac=1.0, random_state=5)}

    def release(frame: pd.DataFrame, method: str, sensitivity: SensitivitySettings, project: str, secret: bool):
        rr = method == "rr"  # the linking-attack method: occupation randomized, at l = 5, behind sex and race
        settings = AnonymizationSettings(SENSITIVE, method, ["patient_id"], ["sex", "race"] if rr else [], sensitivity)
        if rr:
            settings.options = RRSettings(l=5.0, randomize="s")
        settings.repeat = RepeatSettings(project_id=project, keys=keys if secret else None)
        result = anonymize(Dataset(frame.reset_index(drop=True)), settings)
        entry = result.repeat.ledger_entry(result.plan.method, {})
        with Ledger() as ledger:  # as the publish pipeline records it: pending, then published
            ledger.mark_published(ledger.begin(entry, work / f"release-{next(folders)}", "0" * 64))
        return result, pd.Series(np.asarray(result.applied.columns[SENSITIVE], dtype=object),
                                 index=frame["patient_id"].to_numpy())

    configs = [("uniform_rho", "uniform", SensitivitySettings(rho1=0.1, rho2=0.5), "reordered_plus_1000"),
               ("finegrain_rho", "finegrain", SensitivitySettings(rho1=0.1, rho2=0.5), "reordered_plus_1000"),
               ("finegrain_theta3", "finegrain", SensitivitySettings(theta=3.0), "reordered_plus_1000"),
               ("finegrain_theta3_same_records", "finegrain", SensitivitySettings(theta=3.0), "same_records_reordered"),
               ("partition_rho", "partition", SensitivitySettings(rho1=0.1, rho2=0.5), "reordered_plus_1000"),
               ("partition_rho_same_records", "partition", SensitivitySettings(rho1=0.1, rho2=0.5), "same_records_reordered"),
               ("partition_3_subtables", "partition", SensitivitySettings(rho1=0.13, rho2=0.25), "reordered_plus_1000"),
               ("rr_l5", "rr", SensitivitySettings(), "reordered_plus_1000"),
               ("rr_l5_same_records", "rr", SensitivitySettings(), "same_records_reordered"),
               ("uniform_rho_new_value", "uniform", SensitivitySettings(rho1=0.1, rho2=0.5), "plus_5_with_a_new_value"),
               ("finegrain_theta3_new_value", "finegrain", SensitivitySettings(theta=3.0), "plus_5_with_a_new_value")]
    out = {}
    for name, method, sensitivity, month in configs:
        for secret in (True, False):
            label = f"{name}_{'persistent' if secret else 'fresh'}"
            note(f"in-process: {label}")
            one, a = release(first, method, sensitivity, label, secret)
            second, b = release(months[month], method, sensitivity, label, secret)
            cumulative = second.repeat.cumulative
            tables = [r.table.astype(str) for r in (one, second)]
            out[label] = {"same_share": round(float((a == b.reindex(a.index)).mean()), 4),
                          "same_by_unchanged_columns": linked_by_unchanged_columns(*tables, one.pseudonym_column),
                          "matched": cumulative.matched, "unchanged": cumulative.unchanged, "changed": cumulative.changed,
                          "new": cumulative.new, "rederived": cumulative.rederived, "kept_from_release": kept_from(second.plan),
                          "epsilon_release": round(cumulative.epsilon_release, 4),
                          "epsilon_cumulative_max": round(cumulative.epsilon_cumulative_max, 4)}
    return out


def kept_from(plan: object) -> int | None:
    """The project's release whose plan ``plan`` kept (partitioning's layout, perturbation's pairs), or None."""
    kept = getattr(plan, "kept_from_release", None)
    parameters = getattr(plan, "parameters", None)
    return parameters.get("kept_from_release") if kept is None and isinstance(parameters, dict) else kept


# --- b) timing ----------------------------------------------------------------------------------------------------
def million(rows: int) -> pd.DataFrame:
    base = adult()
    frame = pd.concat([base] * -(-rows // len(base)), ignore_index=True).iloc[:rows].copy()
    frame["patient_id"] = [f"P{i:07d}" for i in range(rows)]
    return frame


def job_cpu(rows: int, runs: int, work: Path) -> dict:
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.privacy.persistent import PersistentKeys
    from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings, SensitivitySettings

    os.environ["PPDP_DATA_DIR"], os.environ["PPDP_CONFIG_DIR"] = str(work / "data-timing"), str(work / "config")
    dataset = Dataset(million(rows))
    keys = PersistentKeys(os.urandom(32))
    variants: dict[str, Callable[[], RepeatSettings]] = {
        "no_project": RepeatSettings,
        "persistent": lambda: RepeatSettings(project_id="timing", keys=keys),
        "project_no_secret": lambda: RepeatSettings(project_id="timing"),
    }
    out = {}
    for method in ("uniform", "finegrain"):
        times: dict[str, list[float]] = {name: [] for name in variants}
        for run in range(runs):
            for name, repeat in variants.items():
                note(f"{rows:,}-row job, {method}, {name}, run {run + 1} of {runs}")
                settings = AnonymizationSettings(SENSITIVE, method, ["patient_id"], [], SensitivitySettings(rho1=0.1, rho2=0.5))
                settings.repeat = repeat()
                start = time.process_time()
                anonymize(dataset, settings)
                times[name].append(time.process_time() - start)
        median = {name: statistics.median(t) for name, t in times.items()}
        out[method] = {"cpu_runs_s": {n: [round(t, 2) for t in ts] for n, ts in times.items()},
                       "cpu_median_s": {n: round(t, 2) for n, t in median.items()},
                       "persistent_over_no_project": round(median["persistent"] / median["no_project"], 3),
                       "project_no_secret_over_no_project": round(median["project_no_secret"] / median["no_project"], 3)}
    return out


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_job(rows: int, runs: int, work: Path, baseline: str | None) -> dict:
    """The whole ``ppdp anonymize`` of a ``rows``-row CSV (no key, no report) as a process: its CPU and wall
    seconds with persistent draws (a custodian secret from ``PPDP_SECRET_PASSPHRASE``), with the project but no
    secret, and, given ``baseline`` (a commit), with the code of that commit (before issue 30: no project)."""
    data = work / "million.csv"
    million(rows).to_csv(data, index=False)
    variants = {"persistent": (None, {"PPDP_SECRET_PASSPHRASE": PASSPHRASE}), "project_no_secret": (None, {})}
    if baseline:
        tree = work / "baseline"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", baseline, "ppdp_desktop", "resources"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        variants = {"baseline": (str(tree), {}), **variants}
    times: dict[str, dict[str, list[float]]] = {name: {"cpu": [], "wall": []} for name in variants}
    for run in range(runs):
        for name, (pythonpath, extra) in variants.items():
            note(f"ppdp anonymize of {rows:,} rows, {name}, run {run + 1} of {runs}")
            env = {k: v for k, v in os.environ.items() if k not in ("PPDP_PASSPHRASE", "PPDP_SECRET_PASSPHRASE")}
            env.update(extra, PPDP_DATA_DIR=str(work / f"data-{name}"), PPDP_CONFIG_DIR=str(work / "config"))
            if pythonpath:
                env["PYTHONPATH"] = pythonpath
            out = work / f"release-{name}-{run}"
            command = [sys.executable, "-c", "import sys; from ppdp_desktop.cli import main; sys.exit(main(sys.argv[1:]))",
                       "anonymize", str(data), "--out", str(out), "--identifier", "patient_id", "--sensitive", SENSITIVE,
                       "--method", "uniform", "--rho1", "0.1", "--rho2", "0.5", "--no-report", "--quiet"]
            cpu, start = child_cpu(), time.perf_counter()
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
            times[name]["wall"].append(time.perf_counter() - start)
            times[name]["cpu"].append(child_cpu() - cpu)
            subprocess.run(["rm", "-rf", str(out)], check=True)
    median = {name: {k: statistics.median(v) for k, v in t.items()} for name, t in times.items()}
    out: dict = {"rows": rows, "runs": runs, "baseline_commit": baseline,
                 "runs_s": {n: {k: [round(x, 2) for x in v] for k, v in t.items()} for n, t in times.items()},
                 "median_s": {n: {k: round(x, 2) for k, x in t.items()} for n, t in median.items()}}
    if baseline:
        for name in ("persistent", "project_no_secret"):
            out[f"{name}_over_baseline"] = {k: round(median[name][k] / median["baseline"][k], 3) for k in ("cpu", "wall")}
    return out


def ledger_times(records: int, work: Path, runs: int = 5) -> dict:
    from ppdp_desktop.core.repeat.accounting import cumulative_guarantee
    from ppdp_desktop.core.repeat.ledger import Ledger, LedgerEntry
    from ppdp_desktop.core.repeat.records import ReleaseRecords

    rng = np.random.default_rng(30)
    identities = rng.integers(0, 2**63, records, dtype=np.uint64)
    draws = rng.integers(0, 2**63, records, dtype=np.uint64)

    def month(changed_share: float) -> ReleaseRecords:
        now = draws.copy()
        moved = rng.random(records) < changed_share
        now[moved] = rng.integers(0, 2**63, int(moved.sum()), dtype=np.uint64)
        return ReleaseRecords(identities, now, np.full(records, 2.197))

    def entry(release: ReleaseRecords) -> LedgerEntry:
        return LedgerEntry("timing", "uniform", {"rho1": 0.1, "rho2": 0.5}, release, True, cumulative={"ordinal": 1})

    write = []
    for run in range(runs):
        path = work / f"ledger-{run}" / "ledger.sqlite3"
        release = month(0.01)
        with Ledger(path) as ledger:
            start = time.perf_counter()
            ledger.mark_published(ledger.begin(entry(release), work / f"release-{run}", "0" * 64))
            write.append(time.perf_counter() - start)
    path = work / "ledger-cumulative" / "ledger.sqlite3"
    with Ledger(path) as ledger:
        for k in range(3):
            ledger.mark_published(ledger.begin(entry(month(0.01)), work / f"earlier-{k}", "0" * 64))
    current = month(0.01)
    read, guarantee = [], []
    for _ in range(runs):
        start = time.perf_counter()
        with Ledger(path) as ledger:  # what the job does: open, list the project's releases, read their records
            previous = [release.records() for release in ledger.releases("timing")]
            ordinal = ledger.next_ordinal("timing")
        middle = time.perf_counter()
        cumulative_guarantee(previous, current, ordinal=ordinal, budget=10.0)
        guarantee.append(time.perf_counter() - middle)
        read.append(middle - start)
    med = {"write": statistics.median(write), "read": statistics.median(read), "guarantee": statistics.median(guarantee)}
    return {"records": records, "runs": runs,
            "begin_mark_published_s": [round(t, 4) for t in write],
            "read_3_earlier_s": [round(t, 4) for t in read],
            "cumulative_guarantee_vs_3_s": [round(t, 4) for t in guarantee],
            "median_s": {k: round(v, 4) for k, v in med.items()},
            "write_target_met": med["write"] < TARGET_LEDGER_S,
            "read_plus_guarantee_target_met": med["read"] + med["guarantee"] < TARGET_LEDGER_S}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("all", "scenario", "timing"), default="all")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the timed job and of the ledger's releases")
    parser.add_argument("--runs", type=int, default=3, help="runs of each timed job variant (alternating)")
    parser.add_argument("--baseline", metavar="COMMIT", help="also time the whole ppdp anonymize job with the code of "
                        "this commit (e.g. 7998258, the last before issue 30), extracted with git archive")
    args = parser.parse_args(argv)
    if not ADULT.is_file():
        raise SystemExit(f"the shared Adult file is missing: {ADULT}")
    out: dict = {"date": datetime.now(UTC).date().isoformat(), "cores": os.cpu_count(),
                 "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="bench-repeat-") as tmp:
        work = Path(tmp)
        for part in ("cli", "in-process", "timing", "ledger", "cli-job"):
            (work / part).mkdir()
        if args.part in ("all", "scenario"):
            out["scenario_cli"] = scenario_cli(work / "cli")
            out["scenario_in_process"] = scenario_in_process(work / "in-process")
        if args.part in ("all", "timing"):
            out["job_cpu"] = {"rows": args.rows, "runs": args.runs, **job_cpu(args.rows, args.runs, work / "timing")}
            out["ledger"] = ledger_times(args.rows, work / "ledger")
            ratios = [out["job_cpu"][m]["persistent_over_no_project"] for m in ("uniform", "finegrain")]
            out["job_target_met"] = max(ratios) <= TARGET_RATIO
            out["cli_job"] = cli_job(args.rows, args.runs, work / "cli-job", args.baseline)
    out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
