"""``ppdp risk --sampling-fraction F --population FILE``: population uniqueness and journalist risk on the command
line, on a clinical export and on a release's data file alone (suppressed records left out)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.privacy.uniqueness import PITMAN, ZAYATZ, estimate_uniqueness
from tests.clinical_data import write_clinical_xlsx

QUASI = ["Geschlecht", "PLZ", "Station"]


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def clinical(tmp_path_factory):
    path = write_clinical_xlsx(tmp_path_factory.mktemp("clinical") / "faelle.xlsx", n=3000)
    frame = pd.read_excel(path, engine="openpyxl", header=1, dtype=str, keep_default_na=False)
    return path, frame


def _census(frame, path, factor=lambda i: 40):
    """A population table: each combination of the data counted ``factor(i)`` times as often as in the data."""
    counts = frame.groupby(QUASI, sort=True).size().reset_index(name="n")
    counts["count"] = [n * factor(i) for i, n in enumerate(counts["n"])]
    counts.drop(columns="n").to_csv(path, sep=";", index=False)
    return counts


def test_risk_estimates_population_uniques_from_the_sampling_fraction(clinical, capsys):
    path, frame = clinical
    code, out, err = run(["risk", path, "--quasi", ",".join(QUASI + ["Hauptdiagnose (ICD-10)"]),
                          "--sampling-fraction", "0.02", "--json"], capsys)
    assert code == 0, err
    sizes = frame.groupby(QUASI + ["Hauptdiagnose (ICD-10)"]).size().value_counts().to_dict()  # sizes by hand
    expected = estimate_uniqueness(sizes, 0.02)
    figures = json.loads(out)["population_uniqueness"]
    assert figures["model"] == expected.model and figures["population_size"] == pytest.approx(3000 / 0.02)
    assert figures["population_uniques"] == pytest.approx(expected.uniques, rel=1e-9) and expected.uniques > 0
    assert figures["sample_uniques"] == sizes[1] == json.loads(out)["sample_uniques"]
    code, out, _ = run(["risk", path, "--quasi", ",".join(QUASI + ["Hauptdiagnose (ICD-10)"]),
                        "--sampling-fraction", "0.02"], capsys)
    # the wards and diagnoses are spread evenly over few values: Pitman's alpha runs to 0, so the rule takes Zayatz
    assert expected.model == ZAYATZ and expected.estimates[PITMAN] is None
    assert code == 0 and f"about {round(expected.uniques):,} people" in out and "Zayatz's model" in out


def test_risk_against_a_population_table(clinical, tmp_path, capsys):
    path, frame = clinical
    census = _census(frame, tmp_path / "census.csv", factor=lambda i: 1 if i % 7 == 0 else 25)
    code, out, err = run(["risk", path, "--quasi", ",".join(QUASI), "--population", tmp_path / "census.csv",
                          "--threshold", "0.05", "--json"], capsys)
    assert code == 0, err
    figures = json.loads(out)["journalist"]
    risks = [1 / c for n, c in zip(census["n"], census["count"]) for _ in range(n)]  # every record's 1/F
    assert figures["n_records"] == len(risks) == 3000 and figures["population_size"] == census["count"].sum()
    assert figures["highest_risk"] == max(risks) and figures["average_risk"] == pytest.approx(sum(risks) / 3000)
    assert figures["records_above_threshold"] == sum(r > 0.05 for r in risks)
    assert figures["population_uniques"] == sum(1 for n, c in zip(census["n"], census["count"]) if c == 1)


@pytest.mark.parametrize("extra, status, message", [
    (["--sampling-fraction", "0"], 2, "--sampling-fraction"),
    (["--sampling-fraction", "nan"], 2, "--sampling-fraction"),
    (["--population", "missing.csv"], 3, "cannot read the population table"),
    (["--population", "/dev/zero"], 3, "not a regular file; give the path of a population table"),
])
def test_bad_population_options_are_one_line(clinical, tmp_path, capsys, monkeypatch, extra, status, message):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["risk", clinical[0], "--quasi", ",".join(QUASI), *extra], capsys)
    assert code == status and err.count("\n") == 1 and message in err and "Traceback" not in err


def test_a_combination_the_census_lacks_is_named(clinical, tmp_path, capsys):
    path, frame = clinical
    census = _census(frame, tmp_path / "census.csv")
    census.iloc[1:].drop(columns="n").to_csv(tmp_path / "census.csv", sep=";", index=False)
    code, _, err = run(["risk", path, "--quasi", ",".join(QUASI), "--population", tmp_path / "census.csv"], capsys)
    first = census.iloc[0]
    assert code == 3 and err.startswith("ppdp: note: faelle.xlsx: reading the column names") and err.count("\n") == 2
    assert "Traceback" not in err and f"census.csv: no row for Geschlecht={first['Geschlecht']!r}, PLZ={first['PLZ']!r}" in err


def test_a_release_data_file_alone_leaves_suppressed_records_out_of_every_figure(tmp_path, capsys):
    """A release's CSV read alone: the records whose every quasi-identifier is '*' are out of the prosecutor
    figures, the uniqueness estimate and the journalist risk (the census has no row for '*')."""
    rows = [("30-39", "f")] * 6 + [("40-49", "m")] * 5 + [("50-59", "f")] * 3 + [("*", "*")] * 4
    release = pd.DataFrame(rows, columns=["age", "sex"]).assign(diagnosis="I10")
    release.to_csv(tmp_path / "release.csv", index=False)
    (tmp_path / "census.csv").write_text("age,sex,count\n30-39,f,600\n40-49,m,50\n50-59,f,3\n", encoding="utf-8")
    code, out, err = run(["risk", tmp_path / "release.csv", "--quasi", "age,sex", "--population",
                          tmp_path / "census.csv", "--sampling-fraction", "0.05", "--json"], capsys)
    assert code == 0, err
    figures = json.loads(out)
    assert figures["suppressed_left_out"] == 4 and figures["n_records"] == 14
    assert figures["journalist"]["n_records"] == 14 and figures["journalist"]["highest_risk"] == pytest.approx(1 / 3)
    assert figures["population_uniqueness"]["population_size"] == pytest.approx(14 / 0.05)
    assert figures["population_uniqueness"]["model"] == "none"  # no class of one once the '*' records are out
