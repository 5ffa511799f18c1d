"""``ppdp`` end to end: the demo, adult.csv, verify, estimate, and every bad input as one clear line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_end_to_end_then_verify_and_estimate(tmp_path, capsys):
    out = tmp_path / "release"
    code, stdout, err = run(["demo", "--out", out, "--seed", "11"], capsys)
    assert code == 0, err
    assert "guarantee verified" in stdout
    table = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    meta = json.loads((out / "release.json").read_text())
    assert len(table) == meta["n_records"] == 20_000
    assert "patient_id" not in table.columns and "name" not in table.columns
    entry = meta["sensitive"][0]
    assert entry["attribute"] == "diagnosis" and entry["guarantee"]["verified"] is True
    # the matrix is published by its parameters (format 2): one retention probability per value, no m x m array
    assert "matrix" not in entry and entry["matrix_form"] == "retention" and meta["format_version"] == 2
    retention = np.array(entry["retention"])
    assert retention.shape == (len(entry["values"]),) and np.all((retention > 0) & (retention <= 1))
    assert set(meta) >= {"format_version", "method", "parameters", "n_records", "attributes", "sensitive"}
    assert meta["attributes"]["age"] == {"role": "quasi-identifier", "kind": "numeric", "released": True}
    assert "seed" not in json.dumps(meta).lower()
    # Non-sensitive columns are unchanged as multisets; rows are shuffled.
    original = pd.read_csv(Path(__file__).resolve().parents[1] / "resources/demo/patients.csv", dtype=str, keep_default_na=False)
    assert sorted(table["postcode"]) == sorted(original["postcode"])
    assert not (table["age"].to_numpy() == original["age"].to_numpy()).all()

    assert run(["verify", out], capsys)[0] == 0
    code, stdout, _ = run(["estimate", out, "--sensitive", "diagnosis", "--where", "sex=F", "--json"], capsys)
    assert code == 0
    rows = json.loads(stdout)
    assert sum(r["observed"] for r in rows) == (table["sex"] == "F").sum()
    assert sum(r["estimate"] for r in rows) == pytest.approx((table["sex"] == "F").sum())


def test_same_seed_gives_the_same_release(tmp_path, capsys):
    for name in ("a", "b"):
        assert run(["demo", "--out", tmp_path / name, "--seed", "5", "--method", "uniform"], capsys)[0] == 0
    # Same seed, same release byte for byte, pseudonyms included (a fixed seed draws them from the job's
    # seeded generator, so `ppdp run` can reproduce a release); without a seed they come from the OS.
    assert (tmp_path / "a/release.csv").read_bytes() == (tmp_path / "b/release.csv").read_bytes()
    for name in ("c", "d"):
        assert run(["demo", "--out", tmp_path / name, "--method", "uniform"], capsys)[0] == 0
    c, d = (pd.read_csv(tmp_path / f"{n}/release.csv") for n in ("c", "d"))
    assert not (c["pseudonym"] == d["pseudonym"]).any()


def test_adult_end_to_end(adult_csv, tmp_path, capsys):
    out = tmp_path / "adult"
    code, stdout, err = run(
        ["anonymize", adult_csv, "--out", out, "--sensitive", "occupation", "--quasi", "age,sex,race",
         "--method", "uniform", "--rho1", "0.1", "--rho2", "0.4", "--seed", "3"],
        capsys,
    )
    assert code == 0, err
    assert run(["verify", out], capsys)[0] == 0
    code, stdout, _ = run(["estimate", out, "--sensitive", "occupation", "--where", "sex=Male"], capsys)
    assert code == 0 and "Exec-managerial" in stdout


def test_pairs_file_with_theta(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("id,dx\n" + "".join(f"{i},{'flu' if i % 4 else ('hiv' if i % 8 else 'tb')}\n" for i in range(400)))
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("value,rho1,rho2\nhiv,0.2,0.3\n")
    code, _, err = run(["anonymize", data, "--out", tmp_path / "r", "--sensitive", "dx", "--identifier", "id",
                        "--theta", "2", "--pairs", pairs, "--seed", "1"], capsys)
    assert code == 0, err
    meta = json.loads((tmp_path / "r/release.json").read_text())
    pairs_out = {p["value"]: (p["rho1"], p["rho2"]) for p in meta["sensitive"][0]["guarantee"]["pairs"]}
    assert pairs_out["hiv"] == (0.2, 0.3) and pairs_out["flu"] == (None, None)


@pytest.fixture
def good_csv(tmp_path):
    path = tmp_path / "good.csv"
    path.write_text("id,sex,dx\n" + "".join(f"{i},{'FM'[i % 2]},{['a', 'b', 'c'][i % 3]}\n" for i in range(60)))
    return path


BAD_CASES = {
    "empty file": ("", ["--rho1", "0.1", "--rho2", "0.5"], "empty"),
    "header only": ("id,sex,dx\n", ["--rho1", "0.1", "--rho2", "0.5"], "no data rows|header"),
    "ragged rows": ("id,sex,dx\n1,F,a\n2,M,b,extra\n", ["--rho1", "0.1", "--rho2", "0.5"], "line 3"),
    "single-valued sensitive": ("id,sex,dx\n1,F,a\n2,M,a\n", ["--rho1", "0.1", "--rho2", "0.5"], "single value"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_files_give_one_line_and_write_nothing(case, tmp_path, capsys):
    text, extra, message = BAD_CASES[case]
    data = tmp_path / "bad.csv"
    data.write_text(text)
    out = tmp_path / "out"
    code, stdout, err = run(["anonymize", data, "--out", out, "--sensitive", "dx", *extra], capsys)
    assert code == 3  # an input error (ppdp_desktop.cli.exit_codes)
    assert err.count("\n") == 1 and err.startswith("ppdp: error:")
    assert "bad.csv" in err or case == "single-valued sensitive"
    import re

    assert re.search(message, err), err
    assert not out.exists() and list(tmp_path.iterdir()) == [data]


def test_undecodable_bytes(tmp_path, capsys):
    data = tmp_path / "bytes.csv"
    data.write_bytes(b"id,dx\n1,\x81\x8d\n2,b\n")
    code, _, err = run(["anonymize", data, "--out", tmp_path / "o", "--sensitive", "dx", "--theta", "3"], capsys)
    assert code == 3 and "bytes.csv" in err and "encoding" in err.lower()
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--sensitive", "nope", "--theta", "3"], "'nope' is not in"),
        (["--sensitive", "dx", "--rho1", "0.5", "--rho2", "0.2"], "0 < rho1 < rho2 < 1"),
        (["--sensitive", "dx", "--rho1", "0.2", "--rho2", "0.2"], "0 < rho1 < rho2 < 1"),
        (["--sensitive", "dx", "--theta", "1"], "theta must be greater than 1"),
        (["--sensitive", "dx", "--theta", "0.5"], "theta must be greater than 1"),
        (["--sensitive", "dx", "--theta", "3", "--method", "magic"], "Unknown method 'magic'"),
        (["--sensitive", "dx"], "Say how sensitive"),
        (["--sensitive", "dx", "--rho1", "0.2"], "both --rho1 and --rho2"),
        (["--sensitive", "dx", "--theta", "3", "--rho1", "0.1", "--rho2", "0.2"], "either --rho1 and --rho2, or --theta"),
        (["--sensitive", "dx", "--theta", "3", "--identifier", "dx"], "two roles"),
        (["--sensitive", "dx", "--theta", "4"], "No value of 'dx' needs protection"),
    ],
)
def test_bad_parameters_give_one_line_and_write_nothing(good_csv, tmp_path, capsys, extra, message):
    out = tmp_path / "out"
    code, _, err = run(["anonymize", good_csv, "--out", out, *extra], capsys)
    assert code == 2, err
    assert err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_existing_output_is_never_overwritten(good_csv, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    code, _, err = run(["anonymize", good_csv, "--out", out, "--sensitive", "dx", "--theta", "3"], capsys)
    assert code == 3 and "already exists" in err
    assert (out / "keep.txt").read_text() == "mine"


def test_input_file_is_not_modified(good_csv, tmp_path, capsys):
    before = (good_csv.read_bytes(), good_csv.stat().st_mtime_ns)
    assert run(["anonymize", good_csv, "--out", tmp_path / "o", "--sensitive", "dx", "--theta", "2"], capsys)[0] == 0
    assert (good_csv.read_bytes(), good_csv.stat().st_mtime_ns) == before


def test_argparse_errors_are_one_line():
    result = subprocess.run([sys.executable, "-m", "ppdp_desktop", "anonymize"], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "required" in result.stderr


def test_verify_fails_on_tampered_release(tmp_path, capsys):
    out = tmp_path / "r"
    assert run(["demo", "--out", out, "--seed", "2", "--method", "uniform"], capsys)[0] == 0
    meta = json.loads((out / "release.json").read_text())
    retention = np.array(meta["sensitive"][0]["retention"])
    meta["sensitive"][0]["retention"] = (0.5 * retention + 0.5).tolist()  # more retention than the pairs allow
    (out / "release.json").write_text(json.dumps(meta))
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "release.json does not match its checksum" in err  # a failed check
    # Even with the checksums recomputed, the guarantee itself fails.
    from ppdp_desktop.core.release.package import write_checksums

    (out / "SHA256SUMS").unlink()
    write_checksums(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "amplifies" in err


def test_verify_fails_on_value_outside_domain_and_leaked_identifier(tmp_path, capsys):
    out = tmp_path / "r"
    assert run(["demo", "--out", out, "--seed", "2"], capsys)[0] == 0
    table = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    table.loc[0, "diagnosis"] = "Plague"
    table.to_csv(out / "release.csv", index=False)
    _rehash(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "Plague" in err
    table.loc[0, "diagnosis"] = table.loc[1, "diagnosis"]
    table["name"] = "x"
    table.to_csv(out / "release.csv", index=False)
    _rehash(out)
    code, _, err = run(["verify", out], capsys)
    assert code == 1 and "'name'" in err


def _rehash(folder):
    from ppdp_desktop.core.release.package import write_checksums

    (folder / "SHA256SUMS").unlink()
    write_checksums(folder)


def test_verify_on_a_folder_that_is_not_a_release(tmp_path, capsys):
    code, _, err = run(["verify", tmp_path], capsys)
    assert code == 1 and "release.json is missing" in err
