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
from ppdp_desktop.core.data import released
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
    assert code == 2 and err.startswith("ppdp: error:") and "internal" not in err, err


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
    assert code == 2 and "'release.csv' twice" in err


def test_a_zip_bomb_stops_at_the_cap_and_leaves_no_folder(made, tmp_path, capsys, monkeypatch) -> None:
    import tempfile

    archive = _zip(made[0] / "plain", tmp_path / "big.zip")
    monkeypatch.setattr(released, "MAX_UNZIPPED_BYTES", 1000)
    before = set(Path(tempfile.gettempdir()).glob("ppdp-release-*"))
    code, err = _verify(archive, capsys)
    assert code == 2 and "unpacks to more than" in err
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
    assert code == 2 and "altered after it was signed" in err, err
    (release / "SIGNATURE").unlink()  # dropping the signature does not help either
    code, err = _verify(release, capsys, "--signer", made[2])
    assert code == 2 and ("not signed" in err or "has no SIGNATURE" in err), err


def test_a_signed_release_verifies_with_its_fingerprint_only(made, tmp_path, capsys) -> None:
    release = made[0] / "signed"
    code, err = _verify(release, capsys, "--signer", made[2].replace(" ", "").upper())  # any spelling
    assert code == 0, err
    other = new_signing_key(tmp_path / "other.key", "another passphrase 42")
    code, err = _verify(release, capsys, "--signer", other.fingerprint)
    assert code == 2 and f"signed by {made[2]}, not by {other.fingerprint}" in err
    code, err = _verify(made[0] / "plain", capsys, "--signer", made[2])
    assert code == 2 and "not signed" in err
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
    assert code == 2 and "recomputed from the released data and matrices" in err, err
