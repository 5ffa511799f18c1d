"""``ppdp demo`` (and so ``python dev.py run``) never prints the passphrase it makes up (issue 31, point 13): it is
written to a file of its own beside the key, which ``ppdp lookup --passphrase-file`` reads."""
from __future__ import annotations

import json
import os
import stat

import pandas as pd

from ppdp_desktop.cli import main


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_writes_its_made_up_passphrase_to_a_file_not_the_screen(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PPDP_PASSPHRASE", raising=False)
    code, out, err = run(["demo", "--out", tmp_path / "rel", "--method", "uniform", "--no-report"], capsys)
    assert code == 0, err
    made, key = tmp_path / "rel.passphrase.txt", tmp_path / "rel.ppdpkey"
    passphrase = made.read_text(encoding="utf-8").splitlines()[0]
    assert len(passphrase) >= 20 and passphrase not in out + err
    assert (f"  key file {key} is sealed with a passphrase made up for this demo and written to {made} (open the key "
            f"with --passphrase-file {made}); keep a real key's passphrase apart from the key.") in out.splitlines()
    if os.name == "posix":
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
    pseudonym = pd.read_csv(tmp_path / "rel" / "release.csv", dtype=str)["pseudonym"].iloc[0]
    code, out, err = run(["lookup", tmp_path / "rel", key, "--passphrase-file", made, "--pseudonym", pseudonym], capsys)
    assert code == 0 and "patient_id: P" in out, err
    # --json names the file, not the passphrase
    code, out, err = run(["demo", "--out", tmp_path / "other", "--method", "uniform", "--no-report", "--json"], capsys)
    assert code == 0, err
    document = json.loads(out)
    assert document["passphrase_file"] == str(tmp_path / "other.passphrase.txt") and "passphrase" not in document
    assert (tmp_path / "other.passphrase.txt").read_text(encoding="utf-8").strip() not in out + err
