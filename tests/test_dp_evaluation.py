"""Seed 003 evaluation of dp-microagg: metrics by hand, the method against plain Laplace on real
data, the report files, ppdp verify of a dp release (and of tampered ones), ppdp compare --epsilon."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.demo import DEMO_DP_DOMAINS
from ppdp_desktop.core.methods.dp.evaluation import (
    ALL,
    LAPLACE,
    METHOD,
    RANKING,
    categorical_error,
    compare_dp,
    evaluate_job,
    format_dp_table,
    histogram_jsd,
    relative_error,
    variance_variation,
)
from ppdp_desktop.core.methods.dp.numeric import NumericDomain
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.taxonomy.io import from_dict

OCCUPATION = "adult_hierarchy_occupation.csv"
TREE = {"attribute": "x", "root": {"label": "*", "children": [
    {"label": "A", "children": [{"label": "a1"}, {"label": "a2"}]}, {"label": "B", "children": [{"label": "b1"}]}]}}


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# --- metrics by hand ------------------------------------------------------------------------------

def test_relative_error_uses_the_sanity_bound():
    domain = NumericDomain("x", 0, 100)  # sanity bound Delta / 100 = 1
    # 2/10, 1/max(0, 1), 10/50
    assert relative_error(np.array([10, 0, 50]), np.array([12, 1, 40]), domain) == pytest.approx(1.4 / 3)


def test_variance_variation():
    assert variance_variation(np.array([1, 2, 3, 4]), np.array([2, 2, 3, 3])) == pytest.approx(0.8)  # |1.25-.25|/1.25
    assert variance_variation(np.array([5, 5]), np.array([5, 5])) == 0.0
    assert variance_variation(np.array([5, 5]), np.array([4, 6])) == math.inf


def test_histogram_jsd_bins():
    integer = NumericDomain("x", 0, 3, integer=True)  # one bin per integer
    assert histogram_jsd([0, 0, 1, 1], [2, 2, 3, 3], integer) == pytest.approx(1.0)
    assert histogram_jsd([0, 1], [1, 0], integer) == pytest.approx(0.0)
    # p = (1, 0), q = (.5, .5), m = (.75, .25)
    expected = 0.5 * math.log2(1 / 0.75) + 0.5 * (0.5 * math.log2(0.5 / 0.75) + 0.5 * math.log2(0.5 / 0.25))
    assert histogram_jsd([0, 0], [0, 1], integer) == pytest.approx(expected)
    continuous = NumericDomain("x", 0.0, 1.0)  # 100 bins of 0.01
    assert histogram_jsd([0.001], [0.009], continuous) == pytest.approx(0.0)
    assert histogram_jsd([0.001], [0.011], continuous) == pytest.approx(1.0)
    wide = NumericDomain("x", 0, 1000, integer=True)  # > 200 integers: 100 bins of 10
    assert histogram_jsd([1], [9], wide) == pytest.approx(0.0)
    assert histogram_jsd(["a", "a"], ["a", "b"], None) == pytest.approx(expected)  # one bin per label


def test_categorical_error_is_the_mean_semantic_distance():
    taxonomy = from_dict(TREE)
    # dis = log2(1 + |xor| / |union|) over ancestor sets including the value and the root
    d_a1_a2 = math.log2(1 + 2 / 4)
    d_a2_A = math.log2(1 + 1 / 3)
    d_b1_a1 = math.log2(1 + 4 / 5)
    error = categorical_error(taxonomy, ["a1", "a1", "a2", "b1"], ["a1", "a2", "A", "a1"])
    assert error == pytest.approx((0 + d_a1_a2 + d_a2_A + d_b1_a1) / 4)


# --- the method against its baselines on real data -------------------------------------------------

def _mean_re(rows, method, attribute, k=None):
    return np.mean([r.relative_error for r in rows if r.method == method and r.attribute == attribute
                    and (k is None or r.k == k)])


@pytest.mark.parametrize("epsilon", [1.0, 10.0])
def test_adult_age_beats_plain_laplace(adult_csv, epsilon):
    dataset = load_table(adult_csv)
    runs = [compare_dp(dataset, ["age"], epsilon, [10, 25, 50, 100], {"age": (17, 90)}, seed=s, run=anonymize) for s in (0, 1, 2)]
    rows = [r for rs in runs for r in rs]
    laplace = _mean_re(rows, LAPLACE, "age")
    for k in (10, 25, 50, 100):
        method = _mean_re(rows, METHOD, "age", k)
        assert method < laplace, (k, method, laplace)
        assert _mean_re(rows, RANKING, "age", k) < method  # noise costs something
    # more noise with a smaller budget
    assert laplace > 0.1


@pytest.mark.parametrize("epsilon", [1.0, 10.0])
def test_demo_numeric_columns_beat_plain_laplace(epsilon):
    dataset = load_table(resource_path(DEMO_DATA))
    columns = list(DEMO_DP_DOMAINS)
    runs = [compare_dp(dataset, columns, epsilon, [10, 25, 50, 100], DEMO_DP_DOMAINS, seed=s, run=anonymize) for s in (0, 1)]
    rows = [r for rs in runs for r in rs]
    for attribute in [*columns, ALL]:
        laplace = _mean_re(rows, LAPLACE, attribute)
        for k in (10, 25, 50, 100):
            assert _mean_re(rows, METHOD, attribute, k) < laplace, (attribute, k)


# --- a dp job: evaluation rows, report files ------------------------------------------------------

@pytest.fixture(scope="module")
def adult_job():
    from conftest import shared_adult

    path = shared_adult()
    dp = DPSettings(["age", "occupation"], 1.0, 25, {"age": (17, 90)}, {"occupation": str(path.parent / OCCUPATION)})
    return anonymize(load_table(path), AnonymizationSettings("", method="dp-microagg", options=dp, seed=4))


def test_evaluate_job_rows(adult_job):
    rows = evaluate_job(adult_job)
    keys = {(r.method, r.attribute) for r in rows}
    for method in (METHOD, LAPLACE, RANKING):
        for attribute in ("age", "occupation", ALL):
            assert (method, attribute) in keys
    by = {(r.method, r.attribute): r for r in rows}
    assert by[(METHOD, "occupation")].variance_variation is None
    assert by[(METHOD, "age")].variance_variation is not None
    assert by[(LAPLACE, "age")].k is None and by[(METHOD, "age")].k == 25
    assert by[(METHOD, ALL)].relative_error == pytest.approx(
        (by[(METHOD, "age")].relative_error + by[(METHOD, "occupation")].relative_error) / 2)
    assert all(0.0 <= r.jsd <= 1.0 for r in rows)
    # the method row measures the job's own release
    released = np.asarray(adult_job.applied.columns["age"], dtype=float)
    original = adult_job.dataset.frame["age"].to_numpy(dtype=float)
    assert by[(METHOD, "age")].relative_error == pytest.approx(relative_error(original, released, NumericDomain("age", 17, 90)))
    assert "plain Laplace" in format_dp_table(rows)


def test_report_of_a_dp_job_writes_html_and_pdf(adult_job, tmp_path):
    from ppdp_desktop.core.report.build import build_report, comparison_rows
    from ppdp_desktop.core.report.document import ReportContext
    from ppdp_desktop.core.report.files import write_html, write_pdf

    report = build_report(adult_job)
    assert {"histogram: age", "histogram: occupation", "relative error"} <= set(report.figures)
    text = "\n".join(report.lines)
    assert "b = M*Delta/(k*epsilon) = 2*73/(25*1) = 5.84" in text and "plain Laplace per value would need 146" in text
    assert any("Not covered" in line or "categorical" in line.lower() for line in report.privacy_lines())
    # the rows keep their other columns: the headline says so, with the figure measured on the release, and
    # that the categorical column's accounting is not proven
    headline = comparison_rows([report])[0]["guarantee"]
    assert headline.startswith("epsilon-DP of each protected column's values as a multiset (except: the epsilon "
                               "accounting of the categorical column occupation is not proven), not of the rows: ")
    assert "records can be singled out by their other released columns" in headline
    context = ReportContext.from_anonymization(adult_job)
    write_html([report], context, tmp_path / "report.html")
    write_pdf([report], context, tmp_path / "report.pdf")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "dp-microagg" in html and "data:image/png" in html and "upward" not in html
    assert (tmp_path / "report.pdf").read_bytes().startswith(b"%PDF") and (tmp_path / "report.pdf").stat().st_size > 10_000


# --- ppdp anonymize / verify / report / compare ---------------------------------------------------

def _release(adult_csv, out, capsys, *extra):
    args = ["anonymize", adult_csv, "--out", out, "--method", "dp-microagg", "--attributes", "age,occupation",
            "--taxonomy", f"occupation={adult_csv.parent / OCCUPATION}", "--epsilon", "1", "--k", "25",
            "--domain", "age=17:90", "--seed", "3", *extra]
    code, stdout, err = run(args, capsys)
    assert code == 0, err
    return out


def _rehash(folder):
    from ppdp_desktop.core.release.package import write_checksums

    (folder / "SHA256SUMS").unlink()
    write_checksums(folder)


def test_verify_accepts_a_dp_release_and_refuses_tampered_ones(adult_csv, tmp_path, capsys):
    out = _release(adult_csv, tmp_path / "r", capsys, "--no-report")
    readme = " ".join((out / "README.txt").read_text(encoding="utf-8").split())  # its lines wrap at 100
    assert "are epsilon-differentially private with epsilon = 1 in all" in readme and "Not covered" in readme
    assert "It does not cover the rows" in readme
    code, stdout, err = run(["verify", out], capsys)  # a failed check exits 1 (cli/exit_codes.py)
    assert code == 0, err
    assert "OK epsilon split: 2 x 0.5 = 1" in stdout
    assert "OK age: discrete Laplace on a grid of step 1, t = 146 = ceil(2*73/1)" in stdout
    assert "about Laplace scale 5.84 = 2*73/(25*1)" in stdout
    assert "OK occupation:" in stdout

    table = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    original = table.copy()
    table.loc[0, "age"] = "200"
    table.to_csv(out / "release.csv", index=False)
    _rehash(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "outside the domain 17:90" in err and err.count("\n") == 1
    table.loc[0, "age"] = "40.5"
    table.to_csv(out / "release.csv", index=False)
    _rehash(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "whole number" in err
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    assert meta["protected"][0]["grid"] == {"step": 1, "step_exact": "1", "first": 17, "units": 73}
    assert meta["protected"][0]["discrete_laplace_t"] == 146 and meta["protected"][0]["privacy_loss"] == 0.5
    table = original.copy()
    table.loc[0, "occupation"] = "Astronaut"
    table.to_csv(out / "release.csv", index=False)
    _rehash(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "'Astronaut'" in err
    original.to_csv(out / "release.csv", index=False)
    _rehash(out)
    assert run(["verify", out], capsys)[0] == 0

    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    meta["protected"][0]["laplace_scale"] = 1.0  # less noise than epsilon needs
    (out / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "release.json does not match its checksum" in err
    _rehash(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "Laplace scale" in err and "M*Delta/(k*epsilon)" in err
    meta["protected"][0]["laplace_scale"] = 5.84
    meta["protected"][0]["epsilon"] = 0.9  # the split no longer adds up
    (out / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    _rehash(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "do not split epsilon" in err


def test_release_with_report_and_report_from_release(adult_csv, tmp_path, capsys):
    out = _release(adult_csv, tmp_path / "r", capsys)
    assert (out / "report.html").stat().st_size > 10_000 and (out / "report.pdf").read_bytes().startswith(b"%PDF")
    code, stdout, err = run(["report", adult_csv, out, "--out", tmp_path / "again.html", "--pdf", tmp_path / "again.pdf"], capsys)
    assert code == 0, err
    html = (tmp_path / "again.html").read_text(encoding="utf-8")
    assert "plain Laplace" in html and "histogram: age" in html
    assert (tmp_path / "again.pdf").read_bytes().startswith(b"%PDF")


def test_compare_epsilon_prints_the_table(adult_csv, capsys):
    code, stdout, err = run(["compare", adult_csv, "--attributes", "age,occupation", "--epsilon", "1", "--k", "10,50",
                             "--domain", "age=17:90", "--taxonomy", f"occupation={adult_csv.parent / OCCUPATION}",
                             "--seed", "1"], capsys)
    assert code == 0, err
    lines = stdout.splitlines()
    assert lines[1].split()[:3] == ["method", "k", "attribute"]
    for needle in ("dp-microagg", "plain Laplace", "individual ranking (no noise)", "all attributes", "Jensen-Shannon"):
        assert needle in stdout
    assert sum(line.startswith("dp-microagg") for line in lines[2:]) == 6  # 2 k x (age, occupation, all)


@pytest.fixture
def gap_csv(tmp_path):
    path = tmp_path / "gap.csv"
    path.write_text("age,los,dx\n30,1,a\n,2,b\n50,3,a\n60,4,b\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["compare", "anonymize"])
@pytest.mark.parametrize("extra, message", [
    (["--attributes", "age", "--domain", "age=0-99"], "must look like COL=LO:HI"),
    (["--attributes", "agee", "--domain", "agee=0:99"], "'agee'"),
    (["--attributes", "age", "--domain", "age=0:99"], "1 blank cell(s) (line 3); choose what to do with them in --blanks"),
    (["--attributes", "los", "--domain", "los=2:99"], "outside the declared domain"),
])
def test_cli_dp_errors_are_one_line(gap_csv, tmp_path, capsys, command, extra, message):
    base = (["compare", gap_csv, "--k", "2"] if command == "compare"
            else ["anonymize", gap_csv, "--out", tmp_path / "o", "--method", "dp-microagg", "--k", "2"])
    code, stdout, err = run([*base, "--epsilon", "1", *extra], capsys)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_gui_report_page_shows_a_dp_report(qtbot, adult_job):
    pytest.importorskip("PySide6")
    from ppdp_desktop.core.jobs import run_job
    from ppdp_desktop.core.progress import CancelToken, no_progress
    from ppdp_desktop.gui.pages.report_page import ReportPage
    from ppdp_desktop.gui.state import WizardState

    outcome = run_job(adult_job.dataset, [adult_job.settings], no_progress, CancelToken())
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    state.set_outcome(outcome)
    assert page.is_complete()
    assert "verified" in page.privacy_label.text()
    assert page.tabs.count() == len(outcome.reports[0].figures) == 3
