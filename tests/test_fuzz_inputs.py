"""The fail-closed battery, round 2 (issue 32, points 10, 14, 15): JSON bombs in every JSON the app reads (a
project, release.json, SIGNATURE, a hierarchy), a NUL in a path, encodings that are not text codecs, a
ten-million-character cell with reports on, projects that would drop a setting silently, and the minor
refusals that misled. Each ends in one ``ppdp: error:`` line (never exit 70, never a traceback) or, where the
input is fine, in a release. (Releases: test_fuzz_releases.py.)"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_fuzz_releases import _refused, _run  # one CLI runner and one-line refusal check for both batteries

from ppdp_desktop.cli import main
from ppdp_desktop.core.project import Project

PASSPHRASE = "correct horse battery staple 16"
NUMBER = "9" * 5000
DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    import os

    folder = tmp_path_factory.mktemp("inputs")
    rng = np.random.default_rng(6)
    n = 200
    pd.DataFrame({"patient": [f"P{i:04d}" for i in range(n)], "sex": rng.choice(["F", "M"], n),
                  "age": rng.integers(20, 90, n),
                  "diagnosis": rng.choice(["flu", "asthma", "gout", "cancer"], n, p=[0.5, 0.3, 0.15, 0.05])}
                 ).to_csv(folder / "d.csv", index=False)
    os.environ["PPDP_PASSPHRASE"] = PASSPHRASE
    assert main(["anonymize", str(folder / "d.csv"), "--out", str(folder / "rel"), "--sensitive", "diagnosis",
                 "--identifier", "patient", "--rho1", "0.1", "--rho2", "0.6", "--no-report"]) == 0
    return folder


@pytest.fixture
def work(base: Path, tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    shutil.copytree(base / "rel", tmp_path / "rel")
    shutil.copy(base / "d.csv", tmp_path / "d.csv")
    return tmp_path




def _project(work: Path, **fields) -> str:
    project = Project(data_path=str(work / "d.csv"), roles={"patient": "identifier", "diagnosis": "sensitive"},
                      method="uniform", rho1=0.1, rho2=0.6, theta=None)
    return json.dumps({**project.to_json(), **fields})


def _resum(release: Path) -> None:
    names = sorted(p.name for p in release.iterdir() if p.name not in ("SHA256SUMS", "SIGNATURE"))
    (release / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256((release / n).read_bytes()).hexdigest()}  {n}\n" for n in names), encoding="utf-8")


# --- point 10: JSON within bounds, everywhere ----------------------------------------------------------------


PROJECTS = {
    "a 5,000-digit number": (lambda w: _project(w).replace('"default_choice": 2', f'"default_choice": {NUMBER}'),
                             "a number of 5,000 characters"),
    "deep nesting": (lambda w: _project(w).replace('"options": {}', f'"options": {DEEP}'), "nested more than"),
    "NaN": (lambda w: _project(w).replace('"rho1": 0.1', '"rho1": NaN'), "NaN, which is not a JSON value"),
    "a NUL in the data path": (lambda w: _project(w, data_path=str(w / "d\u0000.csv")), "NUL character"),
    "a NUL in the key path": (lambda w: _project(w, key_path="k\u0000.key"), "NUL character"),
    "binary junk": (lambda w: "\udcff".join(["x"] * 3), "not UTF-8"),
    "a second sensitive column": (lambda w: _project(w, roles={"diagnosis": "sensitive", "sex": "sensitive"}),
                                  "marks 'sex' sensitive besides 'diagnosis'"),
    "an unknown field": (lambda w: _project(w, requre_signing=True), "unknown field 'requre_signing'"),
    "an unknown setting": (lambda w: _project(w, protection={"k": 5, "supression": 0.1}),
                           "unknown setting 'supression'"),
}


def test_project_files_out_of_bounds_are_refused_in_one_line(work: Path, capsys) -> None:
    """ppdp run on each: a 5,000-digit number, deep nesting and a NUL in a path ended in exit 70 (points 10, 14)."""
    for case, (make, fragment) in PROJECTS.items():
        path = work / "p.ppdp"
        text = make(work)
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        code, _out, err = _run(capsys, ["run", path, "--out", work / "out"])
        _refused(code, err, fragment)
        assert "p.ppdp" in err and not (work / "out").exists(), case


def test_a_project_file_with_a_byte_order_mark_runs(work: Path, capsys) -> None:
    (work / "p.ppdp").write_bytes(b"\xef\xbb\xbf" + _project(work).encode("utf-8"))
    code, _out, err = _run(capsys, ["run", work / "p.ppdp", "--out", work / "out", "--key", work / "out.key"])
    assert code == 0, err


RELEASE_JSON = {
    "a 5,000-digit number": (lambda text: text.replace('"n_records": 200', f'"n_records": {NUMBER}'),
                             "a number of 5,000 characters"),
    "deep nesting": (lambda text: text.replace('"parameters": {', f'"deep": {DEEP}, "parameters": {{'),
                     "nested more than"),
    "a NUL in data_file": (lambda text: text.replace('"data_file": "release.csv"', '"data_file": "release\\u0000.csv"'),
                           "field 'data_file'"),
    "a path in data_file": (lambda text: text.replace('"data_file": "release.csv"', '"data_file": "../d.csv"'),
                            "field 'data_file'"),
}


def test_release_json_out_of_bounds_is_refused_by_every_reader(work: Path, capsys) -> None:
    original = (work / "rel" / "release.json").read_text(encoding="utf-8")
    for case, (change, fragment) in RELEASE_JSON.items():
        changed = change(original)
        assert changed != original, case
        (work / "rel" / "release.json").write_text(changed, encoding="utf-8")
        _resum(work / "rel")
        for argv in (["verify", work / "rel"], ["estimate", work / "rel", "--sensitive", "diagnosis"],
                     ["risk", work / "rel", "--quasi", "sex"]):
            code, _out, err = _run(capsys, argv)
            _refused(code, err, fragment, codes=(1,))


def test_a_deeply_nested_signature_is_refused(work: Path, capsys) -> None:
    (work / "rel" / "SIGNATURE").write_text(DEEP, encoding="utf-8")
    code, _out, err = _run(capsys, ["verify", work / "rel"])
    _refused(code, err, "SIGNATURE: nested more than", codes=(1,))


def test_a_hierarchy_json_out_of_bounds_is_refused(work: Path, capsys) -> None:
    for text, fragment in ((DEEP, "nested more than"), (NUMBER, "a number of 5,000 characters")):
        (work / "age.json").write_text(text, encoding="utf-8")
        code, _out, err = _run(capsys, ["anonymize", work / "d.csv", "--out", work / "out", "--sensitive", "diagnosis",
                                        "--rho1", "0.1", "--rho2", "0.6", "--quasi", "sex", "--k-anonymity", "2",
                                        "--hierarchy", f"sex={work / 'age.json'}", "--no-report"])
        _refused(code, err, fragment)


@pytest.mark.parametrize("encoding", ["punycode", "idna", "utf_8\x00", "raw_unicode_escape"])
def test_encodings_that_are_not_text_codecs_are_usage_errors(work: Path, capsys, encoding: str) -> None:
    code, _out, err = _run(capsys, ["risk", work / "d.csv", "--quasi", "sex", "--encoding", encoding])
    _refused(code, err, "is not a known text encoding", codes=(2,))


def test_a_ten_million_character_sensitive_cell_with_reports_on(work: Path, capsys) -> None:
    """The report's figure drew the value as a label (FreeType's raster overflowed) and its PDF table wrapped it
    into a row taller than a page: labels are cut, cells shortened; the HTML and the CSV keep the value whole.
    Ten million characters are now refused by the cell limit (``test_fuzz_files``); the largest cell allowed,
    1 Mi characters, overflowed the raster all the same, and is what is reported on here."""
    from ppdp_desktop.core.data.cell_limit import MAX_CELL_CHARS

    table = pd.read_csv(work / "d.csv")
    table.loc[3, "diagnosis"] = "x" * MAX_CELL_CHARS
    table.to_csv(work / "long.csv", index=False)
    code, _out, err = _run(capsys, ["anonymize", work / "long.csv", "--out", work / "out", "--sensitive", "diagnosis",
                                    "--identifier", "patient", "--rho1", "0.1", "--rho2", "0.6"])
    assert code == 0, err[-2000:]
    assert (work / "out" / "report.pdf").stat().st_size > 0


# --- point 15: the minor refusals, said truly ------------------------------------------------------------------


def test_lookup_value_nan_is_refused_without_a_numpy_warning(work: Path, capsys) -> None:
    out, key = work / "graded", work / "graded.key"
    assert main(["anonymize", str(work / "d.csv"), "--out", str(out), "--key", str(key), "--sensitive", "diagnosis",
                 "--identifier", "patient", "--method", "personalized", "--graded", "age", "--no-report"]) == 0
    capsys.readouterr()
    import warnings

    for value in ("nan", "inf", "-inf"):
        with warnings.catch_warnings(record=True) as caught:  # numpy's "invalid value encountered in cast"
            warnings.simplefilter("always")
            code, _out, err = _run(capsys, ["lookup", out, key, "--attribute", "age", f"--value={value}"])
        _refused(code, err, f"{value!r} is not a graded value of 'age'", codes=(2,))
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]


def test_a_file_named_like_a_url_is_read_as_the_local_file(work: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(work)
    ours = pd.DataFrame({"sex": ["F", "M", "F", "M"], "diagnosis": ["flu", "gout", "flu", "asthma"]})
    other = pd.DataFrame({"sex": ["X", "X", "X", "X"], "diagnosis": ["none"] * 4})
    ours.to_excel(work / "tmp.xlsx", index=False)
    (work / "tmp.xlsx").rename(work / "file:x.xlsx")
    other.to_excel(work / "x.xlsx", index=False)  # what pandas opened for "file:x.xlsx"
    from ppdp_desktop.core.data.loading import load_table

    assert load_table("file:x.xlsx").frame["sex"].tolist() == ["F", "M", "F", "M"]


def test_misleading_messages_say_what_is_wrong(work: Path, capsys) -> None:
    cases = [
        (["risk", work / "d.csv", "--quasi", "sex", "--sep", ",", "--decimal", ","], "also the separator", (2,)),
        (["anonymize", work / "d.csv", "--sep", ";", "--out", work / "o", "--sensitive", "diagnosis", "--identifier",
          "patient", "--rho1", "0.1", "--rho2", "0.6", "--no-report"], "the file is separated by ','", (3,)),
        (["anonymize", work / "d.csv", "--out", work / "o", "--method", "rr", "--quasi", "sex", "--l", "5",
          "--sensitive", "diagnosis", "--no-report"], "--l 5 is more than the 4 values of 'diagnosis'", (2,)),
    ]
    for argv, fragment, codes in cases:
        code, _out, err = _run(capsys, argv)
        _refused(code, err, fragment, codes)
        assert not (work / "o").exists()


def test_a_wide_header_is_counted_whole(work: Path, capsys) -> None:
    """A header longer than the 64 KiB sniffing sample was cut there (100,000 columns reported as 10,950)."""
    n = 15_000  # about 90 KB of header
    (work / "wide.csv").write_text(",".join(f"c{i}" for i in range(n)) + "\n" + ",".join("1" * n) + "\n"
                                   + ",".join("2" * n) + "\n", encoding="utf-8")
    code, out, err = _run(capsys, ["risk", work / "wide.csv", "--quasi", "c1"])
    assert code == 0 and "Re-identification risk of wide.csv on c1" in out, err


def test_a_record_longer_than_the_preview_is_named_under_streaming(work: Path, capsys) -> None:
    (work / "long.csv").write_text("sex,diagnosis,note\nF,flu," + "x" * 60_000_000 + "\nM,gout,y\nF,flu,z\n",
                                   encoding="utf-8")
    code, _out, err = _run(capsys, ["anonymize", work / "long.csv", "--out", work / "o", "--sensitive", "diagnosis",
                                    "--rho1", "0.1", "--rho2", "0.6", "--no-report", "--streaming"])
    _refused(code, err, "the record after the header (line 2) is longer than")
    assert "no data rows" not in err
