"""Command-line conventions (issue 20, point 7): '-' for stdin/stdout, --quiet/--verbose, --json, and one exit
status per kind of outcome (ppdp_desktop.cli.exit_codes), each produced by a real situation."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.cli.exit_codes import EPILOG, ExitCode
from ppdp_desktop.core.release.decoded import column_name

REPO = Path(__file__).resolve().parents[1]
CSV = "id,sex,age,dx\n" + "".join(f"{i},{'FM'[i % 2]},{20 + i % 50},{'abcd'[i % 4]}\n" for i in range(300))
JOB = ["--sensitive", "dx", "--identifier", "id", "--theta", "3", "--seed", "7", "--no-report"]


def _ppdp(args, *, input: bytes | str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``ppdp ARGS`` in a process of its own (real stdin, stdout and exit status)."""
    return subprocess.run([sys.executable, "-m", "ppdp_desktop", *map(str, args)], input=input, capture_output=True,
                          env={**os.environ, **(env or {})}, cwd=REPO, timeout=300, text=isinstance(input, str))


def _stdin(monkeypatch, data: bytes) -> None:
    """Give the in-process ``main`` a piped stdin holding ``data``."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "in.csv"
    path.write_text(CSV)
    return path


@pytest.fixture
def release(tmp_path, data, capsys) -> Path:
    out = tmp_path / "rel"
    assert main(["anonymize", str(data), "--out", str(out), *JOB]) == 0
    capsys.readouterr()
    return out


# --- '-': stdin and stdout ------------------------------------------------------------------------------------


def test_csv_piped_into_anonymize_dash_is_released_and_json_is_one_document(tmp_path) -> None:
    spool = tmp_path / "tmp"
    spool.mkdir()
    out = tmp_path / "rel"
    done = _ppdp(["anonymize", "-", "--out", out, *JOB, "--json"], input=CSV, env={"TMPDIR": str(spool)})
    assert done.returncode == ExitCode.OK, done.stderr
    document = json.loads(done.stdout)  # stdout is the document and nothing else
    assert document["command"] == "anonymize" and document["release"] == str(out)
    assert document["n_records"] == 300 and isinstance(document["seconds"], float)
    assert document["guarantee"]["kind"] != "none" and document["method"]
    assert "Released 300 records of stdin.csv" in done.stderr  # the sentences went to stderr
    released = pd.read_csv(out / "release.csv", encoding="utf-8-sig")
    assert len(released) == 300 and "id" not in released.columns
    assert list(spool.iterdir()) == []  # the spooled copy of stdin is gone
    assert main(["verify", str(out)]) == ExitCode.OK


def test_parquet_on_stdin_is_sniffed_and_risk_json_has_numbers(tmp_path, monkeypatch, capsys) -> None:
    buffer = io.BytesIO()
    pd.read_csv(io.StringIO(CSV)).to_parquet(buffer)
    _stdin(monkeypatch, buffer.getvalue())
    assert main(["risk", "-", "--quasi", "sex,age", "--json"]) == ExitCode.OK
    document = json.loads(capsys.readouterr().out)
    assert document["n_records"] == 300 and document["quasi_identifiers"] == ["sex", "age"]
    assert isinstance(document["highest_risk"], float) and isinstance(document["sample_uniques"], int)


def test_input_format_overrides_the_sniffing(monkeypatch, capsys) -> None:
    _stdin(monkeypatch, CSV.replace(",", "\t").encode())
    assert main(["risk", "-", "--quasi", "sex", "--input-format", "tsv", "--json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["n_records"] == 300


def test_report_html_to_stdout(data, release, capsys) -> None:
    assert main(["report", str(data), str(release), "--out", "-"]) == ExitCode.OK
    captured = capsys.readouterr()
    assert captured.out.lstrip().lower().startswith("<!doctype html") and captured.out.rstrip().endswith("</html>")
    assert "Report written to stdout" in captured.err
    assert sorted(p.name for p in release.parent.iterdir()) == ["in.csv", "rel"]  # no values CSV named '-'


def test_lookup_reads_results_from_stdin_and_writes_decoded_to_stdout(tmp_path, data, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PPDP_PASSPHRASE", "a long passphrase for the test key")
    out, key = tmp_path / "keyed", tmp_path / "keyed.ppdpkey"
    assert main(["anonymize", str(data), "--out", str(out), "--key", str(key), *JOB]) == ExitCode.OK
    released = pd.read_csv(out / "release.csv", dtype=str, encoding="utf-8-sig")
    capsys.readouterr()
    _stdin(monkeypatch, released[["pseudonym"]].head(4).to_csv(index=False).encode())
    assert main(["lookup", str(out), str(key), "--file", "-", "--out", "-"]) == ExitCode.OK
    captured = capsys.readouterr()
    decoded = pd.read_csv(io.StringIO(captured.out.lstrip("\ufeff")), dtype=str)
    assert "id [original, from the key]" in decoded.columns  # each header says what its column is
    decoded = decoded.rename(columns=column_name)
    assert len(decoded) == 4 and "id" in decoded.columns
    original = pd.read_csv(data, dtype=str).set_index("id")
    assert set(decoded["id"]) <= set(original.index)
    assert "Decoded 4 rows of stdin into stdout" in captured.err


@pytest.mark.parametrize("argv, flag", [
    (["anonymize", "{data}", "--out", "-"], "--out"),
    (["anonymize", "{data}", "--out", "{tmp}/r", "--key", "-"], "--key"),
    (["verify", "-"], "RELEASE"),
    (["report", "{data}", "{tmp}/rel", "--out", "-", "--pdf", "-"], "--pdf"),
])
def test_dash_where_a_folder_or_secret_is_needed_is_refused_in_one_line(argv, flag, data, tmp_path, capsys) -> None:
    code = main([a.format(data=data, tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE and err.count("\n") == 1 and flag in err and "'-'" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


# --- --quiet / --verbose ---------------------------------------------------------------------------------------


def test_quiet_prints_nothing_on_success_and_verbose_prints_more(data, tmp_path, capsys, monkeypatch) -> None:
    assert main(["--quiet", "anonymize", str(data), "--out", str(tmp_path / "q"), *JOB]) == ExitCode.OK
    assert capsys.readouterr() == ("", "")  # not even the --seed warning
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "ledger-n"))  # each the first release of its project
    assert main(["anonymize", str(data), "--out", str(tmp_path / "n"), *JOB]) == ExitCode.OK
    normal = capsys.readouterr()
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "ledger-v"))
    assert main(["anonymize", str(data), "--out", str(tmp_path / "v"), *JOB, "--verbose"]) == ExitCode.OK
    verbose = capsys.readouterr()
    assert verbose.out == normal.out.replace(str(tmp_path / "n"), str(tmp_path / "v")).replace(
        _seconds(normal.out), _seconds(verbose.out))
    stages = [line for line in verbose.err.splitlines() if line.startswith("ppdp: [")]
    assert len(stages) >= 3 and all(" s] " in line and "%" in line for line in stages)  # each stage with its time
    assert "anonymize finished in" in verbose.err and "exit status 0 (ok)" in verbose.err
    assert len(verbose.err.splitlines()) > len(normal.err.splitlines())


def _seconds(summary: str) -> str:
    """The '(0.12 s' of a summary's first line (it differs from run to run)."""
    first = summary.splitlines()[0]
    return first[first.index("(") : first.index(" s")]


def test_quiet_still_prints_the_error_and_the_json_document(data, tmp_path, capsys) -> None:
    assert main(["anonymize", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "o"), *JOB, "-q"]) == ExitCode.INPUT
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "missing.csv" in captured.err
    assert main(["-q", "risk", str(data), "--quasi", "sex", "--json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["n_records"] == 300


def test_quiet_and_verbose_together_is_a_usage_error(capsys) -> None:
    assert main(["-q", "-v", "selftest"]) == ExitCode.USAGE
    assert "contradict" in capsys.readouterr().err


# --- --json ----------------------------------------------------------------------------------------------------


def test_verify_json_for_a_good_and_a_tampered_release(release, capsys) -> None:
    assert main(["verify", str(release), "--json"]) == ExitCode.OK
    good = json.loads(capsys.readouterr().out)
    assert good["verified"] is True and good["error"] is None and good["n_records"] == 300
    assert any(check.startswith("checksums") for check in good["checks"])
    with (release / "release.csv").open("a", encoding="utf-8") as f:
        f.write("999,F,30,a\n")
    assert main(["verify", str(release), "--json"]) == ExitCode.FAILED
    captured = capsys.readouterr()
    bad = json.loads(captured.out)
    assert bad["verified"] is False and "checksum" in bad["error"] and bad["checks"] == []
    assert captured.err.startswith("ppdp: error:") and captured.err.count("\n") == 1


def test_compare_json_rows_are_numbers(data, capsys) -> None:
    assert main(["compare", str(data), "--sensitive", "dx", "--rho1", "0.2", "--rho2", "0.6", "--seed", "1",
                 "--methods", "uniform,anatomy", "--json"]) == ExitCode.OK
    document = json.loads(capsys.readouterr().out)
    assert document["mode"] == "workload" and [r["method"] for r in document["rows"]] == ["uniform", "anatomy"]
    errors = [w["mean_relative_error"] for r in document["rows"] for w in r["workload"]]
    assert errors and all(e is None or isinstance(e, float) for e in errors)


def test_report_json_names_the_files_and_the_figures(data, release, tmp_path, capsys) -> None:
    html = tmp_path / "r.html"
    assert main(["report", str(data), str(release), "--out", str(html), "--json"]) == ExitCode.OK
    document = json.loads(capsys.readouterr().out)
    assert document["files"]["html"] == str(html) and html.is_file()
    assert document["reports"][0]["n_records"] == 300 and isinstance(document["reports"][0]["guarantee"], dict)


# --- exit statuses ---------------------------------------------------------------------------------------------


def test_each_exit_status_from_a_real_situation(data, release, tmp_path, capsys) -> None:
    assert main(["verify", str(release)]) == ExitCode.OK
    (release / "release.json").write_text((release / "release.json").read_text().replace('"n_records"', '"n_records" '))
    assert main(["verify", str(release)]) == ExitCode.FAILED  # altered
    assert main(["anonymize", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o"), *JOB]) == ExitCode.INPUT
    assert main(["verify", str(tmp_path / "no-such-release")]) == ExitCode.INPUT
    assert main(["anonymize", str(data), "--out", str(tmp_path / "o"), "--no-such-flag"]) == ExitCode.USAGE
    assert main(["anonymize", str(data), "--out", str(tmp_path / "o"), "--sensitive", "dx", "--rho1", "0.5",
                 "--rho2", "0.1"]) == ExitCode.USAGE  # a value out of range
    capsys.readouterr()
    bad = _ppdp(["anonymize", data, "--bogus"])
    assert bad.returncode == ExitCode.USAGE and bad.stderr.count(b"\n") == 1


@pytest.mark.skipif(os.name == "nt", reason="SIGINT is POSIX")
def test_ctrl_c_exits_cancelled_and_leaves_nothing(tmp_path) -> None:
    spool = tmp_path / "tmp"
    spool.mkdir()
    job = subprocess.Popen([sys.executable, "-m", "ppdp_desktop", "anonymize", "-", "--out", str(tmp_path / "rel"),
                            *JOB], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                           env={**os.environ, "TMPDIR": str(spool)},
                           # a job started in the background by a shell inherits SIGINT ignored (as CI may run us);
                           # Ctrl+C reaches a job in the foreground, which this one stands for
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        job.stdin.write(CSV[:200].encode())  # part of the file; the rest never comes
        job.stdin.flush()
        deadline = time.monotonic() + 60
        while not list(spool.iterdir()):  # the private spool folder exists: it is reading stdin
            assert time.monotonic() < deadline and job.poll() is None, job.stderr.read() if job.poll() else ""
            time.sleep(0.05)
        job.send_signal(signal.SIGINT)
        _, err = job.communicate(timeout=60)
    finally:
        job.kill()
    assert job.returncode == ExitCode.CANCELLED, err
    assert b"interrupted" in err and b"Traceback" not in err
    assert list(spool.iterdir()) == [] and not (tmp_path / "rel").exists()


def test_exit_statuses_are_documented_in_help_and_readme() -> None:
    shown = subprocess.run([sys.executable, "-m", "ppdp_desktop", "--help"], capture_output=True, text=True,
                           cwd=REPO, timeout=120).stdout
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    guide = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for code in ExitCode:
        assert f"\n  {int(code):<3} " in EPILOG and f"  {int(code):<3} " in shown
        assert f"| {int(code)} |" in readme and f"| {int(code)} |" in guide
