"""Signed releases (issue 16, point 6): the custodian's Ed25519 key, sealed like the key file; every way of
writing a release can sign it (write_release, ppdp anonymize / demo / run); ``verify --signer`` accepts the
custodian's fingerprint only, and a signature that is damaged, transplanted or lies about its key is refused."""
from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.errors import KeyFileError, ReleaseError
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import read_release, write_release
from ppdp_desktop.core.release.signing import (
    SIGNATURE_FILE,
    check_signature,
    new_signing_key,
    normalize_fingerprint,
    open_signing_key,
)

SIGNING = "the custodian's signing passphrase"
PASSPHRASE = "correct horse battery staple 16"


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A signing key and a release of the demo data signed with it (through ``ppdp demo --sign``)."""
    folder = tmp_path_factory.mktemp("signing")
    key = new_signing_key(folder / "custodian.ppdpsign", SIGNING)
    env = {"PPDP_SIGNING_PASSPHRASE": SIGNING, "PPDP_PASSPHRASE": PASSPHRASE}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        code = main(["demo", "--out", str(folder / "release"), "--seed", "2", "--quiet",
                     "--sign", str(folder / "custodian.ppdpsign")])
    finally:
        for name, value in saved.items():
            os.environ.pop(name) if value is None else os.environ.__setitem__(name, value)
    assert code == 0
    return folder, key


def _copy(signed, tmp_path: Path) -> Path:
    shutil.copytree(signed[0] / "release", tmp_path / "release")
    return tmp_path / "release"


def _verify(release: Path, capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["verify", str(release), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_demo_sign_writes_a_signature_that_verifies_with_the_fingerprint(signed, capsys) -> None:
    folder, key = signed
    release = folder / "release"
    assert (release / SIGNATURE_FILE).is_file()
    assert SIGNATURE_FILE not in (release / "SHA256SUMS").read_text(encoding="utf-8")  # it signs the manifest
    code, out, err = _verify(release, capsys, "--signer", key.fingerprint)
    assert code == 0, err
    assert f"signed by {key.fingerprint}" in out
    assert json.loads((release / "release.json").read_text(encoding="utf-8"))["signer"]["fingerprint"] == key.fingerprint
    readme = (release / "README.txt").read_text(encoding="utf-8")
    assert key.fingerprint in readme and f'--signer "{key.fingerprint}"' in readme
    report = (release / "report.html").read_text(encoding="utf-8")
    assert key.fingerprint in report  # the report inside the package names the signer too


def test_another_fingerprint_is_refused(signed, tmp_path, capsys) -> None:
    other = new_signing_key(tmp_path / "other.ppdpsign", "another passphrase 42")
    code, _, err = _verify(signed[0] / "release", capsys, "--signer", other.fingerprint)
    assert code == 1 and f"not by {other.fingerprint}" in err and err.count("\n") == 1


def test_a_malformed_fingerprint_is_one_clear_line(signed, capsys) -> None:
    code, _, err = _verify(signed[0] / "release", capsys, "--signer", "3f1a 9c0e")
    assert code == 2 and "is not a signer fingerprint" in err and err.count("\n") == 1


def test_a_release_re_signed_by_someone_else_is_refused_with_the_custodians_fingerprint(signed, tmp_path, capsys) -> None:
    """A forger who alters the release, rewrites SHA256SUMS and signs with their own key: without --signer verify
    names the forger's fingerprint (not the custodian's); with it, the release is refused."""
    from ppdp_desktop.core.data.checksums import write_checksums
    from ppdp_desktop.core.release.signing import sign_folder

    release = _copy(signed, tmp_path)
    forger = new_signing_key(tmp_path / "forger.ppdpsign", "the forger's passphrase")
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    meta["signer"]["fingerprint"] = forger.fingerprint
    (release / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    (release / "SHA256SUMS").unlink()
    write_checksums(release)
    sign_folder(release, forger)
    code, out, err = _verify(release, capsys)
    assert code == 0 and forger.fingerprint in out and signed[1].fingerprint not in out
    code, _, err = _verify(release, capsys, "--signer", signed[1].fingerprint)
    assert code == 1 and f"signed by {forger.fingerprint}, not by {signed[1].fingerprint}" in err


@pytest.mark.parametrize("damage", ["not json", "bad base64", "other algorithm", "transplanted", "lying fingerprint",
                                    "truncated signature"])
def test_a_damaged_or_foreign_signature_is_refused(signed, tmp_path, capsys, damage) -> None:
    release = _copy(signed, tmp_path)
    path = release / SIGNATURE_FILE
    entry = json.loads(path.read_text(encoding="utf-8"))
    if damage == "not json":
        path.write_text("{", encoding="utf-8")
    else:
        if damage == "bad base64":
            entry["signature"] = "***"
        elif damage == "other algorithm":
            entry["algorithm"] = "RSA"
        elif damage == "transplanted":  # a valid signature by the same key, of another manifest
            from ppdp_desktop.core.release.signing import _CONTEXT

            entry["signature"] = base64.b64encode(signed[1].private.sign(_CONTEXT + b"another manifest\n")).decode()
        elif damage == "lying fingerprint":  # a forger's key under the custodian's fingerprint
            forger = new_signing_key(tmp_path / "forger.ppdpsign", "the forger's passphrase")
            from ppdp_desktop.core.release.signing import sign_folder

            sign_folder(release, forger)
            entry = json.loads(path.read_text(encoding="utf-8"))
            entry["fingerprint"] = signed[1].fingerprint
        else:
            entry["signature"] = entry["signature"][:20]
        path.write_text(json.dumps(entry), encoding="utf-8")
    code, _, err = _verify(release, capsys)
    assert code == 1 and err.startswith("ppdp: error:") and err.count("\n") == 1, err
    assert "Traceback" not in err
    with pytest.raises(ReleaseError):  # the signature alone, whatever release.json says
        check_signature(release)


def test_a_signature_removed_is_refused_when_release_json_names_a_signer(signed, tmp_path, capsys) -> None:
    release = _copy(signed, tmp_path)
    (release / SIGNATURE_FILE).unlink()
    code, _, err = _verify(release, capsys)
    assert code == 1 and "has no SIGNATURE" in err


def test_the_api_signs_through_write_release(tmp_path) -> None:
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.demo import demo_settings

    key = new_signing_key(tmp_path / "k.ppdpsign", SIGNING)
    dataset = load_table(resource_path(DEMO_DATA))
    result = anonymize(dataset, demo_settings(dataset, "uniform", seed=3))
    folder = write_release(result, tmp_path / "rel", include_report=False, signer=key)
    release = read_release(folder)
    lines = verify_release(release, signer=key.fingerprint.replace(" ", ""))
    assert any(key.fingerprint in line for line in lines)
    assert check_signature(folder) == key.fingerprint
    with pytest.raises(ReleaseError, match="not signed"):
        verify_release(read_release(write_release(result, tmp_path / "plain", include_report=False)),
                       signer=key.fingerprint)


def test_signing_key_command_makes_a_sealed_private_file(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", SIGNING)
    path = tmp_path / "custodian.ppdpsign"
    assert main(["signing-key", str(path)]) == 0
    out = capsys.readouterr().out
    key = open_signing_key(path, SIGNING)
    assert f"fingerprint: {key.fingerprint}" in out
    assert key.private.private_bytes_raw() not in path.read_bytes()
    if sys.platform != "win32":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert main(["signing-key", str(path), "--show"]) == 0
    assert f"fingerprint: {key.fingerprint}" in capsys.readouterr().out
    assert main(["signing-key", str(path)]) == 3  # never over an existing key without --overwrite
    assert "already exists" in capsys.readouterr().err
    assert open_signing_key(path, SIGNING).fingerprint == key.fingerprint


def test_a_wrong_signing_passphrase_writes_nothing(signed, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", "not the passphrase")
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    code = main(["demo", "--out", str(tmp_path / "release"), "--quiet", "--sign", str(signed[0] / "custodian.ppdpsign")])
    err = capsys.readouterr().err
    assert code == 3 and "Wrong passphrase" in err and err.count("\n") == 1
    assert not (tmp_path / "release").exists() and list(tmp_path.iterdir()) == []


def test_a_release_key_is_not_a_signing_key(signed, tmp_path) -> None:
    key_files = list(signed[0].glob("*.ppdpkey")) + list(signed[0].glob("*.key"))
    assert key_files, list(signed[0].iterdir())
    with pytest.raises(KeyFileError, match="is a release's key file, not a signing key"):
        open_signing_key(key_files[0], PASSPHRASE)


def test_run_signs_a_saved_project(signed, tmp_path, capsys, monkeypatch) -> None:
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.demo import DEMO_ROLES, demo_taxonomy
    from ppdp_desktop.core.project import Project

    project = Project(data_path=str(resource_path(DEMO_DATA)), roles={c: r.value for c, r in DEMO_ROLES.items()},
                      theta=3.0)
    project.set_taxonomy(demo_taxonomy())
    project.save(tmp_path / "study.ppdp")
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", SIGNING)
    code = main(["run", str(tmp_path / "study.ppdp"), "--out", str(tmp_path / "rel"), "--seed", "4",
                 "--sign", str(signed[0] / "custodian.ppdpsign")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"signed by the key with fingerprint {signed[1].fingerprint}" in out.out  # the custodian sees it too
    code, _, err = _verify(tmp_path / "rel", capsys, "--signer", signed[1].fingerprint)
    assert code == 0, err


def test_fingerprints_are_read_in_any_spelling() -> None:
    text = "3f1a 9c0e 0000 1111 2222 3333 4444 5555"
    assert normalize_fingerprint(text.replace(" ", "").upper()) == text
    assert normalize_fingerprint(text.replace(" ", ":")) == text
    with pytest.raises(ReleaseError):
        normalize_fingerprint(text + "6")
