"""Report files (HTML, PDF) and reports rebuilt from a written release."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.evaluation.workload import count_query_error
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.methods.perturbation.release import release_query_error
from ppdp_desktop.core.release.package import read_release, write_release
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.files import write_html, write_pdf
from ppdp_desktop.core.report.from_release import reports_from_release
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

IDENTIFIERS = ["patient_id", "name"]


@pytest.fixture(scope="module")
def demo():
    return load_table(resource_path(DEMO_DATA))


def _run(demo, method: str):
    settings = AnonymizationSettings(
        "diagnosis", method=method, identifiers=IDENTIFIERS, sensitivity=SensitivitySettings(theta=3), seed=7
    )
    return anonymize(demo, settings)


@pytest.fixture(scope="module")
def finegrain(demo):
    return _run(demo, "finegrain")


@pytest.fixture(scope="module")
def reports(demo, finegrain):
    return [build_report(finegrain), build_report(_run(demo, "uniform"))]


@pytest.fixture(scope="module")
def context(finegrain):
    return ReportContext.from_anonymization(finegrain)


@pytest.fixture(scope="module")
def html_text(reports, context, tmp_path_factory):
    path = tmp_path_factory.mktemp("html") / "report.html"
    calls = []
    write_html(reports, context, path, progress=lambda f, m="": calls.append((f, m)))
    n_figures = sum(len(r.figures) for r in reports)
    assert sum(1 for _, m in calls if m.startswith("Figure")) == n_figures  # one progress report per figure
    assert all(0.0 <= f <= 1.0 for f, _ in calls)
    return path.read_text(encoding="utf-8")


def test_context(context, finegrain):
    assert context.data_label == "patients.csv" and context.n_records == len(finegrain.dataset.frame)
    assert ("patient_id", "identifier") in context.columns and ("diagnosis", "sensitive") in context.columns
    assert context.sensitive == "diagnosis"


def test_html_content(html_text, reports):
    n_figures = sum(len(r.figures) for r in reports)
    assert n_figures >= 5  # uniform perturbation states its one retention p instead of drawing it
    assert html_text.count("<svg") + html_text.count("data:image/png") >= n_figures
    assert "Comparison of the methods" in html_text
    for r in reports:
        assert r.title in html_text
    for word in ("verified", "epsilon", "rho1", "rho2", "Max posterior", "Jensen-Shannon", "KL divergence",
                 "Chi-square", "selectivity 0.1%", "selectivity 0.5%", "selectivity 1.0%", "Kept (p)"):
        assert word in html_text, word
    assert "Hypertension" in html_text  # the per-value table


def test_html_is_self_contained(html_text):
    lowered = html_text.lower()
    assert "http://" not in lowered and "https://" not in lowered
    assert "<link" not in lowered and "<script" not in lowered and "@import" not in lowered
    assert all(ref.startswith("#") for ref in re.findall(r"url\(([^)]*)\)", lowered))  # in-document only
    clip_ids = re.findall(r'<clippath id="([^"]+)"', lowered)
    assert len(clip_ids) == len(set(clip_ids))  # figures inlined together must not share clip-path ids
    for src in re.findall(r'src="([^"]*)"', html_text):
        assert src.startswith("data:"), src
    assert lowered.startswith("<!doctype html>") and "<style>" in lowered


def test_pdf(reports, context, tmp_path):
    pypdf = pytest.importorskip("pypdf")
    path = tmp_path / "report.pdf"
    calls = []
    write_pdf(reports, context, path, progress=lambda f, m="": calls.append(m))
    assert path.read_bytes()[:4] == b"%PDF"
    assert not list(tmp_path.glob(".*partial"))
    n_figures = sum(len(r.figures) for r in reports)
    assert sum(1 for m in calls if m.startswith("Figure")) == n_figures
    reader = pypdf.PdfReader(str(path))
    assert len(reader.pages) >= 1 + n_figures
    text = reader.pages[0].extract_text() or ""
    if text.strip():  # TrueType fonts: the summary page's text can be extracted
        assert reports[0].title in text and "checked before the release was written" in text.replace("\n", " ")


def test_personalized_says_no_guarantee(demo, context, tmp_path):
    recoding = RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)), graded=["income"])
    settings = AnonymizationSettings("diagnosis", method="personalized", identifiers=IDENTIFIERS, options=recoding, seed=7)
    report = build_report(anonymize(demo, settings))
    write_html([report], context, tmp_path / "p.html")
    text = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "Sensitive values (diagnosis): no formal guarantee" in text and 'class="danger"' in text
    assert "NO FORMAL PRIVACY GUARANTEE" in text  # the technical section says it as loudly
    assert text.count("data:image/png") >= len(report.figures)
    write_pdf([report], context, tmp_path / "p.pdf")
    assert (tmp_path / "p.pdf").read_bytes()[:4] == b"%PDF"


def test_reports_from_release_match_build_report(demo, finegrain, reports, tmp_path):
    folder = write_release(finegrain, tmp_path / "release")
    release = read_release(folder)
    calls = []
    rebuilt = reports_from_release(demo.frame, release, progress=lambda f, m="": calls.append(f))
    assert len(rebuilt) == 1 and calls[-1] == 1.0
    r, ref = rebuilt[0], reports[0]
    assert r.values == ref.values
    np.testing.assert_array_equal(r.original, ref.original)
    np.testing.assert_allclose(r.reconstructed, ref.reconstructed, rtol=0, atol=1e-9)
    np.testing.assert_allclose(r.band_low, ref.band_low, atol=1e-9)
    np.testing.assert_allclose(r.band_high, ref.band_high, atol=1e-9)
    np.testing.assert_allclose(r.max_posterior, ref.max_posterior, atol=1e-12)
    assert r.epsilon_ldp == pytest.approx(ref.epsilon_ldp)
    assert r.downward_breaches == ref.downward_breaches
    assert r.record_utility == pytest.approx(ref.record_utility)
    assert r.has_guarantee and r.guarantee["verified"] is True
    work = r.utility.workload
    assert work is not None and all(np.isfinite(work.mean_error)) and min(work.n_queries) > 0
    # same seeded conditions over the same columns: the same figures as the in-memory workload
    np.testing.assert_allclose(work.mean_error, ref.utility.workload.mean_error, rtol=1e-9)
    assert work.n_queries == ref.utility.workload.n_queries
    assert r.utility.jensen_shannon == pytest.approx(ref.utility.jensen_shannon)
    assert set(r.figures) == set(ref.figures)
    context = ReportContext.from_release(release, "patients.csv")
    assert context.sensitive == "diagnosis" and context.n_records == len(demo.frame)
    write_html(rebuilt, context, tmp_path / "rebuilt.html")
    assert "verified" in (tmp_path / "rebuilt.html").read_text(encoding="utf-8")


def test_release_query_error_ignores_row_order():
    rng = np.random.default_rng(3)
    n, m = 20_000, 5
    frame = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.choice(["x", "y", "z"], n), "c": rng.integers(0, 3, n) * 1.5})
    true = rng.integers(0, m, n)
    matrix = np.full((m, m), 0.1) + np.eye(m) * 0.5
    released = np.where(rng.random(n) < 0.5, true, rng.integers(0, m, n))
    expected = count_query_error(frame, true, released, matrix, seed=4)
    order = rng.permutation(n)
    as_text = frame.take(order).astype(str).reset_index(drop=True)
    as_text["c"] = frame["c"].take(order).map(lambda v: f"{v:g}").to_numpy()  # "1.5", "0", "3": as a CSV writes them
    got = release_query_error(frame, true, as_text, released[order], matrix, seed=4)
    assert got.n_queries == expected.n_queries
    np.testing.assert_allclose(got.mean_error, expected.mean_error, rtol=1e-9)


def test_personalized_release(demo, tmp_path):
    recoding = RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)))
    settings = AnonymizationSettings("diagnosis", method="personalized", identifiers=IDENTIFIERS, options=recoding, seed=7)
    folder = write_release(anonymize(demo, settings), tmp_path / "p")
    [report] = reports_from_release(demo.frame, read_release(folder))
    assert not report.has_guarantee and "no formal privacy guarantee" in report.privacy_lines()[0].lower()


def test_figures_are_captioned_by_their_title_not_their_key(reports, context, tmp_path):
    """A figure's caption starts with its title, as the window's tab names it ("Counts."), never its internal key
    ("distribution.")."""
    pypdf = pytest.importorskip("pypdf")
    write_html(reports, context, tmp_path / "r.html")
    write_pdf(reports, context, tmp_path / "r.pdf")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    text = " ".join(" ".join(p.extract_text().split()) for p in pypdf.PdfReader(str(tmp_path / "r.pdf")).pages)
    for shown in (page, text):
        assert "Counts. Original counts and the counts an analyst estimates" in shown
        assert "distribution. " not in shown and "retention. " not in shown
