"""Claims battery (issue 28.1): nothing a release publishes lets anyone test a guess about its input.

The attacker, run for real on 300 records of adult.csv: someone who knows every cell of the input file but one (the
target's age, or occupation) and how the file is laid out — the adversary of differential privacy. They rebuild the
file for each value the cell can take, compute its SHA-256 and size, and look for any of them in every public file
of the release: release.json, README.txt, SHA256SUMS, the data file, the reports (the PDF's text too), the file
names, and a .zip's raw bytes and members. This version's release must match no candidate: each candidate fits it
alike. Control (the test can fail): the same package with the provenance block releases used to publish (the
input's plain SHA-256 and size) gives the target's true value away, as it did from the command line.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.checksums import manifest_sha256, write_checksums
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.provenance import Provenance

N_RECORDS = 300
TARGET = 17  # the target's record among them (0-based)
PASSPHRASE = "claims battery: the oracle test passphrase"
JOBS = {  # method -> (the target's cell the attacker guesses, the job's options, release as a .zip)
    "uniform": ("occupation", ["--sensitive", "occupation", "--quasi", "age,sex,race", "--rho1", "0.1", "--rho2",
                               "0.4"], False),
    "dp-microagg": ("age", ["--attributes", "age", "--epsilon", "1", "--k", "25", "--domain", "age=17:90"], True),
}


def _lines(adult: Path) -> list[bytes]:
    """The header and the first records of adult.csv, as the bytes of their lines (CRLF-terminated)."""
    return adult.read_bytes().split(b"\r\n")[:N_RECORDS + 1]


def _file(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\r\n" for line in lines)


def _candidates(adult: Path, lines: list[bytes], column: str) -> dict[str, bytes]:
    """Every value ``column`` takes in adult.csv, each with the input file the target's cell set to it."""
    names = lines[0].decode().split(";")
    at = names.index(column)
    domain = sorted(pd.read_csv(adult, sep=";", dtype=str, usecols=[column])[column].dropna().unique())
    files = {}
    for value in domain:
        cells = lines[TARGET + 1].split(b";")
        cells[at] = value.encode()
        files[value] = _file([*lines[:TARGET + 1], b";".join(cells), *lines[TARGET + 2:]])
    return files


def _public_texts(package: Path) -> dict[str, bytes]:
    """Everything a recipient can read in the package: each file's bytes, a PDF's text, a zip's members and the
    file names."""
    paths = sorted(package.iterdir()) if package.is_dir() else [package]
    texts: dict[str, bytes] = {"(file names)": "\n".join(p.name for p in paths).encode()}
    for path in paths:
        data = path.read_bytes()
        texts[path.name] = data
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                texts[f"{path.name} (names)"] = "\n".join(archive.namelist()).encode()
                for member in archive.namelist():
                    texts[f"{path.name}/{member}"] = archive.read(member)
    for name, data in list(texts.items()):
        if name.endswith(".pdf"):
            pypdf = pytest.importorskip("pypdf")
            texts[f"{name} (text)"] = "\n".join(
                page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages).encode()
    return texts


def _digest_forms(data: bytes) -> list[bytes]:
    """The SHA-256 of ``data`` as anyone might write it: hex (either case), base64, the raw bytes."""
    raw = hashlib.sha256(data).digest()
    return [raw.hex().encode(), raw.hex().upper().encode(), base64.b64encode(raw).rstrip(b"="), raw]


def _size_pattern(size: int) -> re.Pattern[bytes]:
    """The size as a number standing on its own, with or without a thousands separator."""
    forms = {str(size), f"{size:,}", f"{size:,}".replace(",", " "), f"{size:,}".replace(",", ".")}
    alternatives = b"|".join(re.escape(form.encode()) for form in sorted(forms))
    return re.compile(rb"(?<![0-9A-Za-z+/.,])(?:" + alternatives + rb")(?![0-9A-Za-z+/])")


def hash_attack(texts: dict[str, bytes], candidates: dict[str, bytes]) -> tuple[set[str], set[str]]:
    """The candidate values whose file's digest, and those whose file's size, appear in a public file."""
    by_digest = {value for value, data in candidates.items()
                 if any(form in text for form in _digest_forms(data) for text in texts.values())}
    by_size = {value for value, data in candidates.items()
               if any(_size_pattern(len(data)).search(text) for text in texts.values())}
    return by_digest, by_size


def _legacy(folder: Path, plain: dict) -> None:
    """Rewrite the release as the versions before issue 28 wrote it: the plain digest in release.json."""
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    meta["provenance"] = {key: value for key, value in plain.items() if key != "keyed"}
    (folder / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    (folder / "SHA256SUMS").unlink()
    write_checksums(folder)


@pytest.mark.parametrize("method", list(JOBS))
def test_no_public_file_of_the_release_tells_the_targets_cell(method, adult_csv, tmp_path, capsys, monkeypatch):
    column, options, as_zip = JOBS[method]
    lines = _lines(adult_csv)
    data = tmp_path / "patients.csv"
    data.write_bytes(_file(lines))
    candidates = _candidates(adult_csv, lines, column)
    truth = lines[TARGET + 1].split(b";")[lines[0].split(b";").index(column.encode())].decode()
    assert candidates[truth] == data.read_bytes() and len(candidates) >= 14  # the attacker's set holds the file
    assert len({hashlib.sha256(file).digest() for file in candidates.values()}) == len(candidates)

    out, key = tmp_path / ("release.zip" if as_zip else "release"), tmp_path / "release.ppdpkey"
    args = ["anonymize", str(data), "--out", str(out), "--method", method, *options, "--seed", "3",
            "--key", str(key), *(["--zip"] if as_zip else [])]
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    assert main(args) == 0, capsys.readouterr().err
    texts = _public_texts(out)
    assert "release.json" in texts or any(name.endswith("/release.json") for name in texts)
    assert any(name.endswith(".pdf (text)") for name in texts)  # the report's text is searched too
    assert hash_attack(texts, candidates) == (set(), set())  # every candidate fits the release alike

    # what provenance needs is where only the custodian reads it: the sealed key holds the plain digest
    manifest = manifest_sha256(out if not as_zip else _unzipped(out, tmp_path))
    plain = keyfile.open_key(key, PASSPHRASE, manifest)["provenance"]
    assert plain["input"] == {"name": data.name, "size": len(candidates[truth]),
                              "sha256": hashlib.sha256(candidates[truth]).hexdigest()}
    keyed = Provenance.from_json(plain, "the key").keyed  # and release.json's keyed digest: this computer's only
    assert [value for value, file in candidates.items()
            if keyed.matches("input", hashlib.sha256(file).hexdigest(), len(file))] == [truth]

    # control: the provenance releases used to publish gives the target's value away, to the same attack
    folder = out if not as_zip else _unzipped(out, tmp_path)
    _legacy(folder, plain)
    by_digest, by_size = hash_attack(_public_texts(folder), candidates)
    assert by_digest == {truth}
    assert by_size == {value for value in candidates if len(value) == len(truth)}  # the size alone narrows it
    assert main(["verify", str(folder)]) == 0  # such a release still verifies, and is called what it is
    assert ("ppdp: warning: this release publishes its input file's SHA-256 and size: anyone who knows every cell "
            "of the input but one can rebuild the file") in capsys.readouterr().err


def _unzipped(archive: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "unzipped"
    if not folder.is_dir():
        with zipfile.ZipFile(archive) as source:
            source.extractall(folder)
    return folder
