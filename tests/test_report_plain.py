"""The report's plain first page, its A4 PDF and the release fingerprint (issue 17, points 1 and 4)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.checksums import release_fingerprint
from ppdp_desktop.core.demo import demo_settings
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.report.changes import percent
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.files import write_html, write_pdf
from ppdp_desktop.core.report.summary import count_sentences, first_page

pypdf = pytest.importorskip("pypdf")
PASSPHRASE = "correct horse battery staple"


@pytest.fixture(scope="module")
def demo(demo_data):
    return demo_data


@pytest.fixture(scope="module")
def uniform(demo):
    return anonymize(demo, demo_settings(demo, "uniform", seed=11))


def _report(values, original, estimate, low, high) -> MethodReport:
    r = MethodReport("uniform", "Uniform perturbation", int(sum(original)), {"kind": "none"}, [])
    r.values = list(values)
    r.original = np.asarray(original, float)
    r.reconstructed, r.band_low, r.band_high = (np.asarray(a, float) for a in (estimate, low, high))
    return r


def test_count_sentences_golden():
    # shares 50 %, 30 %, 15 %, 4 %, 1 %; relative half-widths 10 %, 20 %, 40 %, 150 %, 300 %
    original = [5000, 3000, 1500, 400, 100]
    half = [500, 600, 600, 600, 300]
    r = _report("abcde", original, original, np.subtract(original, half), np.add(original, half))
    assert count_sentences(r, "diagnosis") == [
        "Counts of diagnosis values held by at least 20 % of records can be estimated from the release within "
        "±20 % (95 % interval).",
        "Below 10 % of records they cannot be estimated from this release: the uncertainty is larger than the "
        "count itself.",
    ]


def test_count_sentences_all_values_and_none():
    original = [600, 400]
    r = _report("ab", original, original, [570, 380], [630, 420])
    assert count_sentences(r, "sex") == ["Counts of all sex values can be estimated from the release within ±5 % "
                                         "(95 % interval)."]
    wide = _report("ab", original, original, [0, 0], [1500, 1200])
    sentences = count_sentences(wide, "sex")
    assert sentences[0].startswith("No single sex value count can be estimated within ±25 %; the closest, 'a', "
                                   "within ±150 %")
    assert sentences[1].startswith("Below 50 % of records they cannot be estimated")


def test_first_page_golden_on_the_demo(uniform):
    report = build_report(uniform)
    context = ReportContext.from_anonymization(uniform)
    page = first_page([report], context.changes, context.n_records, context.sensitive)
    true, released = uniform.applied.codes["diagnosis"]
    replaced = percent(float(np.mean(true != released)))
    assert page.released[:4] == [
        "20,000 records and 7 of 9 columns were released.",
        "Method: Uniform perturbation.",
        "Removed: patient_id (identifier), name (identifier). Each record carries a random pseudonym instead; only "
        "the sealed key links it back.",
        f"diagnosis (sensitive): {replaced} of the values were deliberately replaced by random ones; the rest are "
        "the original values, and no one can tell which is which.",
    ]
    assert page.released[4] == "Released unchanged: age, sex, postcode, admission_year, length_of_stay, income."
    (title, (sensitive, risk)), = page.verdicts
    assert sensitive.level == "ok" and sensitive.text.startswith(
        "Sensitive values (diagnosis): protected, checked before the release was written. Someone who was at most ")
    rho2 = report.rho2[~np.isnan(report.rho2)]
    assert f"cannot become more than {percent(rho2.min())} to {percent(rho2.max())} (depending on the value) sure" \
        in sensitive.text
    assert risk.level == "danger" and risk.text.startswith("Re-identification: NOT protected")
    (_, sentences), = page.good_for
    work = report.utility.workload
    at = list(work.selectivity).index(0.01)
    assert sentences[-1] == (
        "A count of records with one diagnosis value and one to three conditions on other columns (for example sex "
        f"and region) that covers at least 1 % of the records is off by {percent(work.mean_error[at])} on average "
        f"({work.n_queries[at]:,} such test queries).")
    assert any(s.startswith("Counts of diagnosis values held by at least") or s.startswith("No single diagnosis")
               for s in sentences)


def test_every_shown_estimate_lies_in_its_interval(uniform):
    report = build_report(uniform)
    assert (report.reconstructed >= 0).all()
    assert (report.band_low <= report.reconstructed).all() and (report.reconstructed <= report.band_high).all()


def test_the_package_reports_are_a4_readable_and_carry_the_fingerprint(uniform, tmp_path):
    folder = write_release(uniform, tmp_path / "rel", key_path=tmp_path / "rel.ppdpkey", passphrase=PASSPHRASE)
    fingerprint = release_fingerprint(folder)
    assert re.fullmatch(r"[0-9a-f]{64}", fingerprint)
    reader = pypdf.PdfReader(str(folder / "report.pdf"))
    assert len(reader.pages) >= 3
    for number, page in enumerate(reader.pages, 1):
        assert (round(float(page.mediabox.width)), round(float(page.mediabox.height))) == (595, 842)  # A4
        text = page.extract_text() or ""
        assert f"page {number} of {len(reader.pages)}" in text
        assert fingerprint in text.replace("\n", "")
    first = reader.pages[0].extract_text().replace("\n", " ")
    assert "What was released" in first and "What the release is good for" in first
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert fingerprint in html
    custodian = (tmp_path / "rel.custodian-report.html").read_text(encoding="utf-8")
    assert fingerprint in custodian


def test_a_long_table_splits_across_pages_with_its_header_repeated(demo, tmp_path):
    frame = demo.frame.copy()
    frame["diagnosis"] = [f"code {i % 150:03d}" for i in range(len(frame))]  # 150 values: a table of pages
    from dataclasses import replace

    dataset = replace(demo, frame=frame)
    result = anonymize(dataset, demo_settings(dataset, "uniform", seed=3))
    report = build_report(result)
    path = tmp_path / "long.pdf"
    write_pdf([report], ReportContext.from_anonymization(result, "f" * 64), path)
    reader = pypdf.PdfReader(str(path))
    pages = [p.extract_text() or "" for p in reader.pages]
    with_rows = [t for t in pages if re.search(r"code \d{3}", t) and "95 % interval" in t]
    assert len(with_rows) >= 3  # the 150-row table spans pages, each with the header again
    shown = set().union(*(re.findall(r"code \d{3}", t) for t in pages))
    assert len(shown) == 150


def test_no_internal_document_names_where_a_user_reads(uniform, tmp_path):
    report = build_report(uniform)
    write_html([report], ReportContext.from_anonymization(uniform), tmp_path / "r.html")
    text = re.sub(r"<[^>]+>", " ", (tmp_path / "r.html").read_text(encoding="utf-8"))
    text = re.sub(r"data:image/png;base64,\S+", "", text)
    for word in (r"\bseed 0", r"\bSPEC\b", r"\bsection \d", r"\bseed\b"):
        assert not re.search(word, text, flags=re.I), word


def test_the_rr_report_has_figures_and_the_release_copy_shows_only_released_data(demo):
    result = anonymize(demo, demo_settings(demo, "rr", seed=1))
    full, public = build_report(result), build_report(result, public=True)
    randomized = [d.attribute for d, _role, _p in result.plan._randomized()]
    assert randomized and "sex" not in randomized  # the optimizer kept sex (p = 1): not drawn as randomized
    for report in (full, public):
        names = [n for n in report.figures if n.split(" (")[0] in randomized]
        assert len(names) == len(randomized)
        assert not any(n.startswith("sex (") for n in report.figures)
    assert "risk per group" in full.figures and "risk per group" not in public.figures
    for m in public.marginals:
        assert m.original is None
        domain = next(d for d in result.plan.qi if d.attribute == m.attribute)
        released = result.table[m.attribute].astype(str).value_counts()
        assert [released.get(v, 0) for v in m.values] == list(m.released)  # what the figure shows: the release
        assert (m.low <= m.estimate).all() and (m.estimate <= m.high).all()
        assert len(m.values) == domain.m
    assert any("Before randomization" in f for f in full.findings) and not public.findings


@pytest.mark.parametrize("method", ["uniform", "finegrain", "rr", "personalized", "dp-microagg"])
def test_every_method_reads_without_internal_document_names(demo, method, tmp_path):
    result = anonymize(demo, demo_settings(demo, method, seed=2))
    report = build_report(result)
    assert report.figures
    write_html([report], ReportContext.from_anonymization(result), tmp_path / "r.html")
    text = re.sub(r"data:image/png;base64,[^\"]+", "", (tmp_path / "r.html").read_text(encoding="utf-8"))
    text = re.sub(r"<[^>]+>", " ", text)
    for word in (r"\bseed\b", r"\bSPEC\b", r"\bsection \d"):
        assert not re.search(word, text, flags=re.I), (method, word)
    page = first_page([report], ReportContext.from_anonymization(result).changes, len(result.table), "x")
    assert page.good_for[0][1]  # something the release is good for, in words


def test_a_report_rebuilt_from_a_release_carries_its_fingerprint(uniform, tmp_path):
    from ppdp_desktop.cli import main

    folder = write_release(uniform, tmp_path / "rel")
    data = tmp_path / "data.csv"
    uniform.dataset.frame.to_csv(data, index=False)
    assert main(["report", str(data), str(folder), "--out", str(tmp_path / "r.html")]) == 0
    assert release_fingerprint(folder) in (tmp_path / "r.html").read_text(encoding="utf-8")
    # the full per-value table beside it, one row per value of the release's domain
    appendix = pd.read_csv(tmp_path / "r-values.csv", encoding="utf-8-sig", keep_default_na=False)
    assert len(appendix) == len(uniform.plan.domain.values) and "Records" in appendix.columns
