"""Provenance (issue 20.3, 28.1): release.json and the key record the versions, the input file and the project
file; ``ppdp run`` and the key-opening paths say what differs; ``ppdp verify`` checks the block. The plain digests
(the input's SHA-256 and size, the project file's SHA-256) are sealed in the key only: release.json holds them keyed
with this installation's secret (the attack they would allow: tests/test_claims_oracle.py).

Real files throughout: an older version is simulated by editing the value recorded in a release.json or in a key
re-sealed with it, never by changing the installed libraries.
"""
from __future__ import annotations

import hashlib
import json
import platform
import re
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop import __version__
from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.checksums import manifest_sha256, write_checksums
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.data.streamed import open_streamed
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.installation import CONFIG_VARIABLE
from ppdp_desktop.core.release.lookup import KeyRing
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.release.provenance import LIBRARIES, Provenance, current_provenance
from ppdp_desktop.core.release.provenance_compare import PreviousRelease, differences
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings
from ppdp_desktop.core.streaming.release import write_streamed_release

PASSPHRASE = "provenance test: seven words long enough"
KINDS = {"id": "text"}


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": [f"P{i:05d}" for i in range(n)], "sex": rng.choice(["F", "M"], n),
                         "dx": rng.choice(list("abcdef"), n, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05])})


def _settings() -> AnonymizationSettings:
    return AnonymizationSettings("dx", "uniform", ["id"], [], SensitivitySettings(theta=3.0), seed=3)


def _expected_input(path: Path) -> dict:
    data = path.read_bytes()
    return {"name": path.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _check_versions(block: dict) -> None:
    assert block["app"] == __version__
    assert block["python"] == platform.python_version()
    assert block["libraries"] == {name: metadata.version(name) for name in LIBRARIES}


def _recorded(folder: Path) -> dict:
    return json.loads((folder / "release.json").read_text(encoding="utf-8"))["provenance"]


def _check_public(block: dict, path: Path, project: Path | None = None) -> None:
    """release.json's block names the input and holds its digests keyed with this installation's secret only."""
    expected = _expected_input(path)
    assert block["input"] == {"name": path.name} and "project_sha256" not in block
    text = json.dumps(block)
    assert expected["sha256"] not in text and not re.search(rf"(?<![0-9a-f]){expected['size']}(?![0-9a-f])", text)
    keyed = Provenance.from_json(block).keyed
    assert keyed.matches("input", expected["sha256"], expected["size"]) is True
    assert keyed.matches("input", expected["sha256"], expected["size"] + 1) is False  # the size is keyed too
    if project is not None:
        assert keyed.matches("project", hashlib.sha256(project.read_bytes()).hexdigest()) is True
    else:
        assert keyed.project is None


def _check_key(key: Path, folder: Path, path: Path) -> None:
    """The sealed key holds the plain digest, and the same public block as release.json."""
    payload = keyfile.open_key(key, PASSPHRASE, manifest_sha256(folder))["provenance"]
    assert payload["input"] == _expected_input(path)
    assert Provenance.from_json(payload, "the key").public_json() == _recorded(folder)


@pytest.fixture
def csv_file(tmp_path) -> Path:
    path = tmp_path / "patients.csv"
    _table(400).to_csv(path, index=False)
    return path


def test_in_memory_release_and_key_record_the_versions_and_the_input(csv_file, tmp_path):
    result = anonymize(load_table(csv_file, kinds=KINDS), _settings())
    out, key = tmp_path / "release", tmp_path / "release.ppdpkey"
    write_release(result, out, include_report=False, key_path=key, passphrase=PASSPHRASE)
    block = _recorded(out)
    _check_versions(block)
    _check_public(block, csv_file)
    _check_key(key, out, csv_file)


@pytest.mark.parametrize("suffix", [".parquet", ".xlsx"])
def test_in_memory_release_of_other_formats_records_the_input(suffix, tmp_path):
    path = tmp_path / f"patients{suffix}"
    table = _table(120, seed=1)
    table.to_parquet(path, index=False) if suffix == ".parquet" else table.to_excel(path, index=False)
    result = anonymize(load_table(path, kinds=KINDS), _settings())
    write_release(result, tmp_path / "release", include_report=False)
    _check_public(_recorded(tmp_path / "release"), path)


def test_a_preview_has_no_digest(csv_file):
    assert load_table(csv_file, rows=10).digest is None
    assert load_table(csv_file).digest.sha256 == _expected_input(csv_file)["sha256"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_streamed_release_records_the_input(fmt, csv_file, tmp_path):
    path = csv_file if fmt == "csv" else tmp_path / "patients.parquet"
    if fmt == "parquet":
        _table(400).to_parquet(path, index=False)
    out, key = tmp_path / "streamed", tmp_path / "streamed.ppdpkey"
    write_streamed_release(open_streamed(path, kinds=KINDS), _settings(), out, chunk_size=37, include_report=False,
                           key_path=key, passphrase=PASSPHRASE)
    block = _recorded(out)
    _check_versions(block)
    _check_public(block, path)
    _check_key(key, out, path)


def test_a_streamed_csv_is_hashed_by_its_first_whole_read(csv_file):
    source = open_streamed(csv_file, kinds=KINDS)
    assert source.hashes_while_reading and source.digest is None
    batches = source.batches(50)
    next(batches)
    batches.close()  # a read stopped half way: no digest
    assert source.digest is None
    for _ in source.batches(50):
        pass
    assert source.digest.to_json() == _expected_input(csv_file)


def _rewrite(folder: Path, change) -> None:
    """Edit release.json and write the checksums again (as a careless tool would)."""
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    change(meta)
    (folder / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    write_checksums(folder)


def test_verify_checks_the_block_and_still_verifies_an_older_release(csv_file, tmp_path, capsys):
    result = anonymize(load_table(csv_file, kinds=KINDS), _settings())
    out = tmp_path / "release"
    write_release(result, out, include_report=False)
    assert main(["verify", str(out)]) == 0
    assert f"provenance: made with PPDP Desktop {__version__}" in capsys.readouterr().out
    original = (out / "release.json").read_bytes()
    text = original.decode("utf-8").replace(f'"numpy": "{np.__version__}"', '"numpy": "1.0.0"')
    (out / "release.json").write_text(text, encoding="utf-8")  # the checksums cover the provenance
    assert text.encode("utf-8") != original and main(["verify", str(out)]) == 1
    assert "release.json" in capsys.readouterr().err
    (out / "release.json").write_bytes(original)
    _rewrite(out, lambda meta: meta.pop("provenance"))  # a release of an older version
    assert main(["verify", str(out)]) == 0
    assert "no provenance recorded" in capsys.readouterr().out
    _rewrite(out, lambda meta: meta.update(provenance={**current_provenance().to_json(),
                                                        "input": {"name": "a.csv", "size": 3, "sha256": "xyz"}}))
    with read_release(out) as release, pytest.raises(ReleaseError, match="input.sha256"):
        verify_release(release)
    assert main(["verify", str(out)]) == 1
    capsys.readouterr()
    _rewrite(out, lambda meta: meta.update(provenance={**current_provenance().to_json(), "keyed": {
        "algorithm": "HMAC-SHA256", "installation": "00" * 8, "nonce": "00" * 16, "input": "0" * 63, "project": None}}))
    assert main(["verify", str(out)]) == 1  # a keyed digest that is not one
    assert "keyed.input" in capsys.readouterr().err


def test_a_release_of_an_earlier_version_with_the_plain_digest_verifies_and_is_called_an_oracle(csv_file, tmp_path,
                                                                                               capsys):
    out = tmp_path / "release"
    write_release(anonymize(load_table(csv_file, kinds=KINDS), _settings()), out, include_report=False)
    assert main(["verify", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err  # this version's release publishes no digest
    legacy = {**current_provenance().to_json(), "input": _expected_input(csv_file), "project_sha256": "ab" * 32}
    legacy.pop("keyed")
    _rewrite(out, lambda meta: meta.update(provenance=legacy))  # as releases before issue 28 were written
    assert main(["verify", str(out)]) == 0
    captured = capsys.readouterr()
    assert ("ppdp: warning: this release publishes its input file's SHA-256 and size (and its project file's "
            "SHA-256): anyone who knows every cell of the input but one can rebuild the file for each guess of that "
            "cell and test the guess against them") in captured.err
    line = next(line for line in captured.out.splitlines() if line.startswith("OK provenance:"))
    assert "WARNING: this release publishes its input file's SHA-256 and size" in line
    assert legacy["input"]["sha256"] not in captured.out + captured.err  # not repeated


def test_differences_name_each_version_and_the_input():
    now = current_provenance()
    old = Provenance.from_json({**now.to_json(), "libraries": {**now.libraries, "numpy": "1.0.0"}})
    assert differences(old, now) == [f"this release was made with numpy 1.0.0; you have {now.libraries['numpy']}: "
                                     "the same seed may not give the same release."]
    assert differences(now, now) == []


def _project(tmp_path: Path, data: Path) -> Path:
    project = Project(data_path=str(data), load_options={"kinds": KINDS}, roles={"id": "identifier", "dx": "sensitive"},
                      method="uniform", theta=3.0)
    path = tmp_path / "monthly.ppdp"
    project.save(path)
    return path


def test_ppdp_run_says_what_differs_from_the_release_it_replaces(csv_file, tmp_path, capsys):
    project, out = _project(tmp_path, csv_file), tmp_path / "out"
    assert main(["run", str(project), "--out", str(out), "--seed", "5"]) == 0
    _check_public(_recorded(out), csv_file, project)
    assert "ppdp: note" not in capsys.readouterr().err  # no previous release: nothing compared
    assert main(["run", str(project), "--out", str(out), "--seed", "5", "--overwrite"]) == 0
    assert "ppdp: note" not in capsys.readouterr().err  # the same input, project and versions: nothing to say

    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))  # made by an older numpy
    meta["provenance"]["libraries"]["numpy"] = "1.0.0"
    (out / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    assert main(["run", str(project), "--out", str(out), "--seed", "5", "--overwrite"]) == 0
    err = capsys.readouterr().err
    assert (f"the previous release was made with numpy 1.0.0; you have {np.__version__}: the same seed may not give "
            "the same release") in err
    assert "input file differs" not in err

    with csv_file.open("a", encoding="utf-8") as handle:  # next month's file: one more record
        handle.write("P99999,F,a\n")
    assert main(["run", str(project), "--out", str(out), "--seed", "5", "--overwrite"]) == 0
    err = capsys.readouterr().err
    assert "ppdp: note: the input file differs from the one the previous release was made from." in err
    assert "numpy" not in err and "project file" not in err and "cannot tell" not in err
    _check_public(_recorded(out), csv_file, project)

    project.write_text(project.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # the project edited
    assert main(["run", str(project), "--out", str(out), "--seed", "5", "--overwrite"]) == 0
    err = capsys.readouterr().err
    assert "ppdp: note: the project file has changed since the previous release was made." in err
    assert "input file" not in err


def test_ppdp_run_on_another_computer_cannot_tell_whether_the_input_changed(csv_file, tmp_path, capsys, monkeypatch):
    project, out = _project(tmp_path, csv_file), tmp_path / "out"
    assert main(["run", str(project), "--out", str(out)]) == 0
    monkeypatch.setenv(CONFIG_VARIABLE, str(tmp_path / "another-computer"))  # another installation's secret
    capsys.readouterr()
    assert main(["run", str(project), "--out", str(out), "--overwrite"]) == 0
    assert ("ppdp: note: cannot tell whether the input file or the project file changed since the previous release "
            "was made: it was made on another computer") in capsys.readouterr().err


def test_ppdp_run_compares_with_the_plain_digest_of_a_release_of_an_earlier_version(csv_file, tmp_path, capsys):
    project, out = _project(tmp_path, csv_file), tmp_path / "out"
    assert main(["run", str(project), "--out", str(out)]) == 0
    legacy = {**current_provenance().to_json(), "input": _expected_input(csv_file),
              "project_sha256": hashlib.sha256(project.read_bytes()).hexdigest()}
    _rewrite(out, lambda meta: meta.update(provenance={k: v for k, v in legacy.items() if k != "keyed"}))
    capsys.readouterr()
    assert main(["run", str(project), "--out", str(out), "--overwrite"]) == 0
    assert "ppdp: note" not in capsys.readouterr().err  # unchanged
    _rewrite(out, lambda meta: meta.update(provenance={**legacy, "keyed": None, "input": {
        **legacy["input"], "sha256": "0" * 64}}))
    assert main(["run", str(project), "--out", str(out), "--overwrite"]) == 0
    assert "the input file differs from the one the previous release was made from" in capsys.readouterr().err


def test_ppdp_run_on_a_release_without_provenance_says_so(csv_file, tmp_path, capsys):
    project, out = _project(tmp_path, csv_file), tmp_path / "out"
    assert main(["run", str(project), "--out", str(out)]) == 0
    _rewrite(out, lambda meta: meta.pop("provenance"))
    capsys.readouterr()
    assert main(["run", str(project), "--out", str(out), "--overwrite"]) == 0
    assert "records no provenance" in capsys.readouterr().err
    assert PreviousRelease.read(tmp_path / "nothing-here").compare(out) == []


def test_opening_a_key_of_other_versions_says_so(csv_file, tmp_path, capsys, monkeypatch):
    result = anonymize(load_table(csv_file, kinds=KINDS), _settings())
    out, key = tmp_path / "release", tmp_path / "release.ppdpkey"
    write_release(result, out, include_report=False, key_path=key, passphrase=PASSPHRASE)
    manifest = manifest_sha256(out)
    assert KeyRing.open(out, key, PASSPHRASE).provenance_notes() == []
    payload = keyfile.open_key(key, PASSPHRASE, manifest)  # re-sealed as an older app would have sealed it
    records = payload.pop(keyfile.RECORDS, None)
    payload["provenance"]["libraries"]["cryptography"] = "41.0.0"
    payload["provenance"]["python"] = "3.10.0"
    key.unlink()
    keyfile.seal(payload, PASSPHRASE, manifest, key, records=records)
    notes = KeyRing.open(out, key, PASSPHRASE).provenance_notes()
    assert notes == [f"this release was made with Python 3.10.0; you have {platform.python_version()}: the same seed "
                     "may not give the same release.",
                     f"this release was made with cryptography 41.0.0; you have {metadata.version('cryptography')}: "
                     "the same seed may not give the same release."]
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    pseudonym = pd.read_csv(out / "release.csv", encoding="utf-8-sig")["pseudonym"].iloc[0]
    assert main(["lookup", str(out), str(key), "--pseudonym", pseudonym]) == 0
    captured = capsys.readouterr()
    assert "ppdp: note: this release was made with cryptography 41.0.0" in captured.err
    assert "id: P" in captured.out

    payload.pop("provenance")  # a key of an older version (format 2 without provenance) still opens, silently
    key.unlink()
    keyfile.seal(payload, PASSPHRASE, manifest, key, records=records)
    ring = KeyRing.open(out, key, PASSPHRASE)
    assert ring.provenance is None and ring.provenance_notes() == []


def test_a_project_is_saved_in_its_file_only_with_the_same_choices(csv_file, tmp_path):
    path = _project(tmp_path, csv_file)
    project = Project.load(path)
    project.roles["sex"] = "insensitive"  # the window lists every column: the default changes nothing
    project.release_folder, project.key_path = "elsewhere", "elsewhere.ppdpkey"
    assert project.is_saved_in(path)
    project.theta = 5.0  # a choice not saved: the file does not describe the release
    assert not project.is_saved_in(path) and not project.is_saved_in(None)


def test_the_installation_secret_is_random_private_and_made_once(tmp_path, monkeypatch, csv_file, capsys):
    import os
    import stat

    from ppdp_desktop.core.release import installation

    monkeypatch.setenv(CONFIG_VARIABLE, str(tmp_path / "config"))
    assert installation.installation_secret(create=False) is None  # nothing made by merely looking
    secret = installation.installation_secret()
    path = tmp_path / "config" / installation.SECRET_FILE
    assert len(secret) == 32 and path.read_text(encoding="ascii") == secret.hex() + "\n"
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert installation.installation_secret() == secret  # made once, then read
    assert sorted(p.name for p in path.parent.iterdir()) == [installation.SECRET_FILE]  # no partial file left
    monkeypatch.setenv(CONFIG_VARIABLE, str(tmp_path / "elsewhere"))
    assert installation.installation_secret() != secret  # another installation: another secret

    path.write_text("not a secret\n", encoding="ascii")  # damaged: a clear message, no release, no traceback
    monkeypatch.setenv(CONFIG_VARIABLE, str(tmp_path / "config"))
    assert main(["anonymize", str(csv_file), "--out", str(tmp_path / "r"), "--sensitive", "dx", "--identifier", "id",
                 "--theta", "3", "--no-report"]) != 0
    err = capsys.readouterr().err
    assert f"This computer's provenance secret {path} is damaged" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
