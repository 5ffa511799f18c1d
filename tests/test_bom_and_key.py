"""A CSV release starts with the UTF-8 byte-order mark (Excel shows "Besançon") unless asked not to, every
reader still reads it, and what the key file holds is said from the job's key payload."""
from __future__ import annotations

import codecs
import dataclasses
import json

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.csv_writer import write_csv
from ppdp_desktop.core.data.formats import read_table
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.demo import demo_settings
from ppdp_desktop.core.methods import REGISTRY
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.decoded import column_name
from ppdp_desktop.core.release.lookup import KeyRing
from ppdp_desktop.core.release.package import key_description, key_parts, read_release, write_release
from ppdp_desktop.core.settings import SensitivitySettings

PASSPHRASE = "correct horse battery"
CITIES = ["Besançon", "Orléans", "Nîmes", "Lyon"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """The first 2,000 demo records with a column of accented city names."""
    frame = pd.read_csv(resource_path(DEMO_DATA), dtype=str, keep_default_na=False).head(2000)
    frame["city"] = [CITIES[i % len(CITIES)] for i in range(len(frame))]
    path = tmp_path_factory.mktemp("data") / "patients.csv"
    frame.to_csv(path, index=False, encoding="utf-8")
    return load_table(path)


@pytest.fixture(scope="module")
def result(dataset):
    return anonymize(dataset, demo_settings(dataset, "finegrain", seed=3))


def test_csv_release_has_a_byte_order_mark_by_default_and_reads_back(result, tmp_path):
    folder = write_release(result, tmp_path / "r", key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE,
                           include_report=False)
    raw = (folder / "release.csv").read_bytes()
    assert raw.startswith(codecs.BOM_UTF8 + b'"pseudonym"') and raw.count(codecs.BOM_UTF8) == 1
    assert "Besançon".encode() in raw
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    assert meta["csv"]["encoding"] == "utf-8-sig"
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    assert "UTF-8 with a byte-order mark" in readme and "Excel" in readme
    release = read_release(folder)  # the mark is not part of the first column's name
    assert list(release.table.columns)[0] == "pseudonym" and set(release.table["city"]) == set(CITIES)
    pandas_view = pd.read_csv(folder / "release.csv", dtype=str)  # what an analyst (and our tests) do
    assert list(pandas_view.columns)[0] == "pseudonym" and "Besançon" in set(pandas_view["city"])
    assert any("checksums" in line for line in verify_release(release))
    ring = KeyRing.open(folder, tmp_path / "r.ppdpkey", PASSPHRASE)
    pseudonym = release.table["pseudonym"].iloc[0]
    assert ring.lookup_pseudonym(pseudonym)["patient_id"].startswith("P")


def test_without_the_mark_the_csv_is_plain_utf8(result, tmp_path):
    with_mark = write_release(result, tmp_path / "a", include_report=False)
    without = write_release(result, tmp_path / "b", include_report=False, bom=False)
    raw = (without / "release.csv").read_bytes()
    assert raw.startswith(b'"pseudonym"')
    assert (with_mark / "release.csv").read_bytes() == codecs.BOM_UTF8 + raw  # the mark is the only difference
    assert json.loads((without / "release.json").read_text(encoding="utf-8"))["csv"]["encoding"] == "utf-8"
    assert "without a byte-order mark" in (without / "README.txt").read_text(encoding="utf-8")
    pd.testing.assert_frame_equal(read_release(without).table, read_release(with_mark).table)


@pytest.mark.parametrize("fmt", ["xlsx", "parquet"])
def test_other_formats_record_plain_utf8(result, tmp_path, fmt):
    folder = write_release(result, tmp_path / "r", fmt=fmt, include_report=False)
    assert json.loads((folder / "release.json").read_text(encoding="utf-8"))["csv"]["encoding"] == "utf-8"


def test_write_csv_streams_the_mark_before_the_rows(tmp_path):
    table = pd.DataFrame({"city": CITIES, "n": range(len(CITIES))})
    write_csv(table, tmp_path / "plain.csv", ";")
    write_csv(table, tmp_path / "marked.csv", ";", bom=True)
    plain = (tmp_path / "plain.csv").read_bytes()
    assert (tmp_path / "marked.csv").read_bytes() == codecs.BOM_UTF8 + plain
    assert (tmp_path / "marked.csv").read_text(encoding="utf-8-sig") == plain.decode("utf-8")
    pd.testing.assert_frame_equal(read_table(tmp_path / "marked.csv", "csv", sep=";"),
                                  read_table(tmp_path / "plain.csv", "csv", sep=";"))


def test_cli_verify_estimate_and_lookup_read_a_marked_release(result, tmp_path, capsys):
    folder = write_release(result, tmp_path / "r", key_path=tmp_path / "r.ppdpkey", passphrase=PASSPHRASE,
                           include_report=False, sep=";")
    assert (folder / "release.csv").read_bytes().startswith(codecs.BOM_UTF8)
    assert main(["verify", str(folder)]) == 0
    capsys.readouterr()
    code = main(["estimate", str(folder), "--sensitive", "diagnosis", "--where", "city=Besançon", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    table = read_release(folder).table
    assert sum(r["observed"] for r in json.loads(out)) == (table["city"] == "Besançon").sum()
    passphrase_file = tmp_path / "pass.txt"
    passphrase_file.write_text(PASSPHRASE + "\n", encoding="utf-8")
    decoded = tmp_path / "decoded.csv"
    assert main(["lookup", str(folder), str(tmp_path / "r.ppdpkey"), "--file", str(folder / "release.csv"),
                 "--out", str(decoded), "--passphrase-file", str(passphrase_file)]) == 0
    back = pd.read_csv(decoded, dtype=str, keep_default_na=False).rename(columns=column_name)
    assert list(back.columns)[:2] == ["pseudonym", "patient_id"] and "Besançon" in set(back["city"])


@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_key_parts_are_the_filled_entries_of_the_key_payload(dataset, method):
    settings = demo_settings(dataset, method, seed=4)
    if method == "partition":  # partitioning takes one pair for all values
        settings = dataclasses.replace(settings, sensitivity=SensitivitySettings(rho1=0.12, rho2=0.5))
    result = anonymize(dataset, settings)
    assert sorted(key_parts(result)) == sorted(k for k, v in result.key_payload().items() if v)


def test_key_description_names_seed_pseudonyms_and_aliases():
    plain = key_description(["method", "seed", "settings", "parameters", "pseudonyms"])
    assert plain == ("This key holds the random seed (to reproduce and audit this release) and the pseudonym map "
                     "(to find a patient from a released record).")
    recoded = key_description(["method", "seed", "settings", "parameters", "aliases", "graded", "pseudonyms"])
    assert "the meaning of every alias and code" in recoded and recoded.count(",") == 2
