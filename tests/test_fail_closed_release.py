"""Fail closed for real (issue 16): names the release adds never replace data, NaN never passes a check,
``--overwrite`` never destroys an input or a foreign file, release and key are published as a pair, the
package's report holds nothing the release does not support, and user errors are never "internal"."""
from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.data.schema import free_name
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

PASSPHRASE = "correct horse battery staple 16"


def table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "patient": [f"P{i:04d}" for i in range(n)],
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(20, 90, n),
        "diagnosis": rng.choice(["flu", "asthma", "gout", "cancer", "stroke", "angina"], n,
                                p=[0.4, 0.25, 0.15, 0.1, 0.06, 0.04]),
    })


# --- 1. names the release adds ---------------------------------------------------------------------


def test_free_name() -> None:
    assert free_name("pseudonym", ["a", "b"]) == "pseudonym"
    assert free_name("pseudonym", ["Pseudonym", "pseudonym_2"]) == "pseudonym_3"


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition", "personalized"])
def test_data_columns_named_like_added_columns_survive(tmp_path: Path, method: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    frame = table()
    frame["subtable"] = frame["diagnosis"]  # a data column with the name partition's ids prefer
    frame["pseudonym"] = "kept"  # and one with the pseudonym column's name
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out, key = tmp_path / "rel", tmp_path / "rel.key"
    extra = ["--rho1", "0.1", "--rho2", "0.5"] if method != "personalized" else ["--key", str(key)]
    code = main(["anonymize", str(data), "--out", str(out), "--method", method, "--sensitive", "subtable",
                 "--identifier", "patient", "--no-report", "--seed", "3", *extra])
    assert code == 0, capsys.readouterr().err
    released = pd.read_csv(out / "release.csv", dtype=str, encoding="utf-8-sig", keep_default_na=False)
    assert (released["pseudonym"] == "kept").all()  # the data column is untouched
    assert set(released["diagnosis"]) == set(frame["diagnosis"])  # not overwritten by sub-table ids
    assert main(["verify", str(out)]) == 0, capsys.readouterr().err


def test_a_method_column_that_would_replace_data_is_refused() -> None:
    from ppdp_desktop.core.methods.partition.method import PartitionPlan

    frame = table()
    dataset = Dataset(frame)
    settings = AnonymizationSettings("diagnosis", "partition", [], [], SensitivitySettings(rho1=0.1, rho2=0.5))
    original = PartitionPlan.apply

    def apply_into_sex(self, rows, rng):  # a faulty plug-in writing into a column it does not protect
        applied = original(self, rows, rng)
        applied.columns["sex"] = applied.columns.pop(self.subtable_column)
        return applied

    PartitionPlan.apply = apply_into_sex
    try:
        with pytest.raises(PrivacyError, match=r"would write over the data column 'sex'"):
            anonymize(dataset, settings)
    finally:
        PartitionPlan.apply = original


# --- 2. NaN never passes ------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--l", "--rho1", "--theta", "--threshold", "--suppression", "--epsilon"])
@pytest.mark.parametrize("word", ["nan", "inf", "-inf"])
def test_every_number_flag_refuses_nan_and_inf_by_name(tmp_path: Path, capsys, flag: str, word: str) -> None:
    data = tmp_path / "d.csv"
    table().to_csv(data, index=False)
    code = main(["anonymize", str(data), "--out", str(tmp_path / "o"), "--sensitive", "diagnosis", f"{flag}={word}"])
    err = capsys.readouterr().err
    assert code == 2 and f"argument {flag}:" in err and "finite" in err
    assert not (tmp_path / "o").exists()


def test_the_rr_check_fails_on_nan() -> None:
    dataset = Dataset(table())
    settings = AnonymizationSettings("diagnosis", "rr", [], ["sex"], SensitivitySettings(),
                                     options=RRSettings(l=3.0))
    result = anonymize(dataset, settings)
    plan = result.plan
    plan.parameters = dataclasses.replace(plan.parameters, l=math.nan)
    with pytest.raises(PrivacyError):
        plan.verify()


# --- 3. --overwrite never destroys an input or a foreign file -------------------------------------------


def _data(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    data = folder / "d.csv"
    table().to_csv(data, index=False)
    return data


def _anonymize(data: Path, out: Path, *extra: str) -> list[str]:
    return ["anonymize", str(data), "--out", str(out), "--sensitive", "diagnosis", "--rho1", "0.1", "--rho2",
            "0.5", "--no-report", *extra]


def _unchanged(path: Path):
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    return lambda: (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_out_holding_the_input_is_refused_even_with_overwrite(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = _data(tmp_path)
    same = _unchanged(data)
    assert main(_anonymize(data, data.parent, "--overwrite")) == 3
    assert "would replace or delete the input file" in capsys.readouterr().err
    assert main(_anonymize(data, tmp_path / "rel", "--key", str(data), "--overwrite")) == 3
    assert "would replace the input file" in capsys.readouterr().err
    assert same() and sorted(p.name for p in data.parent.iterdir()) == ["d.csv"]


def test_overwrite_replaces_only_a_release_or_key_of_ours(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = _data(tmp_path)
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"\xff\xd8")
    assert main(_anonymize(data, foreign, "--overwrite")) == 3
    assert "is not a release written by PPDP Desktop" in capsys.readouterr().err
    assert (foreign / "holiday.jpg").exists()
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    assert main(_anonymize(data, tmp_path / "rel", "--key", str(notes), "--overwrite")) == 3
    assert "is not a key file written by PPDP Desktop" in capsys.readouterr().err
    assert notes.read_text() == "mine"
    # a release and key of ours are replaced
    out, key = tmp_path / "rel", tmp_path / "rel.key"
    assert main(_anonymize(data, out, "--key", str(key))) == 0
    assert main(_anonymize(data, out, "--key", str(key), "--overwrite")) == 0
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()


def test_decoded_files_never_replace_a_key_or_land_in_a_release(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = _data(tmp_path)
    out, key = tmp_path / "rel", tmp_path / "rel.key"
    assert main(_anonymize(data, out, "--key", str(key), "--identifier", "patient")) == 0
    released = pd.read_csv(out / "release.csv", dtype=str, encoding="utf-8-sig")
    results = tmp_path / "results.csv"
    released[["pseudonym"]].head(5).to_csv(results, index=False)
    key_bytes = key.read_bytes()
    base = ["lookup", str(out), str(key), "--file", str(results), "--overwrite", "--out"]
    assert main([*base, str(key)]) == 3
    assert "is a sealed key file" in capsys.readouterr().err and key.read_bytes() == key_bytes
    assert main([*base, str(out / "decoded.csv")]) == 3
    assert "inside the release folder" in capsys.readouterr().err
    assert main([*base, str(results)]) == 3
    capsys.readouterr()
    decoded = tmp_path / "decoded.csv"
    assert main([*base, str(decoded)]) == 0
    assert (decoded.stat().st_mode & 0o777) == 0o600
    assert "patient" in decoded.read_text(encoding="utf-8")


# --- 4. release and key are published as a pair ------------------------------------------------------------


def _pair_invariant(out: Path, key: Path):
    """At every step: a release under its final name has its own key under the key's final name."""
    from ppdp_desktop.core.data.checksums import manifest_sha256
    from ppdp_desktop.core.release import keyfile

    def check(step: str) -> None:
        if out.exists():
            assert key.exists(), f"release without its key at step {step!r}"
            keyfile.open_key(key, PASSPHRASE, manifest_sha256(out))  # raises if the key is another release's
        steps.append(step)

    steps: list[str] = []
    return check, steps


def _result(seed: int):
    settings = AnonymizationSettings("diagnosis", "uniform", ["patient"], [], SensitivitySettings(rho1=0.1, rho2=0.5),
                                     seed=seed)
    return anonymize(Dataset(table(seed=seed)), settings)


def test_release_and_key_are_published_as_a_pair(tmp_path: Path) -> None:
    from ppdp_desktop.core.release.package import write_release

    out, key = tmp_path / "rel", tmp_path / "rel.key"
    check, steps = _pair_invariant(out, key)
    write_release(_result(1), out, key_path=key, passphrase=PASSPHRASE, include_report=False, hook=check)
    assert steps[-1] == "done" and "new key in place" in steps
    check, steps = _pair_invariant(out, key)
    write_release(_result(2), out, key_path=key, passphrase=PASSPHRASE, include_report=False, overwrite=True,
                  hook=check)
    assert "old release moved aside" in steps and "old key moved aside" in steps
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "rel.key"]  # no backups left


@pytest.mark.parametrize("fail_at", ["old release moved aside", "old key moved aside", "new key in place"])
def test_a_failure_between_the_renames_brings_the_old_pair_back(tmp_path: Path, fail_at: str) -> None:
    from ppdp_desktop.core.data.checksums import manifest_sha256
    from ppdp_desktop.core.release import keyfile
    from ppdp_desktop.core.release.package import write_release

    out, key = tmp_path / "rel", tmp_path / "rel.key"
    write_release(_result(1), out, key_path=key, passphrase=PASSPHRASE, include_report=False)
    before = manifest_sha256(out)

    def fail(step: str) -> None:
        if step == fail_at:
            raise OSError("disk removed")

    with pytest.raises(OSError):
        write_release(_result(2), out, key_path=key, passphrase=PASSPHRASE, include_report=False, overwrite=True,
                      hook=fail)
    assert manifest_sha256(out) == before
    keyfile.open_key(key, PASSPHRASE, before)  # the old pair, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "rel.key"]


def test_what_a_killed_run_left_is_removed_by_the_next(tmp_path: Path) -> None:
    from ppdp_desktop.core.release.package import write_release

    out, key = tmp_path / "rel", tmp_path / "rel.key"
    dead = 2 ** 22 + 12345  # no such process
    (tmp_path / f".rel.{dead}.abcd.partial").mkdir()
    (tmp_path / f".rel.key.{dead}.ef01.partial").write_bytes(b"half a key")
    # (a backup .rel.PID.old is put back, not removed: tests/test_fuzz_files.py)
    (tmp_path / ".unrelated.partial").write_text("not ours")
    write_release(_result(1), out, key_path=key, passphrase=PASSPHRASE, include_report=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".unrelated.partial", "rel", "rel.key"]


def test_the_files_are_verified_as_written(tmp_path: Path, monkeypatch) -> None:
    """A writer that puts the identifiers back after the plan was verified: nothing is published."""
    from ppdp_desktop.core.data import formats
    from ppdp_desktop.core.release.package import write_release

    real = formats.write_csv_release
    truth = table(seed=1)

    def leaky(frame, path, sep, **kwargs):  # writes the names back beside the pseudonyms
        frame = frame.copy()
        frame["patient"] = truth["patient"].to_numpy()
        return real(frame, path, sep, **kwargs)

    monkeypatch.setattr(formats, "write_csv_release", leaky)
    with pytest.raises(PrivacyError, match=r"does not pass its own check"):
        write_release(_result(1), tmp_path / "rel", include_report=False)
    assert list(tmp_path.iterdir()) == []


# --- 5. the package's report holds only what the release supports ---------------------------------------


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition"])
def test_the_report_inside_the_package_holds_no_original_count(tmp_path: Path, method: str, capsys,
                                                               monkeypatch) -> None:
    import re

    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    frame = table(n=3000)
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out, key = tmp_path / "rel", tmp_path / "rel.key"
    assert main(["anonymize", str(data), "--out", str(out), "--key", str(key), "--sensitive", "diagnosis",
                 "--identifier", "patient", "--method", method, "--rho1", "0.1", "--rho2", "0.5", "--seed", "7"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    inside = "".join(re.findall(r"<table.*?</table>", page, flags=re.S))  # the tables (figures have tick labels)
    counts = frame["diagnosis"].value_counts()
    leaked = [v for v, n in counts.items() if re.search(rf">{n:,}<", inside)]
    assert leaked == [], f"original counts of {leaked} in the package's report"
    assert "Counts estimated from the release, with the 95 % interval" in page and "Original counts" not in page
    custodian = tmp_path / "rel.custodian-report.html"
    assert "custodian's report" in capsys.readouterr().out
    beside = custodian.read_text(encoding="utf-8")
    assert all(re.search(rf">{n:,}<", beside) for n in counts)  # the custodian keeps the original figures
    assert main(["verify", str(out)]) == 0


# --- 9. a user's mistake is never an "internal error" ---------------------------------------------------


def _release(tmp_path: Path) -> tuple[Path, Path]:
    data = _data(tmp_path)
    out = tmp_path / "rel"
    assert main(_anonymize(data, out)) == 0
    return data, out


@pytest.mark.parametrize("code", ["ENOSPC", "EROFS", "EACCES"])
def test_a_full_or_read_only_disk_is_a_user_error_and_leaves_nothing(tmp_path: Path, capsys, monkeypatch,
                                                                     code: str) -> None:
    import errno

    from ppdp_desktop.core.data import formats

    data = _data(tmp_path)

    def full(*_args, **_kwargs):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), str(tmp_path / "rel"))

    monkeypatch.setattr(formats, "write_csv_release", full)
    assert main(_anonymize(data, tmp_path / "rel")) == 3
    err = capsys.readouterr().err
    assert err.startswith("ppdp: error: Cannot write") and "internal" not in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_report_paths_are_checked_and_a_failed_pdf_leaves_no_html(tmp_path: Path, capsys, monkeypatch) -> None:
    import errno

    from ppdp_desktop.core.report import files

    data, out = _release(tmp_path)
    html = tmp_path / "r.html"
    assert main(["report", str(data), str(out), "--out", str(html), "--pdf", str(html)]) == 2
    assert "same file" in capsys.readouterr().err
    assert main(["report", str(data), str(out), "--out", str(tmp_path / "nodir" / "r.html")]) == 3
    assert "does not exist" in capsys.readouterr().err

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "r.pdf"))

    monkeypatch.setattr(files, "render_pdf", full)
    assert main(["report", str(data), str(out), "--out", str(html), "--pdf", str(tmp_path / "r.pdf")]) == 3
    assert "free some disk space" in capsys.readouterr().err
    assert not html.exists() and not (tmp_path / "r.pdf").exists() and not (tmp_path / "r-values.csv").exists()


def test_nested_parquet_and_non_text_encodings_are_refused_by_name(tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    nested = tmp_path / "n.parquet"
    pq.write_table(pa.table({"a": [1, 2], "s": [{"x": 1}, {"x": 2}]}), nested)
    assert main(["risk", str(nested), "--quasi", "a"]) == 3
    assert "column 's' holds nested values" in capsys.readouterr().err
    data = _data(tmp_path)
    for codec in ("rot13", "hex", "base64"):  # the command line's value: a usage error (issue 32, point 10)
        assert main(["risk", str(data), "--quasi", "sex", "--encoding", codec]) == 2
        assert f"{codec!r} is not a known text encoding" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["not an object", "wrong type", "sensitive not a list", "sums not utf-8"])
def test_a_damaged_release_json_or_sums_file_is_a_user_error(tmp_path: Path, capsys, damage: str) -> None:
    import json

    _data_, out = _release(tmp_path)
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    if damage == "not an object":
        (out / "release.json").write_text("[1, 2]")
    elif damage == "wrong type":
        meta["n_records"] = "many"
        (out / "release.json").write_text(json.dumps(meta))
    elif damage == "sensitive not a list":
        meta["sensitive"] = "x"
        (out / "release.json").write_text(json.dumps(meta))
    else:
        (out / "SHA256SUMS").write_bytes(b"\xff\xfe not text\n")
    capsys.readouterr()
    for command in (["verify", str(out)], ["estimate", str(out), "--sensitive", "diagnosis"]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert err.startswith("ppdp: error:") and "internal" not in err


# --- 7. no spreadsheet formula starts a cell -------------------------------------------------------------


def test_formula_guard_round_trips_exactly() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ppdp_desktop.core.data.formats import _guard_text, _unguard_text

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="=+-@'\t\rab1", max_size=6))
    def round_trip(value: str) -> None:
        guarded = _guard_text(value)
        assert _unguard_text(guarded) == value
        assert not guarded.startswith(("=", "+", "-", "@", "\t", "\r"))

    round_trip()


def test_formulas_never_start_a_cell_of_a_csv_release(tmp_path: Path, capsys) -> None:
    import csv

    frame = pd.DataFrame({
        "=HYPERLINK(\"http://x\")": range(8),
        "diagnosis": ["=cmd|' /C calc'!A0", "+1", "-2", "@SUM(A1)", "flu", "\tTAB", "'=quoted", "flu"],
        "amount": [-1.5, 2, -3, 4, 5, 6, 7, 8],  # negative numbers stay numbers
    })
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "rel"
    assert main(["anonymize", str(data), "--out", str(out), "--sensitive", "diagnosis", "--rho1", "0.1",
                 "--rho2", "0.95", "--no-report", "--seed", "1"]) == 0
    with (out / "release.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    text_cells = [cell for row in body for cell, name in zip(row, header) if name != "amount"] + header
    assert not [c for c in text_cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert any(c.startswith("-") for row in body for c in row[2:])  # the numbers kept their sign
    assert "formula" in (out / "README.txt").read_text(encoding="utf-8")
    assert main(["verify", str(out)]) == 0  # the domain values ("=cmd…") are read back exactly
    released = read_release(out).table
    assert set(released["diagnosis"]) <= set(frame["diagnosis"])
    assert list(released.columns)[0] == "=HYPERLINK(\"http://x\")"


# --- 11. silently wrong data --------------------------------------------------------------------------------


def test_mixed_encodings_and_late_nul_bytes_are_refused_by_line(tmp_path: Path, capsys) -> None:
    mixed = tmp_path / "mixed.csv"
    mixed.write_bytes(b"dx,city\nHipertensi\xc3\xb3n,a\nHipertensi\xf3n,b\nflu,c\n")
    assert main(["risk", str(mixed), "--quasi", "city"]) == 3
    err = capsys.readouterr().err
    assert "mixes two encodings" in err and "line 2 is UTF-8 but line 3 is not" in err
    late = tmp_path / "late.csv"
    late.write_bytes(b"a,b\n" + b"x,y\n" * 20_000 + b"z,\x00\n")  # the NUL lies beyond the first 64 KiB
    assert main(["risk", str(late), "--quasi", "a"]) == 3
    assert "NUL bytes" in capsys.readouterr().err


def test_estimate_table_refuses_a_release_without_randomized_response(tmp_path: Path, capsys) -> None:
    _data_, out = _release(tmp_path)
    capsys.readouterr()
    assert main(["estimate", str(out), "--table", "sex,diagnosis"]) == 2
    assert "--sensitive COL" in capsys.readouterr().err


def test_a_passphrase_file_saved_by_notepad_works(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("PPDP_PASSPHRASE", raising=False)
    data = _data(tmp_path)
    secret = tmp_path / "pass.txt"
    secret.write_bytes(b"\xef\xbb\xbf" + PASSPHRASE.encode() + b"\r\n")  # UTF-8 BOM and CRLF
    out, key = tmp_path / "rel", tmp_path / "rel.key"
    assert main(_anonymize(data, out, "--key", str(key), "--identifier", "patient", "--passphrase-file",
                           str(secret))) == 0
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)  # the same passphrase without the BOM opens the key
    pseudonym = read_release(out).table["pseudonym"].iloc[0]
    assert main(["lookup", str(out), str(key), "--pseudonym", pseudonym]) == 0
    capsys.readouterr()


def test_zip_destination_is_checked_at_the_zip_path(tmp_path: Path, capsys) -> None:
    data = _data(tmp_path)
    (tmp_path / "rel").mkdir()  # a folder with the base name must not matter
    (tmp_path / "rel" / "mine.txt").write_text("keep")
    assert main(_anonymize(data, tmp_path / "rel", "--zip")) == 0
    assert (tmp_path / "rel.zip").is_file() and (tmp_path / "rel" / "mine.txt").read_text() == "keep"
    (tmp_path / "other.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # someone's empty zip
    assert main(_anonymize(data, tmp_path / "other", "--zip", "--overwrite")) == 3
    assert "not a release written by PPDP Desktop" in capsys.readouterr().err


def test_no_matplotlib_warning_on_a_successful_run(tmp_path: Path) -> None:
    import subprocess
    import sys

    frame = table()
    frame["diagnosis"] = frame["diagnosis"].replace({"flu": "インフルエンザ", "gout": "痛風"})  # glyphs DejaVu lacks
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    run = subprocess.run(  # a real process: pytest would otherwise catch the warnings before stderr
        [sys.executable, "-c", "from ppdp_desktop.cli import main; raise SystemExit(main())", "anonymize", str(data),
         "--out", str(tmp_path / "rel"), "--sensitive", "diagnosis", "--rho1", "0.1", "--rho2", "0.6"],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "Warning" not in run.stderr and "Glyph" not in run.stderr, run.stderr


# --- 10. declared limits, checked before anything is allocated ------------------------------------------


@pytest.mark.parametrize("extra, message", [
    (["--method", "personalized", "--key", "{key}", "--graded", "age", "--categories", "1000000000"],
     "--categories must be a whole number from 1 to 1,000"),
    (["--rho1", "0.1", "--rho2", "0.5", "--quasi", "age", "--k-anonymity", "99999999999", "--intervals", "age=5"],
     "--k-anonymity must be a whole number from 1 to 1,000,000"),
    (["--rho1", "0.1", "--rho2", "0.5", "--quasi", "age", "--k-anonymity", "5", "--intervals",
      "age=" + ",".join(str(5 * 2 ** i) for i in range(30))], "at most 20 levels"),
    (["--method", "dp-microagg", "--attributes", "age", "--epsilon", "1", "--k", "99999999999"],
     "--k must be a whole number from 1 to 1,000,000"),
    (["--rho1", "0.1", "--rho2", "0.5", "--header-row", "99999999"], "from 1 to 10,000"),
])
def test_size_limits_are_declared_and_checked_first(tmp_path: Path, capsys, monkeypatch, extra, message) -> None:
    import tracemalloc

    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = _data(tmp_path)
    argv = ["anonymize", str(data), "--out", str(tmp_path / "rel"), "--sensitive", "diagnosis", "--no-report",
            *[a.format(key=tmp_path / "k.key") for a in extra]]
    tracemalloc.start()
    try:
        assert main(argv) == 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # refused, not computed: nothing sized by the limit is allocated (the old run went 143 s into the OOM
    # killer); how long the refusal takes is benchmarks/bench_limits.py's figure
    assert peak < 256 * 2**20, f"{peak / 2**20:.0f} MB allocated before the refusal"  # zxcvbn's lists: 60 MB
    assert message in capsys.readouterr().err
    assert not (tmp_path / "rel").exists()


def test_estimate_table_size_is_limited(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(0)
    n = 2000
    frame = pd.DataFrame({f"q{i}": rng.integers(0, 40, n).astype(str) for i in range(5)})
    frame["diagnosis"] = rng.choice(["flu", "gout", "asthma"], n)
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "rel"
    assert main(["anonymize", str(data), "--out", str(out), "--method", "rr", "--sensitive", "diagnosis", "--quasi",
                 "q0,q1", "--l", "2", "--no-report", "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["estimate", str(out), "--table", "q0,q1,q2,q3,q4,diagnosis"]) == 2
    assert "combinations of values; at most 5,000,000 are estimated at once" in capsys.readouterr().err


def test_a_very_long_row_is_read_or_refused_in_words(tmp_path: Path, capsys, monkeypatch) -> None:
    from ppdp_desktop.core.data import text_table

    long = tmp_path / "long.csv"
    # a row longer than the parser's 1 MiB block, each of its cells within the 1 Mi-character cell limit
    long.write_bytes(b"a,c,d,b\n" + (b"x" * 1_000_000 + b",") * 3 + b"1\ny,y,y,2\n")
    assert main(["risk", str(long), "--quasi", "b"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(text_table, "MAX_ROW_BYTES", 1 << 20)  # as a row beyond the declared limit would be
    assert main(["risk", str(long), "--quasi", "b"]) == 3
    assert "a row is longer than 1 MiB" in capsys.readouterr().err


def test_verify_checks_the_checksums_before_reading_release_json(tmp_path: Path, capsys) -> None:
    _data_, out = _release(tmp_path)
    (out / "release.json").write_text("{ not json", encoding="utf-8")
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    assert "release.json does not match its checksum" in capsys.readouterr().err
