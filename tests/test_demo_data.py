"""The shipped demo data: reproducible from its script and consistent with its taxonomy."""
from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest

DEMO_DIR = Path(__file__).resolve().parents[1] / "resources" / "demo"
SCRIPT = DEMO_DIR / "make_demo_data.py"
GENERATED = ["patients.csv", "diagnosis_taxonomy.json", "diagnosis_hierarchy.csv", "README.md"]


def _load_script():
    spec = importlib.util.spec_from_file_location("make_demo_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def patients() -> pd.DataFrame:
    return pd.read_csv(DEMO_DIR / "patients.csv", encoding="utf-8")


@pytest.fixture(scope="module")
def taxonomy() -> dict:
    return json.loads((DEMO_DIR / "diagnosis_taxonomy.json").read_text(encoding="utf-8"))


def _leaves(node: dict) -> list[str]:
    children = node.get("children")
    if not children:
        return [node["label"]]
    return [leaf for child in children for leaf in _leaves(child)]


def test_regenerating_gives_identical_files(tmp_path: Path) -> None:
    _load_script().main(tmp_path)
    for name in GENERATED:
        assert (tmp_path / name).read_bytes() == (DEMO_DIR / name).read_bytes(), name


def test_resources_module_finds_the_demo_files() -> None:
    from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path

    assert resource_path(DEMO_DATA).is_file()
    assert resource_path(DEMO_TAXONOMY).is_file()


def test_csv_format() -> None:
    raw = (DEMO_DIR / "patients.csv").read_bytes()
    assert b"\r" not in raw
    assert raw.endswith(b"\n")
    assert raw.isascii()
    header = raw.split(b"\n", 1)[0].decode()
    assert header == (
        "patient_id,name,age,sex,postcode,admission_year,diagnosis,length_of_stay,income"
    )


def test_patients_table(patients: pd.DataFrame) -> None:
    assert len(patients) == 20_000
    assert patients["patient_id"].is_unique
    assert patients["patient_id"].str.fullmatch(r"P\d{6}").all()
    assert patients["age"].between(0, 99).all()
    assert set(patients["sex"]) == {"F", "M"}
    assert patients["admission_year"].between(2015, 2024).all()
    assert (patients["length_of_stay"] >= 1).all()
    assert (patients["income"] > 0).all() and (patients["income"] % 100 == 0).all()
    # Postcodes stay strings when read back (no numeric conversion, no NaN).
    assert not pd.api.types.is_numeric_dtype(patients["postcode"])
    assert patients["postcode"].notna().all()
    assert 25 <= patients["postcode"].nunique() <= 35


def test_diagnosis_frequencies(patients: pd.DataFrame) -> None:
    counts = patients["diagnosis"].value_counts()
    assert 35 <= counts.size <= 45
    assert counts.iloc[0] >= 10 * counts.iloc[-1]


def test_diagnosis_depends_on_age_and_sex(patients: pd.DataFrame) -> None:
    prostate = patients[patients["diagnosis"] == "Prostate cancer"]
    assert len(prostate) > 0
    assert set(prostate["sex"]) == {"M"}
    breast = patients[patients["diagnosis"] == "Breast cancer"]
    assert (breast["sex"] == "F").mean() > 0.95
    dementia = patients[patients["diagnosis"] == "Dementia"]
    assert dementia["age"].min() >= 45


def test_taxonomy_covers_each_diagnosis_once(patients: pd.DataFrame, taxonomy: dict) -> None:
    assert taxonomy["attribute"] == "diagnosis"
    root = taxonomy["root"]
    # Three levels: root -> chapter -> leaf.
    for chapter in root["children"]:
        assert chapter["children"]
        for leaf in chapter["children"]:
            assert "children" not in leaf
    leaves = _leaves(root)
    assert len(leaves) == len(set(leaves))
    assert set(leaves) == set(patients["diagnosis"])


def test_arx_hierarchy_matches_taxonomy(taxonomy: dict) -> None:
    with open(DEMO_DIR / "diagnosis_hierarchy.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter=";"))
    expected = [
        [leaf["label"], chapter["label"], "*"]
        for chapter in taxonomy["root"]["children"]
        for leaf in chapter["children"]
    ]
    assert rows == expected
    assert [row[0] for row in rows] == _leaves(taxonomy["root"])
