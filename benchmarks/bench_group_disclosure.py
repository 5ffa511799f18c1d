"""What the release reveals about a group (``core/report/groups.py``): time on 1,000,000 records, and how often
the example group's "likely" interval holds the true share.

``python benchmarks/bench_group_disclosure.py [--copies 34]`` prints JSON (the time). The table is the shared Adult
data set repeated ``copies`` times (30,162 x 34 = 1,025,508 records), quasi-identifiers sex, race, marital-status,
education and age (6,072 groups; 4 without age for rr, whose table is dense); per method the job's time and the
section's: from the release alone (``public``: release.json and the package's report), with the attack on the
original records (the custodian's report), and what ``ppdp verify`` adds (the figures recomputed from the
release). Target: the section within a few seconds at 1M records.

``python benchmarks/bench_group_disclosure.py --coverage [--seeds 200]`` prints JSON (the interval's coverage):
per configuration (:func:`coverage_cases`) and method, how many seeds' example intervals (``core/methods/
group_support.py``, as the report makes them) hold the example group's true share (counted on the original records
of that group), with its exact one-sided 95 % lower confidence bound, the median width and the group's records.

``python benchmarks/bench_group_disclosure.py --accuracy [--seeds 20]`` prints JSON (what the figures mean): per
configuration (:func:`accuracy_cases`: the demo data as the window runs it, Adult slices) and method, over
``seeds`` releases, the public ``guess_right`` (cross-fitted) and its margin beside the custodian's figures on the
original records: the same guess (each half guessed from the other), the whole release's guess on the records
in the data, and on people not in the data (Adult records outside the slice, in the same groups); the former
in-sample figure (each group's largest estimate summed); and the groups counted above the bound (their interval
above it) against the groups truly above it, with the releases where a counted group is not (false claims).

Measured: benchmarks/README.md, "What the release reveals about a group".
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.report import groups
from ppdp_desktop.core.report.group_check import recheck_group_disclosure
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult.csv"
QUASI = ["sex", "race", "marital-status", "education", "age"]


def cases() -> dict[str, AnonymizationSettings]:
    theta = SensitivitySettings(theta=3)
    return {
        "uniform": AnonymizationSettings("workclass", "uniform", quasi=QUASI, sensitivity=theta, seed=1),
        "finegrain": AnonymizationSettings("occupation", "finegrain", quasi=QUASI, sensitivity=theta, seed=1),
        "partition": AnonymizationSettings("occupation", "partition", quasi=QUASI, seed=1,
                                           sensitivity=SensitivitySettings(rho1=0.1, rho2=0.4)),
        "rr": AnonymizationSettings("workclass", "rr", quasi=QUASI[:4], options=RRSettings(l=3), seed=1),
    }


def coverage_cases() -> dict[str, tuple[int, int, list[str], str, dict[str, AnonymizationSettings]]]:
    """Configurations of the coverage run: ``(first record, records, quasi-identifiers, sensitive, settings
    per method without their seed)``. "small" is the configuration the report's figures were first measured
    on; "groups" has 3 quasi-identifiers (smaller groups) and a sensitive column of 14 values; "tiny" 600
    records, so the example group holds a few hundred records at most."""
    theta = SensitivitySettings(theta=3)

    def methods(sensitive: str, quasi: list[str], l: float, rho2: float) -> dict[str, AnonymizationSettings]:
        return {
            "uniform": AnonymizationSettings(sensitive, "uniform", quasi=quasi, sensitivity=theta),
            "finegrain": AnonymizationSettings(sensitive, "finegrain", quasi=quasi, sensitivity=theta),
            "partition": AnonymizationSettings(sensitive, "partition", quasi=quasi,
                                               sensitivity=SensitivitySettings(rho1=0.1, rho2=rho2)),
            "rr": AnonymizationSettings(sensitive, "rr", quasi=quasi, options=RRSettings(l=l)),
        }

    small, groups3 = ["sex", "race"], ["sex", "race", "marital-status"]
    return {
        "small": (0, 3000, small, "workclass", methods("workclass", small, 3, 0.4)),
        "groups": (3000, 3000, groups3, "occupation", methods("occupation", groups3, 5, 0.3)),
        "tiny": (6000, 600, ["sex"], "workclass", methods("workclass", ["sex"], 2, 0.5)),
    }


def lower_bound(held: int, n: int, alpha: float = 0.05) -> float:
    """The exact one-sided (Clopper-Pearson) lower ``1 - alpha`` confidence bound of a rate seen ``held`` times in
    ``n``: the rate at which ``held`` or more happen with probability ``alpha``."""
    from math import comb

    def at_least(p: float) -> float:
        return sum(comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(held, n + 1))

    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if at_least(mid) < alpha else (low, mid)
    return low if held else 0.0


def coverage(seeds: int, only: list[str] | None = None) -> dict[str, object]:
    """How often the example group's interval holds its true share, over ``seeds`` releases per case."""
    import tempfile

    import numpy as np

    from ppdp_desktop.core.methods.group_support import LEVEL

    frame = pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)
    out: dict[str, object] = {"seeds": seeds, "level": LEVEL, "cases": {}}
    total = total_held = 0
    folder = Path(tempfile.mkdtemp())
    for case, (first, n, quasi, sensitive, methods) in coverage_cases().items():
        part = frame.iloc[first:first + n].reset_index(drop=True)
        path = folder / f"{case}.csv"
        part.to_csv(path, sep=";", index=False)
        dataset = load_table(path)
        for name, base in methods.items():
            if only and name not in only:
                continue
            held = 0
            widths, records, start = [], [], time.perf_counter()
            for seed in range(1, seeds + 1):
                result = anonymize(dataset, replace(base, seed=seed))
                found = groups.for_anonymization(result, public=True)
                shown = found.worst[0]
                mask = np.ones(len(part), dtype=bool)
                for column, label in zip(quasi, shown.labels):
                    mask &= (part[column] == label).to_numpy()
                truth = float((part.loc[mask, sensitive] == shown.value).mean())
                low, high = found.example_interval
                held += low <= truth <= high
                widths.append(high - low)
                records.append(int(mask.sum()))
            row = {"held": held, "coverage": round(held / seeds, 4), "lower_95": round(lower_bound(held, seeds), 4),
                   "median_width": round(float(np.median(widths)), 3),
                   "group_records_median": int(np.median(records)), "seconds": round(time.perf_counter() - start, 1)}
            out["cases"][f"{case}/{name}"] = row
            total, total_held = total + seeds, total_held + held
            print(case, name, row, file=sys.stderr)
    out["all"] = {"held": total_held, "of": total, "lower_95": round(lower_bound(total_held, total), 4)}
    return out


def accuracy_cases() -> dict[str, tuple[str, object, list[str] | None, dict[str, AnonymizationSettings]]]:
    """``(data, rows or demo, quasi-identifiers, settings per method without their seed)``: "demo-k3" is the
    window's run on the demo data (fine-grain on diagnosis, age/sex/postcode, k = 3); "demo" the same without
    k; three Adult slices (the first two the coverage run's, the third the whole data set's first 30,162 records
    minus the 2,000 kept as people not in the data)."""
    from ppdp_desktop.core.settings import ProtectionSettings

    theta = SensitivitySettings(theta=3)
    k3 = ProtectionSettings(k=3, intervals={"age": [5, 10, 20]})

    def methods(sensitive: str, quasi: list[str], l: float, rho2: float, **extra) -> dict[str, AnonymizationSettings]:
        out = {
            "uniform": AnonymizationSettings(sensitive, "uniform", quasi=quasi, sensitivity=theta, **extra),
            "finegrain": AnonymizationSettings(sensitive, "finegrain", quasi=quasi, sensitivity=theta, **extra),
            "partition": AnonymizationSettings(sensitive, "partition", quasi=quasi,
                                               sensitivity=SensitivitySettings(rho1=0.1, rho2=rho2), **extra),
        }
        if not extra:
            out["rr"] = AnonymizationSettings(sensitive, "rr", quasi=quasi, options=RRSettings(l=l))
        return out

    demo_quasi = ["age", "sex", "postcode"]
    return {
        "demo-k3": ("demo", None, demo_quasi, methods("diagnosis", demo_quasi, 2, 0.5, protection=k3)),
        "demo": ("demo", None, demo_quasi, methods("diagnosis", demo_quasi, 2, 0.5)),
        "small": ("adult", (0, 3000), ["sex", "race"], methods("workclass", ["sex", "race"], 3, 0.4)),
        "groups": ("adult", (3000, 3000), ["sex", "race", "marital-status"],
                   methods("occupation", ["sex", "race", "marital-status"], 5, 0.3)),
        "large": ("adult", (0, 28162), ["sex", "race", "marital-status", "education"],
                  methods("occupation", ["sex", "race", "marital-status", "education"], 3, 0.3)),
    }


def accuracy(seeds: int, only: list[str] | None = None) -> dict[str, object]:
    """The public figures against the custodian's on the original records, over ``seeds`` releases per case."""
    import tempfile

    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.evaluation.group_disclosure import guess_success, summarize
    from ppdp_desktop.core.methods.group_estimates import release_cells

    adult = pd.read_csv(ADULT, sep=";", dtype=str, keep_default_na=False)
    folder = Path(tempfile.mkdtemp())
    out: dict[str, object] = {"seeds": seeds, "cases": {}}
    for case, (source, rows, quasi, methods) in accuracy_cases().items():
        if source == "demo":
            dataset, outside = load_table(resource_path(DEMO_DATA)), None
        else:
            first, n = rows
            path = folder / f"{case}.csv"
            adult.iloc[first:first + n].to_csv(path, sep=";", index=False)
            dataset = load_table(path)
            outside = adult.drop(adult.index[first:first + n]).reset_index(drop=True)
            outside = outside.iloc[-2000:] if case == "large" else outside
        for name, base in methods.items():
            if only and name not in only:
                continue
            runs, start = [], time.perf_counter()
            for seed in range(1, seeds + 1):
                settings = replace(base, seed=seed, identifiers=[c for c in ("patient_id", "name")
                                                                 if c in dataset.frame.columns])
                result = anonymize(dataset, settings)
                found = groups.for_anonymization(result)
                view = groups._view(result, quasi, base.sensitive)
                former = summarize(release_cells(view, quasi, base.sensitive), found.bound, found.bound_source)
                frame = result.dataset.frame
                generalization = result.reidentification.generalization
                released = generalization.apply(frame[quasi]) if generalization is not None else frame[quasi]
                true_above = _truly_above(released, frame[base.sensitive], quasi, found.bound)
                shown_above = _shown_above(found, view, quasi, base.sensitive)
                runs.append({
                    "public": found.guess_right, "margin": found.guess_margin,
                    "same_guess": found.measured_right, "in_data": found.measured_own,
                    "not_in_data": (guess_success(found, outside[quasi], outside[base.sensitive])
                                    if outside is not None else float("nan")),
                    "former": former.guess_right, "groups": found.n_groups,
                    "counted_above": found.groups_above, "true_above": len(true_above),
                    "false_above": len(shown_above - true_above),
                    "former_above": former.groups_above + former.groups_noisy,
                })
            out["cases"][f"{case}/{name}"] = row = _accuracy_row(runs, time.perf_counter() - start)
            print(case, name, row, file=sys.stderr)
    return out


def _truly_above(released: pd.DataFrame, truth: pd.Series, quasi: list[str], bound: float) -> set:
    """The labels of the groups (as released; suppressed records left out) whose most frequent true value holds
    more than ``bound`` of the group's original records."""
    from ppdp_desktop.core.data.domain import text_column

    table = pd.DataFrame({c: text_column(released[c]).to_numpy() for c in quasi})
    table["\x00s"] = text_column(truth).to_numpy()
    table = table[~table[quasi].eq("*").all(axis=1)]
    shares = table.groupby(quasi)["\x00s"].value_counts(normalize=True).groupby(level=list(range(len(quasi)))).max()
    return {tuple(str(v) for v in (k if isinstance(k, tuple) else (k,))) for k in shares.index[shares > bound + 1e-9]}


def _shown_above(found, view, quasi, sensitive) -> set:
    """The labels of the groups the public section counts above its bound."""
    from ppdp_desktop.core.evaluation.group_disclosure import summarize
    from ppdp_desktop.core.methods.group_estimates import release_cells

    full = summarize(release_cells(view, quasi, sensitive), found.bound, found.bound_source, shown=10 ** 9)
    return {g.labels for g in full.worst if g.supported > found.bound} if full.groups_above else set()


def _accuracy_row(runs: list[dict], seconds: float) -> dict[str, object]:

    frame = pd.DataFrame(runs)
    error = frame["public"] - frame["same_guess"]
    return {
        "public_mean": round(frame["public"].mean(), 4), "margin_mean": round(frame["margin"].mean(), 4),
        "same_guess_mean": round(frame["same_guess"].mean(), 4), "in_data_mean": round(frame["in_data"].mean(), 4),
        "not_in_data_mean": round(frame["not_in_data"].mean(), 4), "former_mean": round(frame["former"].mean(), 4),
        "error_sd": round(error.std(), 4), "error_max": round(error.abs().max(), 4),
        "within_margin": int((error.abs() <= frame["margin"]).sum()), "runs": len(frame),
        "in_data_minus_public_max": round((frame["in_data"] - frame["public"]).max(), 4),
        "not_in_data_minus_public": [round(float((frame["not_in_data"] - frame["public"]).min()), 4),
                                     round(float((frame["not_in_data"] - frame["public"]).max()), 4)],
        "groups": int(frame["groups"].median()), "counted_above_mean": round(frame["counted_above"].mean(), 1),
        "true_above_mean": round(frame["true_above"].mean(), 1),
        "former_above_mean": round(frame["former_above"].mean(), 1),
        "releases_with_false_above": int((frame["false_above"] > 0).sum()), "seconds": round(seconds, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=34)
    parser.add_argument("--coverage", action="store_true", help="measure the example interval's coverage")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--accuracy", action="store_true", help="the figures against the attack on the original records")
    parser.add_argument("--methods", default="", help="comma-separated methods of the coverage/accuracy run (default all)")
    args = parser.parse_args()
    if not ADULT.is_file():
        print(f"the shared adult data set is not at {ADULT}", file=sys.stderr)
        return 2
    if args.accuracy:
        print(json.dumps(accuracy(args.seeds, [m for m in args.methods.split(",") if m]), indent=2))
        return 0
    if args.coverage:
        print(json.dumps(coverage(args.seeds, [m for m in args.methods.split(",") if m]), indent=2))
        return 0
    dataset = load_table(ADULT)
    dataset = replace(dataset, frame=pd.concat([dataset.frame] * args.copies, ignore_index=True))
    out = {"records": len(dataset.frame), "methods": {}}
    for name, settings in cases().items():
        start = time.perf_counter()
        result = anonymize(dataset, settings)
        job = time.perf_counter() - start
        start = time.perf_counter()
        public = groups.for_anonymization(result, public=True)
        first = time.perf_counter() - start
        start = time.perf_counter()
        custodian = groups.for_anonymization(result)  # the release's side is computed once per job, then the attack
        second = time.perf_counter() - start
        view = groups._view(result, QUASI if name != "rr" else QUASI[:4], settings.sensitive)
        view.metadata.update(group_disclosure=public.to_json(), reidentification=result.reidentification.to_json())
        start = time.perf_counter()
        recheck_group_disclosure(view)  # what ppdp verify adds: the figures recomputed from the release
        recheck = time.perf_counter() - start
        out["methods"][name] = {"job_s": round(job, 2), "public_s": round(first, 2),
                                "custodian_after_public_s": round(second, 2), "verify_recheck_s": round(recheck, 2),
                                "groups": public.n_groups,
                                "guess_right": round(public.guess_right, 4),
                                "measured_right": round(custodian.measured_right, 4)}
        print(name, out["methods"][name], file=sys.stderr)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
