"""The method parts of the report in plain words (issue 17): randomized response's figures (the copy inside the
release drawn from released data only, unchanged columns never drawn as randomized), the first page's findings of
rr, dp-microagg, personalized recoding and partitioning checked against numbers computed here, and no internal
document names in anything a user reads."""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.demo import demo_settings
from ppdp_desktop.core.evaluation.chart import Bars
from ppdp_desktop.core.evaluation.report_model import Marginal
from ppdp_desktop.core.methods import REGISTRY
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.methods.rr.report import estimability
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.release.package import release_metadata
from ppdp_desktop.core.release.readme import recipient_readme
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

METHODS_DIR = Path(__file__).resolve().parents[1] / "ppdp_desktop" / "core" / "methods"
INTERNAL = re.compile(r"\bseed 0|\bSPEC\b|\bsection [0-9IVX]|\bthesis\b|\bLemma\b", re.I)
ABBREVIATIONS = re.compile(r"\bJSD\b|\bRE\b(?!-)")  # written out in words where a user reads


@pytest.fixture(scope="module")
def demo(demo_data):
    return demo_data


@pytest.fixture(scope="module")
def rr_job(demo):
    return anonymize(demo, demo_settings(demo, "rr", seed=1))


@pytest.fixture(scope="module")
def rr_reports(rr_job):
    return build_report(rr_job), build_report(rr_job, public=True)


def _pct(share: float) -> str:
    """The report's percentages, computed here on their own (shares of 10 % and more as whole numbers)."""
    assert share >= 0.1
    return f"{share * 100:.0f} %"


def _bars(figure, label: str) -> np.ndarray:
    """The lengths of the bars drawn under ``label`` (in drawing order)."""
    bars = figure.series(label)
    assert isinstance(bars, Bars) and figure.horizontal
    return np.asarray(bars.values)


# --- randomized response: figures ------------------------------------------------------------------------

def test_rr_reports_draw_each_randomized_column_and_no_unchanged_one(rr_job, rr_reports):
    randomized = {d.attribute: p for d, _role, p in rr_job.plan._randomized()}
    unchanged = [d.attribute for d in [*rr_job.plan.qi, rr_job.plan.sensitive] if d.attribute not in randomized]
    assert randomized and unchanged  # the demo keeps sex and diagnosis (p = 1)
    for report in rr_reports:
        drawn = {name.split(" (")[0] for name in report.figures if "p = " in name}
        assert drawn == set(randomized)
        assert all(p < 1.0 for p in randomized.values())
        assert not any(name.split(" (")[0] in unchanged for name in report.figures)
        assert [m.attribute for m in report.marginals] == list(randomized)
    full, public = rr_reports
    assert "risk per group" in full.figures and "risk per group" not in public.figures


def test_public_rr_figures_show_released_counts_and_estimates_only(rr_job, rr_reports):
    _full, public = rr_reports
    for m in public.marginals:
        assert m.original is None
        released = pd.Series(np.asarray(rr_job.table[m.attribute], dtype=object)).astype(str).value_counts()
        np.testing.assert_array_equal(m.released, [released.get(v, 0) for v in m.values])
        figure = next(f for name, f in public.figures.items() if name.startswith(f"{m.attribute} ("))
        labels = set(figure.labels())
        assert "original" not in labels
        order = np.argsort(-m.estimate, kind="stable")[:40]
        np.testing.assert_allclose(_bars(figure, "released"), m.released[order])
        np.testing.assert_allclose(_bars(figure, "estimated from the release"), m.estimate[order])


def test_public_rr_report_does_not_depend_on_the_original(rr_job, rr_reports):
    """The same release with scrambled originals gives the same public marginals and figure data."""
    _full, public = rr_reports
    frame = rr_job.dataset.frame.copy()
    for m in public.marginals:
        frame[m.attribute] = frame[m.attribute].iloc[0]  # every original value the same
    scrambled = replace(rr_job, dataset=replace(rr_job.dataset, frame=frame))
    again = build_report(scrambled, public=True)
    assert list(again.figures) == list(public.figures)
    for a, b in zip(public.marginals, again.marginals):
        for field in ("released", "estimate", "low", "high"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    for name in public.figures:
        if "p = " in name:
            np.testing.assert_array_equal(_bars(public.figures[name], "released"),
                                          _bars(again.figures[name], "released"))
    assert again.findings == public.findings == []


# --- randomized response: findings -----------------------------------------------------------------------

def test_rr_column_findings_state_the_replaced_share_and_the_retention(demo, rr_job, rr_reports):
    full, _public = rr_reports
    for domain, _role, p in rr_job.plan._randomized():
        original = demo.frame[domain.attribute].astype(str).to_numpy()
        released = pd.Series(np.asarray(rr_job.applied.columns[domain.attribute], dtype=object)).astype(str).to_numpy()
        replaced = float(np.mean(original != released))
        sentence = next(f for f in full.findings if f" of {domain.attribute} values were deliberately replaced" in f)
        assert sentence.startswith(f"{_pct(replaced)} of {domain.attribute} values were deliberately replaced")
        assert f"with probability {_pct(p)}" in sentence
        assert "(95 % interval)" in sentence


def test_estimability_golden():
    # shares 50 %, 30 %, 15 %, 4 %, 1 %; relative half-widths 10 %, 20 %, 40 %, 150 %, 300 %
    original = np.array([5000, 3000, 1500, 400, 100], float)
    half = np.array([500, 600, 600, 600, 300], float)
    m = Marginal("x", list("abcde"), original, original, original, original - half, original + half)
    assert estimability(m) == ("the count of each value held by at least 20 % of records can still be estimated "
                               "within ±20 % (95 % interval)")
    tight = Marginal("x", ["a", "b"], np.array([600.0, 400]), np.array([600.0, 400]), np.array([600.0, 400]),
                     np.array([570.0, 380]), np.array([630.0, 420]))
    assert estimability(tight) == "the counts of all its values can still be estimated within ±5 % (95 % interval)"
    wide = replace(tight, low=np.zeros(2), high=np.array([1500.0, 1200]))
    assert estimability(wide) == ("no single value's count can be estimated within ±25 % (the closest, 'a', within "
                                  "±150 %); combine values into groups")


def test_rr_risk_findings_match_a_count_of_the_groups():
    """On small data: the groups above 1/l before randomization, counted here with pandas."""
    rng = np.random.default_rng(4)
    n = 600
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], n), "band": rng.choice(["a", "b", "c"], n),
                          "dx": rng.choice(["x", "y", "z", "w"], n, p=[0.55, 0.25, 0.15, 0.05])})
    l = 2.5
    result = anonymize(Dataset(frame), AnonymizationSettings("dx", "rr", quasi=["sex", "band"],
                                                             options=RRSettings(l=l), seed=3))
    report = build_report(result)
    groups = frame.groupby(["sex", "band"])["dx"]
    largest = groups.agg(lambda s: s.value_counts(normalize=True).max())
    sizes = groups.size()
    over = largest > 1 / l
    sentence = next(f for f in report.findings if f.startswith("Before randomization"))
    assert sentence == (f"Before randomization, {int(over.sum())} of {len(largest)} such groups "
                        f"({_pct(sizes[over].sum() / n)} of the records) were above that bound; the largest risk was "
                        f"{_pct(largest.max())}.")
    bound = next(f for f in report.findings if f.startswith("No group of records"))
    assert f"above 1/l = {_pct(1 / l)}" in bound and f"(largest: {_pct(result.guarantee['max_risk'])})" in bound


def test_rr_comparison_reads_in_words(rr_reports):
    full, public = rr_reports
    text = "\n".join(full.lines)
    for phrase in ("Kullback-Leibler divergence (0 = identical", "uncertainty coefficient: 0 = unrelated",
                   "Counts of any one or two columns together", "Anatomy", "Mondrian"):
        assert phrase in text
    assert not re.search(r"\bKL\b|CUBE|group-by error|uncertainty-coefficient gap", text)
    assert "Mondrian" not in "\n".join(public.lines)


# --- dp-microagg ------------------------------------------------------------------------------------------

def test_dp_findings_match_means_and_spread_computed_here():
    rng = np.random.default_rng(8)
    n = 1_000
    frame = pd.DataFrame({"age": rng.integers(20, 80, n), "dx": rng.choice(["a1", "a2", "b1", "b2"], n)})
    dp = DPSettings(["age", "dx"], epsilon=2.0, k=20, domains={"age": (0, 120)})
    result = anonymize(Dataset(frame), AnonymizationSettings("", "dp-microagg", options=dp, seed=6))
    report = build_report(result)
    x = frame["age"].to_numpy(float)
    y = np.asarray(result.applied.columns["age"], float)
    (age,) = [f for f in report.findings if "of age" in f]
    got = re.search(r"in the release is ([\d,.]+), against ([\d,.]+) in the original", age)
    released_mean, original_mean = (float(g.replace(",", "")) for g in got.groups())
    assert released_mean == pytest.approx(y.mean(), abs=0.06 * max(abs(y.mean() - x.mean()), 0.1) + 0.05)
    assert original_mean == pytest.approx(x.mean(), abs=0.06 * max(abs(y.mean() - x.mean()), 0.1) + 0.05)
    within = float(re.search(r"lie within ±([\d,.]+) of their true value", age).group(1).replace(",", ""))
    assert within == pytest.approx(np.percentile(np.abs(y - x), 95), rel=0.05)
    sd = float(re.search(r"standard deviation of ([\d,.]+)\)", age).group(1))
    assert sd == pytest.approx(x.std(), rel=0.05)
    holds = abs(y.mean() - x.mean()) <= 0.1 * x.std()
    assert ("averages over many records hold" in age) == holds
    (dx,) = [f for f in report.findings if "true dx" in f]
    same = np.mean(frame["dx"].to_numpy() == np.asarray(result.applied.columns["dx"], dtype=object))
    assert dx.startswith(f"{same * 100:.0f} % of the records show their true dx")
    public = build_report(result, public=True)
    assert public.findings == []


def test_dp_measures_in_words(demo):
    report = build_report(anonymize(demo, demo_settings(demo, "dp-microagg", seed=2)))
    text = "\n".join(report.lines)
    assert "Jensen-Shannon divergence: how different the released histogram is" in text
    assert "(0 = same distribution, 1 = disjoint)" in text
    assert not re.search(r"\bRE\b|\bJSD\b", text)


# --- personalized recoding ------------------------------------------------------------------------------

def test_personalized_findings_match_the_choices(demo):
    settings = demo_settings(demo, "personalized", seed=2)
    report = build_report(anonymize(demo, settings))
    values = demo.frame["diagnosis"].dropna().astype(str)
    choice = values.map(settings.choices.value_choices).to_numpy()
    n = len(values)
    shown, alias1, alias2 = ((choice == c).sum() for c in (1, 2, 3))
    first = report.findings[0]
    assert first.startswith(f"{_pct(shown / n)} of the records ({shown:,}) show their diagnosis as it is, "
                            f"{_pct(alias1 / n)} ({alias1:,}) only a more general value (alias1)")
    exact = sorted(v for v, c in settings.choices.value_choices.items() if c == 1 and v in set(values))
    present = values.nunique()
    covered = values.isin(exact).mean()
    assert (f"A recipient can count {len(exact)} of the {present} diagnosis values exactly (together "
            f"{_pct(covered)} of the records)") in report.findings[1]
    codes = len({v for v, c in settings.choices.value_choices.items() if c == 3 and v in set(values)})
    assert any(f"({codes:,} codes in use, one per diagnosis value)" in f for f in report.findings)
    assert any(f.startswith("income is released as 4 numbered categories with secret bounds") for f in report.findings)
    assert build_report(anonymize(demo, settings), public=True).findings == []


def test_personalized_counts_with_a_choice_per_record():
    from ppdp_desktop.core.methods.personalized.report import choice_findings

    codes = np.array([0, 0, 0, 1, 1, 2, 2, 2])  # value 0 all shown; 1 half shown; 2 never
    choices = np.array([1, 1, 1, 1, 3, 2, 2, 3])
    out = choice_findings("dx", codes, choices, 3)
    assert out[0] == ("50 % of the records (4) show their dx as it is, 25 % (2) only a more general value (alias1) "
                      "and 25 % (2) an opaque code (alias2); the sealed key turns the last two back.")
    assert out[1] == ("A recipient can count 1 of the 3 dx values exactly (together 38 % of the records): every record "
                      "holding them shows them as they are. The other values' counts in the release are too low: 80 % "
                      "of their records show a more general value or a code instead.")
    assert "(2 codes in use" in out[3]


# --- partitioning ---------------------------------------------------------------------------------------

def test_partition_finding_names_the_subtables(demo):
    settings = AnonymizationSettings("diagnosis", "partition", ["patient_id", "name"], [],
                                     SensitivitySettings(rho1=0.1, rho2=0.4), seed=2)
    result = anonymize(demo, settings)
    report = build_report(result)
    (entry,) = result.plan.release_json()["sensitive"]
    tables = entry["subtables"]
    sizes = [len(t["values"]) for t in tables if t["values"]]
    assert len(sizes) > 1
    # the demo's diagnoses have records in several sub-tables: their counts are not each sub-table's (issue 28)
    (sentence,) = [f for f in report.findings if f.startswith("Each record carries the number of its sub-table")]
    listed = ", ".join(map(str, sizes[:-1])) + f" and {sizes[-1]}"
    assert f"each of the {len(sizes)} sub-tables ({listed} values" in sentence and "lower bound" in sentence
    baseline = next(line for line in report.lines if line.startswith("Baselines at the same privacy"))
    assert re.search(r"is off on average by \d+\.\d % with uniform perturbation; by \d+\.\d % with Anatomy", baseline)


# --- no internal document names -------------------------------------------------------------------------

@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_no_internal_names_in_what_a_user_reads(demo, method):
    if method == "partition":
        settings = AnonymizationSettings("diagnosis", "partition", ["patient_id", "name"], [],
                                         SensitivitySettings(rho1=0.1, rho2=0.4), seed=2)
    else:
        settings = demo_settings(demo, method, seed=2)
    result = anonymize(demo, settings)
    written = [recipient_readme(release_metadata(result, ","))]  # what the methods write
    shared = []  # the report's common summaries (their wording is the report package's)
    for public in (False, True):
        report = build_report(result, public=public)
        written += report.lines + report.findings + list(report.figures)
        written += [figure.title for figure in report.figures.values()]
        shared += report.privacy_lines() + report.utility_lines()
    for text in written + shared:
        assert not re.search(r"seed 0|SPEC|section ", text), (method, text)
        assert not INTERNAL.search(text), (method, text)
    for text in written:
        assert not ABBREVIATIONS.search(text), (method, text)


def _user_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of ``path`` that are not docstrings (messages, report lines, README text, titles)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_internal_names_in_the_methods_strings():
    """Every message, report line and README text written under core/methods (docstrings may cite sources)."""
    found = [f"{path.relative_to(METHODS_DIR)}:{line}: {text[:80]!r}"
             for path in sorted(METHODS_DIR.rglob("*.py")) for line, text in _user_strings(path)
             if INTERNAL.search(text) or ABBREVIATIONS.search(text)]
    assert not found, "\n".join(found)
