"""Re-identification end to end: k-anonymity in front of every sensitive-value method, the fail-closed
re-check, verify on a release that claims k, the two verdicts, and ``ppdp risk``."""
from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.checksums import write_checksums
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.demo import DEMO_DP_DOMAINS, demo_settings
from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.generalization import check_k_anonymity
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.settings import ProtectionSettings, SensitivitySettings

QUASI = ["age", "sex", "postcode"]
PROTECT = ProtectionSettings(k=5, intervals={"age": [5, 10, 20]})
PASSPHRASE = "correct horse battery staple 42"


@pytest.fixture(scope="module")
def demo():
    return load_table(resource_path(DEMO_DATA))


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _settings(demo, method):
    settings = demo_settings(demo, method, seed=3)
    if method == "partition":
        settings = replace(settings, sensitivity=SensitivitySettings(rho1=0.05, rho2=0.4))
    if method == "dp-microagg":
        settings = replace(settings, options=DPSettings(["income"], 1.0, 50, {"income": DEMO_DP_DOMAINS["income"]}))
    return replace(settings, quasi=QUASI, protection=PROTECT)


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition", "personalized", "dp-microagg"])
def test_k_anonymity_in_front_of_every_sensitive_value_method(demo, method, tmp_path):
    result = anonymize(demo, _settings(demo, method))
    reid = result.reidentification
    assert reid.protected and reid.generalization.k == 5
    ok, suppressed = check_k_anonymity(result.table[QUASI], 5, 0.05)
    assert ok and suppressed == reid.generalization.suppressed <= 0.05 * len(demo.frame)
    sizes = result.table[QUASI][~result.table[QUASI].eq("*").all(axis=1)].astype(str).value_counts()
    assert sizes.min() >= 5
    assert reid.after.sample_uniques == 0 and reid.before.sample_uniques > 0
    folder = write_release(result, tmp_path / "r", key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE,
                           include_report=False)
    lines = verify_release(read_release(folder))  # the method's own guarantee and k both re-checked
    assert any(line.startswith("k-anonymity: every combination of age, sex, postcode") for line in lines)
    meta = json.loads((folder / "release.json").read_text())
    assert meta["reidentification"]["generalization"]["k"] == 5
    assert meta["reidentification"]["verdict"] == "protected"  # k = 5: every risk at most 1/5, the threshold
    readme = " ".join((folder / "README.txt").read_text().split())
    assert "Re-identification: protected — every record shares its quasi-identifiers with at least 4 others (k = 5, " \
           "verified), and no record's risk is above the threshold of 20 %" in readme


def test_released_values_are_ancestors_of_the_originals(demo):
    result = anonymize(demo, _settings(demo, "finegrain"))
    original = demo.frame[QUASI].take(result.order).reset_index(drop=True)
    released = result.table[QUASI]
    kept = ~released.eq("*").all(axis=1)
    generalization = result.reidentification.generalization
    expected = generalization.apply(original)
    pd.testing.assert_frame_equal(released[kept].astype(str).reset_index(drop=True),
                                  expected[kept].astype(str).reset_index(drop=True))


def test_without_k_the_risk_is_shown_not_hidden(demo, tmp_path):
    settings = replace(demo_settings(demo, "finegrain", seed=3), quasi=QUASI + ["admission_year"])
    result = anonymize(demo, settings)
    reid = result.reidentification
    assert not reid.protected and reid.verdict == "not protected"
    assert reid.headline().startswith("Re-identification: NOT protected — 11,520 of 20,000 records (57.6 %)")
    report = build_report(result)
    assert report.risk_level == "danger" and report.reidentification_lines()[0] == reid.headline()
    folder = write_release(result, tmp_path / "r", key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE)
    html = (folder / "report.html").read_text()
    assert "Sensitive values (diagnosis): protected, checked before the release was written" in html
    assert "Guarantee verified" in html and "Re-identification: NOT protected" in html
    assert 'class="danger"' in html
    assert "Re-identification: NOT protected — 11,520 of 20,000 records" in " ".join(
        (folder / "README.txt").read_text().split())


def test_randomized_quasi_identifiers_report_what_a_naive_linker_gets(demo):
    settings = replace(demo_settings(demo, "rr", seed=3), quasi=["sex", "postcode"])
    result = anonymize(demo, settings)
    assert result.reidentification.linkage is not None
    assert any("naive" in line.lower() or "link" in line.lower() for line in result.reidentification.lines())
    with pytest.raises(ParameterError, match="randomizes the quasi-identifiers itself"):
        anonymize(demo, replace(settings, protection=PROTECT))


def test_a_tampered_k_anonymous_release_is_refused(demo, tmp_path):
    result = anonymize(demo, _settings(demo, "finegrain"))
    folder = write_release(result, tmp_path / "r", include_report=False)
    table = pd.read_csv(folder / "release.csv", dtype=str, keep_default_na=False)
    row = table.index[~table[QUASI].eq("*").all(axis=1)][0]
    table.loc[row, "postcode"] = "ZZ9"  # a group of one
    table.to_csv(folder / "release.csv", index=False)
    (folder / "SHA256SUMS").unlink()
    write_checksums(folder)  # a forger rewrites the checksums too
    with pytest.raises(PrivacyError, match="claims 5-anonymity"):
        verify_release(read_release(folder))


def test_cli_k_anonymity_then_verify_and_risk(tmp_path, capsys):
    out = tmp_path / "release"
    code, stdout, err = run(["demo", "--out", out, "--seed", "4"], capsys)  # no quasi-identifier protection
    assert code == 0, err
    assert "Re-identification: NOT protected" in stdout
    out2 = tmp_path / "protected"
    code, stdout, err = run(["anonymize", resource_path(DEMO_DATA), "--out", out2, "--sensitive", "diagnosis",
                             "--identifier", "patient_id,name", "--quasi", "age,sex,postcode", "--theta", "3",
                             "--k-anonymity", "5", "--intervals", "age=5,10,20", "--suppression", "0.02"], capsys)
    assert code == 0, err
    assert "Re-identification: protected" in stdout and "k = 5, verified" in stdout
    code, stdout, _ = run(["verify", out2], capsys)
    assert code == 0 and "OK k-anonymity" in stdout
    code, stdout, _ = run(["risk", resource_path(DEMO_DATA), "--quasi", "age,sex,postcode"], capsys)
    assert code == 0 and "1,155 of 20,000 records (5.8 %) are the only one with their age, sex and postcode" in stdout
    code, stdout, _ = run(["risk", out2, "--json"], capsys)
    figures = json.loads(stdout)
    assert code == 0 and figures["sample_uniques"] == 0 and figures["highest_risk"] <= 0.2


@pytest.mark.parametrize("extra, message", [
    (["--k-anonymity", "50000", "--intervals", "age=5"], "k = 50000"),
    (["--k-anonymity", "5", "--suppression", "2"], "--suppression"),
    (["--k-anonymity", "5", "--intervals", "age=5,7"], "do not nest"),
    (["--k-anonymity", "5", "--intervals", "age=x"], "must look like COL=W1,W2"),
    (["--k-anonymity", "5", "--cuts", "age=18,40,65/30"], "do not nest"),
    (["--k-anonymity", "5", "--cuts", "age=18;40"], "must look like COL=C1,C2"),
    (["--k-anonymity", "5"], "'age' is numeric and has no generalization hierarchy"),
    (["--k-anonymity", "5", "--intervals", "age=5", "--threshold", "nan"], "--threshold"),
])
def test_cli_bad_protection_is_one_line_and_writes_nothing(tmp_path, capsys, extra, message):
    out = tmp_path / "release"
    code, _, err = run(["anonymize", resource_path(DEMO_DATA), "--out", out, "--sensitive", "diagnosis",
                        "--quasi", "age,sex,postcode", "--theta", "3", *extra], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert message in err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_project_file_keeps_the_protection(tmp_path):
    from ppdp_desktop.core.project import Project

    project = Project(roles={"diagnosis": "sensitive", "age": "quasi-identifier"},
                      protection={"k": 10, "suppression": 0.01, "threshold": 0.1, "intervals": {"age": [10, 20]}})
    project.save(tmp_path / "p.ppdp")
    settings = Project.load(tmp_path / "p.ppdp").settings()
    assert settings.protection == ProtectionSettings(10, 0.01, 0.1, {}, {"age": [10, 20]})


def test_report_rebuilt_from_a_release_measures_both_sides(demo, tmp_path):
    from ppdp_desktop.core.report.from_release import reports_from_release

    result = anonymize(demo, _settings(demo, "finegrain"))
    folder = write_release(result, tmp_path / "r", include_report=False)
    report = reports_from_release(demo.frame, read_release(folder))[0]
    assert report.reidentification.protected and report.risk_level == "ok"
    assert report.reidentification.before.sample_uniques == result.reidentification.before.sample_uniques
    assert report.reidentification.after.sample_uniques == 0


def test_report_inside_a_dp_release_holds_no_original_risk_figures(demo, tmp_path):
    result = anonymize(demo, replace(_settings(demo, "dp-microagg"), protection=ProtectionSettings()))
    folder = write_release(result, tmp_path / "r")
    html = (folder / "report.html").read_text()
    assert "Re-identification: NOT protected" in html and "Original data:" not in html
    meta = json.loads((folder / "release.json").read_text())
    assert meta["reidentification"]["original"] is None and meta["reidentification"]["release"]["n_records"] == 20_000


def test_perturbation_behind_generalization_is_named_perturbed_generalization(demo):
    from ppdp_desktop.core.report.build import comparison_rows

    report = build_report(anonymize(demo, _settings(demo, "uniform")))
    assert report.title.endswith("Perturbed Generalization (Tao et al.)")
    assert comparison_rows([report])[0]["method"] == report.title


def test_a_value_missing_from_a_hierarchy_file_is_named(tmp_path, capsys):
    hierarchy = tmp_path / "sex.csv"
    hierarchy.write_text("F;*\n", encoding="utf-8")  # no row for M
    code, _, err = run(["anonymize", resource_path(DEMO_DATA), "--out", tmp_path / "r", "--sensitive", "diagnosis",
                        "--quasi", "age,sex", "--theta", "3", "--k-anonymity", "5", "--intervals", "age=10",
                        "--hierarchy", f"sex={hierarchy}"], capsys)
    assert code == 3 and err.count("\n") == 1 and "'M'" in err and "sex" in err
    assert not (tmp_path / "r").exists()


def test_cli_grading_a_quasi_identifier_protects_it_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    code, _, err = run(["anonymize", resource_path(DEMO_DATA), "--out", tmp_path / "r", "--method", "personalized",
                        "--sensitive", "diagnosis", "--quasi", "age,sex", "--graded", "age", "--categories", "4",
                        "--key", tmp_path / "r.ppdpkey", "--no-report"], capsys)
    assert code == 0, err
    assert "ppdp: note: 'age' is protected by Personalized recoding" in err
