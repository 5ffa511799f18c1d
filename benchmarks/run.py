"""Performance benchmarks of PPDP Desktop (not part of the tests).

    python benchmarks/run.py           # full run (1,000,000-row CSV; a few minutes)
    python benchmarks/run.py --quick   # 100,000 rows, smaller solver/LP sizes (~30 s)

Prints one JSON object on stdout; progress notes go to stderr. See benchmarks/README.md for what
each figure means and the targets.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ppdp_desktop import cli
from ppdp_desktop.core import sniffing
from ppdp_desktop.core.anonymize import AnonymizationSettings, SensitivitySettings, anonymize
from ppdp_desktop.core.domain import encode_column
from ppdp_desktop.core.finegrain_solver import objective, solve_exact, solve_lp
from ppdp_desktop.core.loading import load_table
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.perturbation import perturb_codes
from ppdp_desktop.core.methods.uniform import uniform_retention
from ppdp_desktop.core.release import release_metadata, write_csv, write_release
from ppdp_desktop.core.rng import make_rng
from ppdp_desktop.core.schema import Schema, roles_from_lists
from ppdp_desktop.core.sensitivity import gamma_of

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
DATA_VERSION = 1  # bump when the generated CSV changes
M_SENSITIVE = 50
ZIPF_EXPONENT = 1.1
THETA = 3.0

TARGETS = {
    "perturbation_records_per_s_min": 40e6,
    "finegrain_exact_m2000_s_max": 0.2,
    "anonymize_over_pandas_ratio_max": 1.5,
}


def note(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def measure(fn: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None) -> list[float]:
    """Wall times of ``repeat`` calls of ``fn`` (``setup`` runs untimed before each)."""
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def best_of(fn: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None) -> float:
    """Smallest wall time of ``repeat`` calls of ``fn``."""
    return min(measure(fn, repeat, setup))


def rounded(times: list[float]) -> list[float]:
    return [round(t, 4) for t in times]


def zipf_probabilities(m: int, exponent: float = ZIPF_EXPONENT) -> np.ndarray:
    p = 1.0 / np.arange(1, m + 1) ** exponent
    return p / p.sum()


# --- 1. perturbation throughput --------------------------------------------------------------


def bench_perturbation(n: int = 1_000_000, m: int = M_SENSITIVE, repeat: int = 5) -> dict:
    note(f"perturbation: {n:,} codes, m={m}, best of {repeat}")
    rng = np.random.default_rng(0)
    codes = rng.choice(m, size=n, p=zipf_probabilities(m)).astype(np.int32)  # int32 like encode_column
    gamma = float(m + 1)  # uniform formula: p = (gamma - 1)/(m - 1 + gamma) = 0.5
    p = uniform_retention(gamma, m)
    retention = np.full(m, p)

    def ppdp() -> None:
        perturb_codes(codes, retention, np.random.default_rng(1))

    def bare() -> None:  # plain k-ary randomized response: keep mask + uniform replacement
        r = np.random.default_rng(1)
        keep = r.random(n) < p
        np.where(keep, codes, r.integers(0, m, size=n, dtype=codes.dtype))

    runs_ppdp = measure(ppdp, repeat)
    runs_bare = measure(bare, repeat)
    t_ppdp, t_bare = min(runs_ppdp), min(runs_bare)
    return {
        "n": n,
        "m": m,
        "retention": p,
        "perturb_codes_s": t_ppdp,
        "perturb_codes_runs_s": rounded(runs_ppdp),
        "perturbation_records_per_s_median": n / float(np.median(runs_ppdp)),
        "perturbation_records_per_s": n / t_ppdp,
        "bare_numpy_krr_s": t_bare,
        "bare_numpy_krr_records_per_s": n / t_bare,
        "bare_numpy_krr_records_per_s_median": n / float(np.median(runs_bare)),
        "ratio_perturb_codes_over_bare": t_ppdp / t_bare,
    }


# --- 2. fine-grain solver ----------------------------------------------------------------------


def realistic_instance(m: int, theta: float = THETA) -> tuple[np.ndarray, np.ndarray]:
    """Zipf frequencies with the theta rule (rho1_i = f_i/n, rho2_i = theta rho1_i)."""
    rho1 = zipf_probabilities(m)
    concern = rho1 < 1.0 / theta
    gamma = gamma_of(np.where(concern, rho1, np.nan), theta * rho1)
    return rho1, gamma


def adversarial_instance(m: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Random weights and random gamma in (1, 6) for every value (every value has a concern)."""
    rng = np.random.default_rng(seed + m)
    w = rng.random(m)
    gamma = 1.0 + 5.0 * (1.0 - rng.random(m))  # (1, 6]
    gamma = np.minimum(gamma, 6.0 - 1e-9)
    return w / w.sum(), gamma


def bench_finegrain(exact_sizes: list[int], lp_sizes: list[int], repeat: int = 3) -> dict:
    exact: dict[str, dict[str, float]] = {"realistic": {}, "adversarial": {}}
    for m in exact_sizes:
        for kind, make in (("realistic", realistic_instance), ("adversarial", adversarial_instance)):
            w, g = make(m)
            note(f"finegrain exact: {kind} m={m}")
            exact[kind][str(m)] = best_of(lambda: solve_exact(w, g), repeat)
    lp: dict[str, float] = {}
    diffs: dict[str, float] = {}
    for m in lp_sizes:
        w, g = realistic_instance(m)
        note(f"finegrain LP: realistic m={m}")
        lp[str(m)] = best_of(lambda: solve_lp(w, g), repeat)
        diffs[str(m)] = abs(objective(w, solve_exact(w, g)) - objective(w, solve_lp(w, g)))
    # Cross-check on the adversarial instance too (small sizes only: the LP is the slow side).
    adv_diffs: dict[str, float] = {}
    for m in [s for s in lp_sizes if s <= 100]:
        w, g = adversarial_instance(m)
        adv_diffs[str(m)] = abs(objective(w, solve_exact(w, g)) - objective(w, solve_lp(w, g)))
    return {
        "finegrain_exact_s": exact,
        "finegrain_lp_s": {"realistic": lp},
        "exact_vs_lp_max_abs_objective_diff": max(diffs.values()) if diffs else None,
        "exact_vs_lp_abs_objective_diff": {"realistic": diffs, "adversarial": adv_diffs},
    }


# --- 3. anonymize end to end ------------------------------------------------------------------

REGIONS = np.array(["North", "South", "East", "West", "Central"])
BLOOD = np.array(["O+", "O-", "A+", "A-", "B+", "B-", "AB+", "AB-"])
SEXES = np.array(["F", "M"])


def make_csv(rows: int) -> Path:
    """A ``rows``-row, 10-column CSV (generated once, cached in benchmarks/.cache/)."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"patients_{rows}_v{DATA_VERSION}.csv"
    if path.exists():
        note(f"using cached {path.name} ({path.stat().st_size / 1e6:.0f} MB)")
        return path
    note(f"generating {path.name} ...")
    rng = np.random.default_rng(2026)
    diag_values = np.array([f"D{i:02d}" for i in range(M_SENSITIVE)])
    days = rng.integers(0, 365 * 6, size=rows)
    frame = pd.DataFrame(
        {
            "id": np.char.add("P", np.char.zfill(np.arange(1, rows + 1).astype(str), 8)),
            "sex": SEXES[rng.integers(0, 2, size=rows)],
            "age": rng.integers(0, 100, size=rows),
            "region": REGIONS[rng.integers(0, len(REGIONS), size=rows)],
            "postcode": rng.integers(1000, 10000, size=rows),
            "blood": BLOOD[rng.integers(0, len(BLOOD), size=rows)],
            "visits": rng.poisson(3.0, size=rows),
            "bmi": np.round(rng.normal(26.0, 4.0, size=rows), 1),
            "admitted": np.datetime_as_string(np.datetime64("2019-01-01") + days.astype("timedelta64[D]")),
            "diag": diag_values[rng.choice(M_SENSITIVE, size=rows, p=zipf_probabilities(M_SENSITIVE))],
        }
    )
    tmp = path.with_suffix(".partial")
    frame.to_csv(tmp, index=False)
    os.replace(tmp, path)
    note(f"wrote {path.name} ({path.stat().st_size / 1e6:.0f} MB)")
    return path


def _cli_args(path: Path, out: Path, method: str) -> list[str]:
    return [
        "anonymize", str(path), "--out", str(out), "--sensitive", "diag", "--identifier", "id",
        "--theta", "3", "--seed", "1", "--method", method,
    ]


def _settings(method: str) -> AnonymizationSettings:
    return AnonymizationSettings(
        sensitive="diag", method=method, identifiers=["id"], sensitivity=SensitivitySettings(theta=THETA), seed=1
    )


def _time_stages(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    return {name: best_of(fn, repeat) for name, fn in fns.items()}


def bench_anonymize(rows: int, repeat: int = 3) -> dict:
    path = make_csv(rows)
    work = Path(tempfile.mkdtemp(prefix="ppdp-bench-"))
    try:
        out = work / "out"
        result: dict[str, object] = {"rows": rows, "columns": 10, "csv_mb": round(path.stat().st_size / 1e6, 1)}

        def rm_out() -> None:
            shutil.rmtree(out, ignore_errors=True)

        # (a) bare pandas read + write
        note(f"bare pandas read_csv + to_csv, best of {repeat}")
        pandas_csv = work / "pandas.csv"
        frames: dict[str, pd.DataFrame] = {}

        def pandas_rw() -> None:
            df = pd.read_csv(path)
            df.to_csv(pandas_csv, index=False)

        runs_pandas = measure(pandas_rw, repeat)
        t_pandas = min(runs_pandas)
        frames["df"] = pd.read_csv(path)
        t_pandas_read = best_of(lambda: pd.read_csv(path), repeat)
        t_pandas_write = best_of(lambda: frames["df"].to_csv(pandas_csv, index=False), repeat)
        result["bare_pandas_s"] = t_pandas
        result["bare_pandas_runs_s"] = rounded(runs_pandas)
        result["bare_pandas_read_s"] = t_pandas_read
        result["bare_pandas_write_s"] = t_pandas_write

        # Reference only: pandas read + the same pyarrow CSV writer the release uses.
        def pandas_read_arrow_write() -> None:
            df = pd.read_csv(path)
            write_csv(df, pandas_csv, ",")

        result["pandas_read_arrow_write_s"] = best_of(pandas_read_arrow_write, repeat)
        del frames["df"]

        # (b) the CLI, in process
        for method in ("uniform", "finegrain"):
            note(f"ppdp anonymize --method {method}, best of {repeat}")
            codes: list[int] = []

            def run_cli() -> None:
                with contextlib.redirect_stdout(sys.stderr):
                    codes.append(cli.main(_cli_args(path, out, method)))

            runs_cli = measure(run_cli, repeat, setup=rm_out)
            t_cli = min(runs_cli)
            if any(c != 0 for c in codes):
                raise SystemExit(f"ppdp anonymize --method {method} failed with exit codes {codes}")
            result[f"anonymize_{method}_s"] = t_cli
            result[f"anonymize_{method}_runs_s"] = rounded(runs_cli)
            result[f"anonymize_{method}_over_pandas"] = t_cli / t_pandas
            result[f"release_csv_mb_{method}"] = round((out / "release.csv").stat().st_size / 1e6, 1)
            rm_out()

        # Stages, calling the core functions directly.
        note("stages: load_table / anonymize() / write_release")
        dataset = load_table(path)
        stages: dict[str, object] = {}
        stages["load_table_s"] = best_of(lambda: load_table(path), repeat)
        for method in ("uniform", "finegrain"):
            anon = anonymize(dataset, _settings(method))
            stages[f"anonymize_{method}_s"] = best_of(lambda: anonymize(dataset, _settings(method)), repeat)
            stages[f"write_release_{method}_s"] = best_of(lambda: write_release(anon, out), repeat, setup=rm_out)
            rm_out()

        note("sub-stages of load_table")
        data = path.read_bytes()
        text_holder: dict[str, object] = {}
        frame = dataset.frame
        load_sub = _time_stages(
            {
                "read_bytes_s": lambda: path.read_bytes(),
                "decode_whole_file_s": lambda: text_holder.__setitem__("t", sniffing.decode(data, None, path.name)),
                "pd_read_csv_s": lambda: pd.read_csv(
                    path, sep=",", encoding="utf-8", engine="c", keep_default_na=False,
                    na_values=[""], index_col=False, low_memory=False,
                ),
                "schema_infer_s": lambda: Schema.infer(frame),
            },
            repeat,
        )
        text_holder.clear()
        stages["load_table_sub"] = load_sub

        note("sub-stages of anonymize() (finegrain)")
        settings = _settings("finegrain")
        domain, codes_arr = encode_column(frame["diag"], "diag", dataset.label)
        requirement = settings.sensitivity.requirement(domain)
        plan = get_method("finegrain").plan(domain, requirement)
        rng, _ = make_rng(1)
        released = plan.apply(codes_arr, rng)
        order = np.random.default_rng(1).permutation(len(frame))
        schema = dataset.schema.with_roles(roles_from_lists(["diag"], ["id"], []))

        def build_table() -> pd.DataFrame:
            columns = {}
            for name in schema.released_columns:
                if name == "diag":
                    columns[name] = domain.decode(released[order])
                else:
                    columns[name] = frame[name].to_numpy()[order]
            return pd.DataFrame(columns, copy=False)

        gathered = {
            name: frame[name].to_numpy()[order] for name in schema.released_columns if name != "diag"
        }
        gathered["diag"] = domain.decode(released[order])
        gathered = {name: gathered[name] for name in schema.released_columns}

        stages["anonymize_sub_finegrain"] = _time_stages(
            {
                "encode_column_s": lambda: encode_column(frame["diag"], "diag", dataset.label),
                "requirement_and_plan_s": lambda: get_method("finegrain").plan(
                    domain, settings.sensitivity.requirement(domain)
                ),
                "verify_s": lambda: plan.verify(),
                "apply_s": lambda: plan.apply(codes_arr, np.random.default_rng(1)),
                "permutation_s": lambda: np.random.default_rng(1).permutation(len(frame)),
                "build_table_s": build_table,
                "build_table__gather_other_columns_s": lambda: [
                    frame[name].to_numpy()[order] for name in schema.released_columns if name != "diag"
                ],
                "build_table__decode_sensitive_s": lambda: domain.decode(released[order]),
                "build_table__dataframe_from_arrays_s": lambda: pd.DataFrame(gathered, copy=False),
            },
            repeat,
        )

        note("sub-stages of write_release (finegrain)")
        anon = anonymize(dataset, settings)
        import pyarrow as pa
        import pyarrow.csv as pacsv

        arrow_holder: dict[str, object] = {"a": pa.Table.from_pandas(anon.table, preserve_index=False)}
        release_csv = work / "release.csv"
        stages["write_release_sub_finegrain"] = _time_stages(
            {
                "release_metadata_s": lambda: release_metadata(anon, ","),
                "arrow_from_pandas_s": lambda: pa.Table.from_pandas(anon.table, preserve_index=False),
                "arrow_write_csv_s": lambda: pacsv.write_csv(
                    arrow_holder["a"], str(release_csv),
                    write_options=pacsv.WriteOptions(delimiter=",", quoting_style="needed"),
                ),
                "write_csv_total_s": lambda: write_csv(anon.table, release_csv, ","),
            },
            repeat,
        )
        result["stages"] = stages
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- main --------------------------------------------------------------------------------------


def machine() -> dict:
    import pyarrow
    import scipy

    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": date.today().isoformat(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scipy": scipy.__version__,
        "pyarrow": pyarrow.__version__,
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100,000 rows and smaller solver sizes (~30 s)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.quick:
        rows, exact_sizes, lp_sizes, repeat_e2e = 100_000, [50, 500], [50, 100], 3
    else:
        rows, exact_sizes, lp_sizes, repeat_e2e = 1_000_000, [50, 500, 2000], [50, 100, 300], 3

    report: dict[str, object] = {"mode": "quick" if args.quick else "full", "machine": machine(), "targets": TARGETS}
    report["perturbation"] = bench_perturbation()
    report["perturbation_records_per_s"] = report["perturbation"]["perturbation_records_per_s"]
    report.update(bench_finegrain(exact_sizes, lp_sizes))
    report["anonymize_end_to_end"] = bench_anonymize(rows, repeat_e2e)

    e2e = report["anonymize_end_to_end"]
    exact_2000 = report["finegrain_exact_s"]["realistic"].get("2000")
    exact_2000_adv = report["finegrain_exact_s"]["adversarial"].get("2000")
    report["targets_met"] = {
        "perturbation": report["perturbation_records_per_s"] >= TARGETS["perturbation_records_per_s_min"],
        "finegrain_exact_m2000": None
        if exact_2000 is None
        else max(exact_2000, exact_2000_adv) < TARGETS["finegrain_exact_m2000_s_max"],
        "anonymize_uniform_1m": None
        if rows < 1_000_000
        else e2e["anonymize_uniform_over_pandas"] <= TARGETS["anonymize_over_pandas_ratio_max"],
        "anonymize_finegrain_1m": None
        if rows < 1_000_000
        else e2e["anonymize_finegrain_over_pandas"] <= TARGETS["anonymize_over_pandas_ratio_max"],
    }
    report["total_benchmark_s"] = time.perf_counter() - start
    note(f"done in {report['total_benchmark_s']:.1f} s")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
