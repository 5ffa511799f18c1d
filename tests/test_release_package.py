"""The release package: every format round-trips, checksums catch changes, exports are atomic
(exception or cancel leave nothing), nothing secret is inside, and the 95 % intervals cover."""
from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.formats import as_text
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.errors import Cancelled, ReleaseError
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.methods.perturbation.plan import perturb_codes, retention_matrix
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import read_release, write_release
from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings, SensitivitySettings

PASSPHRASE = "correct horse battery"


@pytest.fixture(scope="module")
def demo():
    return load_table(resource_path(DEMO_DATA))


@pytest.fixture(scope="module")
def result(demo):
    settings = AnonymizationSettings("diagnosis", "finegrain", ["patient_id", "name"], ["age", "sex"],
                                     SensitivitySettings(theta=3.0), seed=9)
    return anonymize(demo, settings)


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "sav", "parquet"])
def test_every_format_reads_back_identical_and_verifies(result, tmp_path, fmt):
    folder = write_release(result, tmp_path / "r", fmt=fmt, include_report=False)
    release = read_release(folder)
    pd.testing.assert_frame_equal(release.table, as_text(result.table), check_dtype=False)
    assert release.metadata["data_file"] == f"release.{ {'csv': 'csv', 'xlsx': 'xlsx', 'sav': 'sav', 'parquet': 'parquet'}[fmt] }"
    assert any("upward" in line for line in verify_release(release))


def test_package_contents_readme_report_and_flipped_byte(result, tmp_path):
    folder = write_release(result, tmp_path / "r", key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE)
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["README.txt", "SHA256SUMS", "release.csv", "release.json", "report-values.csv", "report.html",
                     "report.pdf"]
    readme = (folder / "README.txt").read_text()
    assert "ppdp estimate" in readme and "epsilon" in readme and "diagnosis" in readme
    assert (folder / "report.pdf").read_bytes().startswith(b"%PDF")
    verify_release(read_release(folder))
    data = bytearray((folder / "report.html").read_bytes())
    data[len(data) // 2] ^= 0x01
    (folder / "report.html").write_bytes(bytes(data))
    with pytest.raises(ReleaseError, match="report.html does not match its checksum"):
        verify_release(read_release(folder))


def test_zip_package_verifies_and_opens_its_key(result, tmp_path):
    out = write_release(result, tmp_path / "r", zip_file=True, key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE)
    assert out.name == "r.zip" and zipfile.is_zipfile(out) and not (tmp_path / "r").exists()
    verify_release(read_release(out))
    from ppdp_desktop.core.release.lookup import KeyRing

    ring = KeyRing.open(out, tmp_path / "r.ppdpkey", PASSPHRASE)
    assert ring.payload["seed"] == str(result.seed)


def _leftovers(parent):
    return sorted(p.name for p in parent.iterdir())


def test_an_exception_mid_write_leaves_nothing(result, tmp_path, monkeypatch):
    import ppdp_desktop.core.report.files as document

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(document, "write_pdf", broken)
    with pytest.raises(OSError):
        write_release(result, tmp_path / "r", key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE)
    assert _leftovers(tmp_path) == []


def test_a_cancel_mid_export_leaves_nothing(result, tmp_path):
    token = CancelToken()

    def progress(fraction, message=""):
        if fraction > 0.4:
            token.cancel()

    with pytest.raises(Cancelled):
        write_release(result, tmp_path / "r", zip_file=True, key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE,
                      progress=progress, cancel=token)
    assert _leftovers(tmp_path) == []


def test_an_existing_release_is_never_overwritten(result, tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "mine.txt").write_text("keep")
    with pytest.raises(ReleaseError, match="already exists"):
        write_release(result, tmp_path / "r")
    assert (tmp_path / "r" / "mine.txt").read_text() == "keep"


def test_no_secret_in_any_file_of_a_personalized_package(demo, tmp_path):
    settings = AnonymizationSettings(
        "diagnosis", "personalized", ["patient_id", "name"], [],
        choices=ChoiceSettings(default_choice=3),
        options=RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)), graded=["income"], categories=4),
        seed=12345678901234567890)
    personalized = anonymize(demo, settings)
    folder = write_release(personalized, tmp_path / "r", key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE)
    texts = {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix != ".pdf"}
    from pypdf import PdfReader

    texts["report.pdf"] = "\n".join(page.extract_text() for page in PdfReader(folder / "report.pdf").pages).encode()
    everything = b"\n".join(texts.values())
    key = personalized.key_payload()
    for identifier in list(demo.frame["patient_id"][:500]) + list(demo.frame["name"][:500]):
        assert identifier.encode() not in everything
    for code, value in key["aliases"]["diagnosis"]["alias2"].items():  # codes are published, meanings never
        assert f"{code}: {value}".encode() not in everything and f"{code},{value}".encode() not in everything
    for name, blob in texts.items():
        if name not in ("release.csv",):
            for value in demo.frame["diagnosis"].unique():
                assert value.encode() not in blob, (name, value)  # choice 3 everywhere: no real value published
    for lo, hi in key["graded"]["income"]["bounds"]:
        for bound in (lo, hi):
            assert f"{bound:.1f}".encode() not in texts["release.json"] + texts["README.txt"] + texts["report.html"]
    assert key["seed"].encode() not in everything


def test_the_95_percent_intervals_cover_about_95_percent():
    """2,000 intervals (400 perturbations x 5 values): coverage within 0.95 +- 0.025 (about 3.5
    binomial standard deviations, allowing for the correlation between values of one run)."""
    rng = np.random.default_rng(77)
    counts = np.array([3000, 1500, 800, 400, 300])
    codes = np.repeat(np.arange(5), counts).astype(np.int32)
    retention = np.array([0.6, 0.5, 0.4, 0.35, 0.3])
    matrix = retention_matrix(retention)
    hits = []
    for _ in range(400):
        observed = np.bincount(perturb_codes(codes, retention, rng), minlength=5).astype(float)
        estimate = reconstruction.inverse(observed, matrix)
        half = 1.96 * np.sqrt(np.diag(reconstruction.inverse_covariance(observed, matrix)))
        hits.append(np.abs(estimate - counts) <= half)
    coverage = np.mean(hits)
    assert 0.925 <= coverage <= 0.975, coverage


def test_cli_formats_zip_and_report_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    assert main(["demo", "--out", str(tmp_path / "r"), "--format", "parquet", "--zip", "--seed", "3"]) == 0
    assert (tmp_path / "r.zip").is_file() and (tmp_path / "r.ppdpkey").is_file()
    assert main(["verify", str(tmp_path / "r.zip")]) == 0
    assert main(["report", str(resource_path(DEMO_DATA)), str(tmp_path / "r.zip"),
                 "--out", str(tmp_path / "rep.html"), "--pdf", str(tmp_path / "rep.pdf")]) == 0
    html = (tmp_path / "rep.html").read_text()
    assert "data:image/png" in html and "http://" not in html
    assert (tmp_path / "rep.pdf").read_bytes().startswith(b"%PDF")
    assert main(["report", str(resource_path(DEMO_DATA)), str(tmp_path / "r.zip"), "--out", str(tmp_path / "rep.html")]) == 3
    assert "already exists" in capsys.readouterr().err


def test_spss_labels_of_the_input_reach_the_spss_release(tmp_path):
    import pyreadstat

    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"id": [f"P{i}" for i in range(300)], "sex": rng.choice([1.0, 2.0], 300),
                          "dx": rng.choice(["flu", "cold", "hiv"], 300, p=[0.6, 0.3, 0.1])})
    source = tmp_path / "in.sav"
    pyreadstat.write_sav(frame, str(source), column_labels={"sex": "Sex at birth"},
                         variable_value_labels={"sex": {1.0: "Male", 2.0: "Female"}})
    dataset = load_table(source)
    settings = AnonymizationSettings("dx", "uniform", ["id"], ["sex"], SensitivitySettings(theta=3.0), seed=1)
    folder = write_release(anonymize(dataset, settings), tmp_path / "r", fmt="sav", include_report=False)
    raw, meta = pyreadstat.read_sav(str(folder / "release.sav"), apply_value_formats=False)
    assert meta.variable_value_labels["sex"] == {1.0: "Male", 2.0: "Female"}
    assert meta.column_names_to_labels["sex"] == "Sex at birth"
    assert set(raw["sex"].dropna()) <= {1.0, 2.0}
    assert set(read_release(folder).table["sex"]) <= {"Male", "Female"}
