"""Performance benchmarks of PPDP Desktop (not part of the tests).

    python benchmarks/run.py           # full run (1,000,000-row CSV; about 4.5 minutes on 2 cores)
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
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop import cli
from ppdp_desktop.cli.passphrase import ENV_VAR
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.schema import Schema, roles_from_lists
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.methods.perturbation.plan import perturb_codes
from ppdp_desktop.core.methods.perturbation.solver import objective, solve_exact, solve_lp
from ppdp_desktop.core.methods.perturbation.uniform import uniform_retention
from ppdp_desktop.core.privacy.pseudonyms import PSEUDONYM_COLUMN, make_pseudonyms
from ppdp_desktop.core.privacy.randomness import RandomSource
from ppdp_desktop.core.privacy.sensitivity import gamma_of
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.package import release_metadata, write_checksums, write_csv, write_release
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

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


def _throughput(n: int, runs_ppdp: list[float], runs_bare: list[float]) -> dict:
    t_ppdp, t_bare = min(runs_ppdp), min(runs_bare)
    return {
        "perturb_codes_s": t_ppdp,
        "perturb_codes_runs_s": rounded(runs_ppdp),
        "perturbation_records_per_s_median": n / float(np.median(runs_ppdp)),
        "perturbation_records_per_s": n / t_ppdp,
        "bare_numpy_krr_s": t_bare,
        "bare_numpy_krr_records_per_s": n / t_bare,
        "bare_numpy_krr_records_per_s_median": n / float(np.median(runs_bare)),
        "ratio_perturb_codes_over_bare": t_ppdp / t_bare,
    }


def bench_perturbation(n: int = 1_000_000, m: int = M_SENSITIVE, repeat: int = 5) -> dict:
    """``perturb_codes`` with uniform retention (scalar threshold) and fine-grain retention (per value)."""
    rng = np.random.default_rng(0)
    codes = rng.choice(m, size=n, p=zipf_probabilities(m)).astype(np.int32)  # int32 like encode_column

    # Uniform: gamma = m + 1 -> p = (gamma - 1)/(m - 1 + gamma) = 0.5; perturb_codes uses a scalar threshold.
    note(f"perturbation (uniform retention): {n:,} codes, m={m}, best of {repeat}")
    p = uniform_retention(float(m + 1), m)
    retention = np.full(m, p)

    def bare_uniform() -> None:  # plain k-ary randomized response: keep mask + uniform replacement
        r = np.random.default_rng(1)
        keep = r.random(n) < p
        np.where(keep, codes, r.integers(0, m, size=n, dtype=codes.dtype))

    uniform = {"n": n, "m": m, "retention": p}
    uniform.update(
        _throughput(
            n,
            measure(lambda: perturb_codes(codes, retention, np.random.default_rng(1)), repeat),
            measure(bare_uniform, repeat),
        )
    )

    # Fine-grain: the exact solver's retention on the realistic instance (50 distinct values);
    # perturb_codes then gathers a threshold per record (retention[codes]).
    note(f"perturbation (fine-grain retention): {n:,} codes, m={m}, best of {repeat}")
    fine = solve_exact(*realistic_instance(m))

    def bare_fine() -> None:
        r = np.random.default_rng(1)
        keep = r.random(n) < fine[codes]
        np.where(keep, codes, r.integers(0, m, size=n, dtype=codes.dtype))

    finegrain = {
        "n": n,
        "m": m,
        "retention_min": float(fine.min()),
        "retention_max": float(fine.max()),
        "distinct_retentions": int(len(np.unique(fine))),
    }
    finegrain.update(
        _throughput(
            n,
            measure(lambda: perturb_codes(codes, fine, np.random.default_rng(1)), repeat),
            measure(bare_fine, repeat),
        )
    )
    return {"uniform": uniform, "finegrain": finegrain}


def bench_pseudonyms(n: int = 1_000_000, repeat: int = 5) -> dict:
    note(f"make_pseudonyms({n:,}), best of {repeat}")
    runs = measure(lambda: make_pseudonyms(n), repeat)
    return {"n": n, "make_pseudonyms_s": min(runs), "make_pseudonyms_runs_s": rounded(runs)}


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
            exact[kind][str(m)] = best_of(lambda w=w, g=g: solve_exact(w, g), repeat)
    lp: dict[str, float] = {}
    diffs: dict[str, float] = {}
    for m in lp_sizes:
        w, g = realistic_instance(m)
        note(f"finegrain LP: realistic m={m}")
        lp[str(m)] = best_of(lambda w=w, g=g: solve_lp(w, g), repeat)
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


METHODS = ("uniform", "finegrain", "personalized")
PASSPHRASE = "benchmark-passphrase-2026"  # set as PPDP_PASSPHRASE for the personalized CLI runs
PERSONALIZED_SENSITIVE = "diag"  # categorical, 50 values (flat taxonomy: every record keeps a key secret)
PERSONALIZED_GRADED = "age"  # integer 0..99, graded into 4 secret categories


def _cli_args(path: Path, out: Path, method: str, key: Path) -> list[str]:
    # --no-report: the 1.5x target is about reading, perturbing and writing the data; the report
    # (figures, HTML and PDF) is measured on its own by bench_report.py.
    args = ["anonymize", str(path), "--out", str(out), "--identifier", "id", "--seed", "1", "--method", method,
            "--no-report"]
    if method == "personalized":
        return args + [
            "--sensitive", PERSONALIZED_SENSITIVE, "--graded", PERSONALIZED_GRADED, "--categories", "4",
            "--key", str(key),
        ]
    return args + ["--sensitive", "diag", "--theta", "3"]


def _settings(method: str) -> AnonymizationSettings:
    if method == "personalized":
        return AnonymizationSettings(
            sensitive=PERSONALIZED_SENSITIVE, method=method, identifiers=["id"],
            options=RecodingSettings(graded=[PERSONALIZED_GRADED], categories=4), seed=1,
        )
    return AnonymizationSettings(
        sensitive="diag", method=method, identifiers=["id"], sensitivity=SensitivitySettings(theta=THETA), seed=1
    )


@contextlib.contextmanager
def passphrase_env(value: str):
    """``PPDP_PASSPHRASE`` set for the duration of the block (the previous value restored)."""
    old = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = old


def _time_stages(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    return {name: best_of(fn, repeat) for name, fn in fns.items()}


def _anonymize_sub(dataset: Dataset, method_name: str, repeat: int) -> dict[str, float]:
    """The steps of ``core.anonymize.anonymize`` one by one (same calls, same order)."""
    settings = _settings(method_name)
    frame = dataset.frame
    method = get_method(method_name)
    sensitive, quasi = method.roles(settings)  # e.g. graded columns are protected too
    schema = dataset.schema.with_roles(roles_from_lists(sensitive, settings.identifiers, quasi))
    ds = Dataset(frame, dataset.source, schema, dataset.details)
    plan = method.prepare(ds, settings)
    randomness = RandomSource(1)
    applied = plan.apply(frame, randomness)
    order = randomness.shuffle_order(len(frame))
    keep = [c for c in schema.released_columns if c not in applied.dropped]
    base = frame[keep].take(order).reset_index(drop=True)
    ids = make_pseudonyms(len(frame))
    holder: dict[str, pd.DataFrame] = {}

    def fresh_table() -> None:
        holder["t"] = base.copy()

    def assign_applied() -> None:
        table = holder["t"]
        for name, values in applied.columns.items():
            table[name] = values[order]

    def pseudonym_map() -> None:
        pmap = frame[schema.identifiers].take(order).reset_index(drop=True)
        pmap.insert(0, PSEUDONYM_COLUMN, ids)

    stages = _time_stages(
        {
            "prepare_s": lambda: method.prepare(ds, settings),
            "verify_s": plan.verify,
            "apply_s": lambda: plan.apply(frame, RandomSource(1)),
        },
        repeat,
    )
    if hasattr(plan, "retention"):  # perturbation methods: apply = encode + perturb_codes + decode
        codes = plan.domain.encode(frame[plan.attribute])
        released = perturb_codes(codes, plan.retention, np.random.default_rng(1))
        stages.update(
            _time_stages(
                {
                    "apply__encode_s": lambda: plan.domain.encode(frame[plan.attribute]),
                    "apply__perturb_codes_s": lambda: perturb_codes(codes, plan.retention, np.random.default_rng(1)),
                    "apply__decode_s": lambda: plan.domain.decode(released),
                },
                repeat,
            )
        )
    stages.update(
        _time_stages(
            {
                "permutation_s": lambda: np.random.default_rng(1).permutation(len(frame)),
                "build_table__take_s": lambda: frame[keep].take(order).reset_index(drop=True),
            },
            repeat,
        )
    )
    stages["build_table__assign_applied_s"] = best_of(assign_applied, repeat, setup=fresh_table)
    stages["make_pseudonyms_s"] = best_of(lambda: make_pseudonyms(len(frame)), repeat)
    stages["insert_pseudonym_column_s"] = best_of(
        lambda: holder["t"].insert(0, PSEUDONYM_COLUMN, ids), repeat, setup=fresh_table
    )
    stages["pseudonym_map_s"] = best_of(pseudonym_map, repeat)
    holder.clear()
    return stages


def _write_release_sub(anon, work: Path, repeat: int) -> dict[str, float]:
    """The steps of ``core.release.write_release`` one by one (plus the key file's for a keyed method)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    folder = work / "sub"
    folder.mkdir(exist_ok=True)
    release_csv = folder / "release.csv"
    metadata = release_metadata(anon, ",")
    (folder / "release.json").write_text(json.dumps(metadata, indent=2), encoding="utf-8")
    arrow = pa.Table.from_pandas(anon.table, preserve_index=False)
    stages = _time_stages(
        {
            "release_metadata_s": lambda: release_metadata(anon, ","),
            "arrow_from_pandas_s": lambda: pa.Table.from_pandas(anon.table, preserve_index=False),
            "arrow_write_csv_s": lambda: pacsv.write_csv(
                arrow, str(release_csv), write_options=pacsv.WriteOptions(delimiter=",", quoting_style="needed")
            ),
            "write_csv_total_s": lambda: write_csv(anon.table, release_csv, ","),
        },
        repeat,
    )
    stages["write_checksums_s"] = best_of(
        lambda: write_checksums(folder), repeat, setup=lambda: (folder / "SHA256SUMS").unlink(missing_ok=True)
    )
    if anon.has_pseudonyms and anon.plan.method == "personalized":
        import zlib

        key = work / "sub.ppdpkey"
        manifest = write_checksums(folder)
        payload, records = anon.key_payload(), anon.key_records()
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        raw = text.encode("utf-8")
        kdf = keyfile.KdfParams()
        stages.update(
            _time_stages(
                {
                    "key_payload_s": anon.key_payload,
                    "key_records_s": anon.key_records,
                    "key_json_dumps_s": lambda: json.dumps(
                        payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")
                    ),
                    "key_zlib_compress_s": lambda: zlib.compress(raw, 1),
                    "key_kdf_scrypt_s": lambda: keyfile._derive(PASSPHRASE, kdf),
                    "keyfile_seal_total_s": lambda: keyfile.seal(payload, PASSPHRASE, manifest, key, records,
                                                                 overwrite=True),
                },
                repeat,
            )
        )
        stages["key_payload_json_mb"] = round(len(raw) / 1e6, 1)
        stages["key_file_mb"] = round(key.stat().st_size / 1e6, 1)
    shutil.rmtree(folder, ignore_errors=True)
    return stages


def bench_anonymize(rows: int, repeat: int = 3) -> dict:
    path = make_csv(rows)
    work = Path(tempfile.mkdtemp(prefix="ppdp-bench-"))
    try:
        out = work / "out"
        key = work / "release.ppdpkey"  # beside the release folder, never inside it
        result: dict[str, object] = {"rows": rows, "columns": 10, "csv_mb": round(path.stat().st_size / 1e6, 1)}

        def rm_out() -> None:
            shutil.rmtree(out, ignore_errors=True)
            key.unlink(missing_ok=True)

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
        pandas_csv.unlink(missing_ok=True)

        # (b) the CLI, in process (personalized: PPDP_PASSPHRASE set for the call, key sealed beside the release)
        for method in METHODS:
            note(f"ppdp anonymize --method {method}, best of {repeat}")
            codes: list[int] = []
            argv = _cli_args(path, out, method, key)

            def run_cli(codes: list[int] = codes, argv: list[str] = argv) -> None:
                with contextlib.redirect_stdout(sys.stderr), passphrase_env(PASSPHRASE):
                    codes.append(cli.main(argv))

            runs_cli = measure(run_cli, repeat, setup=rm_out)
            t_cli = min(runs_cli)
            if any(c != 0 for c in codes):
                raise SystemExit(f"ppdp anonymize --method {method} failed with exit codes {codes}")
            result[f"anonymize_{method}_s"] = t_cli
            result[f"anonymize_{method}_runs_s"] = rounded(runs_cli)
            result[f"anonymize_{method}_over_pandas"] = t_cli / t_pandas
            result[f"release_csv_mb_{method}"] = round((out / "release.csv").stat().st_size / 1e6, 1)
            if method == "personalized":
                result["key_file_mb_personalized"] = round(key.stat().st_size / 1e6, 1)
            rm_out()

        # Stages, calling the core functions directly.
        note("stages: load_table / anonymize() / write_release")
        dataset = load_table(path)
        stages: dict[str, object] = {}
        stages["load_table_s"] = best_of(lambda: load_table(path), repeat)
        anons = {}
        for method in METHODS:
            anons[method] = anon = anonymize(dataset, _settings(method))
            stages[f"anonymize_{method}_s"] = best_of(lambda method=method: anonymize(dataset, _settings(method)), repeat)
            sealing = {"key_path": key, "passphrase": PASSPHRASE} if method == "personalized" else {}
            stages[f"write_release_{method}_s"] = best_of(
                lambda anon=anon, sealing=sealing: write_release(anon, out, **sealing), repeat, setup=rm_out
            )
            rm_out()

        note("sub-stages of load_table")
        data = path.read_bytes()
        text_holder: dict[str, object] = {}
        frame = dataset.frame
        stages["load_table_sub"] = _time_stages(
            {
                "read_bytes_s": lambda: path.read_bytes(),
                "decode_whole_file_s": lambda data=data: text_holder.__setitem__("t", sniffing.decode(data, None, path.name)),
                "pd_read_csv_s": lambda: pd.read_csv(
                    path, sep=",", encoding="utf-8", engine="c", keep_default_na=False,
                    na_values=[""], index_col=False, low_memory=False,
                ),
                "schema_infer_s": lambda: Schema.infer(frame),
            },
            repeat,
        )
        text_holder.clear()
        del data

        for method in ("finegrain", "personalized"):
            note(f"sub-stages of anonymize() and write_release ({method})")
            stages[f"anonymize_sub_{method}"] = _anonymize_sub(dataset, method, repeat)
            stages[f"write_release_sub_{method}"] = _write_release_sub(anons[method], work, repeat)
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
    report["perturbation_records_per_s"] = report["perturbation"]["uniform"]["perturbation_records_per_s"]
    report["perturbation_finegrain_records_per_s"] = report["perturbation"]["finegrain"]["perturbation_records_per_s"]
    report["pseudonyms"] = bench_pseudonyms()
    report.update(bench_finegrain(exact_sizes, lp_sizes))
    report["anonymize_end_to_end"] = bench_anonymize(rows, repeat_e2e)

    e2e = report["anonymize_end_to_end"]
    exact_2000 = report["finegrain_exact_s"]["realistic"].get("2000")
    exact_2000_adv = report["finegrain_exact_s"]["adversarial"].get("2000")
    rate_min = TARGETS["perturbation_records_per_s_min"]
    report["targets_met"] = {
        "perturbation_uniform": report["perturbation_records_per_s"] >= rate_min,
        "perturbation_finegrain": report["perturbation_finegrain_records_per_s"] >= rate_min,
        "finegrain_exact_m2000": None
        if exact_2000 is None
        else max(exact_2000, exact_2000_adv) < TARGETS["finegrain_exact_m2000_s_max"],
        **{
            f"anonymize_{method}_1m": None
            if rows < 1_000_000
            else e2e[f"anonymize_{method}_over_pandas"] <= TARGETS["anonymize_over_pandas_ratio_max"]
            for method in METHODS
        },
    }
    report["total_benchmark_s"] = time.perf_counter() - start
    note(f"done in {report['total_benchmark_s']:.1f} s")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
