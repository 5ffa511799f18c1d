"""Tests for :mod:`ppdp_desktop.core.data.formats`: writing and reading the released table in every format."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pyreadstat
import pytest

from ppdp_desktop.core.data import formats
from ppdp_desktop.core.data.formats import FORMATS, TableLabels, as_text, read_table, write_table
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.errors import ReleaseError


def mixed_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pseudonym": pd.Series(["R0123456789abcdef", "Rfedcba9876543210", "R00000000000000ff", "R1"],
                                   dtype=pd.ArrowDtype(pa.string())),
            "age": [34, 0, -7, 2**40],
            "bmi": [21.5, np.nan, 1.0, 1e20],
            "note": ['a, "quoted" b', "Zoë € 😀", None, "=1+1"],
            "diag": pd.Categorical(["J45", None, "E11", "J45"]),
            "plain": pd.Series(["x", "", "007", "line\nbreak"], dtype="str"),
        }
    )


def test_as_text_renders_like_the_csv_writer():
    text = as_text(mixed_table())
    assert list(text.columns) == ["pseudonym", "age", "bmi", "note", "diag", "plain"]
    assert text["age"].tolist() == ["34", "0", "-7", str(2**40)]
    assert text["bmi"].tolist() == ["21.5", "", "1", "1e+20"]
    assert text["diag"].tolist() == ["J45", "", "E11", "J45"]
    assert text["note"].tolist()[2] == ""
    # every cell a Python str: pandas 3 stores them in its "str" dtype, pandas 2 in an object column
    assert all(pd.api.types.is_string_dtype(text[c]) for c in text.columns)
    assert all(isinstance(v, str) for c in text.columns for v in text[c])


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_round_trip_in_every_format(tmp_path: Path, fmt: str):
    table = mixed_table()
    path = tmp_path / f"release{FORMATS[fmt]}"
    write_table(table, path, fmt)
    pd.testing.assert_frame_equal(read_table(path, fmt), as_text(table))


EDGE_TABLES = {
    "one column with missing (blank CSV lines)": pd.DataFrame({"i": pd.array([1, None, 3], dtype="Int64")}),
    "booleans": pd.DataFrame({"b": [True, False, True]}),
    "datetimes": pd.DataFrame({"d": pd.to_datetime(["2019-01-01", "2020-02-03", "2021-03-04"])}),
    "all missing": pd.DataFrame({"m": [None, None], "n": [np.nan, np.nan]}),
    "no rows": pd.DataFrame({"a": pd.Series([], dtype="str"), "b": pd.Series([], dtype="int64")}),
    "whole floats": pd.DataFrame({"f": [1.0, 2.0, 3.0]}),
    "mixed object column": pd.DataFrame({"o": pd.Series([1, "a", 2.5, None], dtype=object)}),
}


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("case", list(EDGE_TABLES))
def test_round_trip_edge_cases(tmp_path: Path, fmt: str, case: str):
    table = EDGE_TABLES[case]
    path = tmp_path / f"release{FORMATS[fmt]}"
    write_table(table, path, fmt)
    pd.testing.assert_frame_equal(read_table(path, fmt), as_text(table))


def test_parquet_keeps_categorical_as_dictionary(tmp_path: Path):
    path = tmp_path / "release.parquet"
    write_table(mixed_table(), path, "parquet")
    schema = pq.read_schema(path)
    assert str(schema.field("diag").type).startswith("dictionary")
    assert len(pq.read_metadata(path).schema.names) == 6  # no index column


def test_excel_text_starting_with_equals_is_not_a_formula(tmp_path: Path):
    from openpyxl import load_workbook

    path = tmp_path / "release.xlsx"
    write_table(mixed_table(), path, "xlsx")
    sheet = load_workbook(path).worksheets[0]
    cell = sheet.cell(row=5, column=4)
    assert cell.value == "=1+1" and cell.data_type == "s"


@pytest.mark.parametrize("sep", [";", "\t"])
def test_csv_with_other_separators(tmp_path: Path, sep: str):
    table = mixed_table()
    table["note"] = ["semi;colon", "tab\there", None, "both;\t"]
    path = tmp_path / "release.csv"
    write_table(table, path, "csv", sep=sep)
    assert path.read_text(encoding="utf-8").splitlines()[0].split(sep)[0] == '"pseudonym"'
    pd.testing.assert_frame_equal(read_table(path, "csv", sep=sep), as_text(table))


def test_bad_csv_separator(tmp_path: Path):
    with pytest.raises(ReleaseError, match="separator"):
        write_table(mixed_table(), tmp_path / "r.csv", "csv", sep='"')


def test_excel_row_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(formats, "EXCEL_MAX_ROWS", 4)
    path = tmp_path / "release.xlsx"
    write_table(mixed_table().head(3), path, "xlsx")  # 3 rows + header = 4: fits
    with pytest.raises(ReleaseError, match=r"at most 4 rows.*CSV or Parquet"):
        write_table(mixed_table(), tmp_path / "big.xlsx", "xlsx")
    assert not (tmp_path / "big.xlsx").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("date of birth", "contains ' '"),
        ("1st", "start with a letter"),
        ("_x", "start with a letter"),
        ("AND", "reserved"),
        ("x" * 65, "longer than 64"),
    ],
)
def test_bad_spss_column_name(tmp_path: Path, name: str, why: str):
    table = pd.DataFrame({"ok": [1], name: ["a"]})
    with pytest.raises(ReleaseError, match=f"column '{name}' is not a valid SPSS variable name") as info:
        write_table(table, tmp_path / "r.sav", "sav")
    assert why in str(info.value)


def test_spss_names_differing_only_in_case(tmp_path: Path):
    with pytest.raises(ReleaseError, match="same name ignoring case"):
        write_table(pd.DataFrame({"Age": [1], "age": [2]}), tmp_path / "r.sav", "sav")


def test_valid_spss_names_are_accepted(tmp_path: Path):
    table = pd.DataFrame({"âge": [1], "x#$@._9": ["a"]})
    write_table(table, tmp_path / "r.sav", "sav")
    pd.testing.assert_frame_equal(read_table(tmp_path / "r.sav", "sav"), as_text(table))


def test_unknown_format(tmp_path: Path):
    with pytest.raises(ReleaseError, match="csv, xlsx, sav, parquet"):
        write_table(mixed_table(), tmp_path / "r.json", "json")
    with pytest.raises(ReleaseError, match="Unknown release format"):
        read_table(tmp_path / "r.json", "json")


def test_library_errors_become_release_errors(tmp_path: Path):
    with pytest.raises(ReleaseError, match="r.parquet cannot be written"):
        write_table(mixed_table(), tmp_path / "missing-folder" / "r.parquet", "parquet")
    (tmp_path / "junk.xlsx").write_bytes(b"not a zip")
    with pytest.raises(ReleaseError, match="junk.xlsx cannot be read"):
        read_table(tmp_path / "junk.xlsx", "xlsx")


def test_spss_value_labels_are_kept(tmp_path: Path):
    source = tmp_path / "survey.sav"
    frame = pd.DataFrame({"sex": [1.0, 2.0, 2.0, np.nan, 1.0], "score": [3.5, 4.0, 1.0, 2.0, 5.0]})
    pyreadstat.write_sav(
        frame, str(source),
        column_labels={"sex": "Sex of respondent", "score": "Score"},
        variable_value_labels={"sex": {1: "Male", 2: "Female"}},
    )
    dataset = load_table(source)
    assert dataset.labels is not None
    assert dataset.labels.variable_labels == {"sex": "Sex of respondent", "score": "Score"}
    assert dataset.labels.value_labels == {"sex": {1.0: "Male", 2.0: "Female"}}
    assert as_text(dataset.frame)["sex"].tolist() == ["Male", "Female", "Female", "", "Male"]

    released = as_text(dataset.frame)  # a release is text; the labels still apply
    out = tmp_path / "release.sav"
    write_table(released, out, "sav", labels=dataset.labels)
    raw, meta = pyreadstat.read_sav(str(out), apply_value_formats=False)
    assert raw["sex"].tolist()[:3] == [1.0, 2.0, 2.0] and np.isnan(raw["sex"][3])
    assert meta.variable_value_labels == {"sex": {1.0: "Male", 2.0: "Female"}}
    assert meta.column_names_to_labels == {"sex": "Sex of respondent", "score": "Score"}
    pd.testing.assert_frame_equal(read_table(out, "sav"), released)


def test_spss_column_not_matching_its_labels_is_written_as_text(tmp_path: Path):
    table = pd.DataFrame({"sex": ["Male", "Other", ""]})
    labels = TableLabels({"sex": "Sex"}, {"sex": {1.0: "Male", 2.0: "Female"}})
    out = tmp_path / "release.sav"
    write_table(table, out, "sav", labels=labels)
    raw, meta = pyreadstat.read_sav(str(out), apply_value_formats=False)
    assert raw["sex"].tolist() == ["Male", "Other", ""]
    assert meta.variable_value_labels == {}
    assert meta.column_names_to_labels == {"sex": "Sex"}


def test_csv_and_parquet_input_have_no_labels(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n", encoding="utf-8")
    assert load_table(path).labels is None
