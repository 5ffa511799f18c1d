"""Forged releases (issue 16, point 6): a manifest of another shape, extra files and folders, zips that
two tools would read differently, and — with ``SHA256SUMS`` rewritten to match — forgeries only the
signature can catch: the true diagnoses or the names put back, an identity matrix, a doctored risk."""
from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data import release_zip
from ppdp_desktop.core.data.checksums import write_checksums
from ppdp_desktop.core.errors import KeyFileError, ReleaseError
from ppdp_desktop.core.release.signing import fingerprint, new_signing_key, normalize_fingerprint, open_signing_key

PASSPHRASE = "correct horse battery staple 16"
SIGNING = "a different signing passphrase"


def _table(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame({
        "name": [f"Person {i}" for i in range(n)],
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(20, 90, n).astype(str),
        "diagnosis": rng.choice(["flu", "asthma", "gout", "cancer"], n, p=[0.5, 0.3, 0.15, 0.05]),
    })


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """An unsigned uniform release, a signed one, a signed rr one, and the signing key's fingerprint."""
    import os

    folder = tmp_path_factory.mktemp("forgeries")
    data = folder / "d.csv"
    _table().to_csv(data, index=False)
    os.environ["PPDP_SIGNING_PASSPHRASE"] = SIGNING
    assert main(["signing-key", str(folder / "sign.key")]) == 0
    common = ["--sensitive", "diagnosis", "--identifier", "name", "--no-report", "--seed", "1"]
    assert main(["anonymize", str(data), "--out", str(folder / "plain"), "--rho1", "0.1", "--rho2", "0.6", *common]) == 0
    assert main(["anonymize", str(data), "--out", str(folder / "signed"), "--rho1", "0.1", "--rho2", "0.6",
                 "--sign", str(folder / "sign.key"), *common]) == 0
    assert main(["anonymize", str(data), "--out", str(folder / "rr"), "--method", "rr", "--quasi", "sex,age", "--l", "2",
                 "--sign", str(folder / "sign.key"), *common]) == 0
    key = open_signing_key(folder / "sign.key", SIGNING)
    return folder, data, key.fingerprint


def _copy(made, name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(made[0] / name, target)
    return target


def _verify(release: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["verify", str(release), *extra])
    return code, capsys.readouterr().err


# --- the manifest's shape, extra files, zips ---------------------------------------------------------


@pytest.mark.parametrize("damage", ["extra file", "extra folder", "dot-dot entry", "duplicate entry", "crlf",
                                    "folder entry", "upper-case digest"])
def test_a_manifest_of_another_shape_or_extra_content_is_refused(made, tmp_path, capsys, damage) -> None:
    release = _copy(made, "plain", tmp_path)
    sums = release / "SHA256SUMS"
    text = sums.read_text(encoding="utf-8")
    first = text.splitlines()[0]
    if damage == "extra file":
        (release / "notes.txt").write_text("x")
    elif damage == "extra folder":
        (release / "more").mkdir()
    elif damage == "dot-dot entry":
        sums.write_text(text + first.split("  ")[0] + "  ../d.csv\n")
    elif damage == "duplicate entry":
        sums.write_text(text + first + "\n")
    elif damage == "crlf":
        sums.write_bytes(text.replace("\n", "\r\n").encode())
    elif damage == "folder entry":
        sums.write_text(text + first.split("  ")[0] + "  sub/release.csv\n")
    else:
        sums.write_text(text.replace(first[:64], first[:64].upper(), 1))
    code, err = _verify(release, capsys)
    assert code == 1 and err.startswith("ppdp: error:") and "internal" not in err, err


def _zip(folder: Path, target: Path, duplicate: str | None = None) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)
        if duplicate:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # zipfile warns about the duplicate, which is the point
                archive.writestr(duplicate, (folder / duplicate).read_bytes().replace(b"flu", b"gout"))
    return target


def test_a_zip_with_duplicate_names_is_refused(made, tmp_path, capsys) -> None:
    archive = _zip(made[0] / "plain", tmp_path / "dup.zip", duplicate="release.csv")
    code, err = _verify(archive, capsys)
    assert code == 1 and "'release.csv' twice" in err


def test_a_zip_bomb_stops_at_the_cap_and_leaves_no_folder(made, tmp_path, capsys, monkeypatch) -> None:
    import tempfile

    archive = _zip(made[0] / "plain", tmp_path / "big.zip")
    monkeypatch.setattr(release_zip, "MAX_UNZIPPED_BYTES", 1000)
    before = set(Path(tempfile.gettempdir()).glob("ppdp-release-*"))
    code, err = _verify(archive, capsys)
    assert code == 1 and "unpacks to more than" in err
    assert set(Path(tempfile.gettempdir()).glob("ppdp-release-*")) == before


def test_a_zipped_release_verifies(made, tmp_path, capsys) -> None:
    archive = _zip(made[0] / "signed", tmp_path / "ok.zip")
    code, err = _verify(archive, capsys, "--signer", made[2])
    assert code == 0, err


# --- forgeries with SHA256SUMS rewritten: the signature catches them ---------------------------------


def _forge(release: Path, how: str, data: Path) -> None:
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    table = pd.read_csv(release / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    original = pd.read_csv(data, dtype=str, keep_default_na=False)
    if how == "true diagnoses":
        table["diagnosis"] = original["diagnosis"].to_numpy()
    elif how == "names restored":
        table.insert(0, "name", original["name"].to_numpy())
        meta["attributes"].pop("name", None)
    elif how == "identity matrix":
        for entry in meta.get("randomized", []):
            d = len(entry["values"])
            entry["p"], entry["matrix"] = 1.0, np.eye(d).tolist()
    elif how == "doctored risk":
        meta["guarantee"]["max_risk"] = 0.01
    table.to_csv(release / "release.csv", index=False, encoding="utf-8-sig")
    (release / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    (release / "SHA256SUMS").unlink()
    write_checksums(release)  # the forger makes the checksums match


@pytest.mark.parametrize("name, how", [("signed", "true diagnoses"), ("signed", "names restored"),
                                       ("rr", "identity matrix"), ("rr", "doctored risk")])
def test_forgeries_with_rewritten_checksums_fail_the_signature(made, tmp_path, capsys, name, how) -> None:
    release = _copy(made, name, tmp_path)
    _forge(release, how, made[1])
    code, err = _verify(release, capsys, "--signer", made[2])
    assert code == 1 and "altered after it was signed" in err, err
    (release / "SIGNATURE").unlink()  # dropping the signature does not help either
    code, err = _verify(release, capsys, "--signer", made[2])
    assert code == 1 and ("not signed" in err or "has no SIGNATURE" in err), err


def test_a_signed_release_verifies_with_its_fingerprint_only(made, tmp_path, capsys) -> None:
    release = made[0] / "signed"
    code, err = _verify(release, capsys, "--signer", made[2].replace(" ", "").upper())  # any spelling
    assert code == 0, err
    other = new_signing_key(tmp_path / "other.key", "another passphrase 42")
    code, err = _verify(release, capsys, "--signer", other.fingerprint)
    assert code == 1 and f"signed by {made[2]}, not by {other.fingerprint}" in err
    code, err = _verify(made[0] / "plain", capsys, "--signer", made[2])
    assert code == 1 and "not signed" in err
    readme = (release / "README.txt").read_text(encoding="utf-8")
    assert made[2] in readme and "--signer" in readme


def test_signing_key_file_is_sealed_and_not_a_release_key(made, tmp_path) -> None:
    with pytest.raises(KeyFileError):
        open_signing_key(made[0] / "sign.key", "wrong passphrase")
    raw = (made[0] / "sign.key").read_bytes()
    key = open_signing_key(made[0] / "sign.key", SIGNING)
    assert key.private.private_bytes_raw() not in raw  # never stored in the clear
    assert fingerprint(key.public_bytes) == made[2]
    assert hashlib.sha256(key.public_bytes).hexdigest()[:4] == made[2][:4]
    with pytest.raises(ReleaseError, match="not a signer fingerprint"):
        normalize_fingerprint("xyz")


# --- randomized response: the risk is recomputed from the release, not read from it ----------------------


def _rr_result(seed: int):
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.rr.settings import RRSettings
    from ppdp_desktop.core.settings import AnonymizationSettings

    rng = np.random.default_rng(seed)
    n = 4000
    group = rng.integers(0, 6, n)
    frame = pd.DataFrame({
        "sex": np.where(group % 2 == 0, "F", "M"),
        "band": np.array(["<30", "30-50", ">50"])[group // 2],
        # the diagnosis follows the group closely: knowing sex and band reveals it (risk near 1)
        "diagnosis": np.where(rng.random(n) < 0.85, np.array(["flu", "gout", "asthma", "cancer", "stroke", "angina"])[group],
                              rng.choice(["flu", "gout", "asthma"], n)),
    })
    settings = AnonymizationSettings("diagnosis", "rr", quasi=["sex", "band"], options=RRSettings(l=3.0), seed=seed)
    return frame, anonymize(Dataset(frame), settings)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_genuine_rr_release_passes_the_recomputed_risk(tmp_path, capsys, seed) -> None:
    from ppdp_desktop.core.release.package import write_release

    _frame, result = _rr_result(seed)
    assert result.plan.parameters.p_qi is not None or result.plan.parameters.p_s is not None
    write_release(result, tmp_path / "rel", include_report=False)
    code = main(["verify", str(tmp_path / "rel")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "recomputed from the release" in out.out


def test_an_unsigned_rr_release_with_identity_matrices_is_refused(tmp_path, capsys) -> None:
    from ppdp_desktop.core.release.package import write_release

    frame, result = _rr_result(1)
    release = tmp_path / "rel"
    write_release(result, release, include_report=False)
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    for entry in meta["randomized"]:  # claim nothing was randomized after all ...
        entry["p"], entry["matrix"] = 1.0, np.eye(len(entry["values"])).tolist()
    (release / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    table = pd.read_csv(release / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    original = frame.take(result.order).reset_index(drop=True)
    for column in ("sex", "band", "diagnosis"):  # ... and publish the true values
        table[column] = original[column].to_numpy()
    table.to_csv(release / "release.csv", index=False, encoding="utf-8-sig")
    (release / "SHA256SUMS").unlink()
    write_checksums(release)
    code, err = _verify(release, capsys)
    assert code == 1 and "recomputed from the released data and matrices" in err, err


# --- unsigned forgeries: what verify recomputes from the released data and matrices ----------------------


def _rewrite(release: Path, edit) -> None:
    """Apply ``edit(meta, table)`` to a copied release and make its checksums match (no signature)."""
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    table = pd.read_csv(release / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    meta.pop("signer", None)
    edit(meta, table)
    table.to_csv(release / "release.csv", index=False, encoding="utf-8-sig")
    (release / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    for name in ("SHA256SUMS", "SIGNATURE"):
        (release / name).unlink(missing_ok=True)
    write_checksums(release)


@pytest.fixture(scope="module")
def unsigned(tmp_path_factory):
    """Unsigned releases of every method over one table with a rare diagnosis (1 %), and the table."""
    folder = tmp_path_factory.mktemp("unsigned")
    rng = np.random.default_rng(16)
    n = 3000
    frame = pd.DataFrame({
        "name": [f"Person {i}" for i in range(n)],
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(20, 90, n).astype(str),
        "diagnosis": rng.choice(["flu", "asthma", "gout", "cancer"], n, p=[0.6, 0.3, 0.09, 0.01]),
    })
    data = folder / "d.csv"
    frame.to_csv(data, index=False)
    common = ["--identifier", "name", "--no-report", "--seed", "3", "--quiet"]
    runs = {
        "uniform": ["--sensitive", "diagnosis", "--rho1", "0.1", "--rho2", "0.6"],
        "finegrain": ["--sensitive", "diagnosis", "--rho1", "0.1", "--rho2", "0.6"],
        "partition": ["--sensitive", "diagnosis", "--rho1", "0.1", "--rho2", "0.6"],
        "rr": ["--sensitive", "diagnosis", "--quasi", "sex,age", "--l", "2"],
        "dp-microagg": ["--attributes", "age", "--epsilon", "1", "--k", "5", "--domain", "age=20:89",
                        "--quasi", "sex"],
    }
    for method, extra in runs.items():
        assert main(["anonymize", str(data), "--out", str(folder / method), "--method", method, *extra, *common]) == 0
    return folder, frame


def _forged(unsigned, method: str, tmp_path: Path, edit) -> Path:
    release = tmp_path / method
    shutil.copytree(unsigned[0] / method, release)
    _rewrite(release, edit)
    return release


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition", "rr", "dp-microagg"])
def test_genuine_releases_of_every_method_verify(unsigned, capsys, method) -> None:
    code, err = _verify(unsigned[0] / method, capsys)
    assert code == 0, err


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition"])
def test_the_true_sensitive_column_put_back_is_refused_without_a_signature(unsigned, tmp_path, capsys, method) -> None:
    """The rare diagnosis (1 %) is released far less often than any table perturbed with the published matrix
    allows: the released counts are impossible, whatever the original table."""
    frame = unsigned[1]

    def restore(meta, table):
        table["diagnosis"] = frame["diagnosis"].to_numpy()  # row order does not matter to the counts

    release = _forged(unsigned, method, tmp_path, restore)
    code, err = _verify(release, capsys)
    assert code == 1 and "'cancer' is released" in err and "not randomized with this matrix" in err, err


@pytest.mark.parametrize("how", ["attribute dropped", "role changed"])
def test_identifiers_put_back_are_refused_without_a_signature(unsigned, tmp_path, capsys, how) -> None:
    frame = unsigned[1]

    def restore(meta, table):
        table.insert(0, "name", frame["name"].to_numpy())
        if how == "attribute dropped":
            meta["attributes"].pop("name")
        else:
            meta["attributes"]["name"]["role"] = "insensitive"

    release = _forged(unsigned, "uniform", tmp_path, restore)
    code, err = _verify(release, capsys)
    assert code == 1 and "has a column 'name'" in err, err


def test_an_undescribed_column_is_refused(unsigned, tmp_path, capsys) -> None:
    release = _forged(unsigned, "uniform", tmp_path, lambda meta, table: table.insert(1, "postcode", "12345"))
    code, err = _verify(release, capsys)
    assert code == 1 and "'postcode', which release.json does not describe" in err, err


@pytest.fixture(scope="module")
def adult_rr(tmp_path_factory):
    """An unsigned rr release of the whole adult file in seed 001's setting (workclass, l = 3, both randomized)."""
    from tests.conftest import shared_adult

    folder = tmp_path_factory.mktemp("adult-rr")
    assert main(["anonymize", str(shared_adult()), "--out", str(folder / "rr"), "--method", "rr", "--quasi",
                 "education,marital-status,sex,race", "--sensitive", "workclass", "--l", "3", "--no-report",
                 "--seed", "1", "--quiet"]) == 0
    return folder / "rr"


def test_a_doctored_rr_risk_is_refused_without_a_signature(adult_rr, tmp_path, capsys) -> None:
    """On adult (30,162 records) every original table the release allows has a largest risk well above 0.01.
    On a few thousand records spread over many groups the release allows tables of almost any risk, and only a
    signature catches a doctored figure (benchmarks/README.md: the recheck's power)."""
    release = tmp_path / "rr"
    shutil.copytree(adult_rr, release)
    _rewrite(release, lambda meta, table: meta["guarantee"].__setitem__("max_risk", 0.01))
    code, err = _verify(release, capsys)
    assert code == 1 and "largest attribute-disclosure risk of 0.01" in err and "altered" in err, err


@pytest.mark.parametrize("how", ["true values, genuine matrices", "p's lowered", "identity matrices"])
def test_rr_releases_altered_on_adult_are_refused_without_a_signature(adult_rr, tmp_path, capsys, how) -> None:
    """The true columns published under the genuine matrices, or the genuine data under p's that claim more noise
    than was drawn: the released counts fit no original table (a column's own counts may already show it). The true
    columns under identity matrices: the check is then exact, and the true table's risk is far above 1/l."""
    from tests.conftest import shared_adult

    original = pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False)
    release = tmp_path / "rr"
    shutil.copytree(adult_rr, release)

    def alter(meta, table):
        for entry in meta["randomized"]:
            d = len(entry["values"])
            if how == "p's lowered":  # halfway to full randomization
                entry["p"] = (entry["p"] + 1.0 / d) / 2.0
                matrix = np.full((d, d), (1.0 - entry["p"]) / (d - 1))
                np.fill_diagonal(matrix, entry["p"])
                entry["matrix"] = matrix.tolist()
            elif how == "identity matrices":
                entry["p"], entry["matrix"] = 1.0, np.eye(d).tolist()
        if how != "p's lowered":  # the true columns together (the checks read counts: the row order is free)
            columns = [e["attribute"] for e in meta["randomized"]]
            table[columns] = original[columns].to_numpy()

    _rewrite(release, alter)
    code, err = _verify(release, capsys)
    expected = (["above 1/l"] if how == "identity matrices"
                else ["No original table fits the released data", "not randomized with this matrix"])
    assert code == 1 and any(e in err for e in expected), err


@pytest.mark.parametrize("how", ["epsilon", "gamma", "no pairs", "retention"])
def test_doctored_perturbation_figures_are_refused(unsigned, tmp_path, capsys, how) -> None:
    def doctor(meta, table):
        entry = meta["sensitive"][0]
        if how == "epsilon":
            entry["guarantee"]["epsilon_ldp"] = 0.01
        elif how == "gamma":
            entry["guarantee"]["gamma"] = [1.5] * len(entry["values"])
        elif how == "no pairs":  # claim nothing needed protection, publish an identity matrix and the truth
            d = len(entry["values"])
            for pair in entry["guarantee"]["pairs"]:
                pair["rho1"] = pair["rho2"] = None
            entry["matrix"], entry["retention"] = np.eye(d).tolist(), [1.0] * d
        else:
            entry["retention"] = [0.99] * len(entry["values"])

    release = _forged(unsigned, "uniform", tmp_path, doctor)
    code, err = _verify(release, capsys)
    expected = {"epsilon": "states epsilon-LDP 0.01", "gamma": "states gammas", "no pairs": "protects nothing",
                "retention": "amplifies"}[how]
    assert code == 1 and expected in err, err


def test_records_moved_to_an_unpublished_subtable_are_refused(unsigned, tmp_path, capsys) -> None:
    def move(meta, table):
        column = meta["sensitive"][0]["subtable_column"]
        table[column] = "99"
        table["diagnosis"] = unsigned[1]["diagnosis"].to_numpy()

    release = _forged(unsigned, "partition", tmp_path, move)
    code, err = _verify(release, capsys)
    assert code == 1 and "sub-table '99', which release.json does not publish" in err, err


def test_dp_values_published_as_they_were_are_refused(unsigned, tmp_path, capsys) -> None:
    """Microaggregated values come in clusters of k equal values; the original ages do not."""
    release = _forged(unsigned, "dp-microagg", tmp_path,
                      lambda meta, table: table.__setitem__("age", unsigned[1]["age"].to_numpy()))
    code, err = _verify(release, capsys)
    assert code == 1 and "not a multiple of k = 5" in err, err


@pytest.mark.parametrize("figure", ["sample_uniques", "highest_risk", "verdict"])
def test_doctored_reidentification_figures_are_refused(unsigned, tmp_path, capsys, figure) -> None:
    def doctor(meta, table):
        stated = meta["reidentification"]["release"]
        if figure == "sample_uniques":
            stated[figure] += 3
        elif figure == "highest_risk":
            stated[figure] /= 2
        else:
            stated[figure] = meta["reidentification"]["verdict"] = "protected"  # no k: the rule says "not protected"

    release = _forged(unsigned, "rr", tmp_path, doctor)
    code, err = _verify(release, capsys)
    assert code == 1 and "the released data gives" in err, err


def test_a_zip_with_names_differing_only_in_case_is_refused(made, tmp_path, capsys) -> None:
    archive = tmp_path / "case.zip"
    folder = made[0] / "plain"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(folder.iterdir()):
            zipped.write(path, path.name)
        zipped.writestr("RELEASE.csv", (folder / "release.csv").read_bytes())  # one file on Windows and macOS
    code, err = _verify(archive, capsys)
    assert code == 1 and "twice" in err, err


def test_a_verified_zip_leaves_no_unpacked_copy(made, tmp_path, capsys) -> None:
    import tempfile

    archive = _zip(made[0] / "plain", tmp_path / "ok.zip")
    before = set(Path(tempfile.gettempdir()).glob("ppdp-release-*"))
    code, err = _verify(archive, capsys)
    assert code == 0, err
    assert set(Path(tempfile.gettempdir()).glob("ppdp-release-*")) == before


@pytest.mark.parametrize("how", ["two zips glued", "bytes before", "a file hidden in a gap", "encrypted entry",
                                 "trailing dot", "colon"])
def test_a_zip_other_tools_could_read_differently_is_refused(made, tmp_path, capsys, how) -> None:
    """A streaming unzipper reads the local headers in turn, most others the central directory: a release zip
    must give both the same files, and no name Windows would change on the way to the disk."""
    import struct

    good = _zip(made[0] / "plain", tmp_path / "good.zip")
    archive = tmp_path / "bad.zip"
    data = good.read_bytes()
    if how == "two zips glued":  # the first zip's files come first; the directory read is the second's
        archive.write_bytes(data + data)
    elif how == "bytes before":
        archive.write_bytes(b"#!/bin/sh\nexit 0\n" + data)
    elif how == "a file hidden in a gap":
        with zipfile.ZipFile(archive, "w") as zipped:
            for path in sorted((made[0] / "plain").iterdir()):
                zipped.write(path, path.name)
        with zipfile.ZipFile(archive) as zipped:
            second = sorted(zipped.infolist(), key=lambda i: i.header_offset)[1]
        raw = archive.read_bytes()
        hidden = zipfile.ZipInfo("release.csv")  # a local entry that no directory lists
        hidden_bytes = struct.pack(zipfile.structFileHeader, zipfile.stringFileHeader, 20, 0, 0, 0, 0, 0, 0, 3, 0,
                                   11, 0) + hidden.filename.encode() + b"x,y"
        at = second.header_offset
        patched = raw[:at] + hidden_bytes + raw[at:]
        # shift every later offset in the central directory and the end record by the inserted length
        with zipfile.ZipFile(archive) as zipped:
            start = zipped.start_dir
        body, directory = patched[:start + len(hidden_bytes)], bytearray(patched[start + len(hidden_bytes):])
        position = 0
        while directory[position:position + 4] == zipfile.stringCentralDir:
            fields = struct.unpack(zipfile.structCentralDir, directory[position:position + zipfile.sizeCentralDir])
            offset = fields[zipfile._CD_LOCAL_HEADER_OFFSET]
            if offset >= at:
                struct.pack_into("<L", directory, position + 42, offset + len(hidden_bytes))
            position += zipfile.sizeCentralDir + fields[12] + fields[13] + fields[14]
        end = directory.find(zipfile.stringEndArchive)
        struct.pack_into("<L", directory, end + 16, start + len(hidden_bytes))
        archive.write_bytes(body + bytes(directory))
        with zipfile.ZipFile(archive) as zipped:  # the directory still reads, and hides the gap
            assert zipped.read("release.csv") == (made[0] / "plain" / "release.csv").read_bytes()
    elif how == "encrypted entry":  # flag bit 0 set in the local header and the directory
        raw = bytearray(data)
        with zipfile.ZipFile(good) as zipped:
            info = zipped.getinfo("release.csv")
            start = zipped.start_dir
        raw[info.header_offset + 6] |= 1
        position = start
        while raw[position:position + 4] == zipfile.stringCentralDir:
            fields = struct.unpack(zipfile.structCentralDir, raw[position:position + zipfile.sizeCentralDir])
            name = bytes(raw[position + zipfile.sizeCentralDir:position + zipfile.sizeCentralDir + fields[12]])
            if name == b"release.csv":
                raw[position + 8] |= 1
            position += zipfile.sizeCentralDir + fields[12] + fields[13] + fields[14]
        archive.write_bytes(bytes(raw))
    else:
        odd = "release.csv." if how == "trailing dot" else "release.csv:hidden"
        with zipfile.ZipFile(archive, "w") as zipped:
            for path in sorted((made[0] / "plain").iterdir()):
                zipped.write(path, path.name)
            zipped.writestr(odd, b"x")
    code, err = _verify(archive, capsys)
    assert code == 1 and err.startswith("ppdp: error:") and err.count("\n") == 1, err
    assert {"encrypted entry": "encrypted", "trailing dot": "plain files only", "colon": "plain files only"}.get(
        how, "other tools could read") in err, err


def test_a_zip_written_as_a_stream_verifies(made, tmp_path, capsys) -> None:
    """Zips written to a pipe carry a data descriptor after each file; the layout check follows them."""
    import io

    class Pipe(io.RawIOBase):
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, block) -> int:
            self.data += block
            return len(block)

    pipe = Pipe()
    with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted((made[0] / "plain").iterdir()):
            with zipped.open(path.name, "w") as sink:
                sink.write(path.read_bytes())
    archive = tmp_path / "streamed.zip"
    archive.write_bytes(bytes(pipe.data))
    with zipfile.ZipFile(archive) as zipped:
        assert all(info.flag_bits & 0x08 for info in zipped.infolist())
    code, err = _verify(archive, capsys)
    assert code == 0, err
