"""Personalized recoding end to end: release + sealed key -> lookup gives back every original value
and identifier exactly; nothing secret is in the release; the key fails closed."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.release.decoded import column_name
from ppdp_desktop.core.release.lookup import KeyRing
from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings
from ppdp_desktop.core.taxonomy.tree import Taxonomy

PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def demo_with_choices():
    frame = pd.read_csv(resource_path(DEMO_DATA))
    frame["privacy_choice"] = np.random.default_rng(0).choice([1, 2, 3], len(frame))
    return frame


@pytest.fixture
def released(demo_with_choices, tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = tmp_path / "patients.csv"
    demo_with_choices.to_csv(data, index=False)
    out, key = tmp_path / "release", tmp_path / "release.ppdpkey"
    code = main(["anonymize", str(data), "--out", str(out), "--method", "personalized", "--sensitive", "diagnosis",
                 "--identifier", "patient_id,name", "--choice-column", "privacy_choice",
                 "--taxonomy", str(resource_path(DEMO_TAXONOMY)), "--graded", "income,length_of_stay",
                 "--categories", "4", "--key", str(key)])
    assert code == 0
    return out, key


def test_round_trip_gives_back_every_value_and_identifier(released, demo_with_choices, tmp_path, capsys):
    out, key = released
    decoded_path = tmp_path / "decoded.csv"
    assert main(["lookup", str(out), str(key), "--file", str(out / "release.csv"), "--out", str(decoded_path)]) == 0
    decoded = pd.read_csv(decoded_path)
    marks = dict(zip(map(column_name, decoded.columns), decoded.columns))  # each header says what it is
    assert marks["diagnosis"] == "diagnosis [original, decoded with the key]"
    assert marks["income"] == "income [original, decoded with the key]"
    assert marks["age"] == "age [original, released unchanged]" and marks["name"] == "name [original, from the key]"
    decoded = decoded.rename(columns=column_name).sort_values("patient_id").reset_index(drop=True)
    original = demo_with_choices.sort_values("patient_id").reset_index(drop=True)
    for column in ["patient_id", "name", "age", "sex", "postcode", "diagnosis", "length_of_stay", "income"]:
        pd.testing.assert_series_equal(decoded[column], original[column], check_dtype=False)
    # The choices were honoured: choice 1 records show the value, 2 the chapter, 3 an opaque code.
    release = pd.read_csv(out / "release.csv")
    assert "privacy_choice" not in release.columns and "patient_id" not in release.columns
    merged = release.merge(decoded[["pseudonym", "patient_id"]], on="pseudonym").merge(
        original, on="patient_id", suffixes=("", "_o"))
    taxonomy = Taxonomy  # noqa: F841 - the aliases are checked through the key below
    ring = KeyRing.open(out, key, PASSPHRASE)
    alias1, alias2 = ring.payload["aliases"]["diagnosis"]["alias1"], ring.payload["aliases"]["diagnosis"]["alias2"]
    one = merged[merged["privacy_choice"] == 1]
    assert (one["diagnosis"] == one["diagnosis_o"]).all()
    two = merged[merged["privacy_choice"] == 2]
    assert all(o in alias1[p] for p, o in zip(two["diagnosis"], two["diagnosis_o"]))
    three = merged[merged["privacy_choice"] == 3]
    assert all(alias2[p] == o for p, o in zip(three["diagnosis"], three["diagnosis_o"]))
    # Graded columns keep the order of the originals.
    order = np.argsort(merged["income_o"].to_numpy(), kind="stable")
    assert np.all(np.diff(merged["income"].to_numpy()[order]) >= 0)


def test_nothing_secret_is_in_the_release(released, demo_with_choices):
    out, key = released
    ring = KeyRing.open(out, key, PASSPHRASE)
    blobs = {p.name: p.read_bytes() for p in out.iterdir()}
    everything = b"\n".join(blobs.values())
    import re

    cells = set(re.split(rb'[",\n\r:\[\]{}]+', everything))  # every CSV cell and JSON string
    identifiers = {v.encode() for v in pd.concat([demo_with_choices["patient_id"], demo_with_choices["name"]])}
    assert not identifiers & cells
    for identifier in list(identifiers)[:300]:  # and not even inside another cell
        assert identifier not in everything
    aliases = ring.payload["aliases"]["diagnosis"]
    for code in aliases["alias2"]:  # published codes never appear with their meaning
        assert code.encode() not in blobs["release.json"]
    for value in demo_with_choices["diagnosis"].unique():
        assert value.encode() not in blobs["release.json"]
    # (the re-identification figures are counts and shares of records, e.g. a highest risk of 1.0: not values)
    numbers = _numbers(json.loads(blobs["release.json"]),
                       skip={"format_version", "n_records", "categories", "decimals", "reidentification",
                             "repeated_release"})  # (its figures are counts of records and epsilons)
    for attribute, grading in ring.payload["graded"].items():
        bounds = {b for pair in grading["bounds"] for b in pair}
        assert not bounds & numbers, (attribute, bounds & numbers)
        assert pd.read_csv(out / "release.csv")[attribute].max() < len(grading["bounds"]) + 1
    assert ring.payload["seed"].encode() not in everything
    assert not any(p.suffix == ".ppdpkey" for p in out.iterdir())


def _numbers(node, skip) -> set[float]:
    """Every number in a JSON document, except under the keys in ``skip``."""
    if isinstance(node, dict):
        return set().union(*[_numbers(v, skip) for k, v in node.items() if k not in skip]) if node else set()
    if isinstance(node, list):
        return set().union(*[_numbers(v, skip) for v in node]) if node else set()
    return {float(node)} if isinstance(node, (int, float)) and not isinstance(node, bool) else set()


def test_lookup_value_and_pseudonym(released, capsys):
    out, key = released
    release = pd.read_csv(out / "release.csv")
    ring = KeyRing.open(out, key, PASSPHRASE)
    alias2 = ring.payload["aliases"]["diagnosis"]["alias2"]
    code = next(iter(alias2))
    assert main(["lookup", str(out), str(key), "--value", code, "--attribute", "diagnosis"]) == 0
    assert capsys.readouterr().out.strip() == alias2[code]
    assert main(["lookup", str(out), str(key), "--value", "Cardiovascular", "--attribute", "diagnosis"]) == 0
    assert capsys.readouterr().out.startswith("one of: ")
    assert main(["lookup", str(out), str(key), "--pseudonym", release["pseudonym"][0]]) == 0
    printed = capsys.readouterr().out
    assert "patient_id: P" in printed and "[original, decoded with the key]" in printed
    assert "not the patient's" not in printed  # personalized recoding: every value decodes to the patient's


def test_key_fails_closed_from_the_command_line(released, tmp_path, capsys, monkeypatch):
    out, key = released
    monkeypatch.setenv("PPDP_PASSPHRASE", "not the passphrase")
    assert main(["lookup", str(out), str(key), "--value", "x", "--attribute", "diagnosis"]) == 3
    assert "Wrong passphrase" in capsys.readouterr().err
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    other = tmp_path / "other"
    assert main(["demo", "--out", str(other), "--method", "uniform"]) == 0
    capsys.readouterr()
    assert main(["lookup", str(other), str(key), "--pseudonym", "Rx"]) == 3
    assert "belongs to another release" in capsys.readouterr().err
    # An altered release no longer opens its key either.
    (out / "release.csv").write_bytes((out / "release.csv").read_bytes() + b"\n")
    assert main(["lookup", str(out), str(key), "--pseudonym", "Rx"]) == 1
    assert "checksum" in capsys.readouterr().err


def test_key_inside_release_folder_and_missing_key_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = tmp_path / "d.csv"
    pd.DataFrame({"id": range(30), "dx": ["a", "b", "c"] * 10}).to_csv(data, index=False)
    out = tmp_path / "rel"
    code = main(["anonymize", str(data), "--out", str(out), "--method", "personalized", "--sensitive", "dx",
                 "--key", str(out / "inside.ppdpkey")])
    assert code == 3 and "inside the release folder" in capsys.readouterr().err and not out.exists()
    code = main(["anonymize", str(data), "--out", str(out), "--method", "personalized", "--sensitive", "dx"])
    assert code == 2 and "needs --key" in capsys.readouterr().err and not out.exists()


def test_invalid_choices_name_the_rows(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    data = tmp_path / "d.csv"
    data.write_text("id,dx,choice\n1,a,1\n2,b,4\n3,a,x\n4,b,\n5,a,3\n")
    code = main(["anonymize", str(data), "--out", str(tmp_path / "r"), "--method", "personalized", "--sensitive", "dx",
                 "--choice-column", "choice", "--key", str(tmp_path / "k")])
    err = capsys.readouterr().err
    assert code == 3 and "row 2 ('4'), row 3 ('x'), row 4 ('')" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]


def test_alias_table_golden():
    """Explicit aliases: each record is published as its value, alias1 or alias2 by its choice."""
    taxonomy = Taxonomy("dx", "Any")
    taxonomy.add("Any", "Infection")
    taxonomy.add("Any", "Cancer")
    for leaf, parent in [("Flu", "Infection"), ("HIV", "Infection"), ("Melanoma", "Cancer")]:
        taxonomy.add(parent, leaf)
    taxonomy.set_alias("HIV", alias2="QX7")
    taxonomy.set_alias("Melanoma", alias1="Skin disease", alias2="ZZ9")
    taxonomy.set_alias("Flu", alias2="KP4")
    from ppdp_desktop.core.taxonomy.io import save_json

    frame = pd.DataFrame({"id": [1, 2, 3, 4, 5, 6], "dx": ["Flu", "HIV", "Melanoma", "Flu", "HIV", "Melanoma"],
                          "c": [1, 1, 1, 2, 3, 3]})
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        save_json(taxonomy, path)
        settings = AnonymizationSettings("dx", "personalized", ["id"], [], choices=ChoiceSettings(choice_column="c"),
                                         options=RecodingSettings(taxonomy_path=str(path)))
        result = anonymize(Dataset(frame), settings)
    published = dict(zip(result.pseudonym_map["id"], result.table["dx"]))
    assert published == {1: "Flu", 2: "HIV", 3: "Melanoma", 4: "Infection", 5: "QX7", 6: "ZZ9"}
    alias1, alias2 = result.plan.key_json()["aliases"]["dx"]["alias1"], result.plan.key_json()["aliases"]["dx"]["alias2"]
    assert alias2 == {"KP4": "Flu", "QX7": "HIV", "ZZ9": "Melanoma"}
    assert alias1 == {"Infection": ["Flu", "HIV"], "Skin disease": ["Melanoma"]}
    json.dumps(result.key_payload())
