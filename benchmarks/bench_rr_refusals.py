"""Randomized response: how often the recipient's recheck refuses a genuine release, and how often it catches a
forged one (issue 28, point 3).

    .venv/bin/python benchmarks/bench_rr_refusals.py            # 6 configurations x 40 seeds = 240 releases
    .venv/bin/python benchmarks/bench_rr_refusals.py --seeds 5  # a quick look

Each genuine release of adult.csv is made as ``ppdp anonymize`` makes it (the job, then ``write_release``, whose
pre-publish check is the custodian's exact one) and verified as ``ppdp verify`` verifies it (``verify_release``
on the folder read back: every check, the rr risk test included). The recheck is built to refuse a genuine
release with probability at most 1e-4; the count of refusals should be 0. The smallest risk each release allows
is recorded beside the true one (the test's power). Forgeries are made from the first seeds' releases, in memory,
and put through rr's own recipient check (``verify_rr_release``: matrices, column ranges, the risk test) and
through the risk test alone.
Prints one JSON object; progress on stderr.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import LoadedRelease, read_release
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.methods.rr import bounds, method, recheck
from ppdp_desktop.core.methods.rr.estimate import randomize_codes
from ppdp_desktop.core.methods.rr.release import verify_rr_release
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.settings import AnonymizationSettings

ADULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "adult" / "adult.csv"
#: (quasi-identifiers, sensitive, l, randomize)
CONFIGURATIONS = [
    ("education,marital-status,sex,race", "workclass", 3.0, "both"),  # seed 001's setting
    ("education,marital-status,sex,race", "workclass", 5.0, "both"),
    ("education,marital-status,sex,race", "occupation", 3.0, "both"),
    ("education,sex", "workclass", 2.0, "qi"),
    ("sex,race,salary-class", "occupation", 4.0, "s"),
    ("marital-status,sex,race,salary-class", "occupation", 4.0, "both"),
]
FORGERIES = ("identity matrices, true columns", "identity matrices, released values", "true columns, genuine matrices",
             "p's lowered halfway to 1/d", "randomized with p's halfway to 1", "max_risk stated 0.01",
             "max_risk stated half the true")


def note(text: str) -> None:
    print(f"[bench_rr_refusals] {text}", file=sys.stderr, flush=True)


def cache_plans() -> None:
    """The plan depends on the counts only: the optimizer runs once per configuration, not once per seed."""
    optimal, plans = method.optimal_parameters, {}

    def cached(counts, l, randomize, *pace):  # pace: the job's progress and cancel token
        key = (counts.tobytes(), counts.shape, l, randomize)
        if key not in plans:
            plans[key] = optimal(counts, l, randomize, *pace)
        return plans[key]

    method.optimal_parameters = cached


def in_memory(result, quasi: list[str], sensitive: str, meta_edit=None, table_edit=None) -> LoadedRelease:
    roles = {**{q: {"role": "quasi-identifier"} for q in quasi}, sensitive: {"role": "sensitive"}}
    meta = json.loads(json.dumps({"attributes": roles, **result.plan.release_json()}))
    table = result.table[list(roles)].astype(str)
    if meta_edit:
        meta_edit(meta)
    if table_edit:
        table_edit(meta, table)
    return LoadedRelease(Path("."), meta, table)


def forge(how: str, result, dataset, quasi: list[str], sensitive: str, rng: np.random.Generator) -> LoadedRelease:
    original = dataset.frame.take(result.order).reset_index(drop=True)  # the release's record order

    def set_p(meta, towards_one: bool) -> None:
        for entry in meta["randomized"]:
            d = len(entry["values"])
            entry["p"] = (entry["p"] + 1.0) / 2.0 if towards_one else (entry["p"] + 1.0 / d) / 2.0
            matrix = np.full((d, d), (1.0 - entry["p"]) / (d - 1))
            np.fill_diagonal(matrix, entry["p"])
            entry["matrix"] = matrix.tolist()

    def identity(meta) -> None:
        for entry in meta["randomized"]:
            entry["p"], entry["matrix"] = 1.0, np.eye(len(entry["values"])).tolist()

    def truth(meta, table) -> None:
        for entry in meta["randomized"]:
            table[entry["attribute"]] = original[entry["attribute"]].astype(str).to_numpy()

    def less_noise(meta, table) -> None:  # drawn with p halfway to 1, published with the genuine p
        for entry in meta["randomized"]:
            values = [str(v) for v in entry["values"]]
            codes = pd.Index(values).get_indexer(original[entry["attribute"]].astype(str))
            drawn = randomize_codes(codes, len(values), (entry["p"] + 1.0) / 2.0, rng)
            table[entry["attribute"]] = np.asarray(values, dtype=object)[drawn]

    true_risk = result.guarantee["max_risk"]
    edits = {
        "identity matrices, true columns": (identity, truth),
        "identity matrices, released values": (identity, None),
        "true columns, genuine matrices": (None, truth),
        "p's lowered halfway to 1/d": (lambda m: set_p(m, False), None),
        "randomized with p's halfway to 1": (None, less_noise),
        "max_risk stated 0.01": (lambda m: m["guarantee"].__setitem__("max_risk", 0.01), None),
        "max_risk stated half the true": (lambda m: m["guarantee"].__setitem__("max_risk", true_risk / 2), None),
    }
    meta_edit, table_edit = edits[how]
    return in_memory(result, quasi, sensitive, meta_edit, table_edit)


def caught_by(message: str) -> str:
    if "not randomized with this matrix" in message:
        return "column range check"
    if "No original table fits" in message:
        return "risk test: no table fits"
    if "stated figure was altered" in message:
        return "risk test: stated max_risk"
    if "above 1/l" in message:
        return "risk test: above 1/l"
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40, help="genuine releases per configuration (default 40)")
    parser.add_argument("--forged-seeds", type=int, default=5, help="releases per configuration forged each way")
    args = parser.parse_args()
    if not ADULT.is_file():
        note(f"adult.csv not found at {ADULT}")
        return 1
    cache_plans()
    dataset = load_table(ADULT)
    out: dict = {"data": f"adult.csv, {len(dataset.frame):,} records", "false_refusal_bound": bounds.FALSE_REFUSAL,
                 "configurations": []}
    total = refused = custodian_refused = 0
    forged = {how: {"tried": 0, "refused": 0, "by": {}, "risk_test_alone": 0} for how in FORGERIES}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for number, (quasi_text, sensitive, l, randomize) in enumerate(CONFIGURATIONS):
            quasi = quasi_text.split(",")
            row = {"quasi": quasi, "sensitive": sensitive, "l": l, "randomize": randomize, "releases": 0,
                   "custodian_refused": 0, "recipient_refused": 0, "refusals": [], "lower_over_true": []}
            for seed in range(1, args.seeds + 1):
                settings = AnonymizationSettings(sensitive, "rr", quasi=quasi,
                                                 options=RRSettings(l=l, randomize=randomize), seed=seed)
                result = anonymize(dataset, settings)
                row["releases"] += 1
                folder = Path(tmp) / f"c{number}-s{seed}"
                try:
                    write_release(result, folder, include_report=False)  # the custodian's exact check
                except PPDPError as exc:
                    row["custodian_refused"] += 1
                    row["refusals"].append(f"seed {seed}, custodian: {exc}")
                    continue
                release = read_release(folder)
                try:
                    verify_release(release)  # as `ppdp verify` does: every check, the rr risk test included
                except PPDPError as exc:
                    row["recipient_refused"] += 1
                    row["refusals"].append(f"seed {seed}, recipient: {exc}")
                counts, ps, _ = recheck.released_counts(release)
                found = bounds.risk_lower_bound(counts, ps, recheck.test_level(release))
                row["lower_over_true"].append(found.lower / result.guarantee["max_risk"]
                                              if result.guarantee["max_risk"] > 0 else 1.0)
                row["true_max_risk"] = result.guarantee["max_risk"]
                row["p"] = {e["attribute"]: round(e["p"], 4) for e in result.plan.release_json()["randomized"]}
                if seed <= args.forged_seeds and row["p"]:
                    rng = np.random.default_rng(seed)
                    for how in FORGERIES:
                        forged[how]["tried"] += 1
                        fake = forge(how, result, dataset, quasi, sensitive, rng)
                        try:
                            verify_rr_release(fake)
                        except PPDPError as exc:
                            forged[how]["refused"] += 1
                            by = caught_by(str(exc))
                            forged[how]["by"][by] = forged[how]["by"].get(by, 0) + 1
                        try:  # the risk test on its own, without the column range checks before it
                            recheck.recheck_risk(fake)
                        except PPDPError:
                            forged[how]["risk_test_alone"] += 1
                shutil.rmtree(folder, ignore_errors=True)
            ratios = np.asarray(row.pop("lower_over_true"))
            row["smallest_risk_allowed_over_true"] = {"min": round(float(ratios.min()), 3),
                                                      "median": round(float(np.median(ratios)), 3),
                                                      "max": round(float(ratios.max()), 3)}
            total += row["releases"]
            refused += row["recipient_refused"]
            custodian_refused += row["custodian_refused"]
            out["configurations"].append(row)
            note(f"{quasi_text} / {sensitive} / l = {l:g} / {randomize}: {row['recipient_refused']} of "
                 f"{row['releases']} refused ({time.perf_counter() - start:.0f} s)")
    out["genuine_releases"] = total
    out["refused_by_custodian"] = custodian_refused
    out["refused_by_recipient"] = refused
    out["refusal_rate"] = refused / total if total else None
    out["forgeries"] = {how: {**f, "rate": f["refused"] / f["tried"] if f["tried"] else None}
                        for how, f in forged.items()}
    out["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
