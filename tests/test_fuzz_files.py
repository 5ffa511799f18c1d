"""The fail-closed battery, files half (issue 32): key kinds, devices and FIFOs as inputs, a huge cell, too many
workers, a full disk after the release is complete. Each case ends in one ``ppdp: error:`` line and a non-zero exit
(never 70), and writes nothing it must not (the battery's rules: tests/test_fuzz_battery.py, whose helpers and
fixtures these cases share). The kill -9 cases (streamed spill, interrupted overwrite) are in
tests/test_kill_leftovers.py."""
from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.keyheader import MAGIC, SECRET_MAGIC, SIGNING_MAGIC
from ppdp_desktop.core.release.signing import PURPOSE, new_signing_key, open_signing_key
from tests import test_fuzz_battery as battery
from tests.test_fuzz_battery import PASSPHRASE, _assert_refused, _run, _snapshot

base, work = battery.base, battery.work  # the battery's fixtures: a data file and a release with its key, copied

REPO = Path(__file__).resolve().parents[1]
SIGNING = "a signing passphrase 42"
RELEASE_ARGS = ["--sensitive", "diagnosis", "--rho1", "0.1", "--rho2", "0.6", "--no-report"]


def _old_signing_key(path: Path) -> Path:
    """A signing key as the app wrote it before issue 32: the release key's magic, told apart by its purpose."""
    from base64 import b64encode

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    raw = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    keyfile.seal({"kind": "ppdp-signing-key", "algorithm": "Ed25519", "private": b64encode(raw).decode()}, SIGNING,
                 PURPOSE, path)
    return path


def _project(work: Path) -> Path:
    from ppdp_desktop.core.project import Project

    path = work / "monthly.ppdp"
    Project(data_path=str(work / "in" / "d.csv"), roles={"diagnosis": "sensitive", "patient": "identifier"},
            method="uniform", theta=None, rho1=0.1, rho2=0.6).save(path)
    return path


def test_each_kind_of_sealed_file_has_its_own_magic_and_old_ones_still_open(tmp_path: Path) -> None:
    new = new_signing_key(tmp_path / "new.ppdpsign", SIGNING)
    assert (tmp_path / "new.ppdpsign").read_bytes()[:8] == SIGNING_MAGIC != MAGIC
    assert open_signing_key(tmp_path / "new.ppdpsign", SIGNING).fingerprint == new.fingerprint
    old = _old_signing_key(tmp_path / "old.ppdpsign")
    assert old.read_bytes()[:8] == MAGIC
    assert open_signing_key(old, SIGNING).fingerprint  # a signing key of before still signs
    from ppdp_desktop.core.release.custodian_secret import create_secret

    create_secret("ward 7", PASSPHRASE, tmp_path / "custodian.secret")
    assert (tmp_path / "custodian.secret").read_bytes()[:8] == SECRET_MAGIC


def _sealed(work: Path, kind: str) -> Path:
    """A sealed file of ``kind`` in the work folder (signing keys under the signing passphrase)."""
    if kind == "signing key":
        new_signing_key(work / "s1.sig", SIGNING)
        return work / "s1.sig"
    if kind == "old signing key":
        return _old_signing_key(work / "s1.sig")
    if kind == "custodian secret":
        from ppdp_desktop.core.release.custodian_secret import create_secret

        create_secret("ward 7", PASSPHRASE, work / "custodian.secret")
        return work / "custodian.secret"
    return work / "rel.key"


KIND_CASES = {  # argv (the sealed file as {file}) -> fragment of the one error line
    "anonymize --key SIGNING --overwrite": ("signing key", ["anonymize", "{data}", "--out", "{out}", "--key", "{file}",
                                                            "--overwrite", *RELEASE_ARGS], "is a signing key file"),
    "anonymize --key OLD-SIGNING --overwrite": ("old signing key", ["anonymize", "{data}", "--out", "{out}", "--key",
                                                                    "{file}", "--overwrite", *RELEASE_ARGS],
                                                "is a signing key file"),
    "anonymize --key SECRET --overwrite": ("custodian secret", ["anonymize", "{data}", "--out", "{out}", "--key",
                                                                "{file}", "--overwrite", *RELEASE_ARGS],
                                           "is a custodian secret"),
    "anonymize --sign S --key S --overwrite": ("signing key", ["anonymize", "{data}", "--out", "{out}", "--key",
                                                               "{file}", "--sign", "{file}", "--overwrite",
                                                               *RELEASE_ARGS], "--sign"),
    "anonymize --streaming --sign S --key S": ("signing key", ["anonymize", "{data}", "--out", "{out}", "--streaming",
                                                               "--key", "{file}", "--sign", "{file}", "--overwrite",
                                                               *RELEASE_ARGS], "--sign"),
    "run --sign S --key S --overwrite": ("signing key", ["run", "{project}", "--out", "{out}", "--key", "{file}",
                                                         "--sign", "{file}", "--overwrite"], "--sign"),
    "run --key OLD-SIGNING --overwrite": ("old signing key", ["run", "{project}", "--out", "{out}", "--key", "{file}",
                                                              "--overwrite"], "is a signing key file"),
    "demo --key SIGNING --overwrite": ("signing key", ["demo", "--out", "{out}", "--key", "{file}", "--overwrite"],
                                       "is a signing key file"),
    "signing-key RELEASE-KEY --overwrite": ("release key", ["signing-key", "{file}", "--overwrite"],
                                            "is a release's key file"),
    "signing-key SECRET --overwrite": ("custodian secret", ["signing-key", "{file}", "--overwrite"],
                                       "is a custodian secret"),
}


@pytest.mark.parametrize("case", list(KIND_CASES))
def test_overwrite_never_replaces_a_sealed_file_of_another_kind(work: Path, capsys, monkeypatch, case: str) -> None:
    """Issue 32, 1: each of these exited 0 and destroyed the file (a signing key, a release's key, a secret)."""
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", SIGNING)
    kind, argv, fragment = KIND_CASES[case]
    sealed = _sealed(work, kind)
    project = _project(work) if "{project}" in argv else None
    before = _snapshot(work)
    code, err = _run(capsys, [a.format(data=work / "in" / "d.csv", out=work / "out", file=sealed, project=project)
                              for a in argv])
    _assert_refused(code, err, fragment)
    assert code == 3, err  # an output that cannot be used (docs/cli.md)
    assert _snapshot(work) == before  # the sealed file untouched, nothing written
    assert not (work / "out").exists() and not [p for p in work.iterdir() if p.name.startswith(".")]


def test_overwrite_still_replaces_a_file_of_the_same_kind(work: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", SIGNING)
    old = _old_signing_key(work / "s1.sig")
    first = open_signing_key(old, SIGNING).fingerprint
    assert _run(capsys, ["signing-key", old, "--overwrite"])[0] == 0  # a signing key (of before) over a signing key
    assert old.read_bytes()[:8] == SIGNING_MAGIC and open_signing_key(old, SIGNING).fingerprint != first
    code, err = _run(capsys, ["anonymize", work / "in" / "d.csv", "--out", work / "rel", "--key", work / "rel.key",
                              "--overwrite", *RELEASE_ARGS])
    assert code == 0, err  # a release's key over a release's key


def test_a_full_disk_while_the_custodian_report_is_written_publishes_nothing(work: Path, capsys, monkeypatch) -> None:
    """Issue 32, 9: the report was written after the publish; its ENOSPC said "Nothing was published" over a
    complete release. Now it is written before: the failure leaves nothing, and says so truly."""
    from ppdp_desktop.core.report import files

    real = files.write_html

    def full(reports, context, path, *args, **kwargs):  # the disk fills up at the custodian's report
        if "custodian-report" in str(path):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(reports, context, path, *args, **kwargs)

    monkeypatch.setattr(files, "write_html", full)
    out = work / "new"
    code, err = _run(capsys, ["anonymize", work / "in" / "d.csv", "--out", out, "--key", work / "new.key",
                              *RELEASE_ARGS[:-1]])
    _assert_refused(code, err, "Nothing was published")
    assert not out.exists() and not (work / "new.key").exists()
    assert not [p for p in work.iterdir() if p.name.startswith(".")]


def test_a_failure_after_the_publish_says_what_was_published(work: Path, capsys, monkeypatch) -> None:
    """A disk full (or Ctrl+C) after the release and its key are in place never says "nothing was published"."""
    from ppdp_desktop.core.release import package_report

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(package_report.StagedCustodianReport, "commit", full)
    out = work / "new"
    code, err = _run(capsys, ["anonymize", work / "in" / "d.csv", "--out", out, "--key", work / "new.key",
                              *RELEASE_ARGS[:-1]])
    _assert_refused(code, err, f"The release {out} and its key {work / 'new.key'} are published and complete")
    assert "othing was" not in err and out.is_dir() and (work / "new.key").is_file()
    assert _run(capsys, ["verify", out])[0] == 0

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("ppdp_desktop.cli.commands.print_summary", interrupted)
    code, err = _run(capsys, ["anonymize", work / "in" / "d.csv", "--out", work / "third", *RELEASE_ARGS])
    assert code == 4 and "nothing was written" not in err and f"The release {work / 'third'} was published" in err, err


def _cli(argv: list, timeout: int = 120) -> subprocess.CompletedProcess:
    """``ppdp ARGV`` in a process of its own, bounded in time and memory: on a device or a FIFO the code before issue
    32 read for ever (a MemoryError after a minute) or hung."""
    def bounded() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

    env = {**os.environ, "PYTHONPATH": str(REPO), "PPDP_PASSPHRASE": PASSPHRASE}
    return subprocess.run([sys.executable, "-m", "ppdp_desktop", *map(str, argv)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=timeout, preexec_fn=bounded)


DEVICE_CASES = {  # argv (the FIFO as {fifo}, the work folder as {work}) -> fragment
    "run /dev/zero": (["run", "/dev/zero"], "zero: is a character device, not a regular file"),
    "run /dev/urandom": (["run", "/dev/urandom"], "urandom: is a character device"),
    "run FIFO": (["run", "{fifo}"], "is a named pipe (FIFO), not a regular file"),
    "anonymize FIFO.csv": (["anonymize", "{fifo}", "--out", "{work}/out", *RELEASE_ARGS], "named pipe (FIFO)"),
    "anonymize --streaming FIFO.csv": (["anonymize", "{fifo}", "--out", "{work}/out", "--streaming", *RELEASE_ARGS],
                                       "named pipe (FIFO)"),
    "risk FIFO.csv": (["risk", "{fifo}", "--quasi", "sex"], "named pipe (FIFO)"),
    "anonymize --pairs FIFO": (["anonymize", "{work}/in/d.csv", "--out", "{work}/out", "--pairs", "{fifo}",
                                *RELEASE_ARGS], "named pipe (FIFO)"),
    "lookup --passphrase-file /dev/zero": (["lookup", "{work}/rel", "{work}/rel.key", "--pseudonym", "R0",
                                            "--passphrase-file", "/dev/zero"], "longer than 64 KiB"),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("case", list(DEVICE_CASES))
def test_devices_and_fifos_are_refused_at_once(work: Path, case: str) -> None:
    """Issue 32, 10 and 12: /dev/zero read until memory ran out (exit 70 after a minute), a FIFO hung."""
    argv, fragment = DEVICE_CASES[case]
    fifo = work / "in" / "pipe.csv"
    os.mkfifo(fifo)
    before = _snapshot(work)
    done = _cli([a.format(fifo=fifo, work=work) for a in argv])
    _assert_refused(done.returncode, done.stderr, fragment)
    assert done.returncode == (2 if "passphrase" in case else 3), done.stderr  # docs/cli.md
    assert _snapshot(work) == before and not (work / "out").exists()


def _huge_cell(work: Path, suffix: str, rows: int = 300) -> Path:
    frame = battery._table(rows)
    frame["diagnosis"] = frame["diagnosis"].astype(object)
    frame.loc[rows - 3, "diagnosis"] = "x" * 2_000_000  # a 2-million-character cell
    path = work / "in" / f"huge{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("how", ["csv", "csv streamed", "parquet"])
def test_a_cell_over_the_limit_is_refused_naming_its_column_and_row(work: Path, capsys, how: str) -> None:
    """Issue 32, 10 and 12: a 10-million-character cell became a 370 MB release (and crashed the report's fonts)."""
    data = _huge_cell(work, ".parquet" if how == "parquet" else ".csv")
    out = work / "out"
    streamed = ["--streaming", "--chunk-size", "100"] if how == "csv streamed" else []
    code, err = _run(capsys, ["anonymize", data, "--out", out, *streamed, *RELEASE_ARGS])
    _assert_refused(code, err, "column 'diagnosis', data row 298 holds a cell of 2,000,000 characters")
    assert "at most 1,048,576" in err and not out.exists()
    assert not [p for p in work.iterdir() if p.name.startswith(".")]


def test_a_cell_at_the_limit_is_read(tmp_path: Path) -> None:
    from ppdp_desktop.core.data.cell_limit import MAX_CELL_CHARS
    from ppdp_desktop.core.data.loading import load_table

    path = tmp_path / "long.csv"
    path.write_text("note,dx\n" + "é" * MAX_CELL_CHARS + ",flu\nshort,gout\n", encoding="utf-8")  # 2 MiB of UTF-8
    assert load_table(path).frame["note"].str.len().max() == MAX_CELL_CHARS


def test_too_many_workers_are_refused_before_any_work(work: Path, capsys) -> None:
    """Issue 32, 12: --workers 10000 started processes until "Too many open files" tracebacks filled the screen."""
    pytest.importorskip("distributed")
    before = _snapshot(work)
    code, err = _run(capsys, ["anonymize", work / "in" / "d.csv", "--out", work / "out", "--engine", "dask",
                              "--workers", "10000", *RELEASE_ARGS])
    _assert_refused(code, err, "--workers 10,000 is more worker processes than this computer can run: at most")
    assert code == 2, err
    assert _snapshot(work) == before and not (work / "out").exists()
