"""``ppdp anonymize --method partition --utility``: perturbation partitioning's own utility figures, through the
sub-tables' matrices (the perturbation family's summary reads a one-matrix plan, which partitioning has not)."""
from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main

FIGURE = r"(-?\d+\.\d+|nan|inf)"


@pytest.fixture
def table(tmp_path):
    """400 records over ten values, each half as common as the one before: planned as two sub-tables, with
    records of some values in both."""
    rows, i = [], 0
    for j in range(10):
        for _ in range(max(1, round(400 * 2 ** (9 - j) / 1023))):
            rows.append(f"{i},{'FM'[i % 2]},{'ABC'[i % 3]},v{j:02d}\n")
            i += 1
    path = tmp_path / "patients.csv"
    path.write_text("id,sex,ward,dx\n" + "".join(rows), encoding="utf-8")
    return path


def _number(text: str) -> float:
    value = float(text)
    assert math.isfinite(value), text
    return value


def test_partition_utility_prints_the_figures_of_its_sub_tables(table, tmp_path, capsys):
    out = tmp_path / "release"
    code = main(["anonymize", str(table), "--out", str(out), "--sensitive", "dx", "--identifier", "id",
                 "--method", "partition", "--rho1", "0.2", "--rho2", "0.5", "--seed", "3", "--no-report", "--utility"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert "Error" not in err and "error:" not in err, err

    first = re.search(rf"record utility {FIGURE}; aggregate utility {FIGURE}", stdout)
    second = re.search(rf"reconstruction error {FIGURE}; distances of the MLE estimate: KL {FIGURE}, "
                       rf"chi-square {FIGURE}, JSD {FIGURE}", stdout)
    workload = re.search(r"count-query relative error by selectivity: (.+)", stdout)
    assert first and second and workload, stdout
    record_utility, aggregate_utility = (_number(g) for g in first.groups())
    reconstruction_error, kl, chi_square, jsd = (_number(g) for g in second.groups())
    assert 0.0 < record_utility <= 1.0 and 0.0 < aggregate_utility <= 1.0
    assert reconstruction_error >= 0.0 and kl >= 0.0 and chi_square >= 0.0 and 0.0 <= jsd <= 1.0
    queries = re.findall(r"([\d.]+)%: (n/a|[\d.]+) \((\d+) queries\)", workload.group(1))
    assert len(queries) == 3 and all(int(q) > 0 for _, _, q in queries)
    errors = [float(e) for _, e, _ in queries if e != "n/a"]
    assert errors and all(e >= 0.0 for e in errors)

    # the same figures again, from the release itself: each sub-table's counts estimated with its own matrix
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    entry = meta["sensitive"][0]
    subtables = entry["subtables"]
    assert len(subtables) >= 2 and len({v for s in subtables for v in s["values"]}) == 10
    released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    original = pd.read_csv(table, dtype=str, keep_default_na=False)["dx"].value_counts()
    n = len(released)
    estimated = pd.Series(0.0, index=entry["values"])
    for sub in subtables:
        p, values = sub["retention"], sub["values"]
        observed = released.loc[released["subtable"] == str(sub["id"]), "dx"].value_counts()
        assert observed.sum() == sub["n_records"]
        counts = np.array([observed.get(v, 0) for v in values], dtype=float)
        estimated[values] += (counts - (1.0 - p) * sub["n_records"] / len(values)) / p
    assert estimated.sum() == pytest.approx(n)  # the estimated counts account for every record
    actual = original.reindex(estimated.index, fill_value=0).to_numpy(dtype=float)
    assert actual.sum() == n == meta["n_records"]
    expected_utility = sum(s["n_records"] * (s["retention"] + (1.0 - s["retention"]) / len(s["values"]))
                           for s in subtables) / n
    assert record_utility == pytest.approx(expected_utility, abs=5e-5)
    error = np.abs(actual - estimated.to_numpy())
    assert aggregate_utility == pytest.approx(1.0 - error.mean() / n, abs=5e-5)
    assert reconstruction_error == pytest.approx((error[actual > 0] / actual[actual > 0]).mean(), abs=5e-5)
