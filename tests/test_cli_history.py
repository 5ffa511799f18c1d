"""``ppdp history [PROJECT] [--json]`` (issue 30): the release ledger as lines or one JSON document."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.repeat.appdata import ledger_path
from ppdp_desktop.core.repeat.ledger import Ledger, LedgerEntry
from ppdp_desktop.core.repeat.records import ReleaseRecords

REPO = Path(__file__).resolve().parents[1]
SIGNER = "3f1a 9c0e 0000 1111 2222 3333 4444 5555"


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Path:
    """A ledger of three published releases of two projects (and one still pending, which is not listed)."""
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))
    releases = [("adult", 1200, {}, None), ("adult", 1300, {"epsilon_cumulative_max": 2.2, "changed": 212}, SIGNER),
                ("cardio", 1, {"epsilon_cumulative_max": float("inf")}, None)]
    with Ledger() as book:
        for i, (project, n, cumulative, signer) in enumerate(releases):
            folder = tmp_path / f"release-{i}"
            folder.mkdir()
            (folder / "SHA256SUMS").write_text(f"release {i}\n")
            records = ReleaseRecords(np.arange(n, dtype=np.uint64), np.arange(n, dtype=np.uint64), np.ones(n))
            entry = LedgerEntry(project, "uniform" if i < 2 else "rr", {"theta": 3.0}, records, persistent=i == 1,
                                cumulative=cumulative, signer=signer)
            book.mark_published(book.begin(entry, folder, f"{i:064x}"))
        book.begin(LedgerEntry("adult", "uniform", {}, records, True), tmp_path / "not yet", "f" * 64)
    return ledger_path()


def test_history_lists_every_release_one_line_each(ledger, tmp_path, capsys):
    assert main(["history"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"The release ledger {ledger} holds 3 releases:"
    first, second, third = lines[1:]
    assert "#1 " in first and "'adult'" in first and "1,200 records" in first and "persistent: no" in first
    assert "cumulative epsilon: -" in first and "unsigned" in first and first.endswith(str(tmp_path / "release-0"))
    assert "#2 " in second and "persistent: yes" in second and "cumulative epsilon: 2.2, 212 changed" in second
    assert f"signed by {SIGNER}" in second and " UTC " in second
    assert "#1 " in third and "'cardio'" in third and " rr " in third and "1 record " in third
    assert "cumulative epsilon: unbounded" in third
    assert main(["history", "cardio"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"The release ledger {ledger} holds 1 release of project 'cardio':" and len(lines) == 2


def test_history_json_is_one_document(ledger, capsys):
    assert main(["history", "adult", "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["ledger"] == str(ledger)
    assert [(r["project_id"], r["ordinal"], r["n_records"]) for r in document["releases"]] == [("adult", 1, 1200),
                                                                                               ("adult", 2, 1300)]
    second = document["releases"][1]
    assert second["cumulative"] == {"epsilon_cumulative_max": 2.2, "changed": 212} and second["signer"] == SIGNER
    assert second["manifest"] == f"{1:064x}" and second["parameters"] == {"theta": 3.0} and second["persistent"]
    assert not {"identities", "draws", "epsilon", "records"} & set(second)
    assert "holds 2 releases of project 'adult'" in captured.err  # the sentences go to stderr


def test_an_empty_ledger_says_so_in_one_line_and_history_makes_no_ledger(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))
    assert main(["history"]) == 0
    assert capsys.readouterr().out == f"The release ledger {tmp_path / 'data' / 'ledger.sqlite3'} holds no release.\n"
    assert not (tmp_path / "data").exists()
    assert main(["history", "adult", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"ledger": str(tmp_path / "data" / "ledger.sqlite3"), "releases": []}
    with Ledger():
        pass
    assert main(["history", "adult"]) == 0
    assert capsys.readouterr().out.endswith("holds no release of project 'adult'.\n")


def test_a_damaged_ledger_is_one_line_and_exit_3(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "ledger.sqlite3").write_bytes(b"not a database" * 200)
    run = subprocess.run([sys.executable, "-m", "ppdp_desktop", "history"], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PPDP_DATA_DIR": str(tmp_path / "data")}, timeout=120)
    assert run.returncode == 3 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("ppdp: error: The release ledger ")
    assert "damaged" in run.stderr and "Traceback" not in run.stderr
