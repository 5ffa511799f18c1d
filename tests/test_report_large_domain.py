"""The report of a large sensitive domain (issue 18, point 3): the per-value table shows the 50 most frequent and
the 50 most protected values and says how many it leaves out; the full table is a CSV appendix inside the package
(listed in SHA256SUMS, checked by ``ppdp verify``) and beside the custodian's report (with the original counts);
a small domain keeps its whole table."""
from __future__ import annotations

import html
import math
import re
import shutil
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.checksums import REPORT_FILES, read_manifest, release_fingerprint
from ppdp_desktop.core.data.formats import unguard_formulas
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.release.package_report import (
    VALUES_FILE,
    check_custodian_report,
    custodian_report_path,
    custodian_values_path,
)
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.files import write_html, write_pdf, write_values_csv
from ppdp_desktop.core.report.outline import Heading, Paragraph, Table, value_blocks
from ppdp_desktop.core.report.values import SHOWN_FREQUENT, SHOWN_PROTECTED, shown_values
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

pypdf = pytest.importorskip("pypdf")
M, N = 300, 3000  # distinct diagnosis codes, records
SPECIAL = {3: "=Q003", 60: "+Q060", 200: "-Q200", 290: "@Q290"}  # a spreadsheet would run these as formulas
TOKEN = re.compile(r"Q\d{3}")  # each value holds exactly one such token


def _names() -> list[str]:
    return [SPECIAL.get(i, f"Q{i:03d}") for i in range(M)]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Zipf-distributed codes, every one present, with two condition columns and an identifier."""
    rng = np.random.default_rng(18)
    codes = np.concatenate([np.arange(M), np.minimum(rng.zipf(1.4, N - M), M) - 1])
    rng.shuffle(codes)
    frame = pd.DataFrame({"id": [f"P{i:05d}" for i in range(N)], "sex": rng.choice(["F", "M"], N),
                          "region": rng.choice(["north", "south", "east", "west"], N),
                          "diagnosis": np.array(_names(), dtype=object)[codes]})
    path = tmp_path_factory.mktemp("data") / "codes.csv"
    frame.to_csv(path, index=False)
    return load_table(path)


@pytest.fixture(scope="module", params=["uniform", "partition"])
def job(request, dataset, tmp_path_factory):
    """One run of ``request.param`` at (rho1, rho2) = (0.1, 0.5), written as a package (no key: the custodian's
    report goes beside the release; sealing a key would only add time)."""
    tmp = tmp_path_factory.mktemp(request.param)
    settings = AnonymizationSettings("diagnosis", request.param, ["id"], [], SensitivitySettings(rho1=0.1, rho2=0.5),
                                     seed=7)
    result = anonymize(dataset, settings)
    report = build_report(result)
    folder = write_release(result, tmp / "rel", reports=[report])
    return SimpleNamespace(result=result, report=report, folder=folder, custodian=custodian_report_path(folder, None))


def _golden(values: list[str], counts, retention, rho2, posterior=None) -> tuple[list[str], list[str]]:
    """The rule in plain Python: the 50 largest counts (ties: domain order), then among the other values with a
    bound the lowest retention first (else the belief closest to its bound, else nothing), ties by rarity."""
    m = len(values)
    frequent = sorted(range(m), key=lambda i: (-counts[i], i))[:SHOWN_FREQUENT]
    rest = [i for i in range(m) if not math.isnan(rho2[i]) and i not in frequent]
    if retention is not None:
        key = lambda i: (retention[i], counts[i], i)  # noqa: E731
    elif posterior is not None:
        key = lambda i: (-posterior[i] / rho2[i], counts[i], i)  # noqa: E731
    else:
        key = lambda i: (counts[i], i)  # noqa: E731
    return [values[i] for i in frequent], [values[i] for i in sorted(rest, key=key)[:SHOWN_PROTECTED]]


def _html_groups(page: str) -> tuple[list[str], list[list[str]], str]:
    """The per-value section of an HTML report: its sub-headings, each table's first column, its closing line."""
    section = page.split("Estimated counts per value</h3>", 1)[1].split("<h3>", 1)[0]
    titles = [html.unescape(t) for t in re.findall(r"<h4>(.*?)</h4>", section)]
    tables = [[html.unescape(c) for c in re.findall(r"<tr><td>(.*?)</td>", t)]
              for t in re.findall(r"<table>.*?</table>", section, flags=re.S)]
    closing = html.unescape(re.findall(r"<p>(.*?)</p>", section)[-1])
    return titles, tables, closing


def _read_csv(path) -> pd.DataFrame:
    """A CSV appendix as a spreadsheet user sees it: the guard in front of formula-like values taken off."""
    table = pd.read_csv(path, encoding="utf-8-sig", dtype={"Value": str, "Status": str}, keep_default_na=False,
                        na_values=[""])
    table["Value"] = unguard_formulas(table[["Value"]])["Value"]
    return table


def _package_csv(folder) -> pd.DataFrame:
    return _read_csv(folder / VALUES_FILE)


def test_the_custodian_table_shows_the_most_frequent_then_the_most_protected(job):
    r = job.report
    assert len(r.values) == M
    rho2 = r.rho2 if r.rho2 is not None else np.full(M, 0.5)  # partition: one pair for every value
    frequent, protected = _golden(r.values, r.original, r.retention, rho2, r.max_posterior)
    assert len(protected) == SHOWN_PROTECTED
    page = job.custodian.read_text(encoding="utf-8")
    titles, tables, closing = _html_groups(page)
    assert tables == [frequent, protected]
    assert titles[0] == "The 50 most frequent values" and titles[1].startswith("The 50 ")
    assert closing == (f"200 of the 300 values are not shown here; the full table, one row per value, is in the CSV "
                       f"file {custodian_values_path(job.custodian).name} (beside this report).")


def test_the_package_report_shows_only_those_values_in_html_and_pdf(job):
    table = _package_csv(job.folder)  # the estimates the package report was made from, one row per value
    counts = table["Estimated"].to_numpy()
    retention = None if table["Kept (p)"].isna().all() else table["Kept (p)"].to_numpy()
    frequent, protected = _golden(list(table["Value"]), counts, retention, table["rho2"].to_numpy())
    page = (job.folder / "report.html").read_text(encoding="utf-8")
    _titles, tables, closing = _html_groups(page)
    assert tables == [frequent, protected]
    assert closing.endswith(f"is in the CSV file {VALUES_FILE} (in the release package).")
    shown = {TOKEN.search(v)[0] for v in frequent + protected}
    text = re.sub(r"data:image/png;base64,[^\"]+", "", page)
    assert set(TOKEN.findall(text)) == shown
    pdf = "\n".join(p.extract_text() or "" for p in pypdf.PdfReader(str(job.folder / "report.pdf")).pages)
    assert set(TOKEN.findall(pdf)) == shown
    assert "200 of the 300 values are not shown here" in pdf


def test_the_package_holds_the_full_table_as_a_checked_csv(job):
    folder = job.folder
    assert VALUES_FILE in read_manifest(folder) and VALUES_FILE in REPORT_FILES
    raw = (folder / VALUES_FILE).read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with the byte-order mark, like the release's CSV
    assert b"\n\"'=Q003\"," in raw and b"\n\"=Q003" not in raw  # no cell a spreadsheet would run
    table = _package_csv(folder)
    assert list(table.columns) == ["Value", "Estimated", "95 % interval low", "95 % interval high", "Kept (p)",
                                   "rho1", "rho2", "Max posterior", "Status"]  # no original counts
    assert list(table["Value"]) == job.report.values and set(job.report.values) == set(_names())
    from ppdp_desktop.core.release.package import read_release
    from ppdp_desktop.core.release.package_report import release_estimates

    estimates = release_estimates(read_release(folder), "diagnosis")
    np.testing.assert_array_equal(table["Estimated"].to_numpy(), estimates["estimate"])
    np.testing.assert_array_equal(table["95 % interval low"].to_numpy(), estimates["low"])
    np.testing.assert_array_equal(table["95 % interval high"].to_numpy(), estimates["high"])
    if job.report.retention is not None:
        np.testing.assert_array_equal(table["Kept (p)"].to_numpy(), job.report.retention)
    assert table["Max posterior"].isna().all()  # computed from the original records: not in the package
    assert (table["rho2"] == 0.5).all()
    # one pair for every value (partitioning too: release.json lists the values above rho1, so the package's table
    # says what the custodian's says): a value held by more than rho1 = 0.1 of the records is outside its bound
    share = job.report.original / job.report.original.sum()
    status = np.where(share > 0.1, "not covered by its bound: held by more than rho1 of the records",
                      "protected (verified)")
    assert (table["Status"].to_numpy() == status).all() and (share <= 0.1).any()


def test_verify_accepts_the_package_and_refuses_an_edited_csv(job, tmp_path, capsys):
    assert main(["verify", str(job.folder)]) == 0
    assert release_fingerprint(job.folder) in (job.folder / "report.html").read_text(encoding="utf-8")
    copy = shutil.copytree(job.folder, tmp_path / "edited")
    path = copy / VALUES_FILE
    path.write_bytes(path.read_bytes().replace(b"(verified)", b"(verifiet)", 1))
    capsys.readouterr()
    assert main(["verify", str(copy)]) != 0
    assert f"{VALUES_FILE} does not match its checksum" in capsys.readouterr().err


def test_the_custodian_csv_has_the_original_counts(job):
    path = custodian_values_path(job.custodian)
    assert path.name == "rel.custodian-report-values.csv" and path.read_bytes().startswith(b"\xef\xbb\xbf")
    table = _read_csv(path)
    assert list(table["Value"]) == job.report.values
    np.testing.assert_array_equal(table["Records"].to_numpy(), job.report.original.astype(np.int64))
    assert table["Records"].sum() == N
    np.testing.assert_array_equal(table["Estimated"].to_numpy(), job.report.reconstructed)
    if job.report.max_posterior is not None:
        np.testing.assert_array_equal(table["Max posterior"].to_numpy(), job.report.max_posterior)


def test_the_custodian_csv_is_replaced_only_as_the_report_is(tmp_path):
    report = tmp_path / "rel.custodian-report.html"
    values = custodian_values_path(report)
    check_custodian_report(report, overwrite=False)  # nothing there yet
    values.write_text("name,notes\nmine,keep\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match="already exists"):
        check_custodian_report(report, overwrite=False)
    with pytest.raises(ReleaseError, match="not a report written by PPDP Desktop"):
        check_custodian_report(report, overwrite=True)
    write_values_csv([_synthetic(20)], values)  # one of ours: replaced under --overwrite, refused without
    check_custodian_report(report, overwrite=True)
    with pytest.raises(ReleaseError, match="already exists"):
        check_custodian_report(report, overwrite=False)


def _synthetic(m: int, seed: int = 0) -> MethodReport:
    """A perturbation report of ``m`` values with varied retention, bounds for most values and posteriors."""
    rng = np.random.default_rng(seed)
    r = MethodReport("finegrain", "Fine-grained perturbation", 0, {"kind": "upward", "verified": True}, [])
    r.values = [f"V{i:05d}" for i in range(m)]
    r.original = np.minimum(rng.zipf(1.3, m), 10_000).astype(float)
    r.n_records = int(r.original.sum())
    r.reconstructed = r.original + rng.normal(0, 2, m)
    r.band_low, r.band_high = r.reconstructed - 3, r.reconstructed + 3
    r.retention = np.round(rng.uniform(0.2, 0.9, m), 2)  # rounded: ties, broken by rarity
    r.rho2 = np.where(rng.random(m) < 0.8, 0.5, np.nan)
    r.max_posterior = rng.uniform(0.05, 0.5, m)
    return r


def test_a_small_domain_keeps_its_whole_table():
    r = _synthetic(40)
    blocks = value_blocks(r, "x.csv")
    tables = [b for b in blocks if isinstance(b, Table)]
    assert len(tables) == 1 and [row[0] for row in tables[0].rows] == r.values  # the domain's order
    assert not [b for b in blocks if isinstance(b, Heading) and b.level == 3]
    assert not [b for b in blocks if isinstance(b, Paragraph) and "not shown" in b.text]


def test_a_domain_of_15000_values_makes_a_short_report(tmp_path):
    r = _synthetic(15_000, seed=1)
    frequent, protected = _golden(r.values, r.original, r.retention, r.rho2)
    shown = shown_values(r)
    assert [[r.values[i] for i in g.indices] for g in shown.groups] == [frequent, protected]
    assert shown.hidden == 15_000 - 100
    context = ReportContext("codes", r.n_records, [("diagnosis", "sensitive")], "diagnosis", values_file="v.csv")
    write_html([r], context, tmp_path / "r.html")  # its time: benchmarks/bench_large_domain.py (m = 15,000)
    write_pdf([r], context, tmp_path / "r.pdf")
    assert write_values_csv([r], tmp_path / "v.csv")
    assert len(pypdf.PdfReader(str(tmp_path / "r.pdf")).pages) < 12  # not 333 pages
    _titles, tables, closing = _html_groups((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert tables == [frequent, protected]  # (the privacy summary above names the value closest to its bound)
    assert closing == "14,900 of the 15,000 values are not shown here; the full table, one row per value, is in " \
                      "the CSV file v.csv."
    table = pd.read_csv(tmp_path / "v.csv", encoding="utf-8-sig")
    assert len(table) == 15_000 and list(table["Records"]) == list(r.original.astype(int))
    np.testing.assert_array_equal(table["Kept (p)"].to_numpy(), r.retention)


def test_the_window_shows_the_shortened_table(qtbot):
    pytest.importorskip("PySide6")
    from ppdp_desktop.gui.pages.report_page import ReportPage
    from ppdp_desktop.gui.state import WizardState

    r = _synthetic(15_000, seed=2)
    frequent, protected = _golden(r.values, r.original, r.retention, r.rho2)
    page = ReportPage(WizardState())
    qtbot.addWidget(page)
    page.show_report(r)
    table = page.value_table
    assert table.rowCount() == 1 + 50 + 1 + 50 + 1  # a title row before each group, a closing row
    column = [table.item(i, 0).text() for i in range(table.rowCount())]
    assert column[1:51] == frequent and column[52:102] == protected
    assert column[0] == "The 50 most frequent values" and table.columnSpan(0, 0) == table.columnCount()
    assert column[-1].startswith("14,900 of the 15,000 values are not shown here")
    page.show_report(_synthetic(30))  # a small report after it: every value, no title rows left behind
    assert table.rowCount() == 30 and table.columnSpan(0, 0) == 1


@pytest.mark.parametrize("job", ["partition"], indirect=True)  # one pair for every value: partitioning only
def test_the_window_states_the_one_pair_of_partitioning(qtbot, job):
    """The window's rho2 column says what the HTML and the PDF say: partitioning's one pair for every value (the
    tables' status says which values, held by more than rho1 of the records, it does not cover), as a per-value
    pair is shown for a value above its rho1."""
    pytest.importorskip("PySide6")
    from ppdp_desktop.gui.pages.report_page import VALUE_COLUMNS, ReportPage, format_number
    from ppdp_desktop.gui.state import WizardState

    page = ReportPage(WizardState())
    qtbot.addWidget(page)
    page.show_report(job.report)
    table, column = page.value_table, VALUE_COLUMNS.index("rho2")
    shown = {table.item(i, 0).text(): table.item(i, column).text() for i in range(table.rowCount())
             if table.item(i, column) is not None and table.columnSpan(i, 0) == 1}
    share = dict(zip(job.report.values, job.report.original / job.report.original.sum()))
    assert shown and set(shown.values()) == {format_number(0.5)}
    assert any(share[value] > 0.1 for value in shown) and any(share[value] <= 0.1 for value in shown)  # rho1 = 0.1
