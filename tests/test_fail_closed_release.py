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
from ppdp_desktop.core.release.analysis import verify_release
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
    with pytest.raises(SystemExit) as exit_:
        main(["anonymize", str(data), "--out", str(tmp_path / "o"), "--sensitive", "diagnosis", f"{flag}={word}"])
    code, err = exit_.value.code, capsys.readouterr().err
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
    assert main(_anonymize(data, data.parent, "--overwrite")) == 2
    assert "would replace or delete the input file" in capsys.readouterr().err
    assert main(_anonymize(data, tmp_path / "rel", "--key", str(data), "--overwrite")) == 2
    assert "would replace the input file" in capsys.readouterr().err
    assert same() and sorted(p.name for p in data.parent.iterdir()) == ["d.csv"]


def test_overwrite_replaces_only_a_release_or_key_of_ours(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = _data(tmp_path)
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"\xff\xd8")
    assert main(_anonymize(data, foreign, "--overwrite")) == 2
    assert "is not a release written by PPDP Desktop" in capsys.readouterr().err
    assert (foreign / "holiday.jpg").exists()
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    assert main(_anonymize(data, tmp_path / "rel", "--key", str(notes), "--overwrite")) == 2
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
    assert main([*base, str(key)]) == 2
    assert "is a sealed key file" in capsys.readouterr().err and key.read_bytes() == key_bytes
    assert main([*base, str(out / "decoded.csv")]) == 2
    assert "inside the release folder" in capsys.readouterr().err
    assert main([*base, str(results)]) == 2
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
    (tmp_path / f".rel.{dead}.old").mkdir()
    (tmp_path / ".unrelated.partial").write_text("not ours")
    write_release(_result(1), out, key_path=key, passphrase=PASSPHRASE, include_report=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".unrelated.partial", "rel", "rel.key"]


def test_the_files_are_verified_as_written(tmp_path: Path, monkeypatch) -> None:
    """A writer that puts the identifiers back after the plan was verified: nothing is published."""
    from ppdp_desktop.core.data import formats
    from ppdp_desktop.core.release.package import write_release

    real = formats.write_table
    truth = table(seed=1)

    def leaky(frame, path, fmt, **kwargs):  # writes the names back beside the pseudonyms
        frame = frame.copy()
        frame["patient"] = truth["patient"].to_numpy()
        real(frame, path, fmt, **kwargs)

    monkeypatch.setattr(formats, "write_table", leaky)
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
                 "--identifier", "patient", "--method", method, "--rho1", "0.1", "--rho2", "0.5"]) == 0
    inside = (out / "report.html").read_text(encoding="utf-8")
    counts = frame["diagnosis"].value_counts()
    leaked = [v for v, n in counts.items() if re.search(rf">{n:,}<", inside)]
    assert leaked == [], f"original counts of {leaked} in the package's report"
    assert "Counts estimated from the release" in inside and "Original and reconstructed" not in inside
    custodian = tmp_path / "rel.custodian-report.html"
    assert "custodian's report" in capsys.readouterr().out
    beside = custodian.read_text(encoding="utf-8")
    assert all(re.search(rf">{n:,}<", beside) for n in counts)  # the custodian keeps the original figures
    assert main(["verify", str(out)]) == 0
