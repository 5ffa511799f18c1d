"""One publish pipeline (issue 29.2): the in-memory and the streamed job publish through the same steps, so both
write a zipped package and the custodian's "does my analysis survive?" section; ``ppdp verify`` accepts both, and
a failure while zipping a streamed release leaves nothing behind."""
from __future__ import annotations

import html
import io
import re
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.progress import CancelToken, no_progress
from ppdp_desktop.core.release import pipeline
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

PASSPHRASE = "correct horse battery staple zebra"
JOB = ["--sensitive", "diagnosis", "--identifier", "patient_id,name", "--method", "uniform", "--theta", "3",
       "--seed", "5", "--quiet"]


@pytest.fixture(scope="module")
def demo_slice(tmp_path_factory) -> Path:
    """The first 1,500 records of the demo data (the whole file would make every report slower, not the test
    stronger)."""
    path = tmp_path_factory.mktemp("pipeline") / "patients.csv"
    with open(resource_path(DEMO_DATA), encoding="utf-8") as source, open(path, "w", encoding="utf-8") as target:
        for i, line in enumerate(source):
            if i > 1500:
                break
            target.write(line)
    return path


def _anonymize(data: Path, out: Path, *extra: str) -> int:
    return main(["anonymize", str(data), "--out", str(out), *JOB, *extra])


def _zipped_data(archive: Path) -> bytes:
    with zipfile.ZipFile(archive) as zipped:
        return zipped.read("release.csv")


def test_a_streamed_release_can_be_zipped_and_verifies(demo_slice, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    key = tmp_path / "streamed.ppdpkey"
    assert _anonymize(demo_slice, tmp_path / "streamed", "--streaming", "--chunk-size", "400", "--zip",
                      "--key", str(key)) == 0
    archive = tmp_path / "streamed.zip"
    assert archive.is_file() and key.is_file() and not (tmp_path / "streamed").exists()
    with zipfile.ZipFile(archive) as zipped:
        names = set(zipped.namelist())
    assert {"release.csv", "release.json", "README.txt", "SHA256SUMS", "report.html", "report.pdf"} <= names
    assert (tmp_path / "streamed.custodian-report.html").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left
    assert main(["verify", str(archive)]) == 0
    # the same records as the in-memory job's zip, byte for byte (the zip holds what the folder would)
    assert _anonymize(demo_slice, tmp_path / "memory", "--in-memory", "--zip", "--no-report") == 0
    assert _zipped_data(archive) == _zipped_data(tmp_path / "memory.zip")


def test_a_streamed_release_trains_the_models_on_its_sample_and_says_so(demo_slice, tmp_path, monkeypatch):
    monkeypatch.setattr("ppdp_desktop.core.streaming.sample.REPORT_SAMPLE", 600)
    assert _anonymize(demo_slice, tmp_path / "rel", "--streaming", "--chunk-size", "500",
                      "--model-target", "sex") == 0
    custodian = html.unescape((tmp_path / "rel.custodian-report.html").read_text(encoding="utf-8"))
    assert "Does my analysis survive?" in custodian and "A decision tree predicting sex is right for" in custodian
    found = re.search(r"random sample of ([\d,]+) of the file's ([\d,]+) records", custodian)
    assert found, "the report must say the models saw a sample only"
    held, total = (int(g.replace(",", "")) for g in found.groups())
    assert total == 1500 and 400 <= held <= 800  # about REPORT_SAMPLE of the file's records, not all of them
    trained = re.search(r"Trained on ([\d,]+) and tested on ([\d,]+) records", custodian)
    assert trained and sum(int(g.replace(",", "")) for g in trained.groups()) == held
    assert "Does my analysis survive?" not in (tmp_path / "rel" / "report.html").read_text(encoding="utf-8")
    assert main(["verify", str(tmp_path / "rel")]) == 0


def test_an_in_memory_release_trains_on_every_record_and_says_no_sample(demo_slice, tmp_path):
    assert _anonymize(demo_slice, tmp_path / "rel", "--in-memory", "--model-target", "sex") == 0
    custodian = html.unescape((tmp_path / "rel.custodian-report.html").read_text(encoding="utf-8"))
    trained = re.search(r"Trained on ([\d,]+) and tested on ([\d,]+) records", custodian)
    assert trained and sum(int(g.replace(",", "")) for g in trained.groups()) == 1500
    assert "of the file's" not in custodian


def test_streaming_still_refuses_what_needs_the_whole_table(demo_slice, tmp_path, capsys):
    assert _anonymize(demo_slice, tmp_path / "a", "--streaming", "--format", "parquet") == 2
    assert "--format parquet cannot go with streaming" in capsys.readouterr().err
    assert _anonymize(demo_slice, tmp_path / "b", "--streaming", "--utility") == 2
    assert "--utility cannot go with streaming" in capsys.readouterr().err
    assert _anonymize(demo_slice, tmp_path / "c", "--streaming", "--model-target", "nope") == 2
    assert "--model-target 'nope' is not a column" in capsys.readouterr().err
    assert _anonymize(demo_slice, tmp_path / "d", "--streaming", "--model-target", "sex", "--no-report") == 2
    assert "--no-report" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # refused before any work


def test_a_failure_while_zipping_a_streamed_release_leaves_nothing(demo_slice, tmp_path, monkeypatch, capsys):
    data = tmp_path / "patients.csv"
    shutil.copyfile(demo_slice, data)

    def broken(folder: Path, target: Path) -> None:
        target.write_bytes(b"PK partial")
        raise OSError(28, "No space left on device", str(target))

    monkeypatch.setattr(pipeline, "zip_folder", broken)
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    assert _anonymize(data, tmp_path / "rel", "--streaming", "--zip", "--no-report", "--key",
                      str(tmp_path / "rel.ppdpkey")) != 0
    assert "Nothing was published" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["patients.csv"]
    assert len(pd.read_csv(data)) == 1500  # the input untouched


def test_the_windows_export_of_a_streamed_run_goes_through_the_pipeline_and_can_be_zipped(demo_slice, tmp_path,
                                                                                            monkeypatch):
    from ppdp_desktop.core.jobs import export_job, load_job
    from ppdp_desktop.core.streaming.sample import SampledAnonymization
    from ppdp_desktop.core.streaming.window import run_streamed

    monkeypatch.setenv("PPDP_AVAILABLE_MEMORY", "1000")  # the window streams the file
    dataset = load_job(demo_slice, {}, no_progress, CancelToken())
    settings = AnonymizationSettings("diagnosis", "uniform", ["patient_id", "name"], [], SensitivitySettings(theta=3.0),
                                     seed=5)
    run = run_streamed(dataset, settings, no_progress, CancelToken())  # the run page's job, without its report
    assert isinstance(run, SampledAnonymization)
    with pytest.raises(ParameterError, match="written as CSV"):
        export_job(run, tmp_path / "p", None, None, False, no_progress, CancelToken(), fmt="parquet")
    out = export_job(run, tmp_path / "rel", tmp_path / "rel.ppdpkey", PASSPHRASE, False, no_progress,
                     CancelToken(), zip_file=True, bom=True)
    assert out == tmp_path / "rel.zip" and out.is_file() and (tmp_path / "rel.ppdpkey").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel.custodian-report-values.csv",
                                                          "rel.custodian-report.html", "rel.ppdpkey", "rel.zip"]
    assert main(["verify", str(out)]) == 0
    assert len(pd.read_csv(io.BytesIO(_zipped_data(out)), encoding="utf-8-sig")) == 1500  # every record, not the sample
