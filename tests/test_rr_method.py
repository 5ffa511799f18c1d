"""Randomized response under a linking-attack bound as a method: seed 001's adult setting."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.rr.risk import max_risk
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.settings import AnonymizationSettings

QUASI = ["education", "marital-status", "sex", "race"]  # seed 001's EMGRW, workclass sensitive


def test_adult_emgrw_meets_the_bound_and_noise_grows_with_l(adult_csv):
    dataset = load_table(adult_csv)
    noise = []
    for l in (2, 3, 4, 5):
        result = anonymize(dataset, AnonymizationSettings("workclass", "rr", quasi=QUASI, options=RRSettings(l=l), seed=1))
        plan = result.plan
        assert result.guarantee["verified"] and result.guarantee["max_risk"] <= 1 / l + 1e-9
        # verified independently from the counts
        assert max_risk(plan.counts, plan.parameters.p_qi, plan.parameters.p_s) <= 1 / l + 1e-9
        ps = list(plan.parameters.p_qi or []) + [plan.parameters.p_s if plan.parameters.p_s is not None else 1.0]
        noise.append(sum(1.0 - p for p in ps))
    assert all(b >= a - 1e-6 for a, b in zip(noise, noise[1:])) and noise[-1] > noise[0]  # seed 001 Table 3


def test_cli_release_verifies(adult_csv, tmp_path, capsys):
    out = tmp_path / "rr"
    assert main(["anonymize", str(adult_csv), "--out", str(out), "--method", "rr", "--quasi", ",".join(QUASI),
                 "--sensitive", "workclass", "--l", "3", "--randomize", "qi", "--seed", "2", "--no-report"]) == 0
    meta = json.loads((out / "release.json").read_text())
    assert meta["guarantee"]["l"] == 3 and meta["guarantee"]["max_risk"] <= 1 / 3 + 1e-9
    for entry in meta["randomized"]:
        matrix = np.array(entry["matrix"])
        np.testing.assert_allclose(matrix.sum(axis=0), 1.0)
        assert entry["role"] == "quasi-identifier" and np.allclose(np.diag(matrix), entry["p"])
    assert main(["verify", str(out)]) == 0
    assert "attribute-disclosure risk" in capsys.readouterr().out


def test_rr_needs_l_and_quasi_identifiers(adult_csv):
    dataset = load_table(adult_csv)
    with pytest.raises(ParameterError, match="--l"):
        anonymize(dataset, AnonymizationSettings("workclass", "rr", quasi=QUASI))
    with pytest.raises(ParameterError, match="--quasi"):
        anonymize(dataset, AnonymizationSettings("workclass", "rr", options=RRSettings(l=2)))


def test_compare_estimate_table_and_report_lines(adult_csv, tmp_path, capsys):
    assert main(["compare", str(adult_csv), "--sensitive", "occupation", "--quasi", ",".join(QUASI), "--l", "3",
                 "--seed", "1"]) == 0
    table = capsys.readouterr().out
    assert all(name in table for name in ("rr", "anatomy", "mondrian")) and "sub-table count error" in table
    out = tmp_path / "rr"
    assert main(["anonymize", str(adult_csv), "--out", str(out), "--method", "rr", "--quasi", ",".join(QUASI),
                 "--sensitive", "occupation", "--l", "3", "--seed", "2"]) == 0
    html = (out / "report.html").read_text()  # inside the package: nothing measured against the originals
    assert "uncertainty coefficient" not in html and "Mondrian" not in html
    custodian = (tmp_path / "rr.custodian-report.html").read_text()  # the custodian's, beside the release
    assert "uncertainty coefficient" in custodian and "Mondrian" in custodian
    capsys.readouterr()
    assert main(["estimate", str(out), "--table", "sex,occupation", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sum(r["estimate"] for r in rows) == pytest.approx(30_162) and sum(r["observed"] for r in rows) == 30_162


def test_axis_wise_estimate_of_a_release_is_unbiased_in_the_mean(adult_csv, tmp_path):
    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table
    from ppdp_desktop.core.release.package import read_release, write_release

    dataset = load_table(adult_csv)
    truth = dataset.frame.groupby(["sex", "race"]).size()
    estimates = []
    for seed in range(12):
        job = anonymize(dataset, AnonymizationSettings("occupation", "rr", quasi=["sex", "race"],
                                                       options=RRSettings(l=5, randomize="qi"), seed=seed))
        assert min(job.plan.parameters.p_qi) < 0.95  # the bound forces real randomization
        folder = write_release(job, tmp_path / f"r{seed}", include_report=False)
        table = estimate_release_table(read_release(folder), ["sex", "race"]).set_index(["sex", "race"])["estimate"]
        estimates.append(table.reindex(truth.index).to_numpy())
    mean = np.mean(estimates, axis=0)
    sd = np.std(estimates, axis=0, ddof=1) / np.sqrt(len(estimates))
    assert np.all(np.abs(mean - truth.to_numpy()) <= 4 * sd + 1e-6)
