"""Optimal full-domain generalization (k-anonymity with suppression): time of the lattice search.

``python benchmarks/bench_generalization.py`` prints JSON. Target (issue: generalization): 1,000,000
rows x 5 quasi-identifiers with 5 levels each (3,125 lattice nodes), k = 5 and
k = 50 at suppression 0.05: the search "well under a second". Reported: best of 3 of the whole
``optimal_generalization``, split into aggregation (encoding the columns and grouping the records to
their distinct level-0 combinations) and search (the lattice walk over that table), nodes checked, the
chosen node, and peak memory (RSS of the process, and the Python-allocation peak of one run).

``--job [ROWS] [--sparse-rows N] [--base PATH]`` (issue 33): the whole job as a custodian runs it, whole processes of
``ppdp anonymize ... --no-report`` on a ROWS-row CSV (default 1,000,000): adult resampled (8 QIs, ARX's hierarchies,
sensitive occupation) and the sparse ``synthetic_eight`` (sensitive diag); generalization-only k = 5 against k = 5 +
distinct 3-diversity, A B A B, and uniform k-only on the code before issue 33 (``--base``, a checkout of f333c00)
against uniform k + l now. CPU seconds of the child (``RUSAGE_CHILDREN``) and wall seconds.

``--metrics [ROWS]`` (issue 33): each utility metric on ROWS (default 1,000,000) x 8 quasi-identifiers, exhaustive
and greedy, with the lattice size, the nodes checked and whether the result is proven optimal.

Two synthetic data sets, Zipf-like skew (real quasi-identifiers are skewed), n = 1,000,000. Both have
age 0-99 (normal, mean 42, sd 17) with interval widths 5, 10, 50 (levels: value, 3 interval levels, ``*``;
the widths 5, 10, 20, 50 would not nest, as 50 is not a multiple of 20, and are refused); region from a
4-deep taxonomy; a 4-digit postcode with ARX rows masking one digit per level; occupation with ARX rows
(-> 6 groups -> 3 sectors -> 2 branches -> ``*``); education from a 4-deep taxonomy.

* ``small_domains``: 8 regions, 8 postcodes, 12 occupations, 12 degrees (about 262,000 distinct
  combinations of the 1,000,000 records).
* ``sparse``: 36 regions, 54 postcodes, 24 occupations, 16 degrees (about 694,000 distinct combinations:
  most records are nearly unique, and most nodes below the optimum are infeasible).
"""
from __future__ import annotations

import gc
import itertools
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

import child_time  # noqa: E402 - one child process timed (shared by the issue-34 benchmarks)
from ppdp_desktop.core.generalization import Hierarchy, optimal_generalization
from ppdp_desktop.core.generalization.lattice import check_parameters, search_lattice
from ppdp_desktop.core.generalization.table import aggregate_records
from ppdp_desktop.core.taxonomy.tree import Taxonomy

TARGET_SEARCH_S = 1.0


def best(fn, repeat: int = 3) -> tuple[float, list[float], object]:
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), [round(t, 3) for t in times], result


def zipf(rng: np.random.Generator, m: int, n: int, a: float = 1.1) -> np.ndarray:
    weights = 1.0 / np.arange(1, m + 1) ** a
    return rng.permutation(m)[rng.choice(m, size=n, p=weights / weights.sum())]


def tree(attribute: str, fanouts: list[int], prefix: str) -> Taxonomy:
    """A complete taxonomy with the given fan-out per depth (leaves at depth ``len(fanouts)``)."""
    taxonomy = Taxonomy(attribute)
    frontier = [(taxonomy.root, prefix)]
    for depth, fanout in enumerate(fanouts):
        frontier = [(taxonomy.add(node, f"{name}.{i}" if depth else f"{name}{i}"), f"{name}.{i}" if depth else f"{name}{i}")
                    for node, name in frontier for i in range(fanout)]
    return taxonomy


SCENARIOS = {
    # name: (region taxonomy fan-outs, postcode digit choices, occupations, education taxonomy fan-outs)
    "small_domains": ([2, 2, 2, 1], [2, 2, 1, 2], 12, [2, 1, 2, 3]),
    "sparse": ([3, 2, 2, 3], [3, 3, 2, 3], 24, [2, 2, 2, 2]),
}


def make_data(scenario: str, n: int = 1_000_000, seed: int = 0) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    region_fanouts, digits, n_occupations, education_fanouts = SCENARIOS[scenario]
    rng = np.random.default_rng(seed)
    age = np.clip(rng.normal(42, 17, n).round(), 0, 99).astype(np.int64)
    region_tax = tree("region", region_fanouts, "R")
    education_tax = tree("education", education_fanouts, "E")
    towns, degrees = region_tax.leaf_labels(), education_tax.leaf_labels()
    postcodes = ["".join(str(d + 4 * (j == 0)) for j, d in enumerate(p)) for p in itertools.product(*map(range, digits))]
    postcode_rows = [[p, p[:3] + "*", p[:2] + "**", p[:1] + "***", "*"] for p in postcodes]
    occupations = [f"occ{i:02d}" for i in range(n_occupations)]
    per = max(n_occupations // 12, 1)  # 12 or 24 values -> 6 groups -> 3 sectors -> 2 branches -> *
    occupation_rows = [[o, f"group{i // (2 * per)}", f"sector{i // (4 * per)}", f"branch{i // (8 * per)}", "*"]
                       for i, o in enumerate(occupations)]
    frame = pd.DataFrame({
        "age": age,
        "region": pd.Categorical.from_codes(zipf(rng, len(towns), n), towns),
        "postcode": pd.Categorical.from_codes(zipf(rng, len(postcodes), n), postcodes),
        "occupation": pd.Categorical.from_codes(zipf(rng, len(occupations), n), occupations),
        "education": pd.Categorical.from_codes(zipf(rng, len(degrees), n), degrees),
    })
    hierarchies = {
        "age": Hierarchy.from_intervals("age", frame["age"], [5, 10, 50]),
        "region": Hierarchy.from_taxonomy(region_tax, frame["region"]),
        "postcode": Hierarchy.from_arx_rows("postcode", postcode_rows, frame["postcode"]),
        "occupation": Hierarchy.from_arx_rows("occupation", occupation_rows, frame["occupation"]),
        "education": Hierarchy.from_taxonomy(education_tax, frame["education"]),
    }
    return frame, hierarchies


def run(frame: pd.DataFrame, hierarchies: dict[str, Hierarchy], k: int, suppression: float) -> dict[str, object]:
    total, total_runs, result = best(lambda: optimal_generalization(frame, hierarchies, k, suppression))
    aggregation, aggregation_runs, table = best(lambda: aggregate_records(frame, hierarchies))
    k, suppression = check_parameters(k, suppression)
    search, search_runs, _ = best(lambda: search_lattice(table, list(hierarchies.values()), k, suppression))
    tracemalloc.start()
    optimal_generalization(frame, hierarchies, k, suppression)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "k": k, "suppression": suppression,
        "total_s": round(total, 3), "total_runs_s": total_runs,
        "aggregation_s": round(aggregation, 3), "aggregation_runs_s": aggregation_runs,
        "search_s": round(search, 3), "search_runs_s": search_runs,
        "distinct_combinations": len(table), "nodes_checked": result.n_nodes_checked,
        "levels": result.levels, "suppressed": result.suppressed, "precision": round(result.precision, 4),
        "python_alloc_peak_mb": round(traced_peak / 2**20, 1),
    }


def eight_qis(n: int, seed: int = 1) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """``sparse`` plus three quasi-identifiers (sex; a 6-valued status with 2 levels; a 10-valued class with 2
    levels): 8 QIs, the shape of issue 33's target."""
    frame, hierarchies = make_data("sparse", n, seed)
    rng = np.random.default_rng(seed + 1)
    extra = {"sex": (2, lambda v: [v]), "status": (6, lambda v: [v, f"s{int(v[1:]) // 3}"]),
             "klass": (10, lambda v: [v, f"k{int(v[1:]) // 5}"])}
    for name, (m, up) in extra.items():
        values = [f"{name[0]}{i}" for i in range(m)]
        frame[name] = pd.Categorical.from_codes(zipf(rng, m, n), values)
        hierarchies[name] = Hierarchy.from_rows(name, [up(v) for v in values])
    return frame, hierarchies


def run_metrics(n: int) -> dict[str, object]:
    """Each utility metric on ``n`` rows x 8 QIs, k = 5, suppression 0.05, exhaustive and greedy (one run each)."""
    from ppdp_desktop.core.generalization.metrics import METRICS, Utility

    frame, hierarchies = eight_qis(n)
    table = aggregate_records(frame, hierarchies)
    runs = []
    for metric in METRICS:
        for search in ("exhaustive", "heuristic"):
            start = time.perf_counter()
            g = search_lattice(table, list(hierarchies.values()), 5, 0.05, utility=Utility(metric), search=search)
            runs.append({"metric": metric, "search": search, "search_s": round(time.perf_counter() - start, 3),
                         "nodes_checked": g.n_nodes_checked, "levels": g.levels, "suppressed": g.suppressed,
                         "metric_value": round(g.metric_value, 6), "proven_optimal": g.proven_optimal})
            print(f"metrics: {metric} {search} {runs[-1]['search_s']} s", file=sys.stderr)
    return {"n": n, "lattice_nodes": int(np.prod([h.height + 1 for h in hierarchies.values()])),
            "distinct_combinations": len(table), "k": 5, "suppression": 0.05, "runs": runs}


ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
ADULT_DIR = Path("/work/shared/data/adult")


def adult_eight(n: int, seed: int = 0) -> tuple[pd.DataFrame, dict[str, Hierarchy], Hierarchy]:
    """``n`` rows of adult.csv drawn with replacement (fixed seed), its 8 usual QIs with ARX's hierarchies, and the
    hierarchy of occupation (the sensitive column of the criteria)."""
    adult = pd.read_csv(ADULT_DIR / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    frame = adult.iloc[np.random.default_rng(seed).integers(0, len(adult), n)].reset_index(drop=True)
    for column in frame.columns:
        frame[column] = frame[column].astype("category")

    def load(name: str) -> Hierarchy:
        return Hierarchy.from_arx_csv(ADULT_DIR / f"adult_hierarchy_{name}.csv", name, frame[name])
    return frame, {a: load(a) for a in ADULT_QIS}, load("occupation")


def cpu_wall(fn) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    """CPU seconds (``time.process_time``), wall seconds and the result of one call, after ``gc.collect()``."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def run_search(n: int) -> dict[str, object]:
    """k-only precision search (k = 5, suppression 0.05) on the synthetic ``n`` x 8 QIs, twice. Positional arguments
    only, so that the code before issue 33 (f333c00) runs it too."""
    frame, hierarchies = eight_qis(n)
    table, hiers = aggregate_records(frame, hierarchies), list(hierarchies.values())
    runs, g = [], None
    for _ in range(2):
        cpu, wall, g = cpu_wall(lambda: search_lattice(table, hiers, 5, 0.05))
        runs.append({"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)})
        print(f"search: {runs[-1]}", file=sys.stderr)
    return {"n": n, "distinct_combinations": len(table), "nodes_checked": g.n_nodes_checked, "levels": g.levels,
            "suppressed": g.suppressed, "precision": round(g.precision, 6), "runs": runs}


def synthetic_eight(n: int) -> tuple[pd.DataFrame, dict[str, Hierarchy], Hierarchy]:
    """``eight_qis`` with a sensitive column ``diag``: 30 Zipf values under 3 chapters."""
    frame, hierarchies = eight_qis(n)
    values = [f"d{i:02d}" for i in range(30)]
    frame["diag"] = pd.Categorical.from_codes(zipf(np.random.default_rng(7), 30, n, 0.8), values)
    return frame, hierarchies, Hierarchy.from_rows("diag", [[v, f"chapter{int(v[1:]) // 10}"] for v in values])


def criteria_list() -> dict[str, object]:
    """The criteria of ``--criteria``, each with k = 5 (None: today's k-only search)."""
    from ppdp_desktop.core.generalization.criteria import Criteria

    return {"k": None, "k+distinct-3": Criteria(k=5, distinct_l=3), "k+entropy-3": Criteria(k=5, entropy_l=3.0),
            "k+recursive-(4,3)": Criteria(k=5, recursive_c=4.0, recursive_l=3),
            "k+t-0.2-equal": Criteria(k=5, t=0.2), "k+t-0.2-hierarchical": Criteria(k=5, t=0.2, hierarchical_t=True),
            "k+average-risk-0.05": Criteria(k=5, average_risk=0.05), "k+highest-risk-0.05": Criteria(k=5, highest_risk=0.05)}


def run_criteria(n: int, data: str) -> dict[str, object]:
    """Each criterion (k = 5, suppression 0.05) on ``n`` rows x 8 QIs, exhaustive and heuristic, twice each:
    the search alone (``search_lattice`` on the aggregated records), CPU and wall seconds."""
    frame, hierarchies, sensitive = adult_eight(n) if data == "adult" else synthetic_eight(n)
    hiers = list(hierarchies.values())
    plain = aggregate_records(frame, hierarchies)
    carried = aggregate_records(frame, {**hierarchies, sensitive.attribute: sensitive})
    runs = []
    for name, criteria in criteria_list().items():
        for search in ("exhaustive", "heuristic"):
            table = carried if criteria is not None and criteria.needs_sensitive else plain
            extra = {"criteria": criteria, "carried": sensitive if table is carried else None} if criteria else {}
            figures = []
            for _ in range(2):
                cpu, wall, g = cpu_wall(lambda t=table, s=search, e=extra: search_lattice(t, hiers, 5, 0.05, search=s, **e))
                figures.append((round(cpu, 3), round(wall, 3)))
            runs.append({"criteria": name, "search": search, "cpu_s": [f[0] for f in figures],
                         "wall_s": [f[1] for f in figures], "nodes_checked": g.n_nodes_checked,
                         "proven_optimal": g.proven_optimal, "suppressed": g.suppressed, "levels": g.levels,
                         "precision": round(g.precision, 6)})
            print(f"criteria: {data} {name} {search} cpu {runs[-1]['cpu_s']}", file=sys.stderr)
    return {"data": data, "n": n, "sensitive": sensitive.attribute, "k": 5, "suppression": 0.05,
            "lattice_nodes": int(np.prod([h.height + 1 for h in hiers])), "distinct_combinations": len(plain),
            "distinct_with_sensitive": len(carried), "runs": runs}


JOB_K, JOB_L = 5, 3


def write_hierarchy(hierarchy: Hierarchy, path: Path) -> str:
    """Write ``hierarchy`` as an ARX hierarchy CSV (``;``, one row per value: its labels from level 0 up)."""
    rows = [";".join(hierarchy.chain(v)) for v in hierarchy.values if v != ""]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(path)


def write_job_data(n: int, sparse_n: int, folder: Path) -> dict[str, dict[str, object]]:
    """The CSVs of ``--job`` and their hierarchy files: adult resampled to ``n`` rows (its ARX hierarchies) and
    ``synthetic_eight`` at ``sparse_n`` rows (hierarchy files written from its hierarchies)."""
    frame, hierarchies, _ = adult_eight(n)
    frame.to_csv(folder / "adult.csv", sep=";", index=False)
    adult = {"csv": str(folder / "adult.csv"), "n": n, "sensitive": "occupation", "quasi": list(hierarchies),
             "hierarchies": {a: str(ADULT_DIR / f"adult_hierarchy_{a}.csv") for a in hierarchies}}
    del frame
    frame, hierarchies, _ = synthetic_eight(sparse_n)
    frame.to_csv(folder / "synthetic.csv", sep=";", index=False)
    sparse = {"csv": str(folder / "synthetic.csv"), "n": sparse_n, "sensitive": "diag", "quasi": list(hierarchies),
              "hierarchies": {a: write_hierarchy(h, folder / f"synthetic_hierarchy_{a}.csv") for a, h in hierarchies.items()}}
    return {"adult": adult, "synthetic": sparse}


def job_command(data: dict[str, object], method: str, l_diversity: bool, out: Path) -> list[str]:
    """``ppdp anonymize`` of one ``--job`` run (k = 5, suppression 0.05; ``--theta 3`` for a randomizing method)."""
    command = [sys.executable, "-m", "ppdp_desktop", "anonymize", str(data["csv"]), "--sep", ";", "--method", method,
               "--sensitive", str(data["sensitive"]), "--quasi", ",".join(data["quasi"]),  # type: ignore[arg-type]
               "--k-anonymity", str(JOB_K), "--suppression", "0.05", "--out", str(out), "--overwrite", "--no-report",
               "--quiet"]
    for column, path in data["hierarchies"].items():  # type: ignore[attr-defined]
        command += ["--hierarchy", f"{column}={path}"]
    if method != "generalization":
        command += ["--theta", "3", "--seed", "1"]
    if l_diversity:
        command += ["--l-diversity", str(JOB_L)]
    return command


def child_run(command: list[str], pythonpath: str, data_dir: Path) -> tuple[float, float]:
    """CPU seconds (user + system of the finished child, ``RUSAGE_CHILDREN``) and wall seconds of one process.

    Each run gets an empty application-data folder under ``data_dir``: the ledger of an earlier run of the same data
    would make the next release keep that run's node (issue 30) instead of searching the lattice."""
    data_dir.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=data_dir) as appdata:
        env = {**os.environ, "PYTHONPATH": pythonpath, "PPDP_DATA_DIR": appdata, "QT_QPA_PLATFORM": "offscreen"}
        return child_time.timed(command, env, "bench_generalization --job")


def run_job(n: int, sparse_n: int, base: str | None) -> dict[str, object]:
    """The whole job, A B A B per pair (see the module docstring); the base pair only with ``base``."""
    here = str(Path(__file__).resolve().parents[1])
    out: dict[str, object] = {"k": JOB_K, "l_diversity": JOB_L, "suppression": 0.05, "base": base, "data": {}}
    with tempfile.TemporaryDirectory(prefix="bench-job-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        sets = write_job_data(n, sparse_n, folder)
        print(f"job: CSVs written in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        pairs = [("generalization k", (here, "generalization", False)),
                 ("generalization k+l", (here, "generalization", True))]
        if base:
            pairs = [("uniform k (f333c00)", (base, "uniform", False)), ("uniform k+l", (here, "uniform", True))] + pairs
        for name, data in sets.items():
            figures: dict[str, dict[str, list[float]]] = {p: {"cpu_s": [], "wall_s": []} for p, _ in pairs}
            for first, second in zip(pairs[::2], pairs[1::2]):
                for label, (path, method, l_div) in [first, second, first, second]:  # A B A B
                    cpu, wall = child_run(job_command(data, method, l_div, folder / "release"), path, folder / "appdata")
                    figures[label]["cpu_s"].append(round(cpu, 2))
                    figures[label]["wall_s"].append(round(wall, 2))
                    print(f"job: {name} {label}: cpu {cpu:.2f} s, wall {wall:.2f} s", file=sys.stderr)
            out["data"][name] = {"rows": data["n"], "runs": figures}  # type: ignore[index]
    return out


def main() -> int:
    if "--search" in sys.argv:  # python benchmarks/bench_generalization.py --search [ROWS]
        rest = sys.argv[sys.argv.index("--search") + 1:]
        print(json.dumps(run_search(int(rest[0]) if rest else 1_000_000), indent=2))
        return 0
    if "--criteria" in sys.argv:  # python benchmarks/bench_generalization.py --criteria [ROWS] [--synthetic]
        rest = [a for a in sys.argv[sys.argv.index("--criteria") + 1:] if a.isdigit()]
        data = "synthetic" if "--synthetic" in sys.argv else "adult"
        print(json.dumps(run_criteria(int(rest[0]) if rest else 1_000_000, data), indent=2))
        return 0
    if "--job" in sys.argv:  # issue 33: python benchmarks/bench_generalization.py --job [ROWS] [--sparse-rows N] [--base PATH]
        rest = sys.argv[sys.argv.index("--job") + 1:]
        rows = int(rest[0]) if rest and rest[0].isdigit() else 1_000_000
        sparse = int(sys.argv[sys.argv.index("--sparse-rows") + 1]) if "--sparse-rows" in sys.argv else rows
        base = sys.argv[sys.argv.index("--base") + 1] if "--base" in sys.argv else None
        print(json.dumps(run_job(rows, sparse, base), indent=2))
        return 0
    if "--metrics" in sys.argv:  # issue 33: python benchmarks/bench_generalization.py --metrics [ROWS]
        rest = sys.argv[sys.argv.index("--metrics") + 1:]
        print(json.dumps(run_metrics(int(rest[0]) if rest else 1_000_000), indent=2))
        return 0
    out: dict[str, object] = {}
    for scenario in SCENARIOS:
        start = time.perf_counter()
        frame, hierarchies = make_data(scenario)
        print(f"{scenario}: data and hierarchies built in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        out[scenario] = {
            "n": len(frame),
            "values": {a: len(h.values) - 1 for a, h in hierarchies.items()},
            "heights": {a: h.height for a, h in hierarchies.items()},
            "lattice_nodes": int(np.prod([h.height + 1 for h in hierarchies.values()])),
            "runs": [run(frame, hierarchies, k, 0.05) for k in (5, 50)],
        }
        del frame, hierarchies
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["target_search_s"] = TARGET_SEARCH_S
    out["target_met"] = {name: all(r["search_s"] < TARGET_SEARCH_S for r in out[name]["runs"]) for name in SCENARIOS}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
