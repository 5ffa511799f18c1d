"""Tests for :func:`ppdp_desktop.core.data.loading.load_table` and the text sniffing behind it."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shared_adult
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.data.sniffing import sniff_delimiter
from ppdp_desktop.core.errors import InputError


def write(tmp_path: Path, name: str, content: str | bytes, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


# --- delimiters -----------------------------------------------------------------------------


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_each_delimiter_is_sniffed_with_quoted_delimiters_inside_fields(tmp_path: Path, sep: str) -> None:
    others = ",;\t|"
    text = (
        f"id{sep}name{sep}note\n"
        f'1{sep}"Smith{others}John"{sep}plain\n'
        f'2{sep}Doe{sep}"quoted ""twice"" {others}"\n'
        f"3{sep}Roe{sep}x\n"
    )
    data = load_table(write(tmp_path, "t.csv", text))
    assert data.details == {"format": "csv", "delimiter": sep, "encoding": "utf-8"}
    assert list(data.frame.columns) == ["id", "name", "note"]
    assert data.frame["id"].tolist() == ["1", "2", "3"]  # an identifier: read as text
    assert data.frame["name"].tolist() == [f"Smith{others}John", "Doe", "Roe"]
    assert data.frame["note"][1] == f'quoted "twice" {others}'


def test_semicolon_file_with_decimal_commas_is_semicolon(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "eu.csv", "a;b\n1,5;2,25\n3,5;4,75\n"))
    assert data.details["delimiter"] == ";"
    assert data.frame["a"].tolist() == ["1,5", "3,5"]


def test_quoted_line_break_does_not_confuse_sniffing(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "nl.csv", 'a|b\n1|"two\nlines; here, too"\n2|x\n'))
    assert data.details["delimiter"] == "|"
    assert data.frame["b"].tolist() == ["two\nlines; here, too", "x"]


def test_one_column_file_is_fine(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "one.txt", 'name\nAnn\n"Smith, John"\nBob\n'))
    assert list(data.frame.columns) == ["name"]
    assert data.frame["name"].tolist() == ["Ann", "Smith, John", "Bob"]


def test_sniff_prefers_the_consistent_candidate() -> None:
    assert sniff_delimiter("x|y|z\n1|2,5|3\n4|5|6\n") == "|"
    assert sniff_delimiter("only\n1\n2\n") is None


@pytest.mark.parametrize("sep", ["\t", "tab", "\\t", "TAB"])
def test_explicit_tab_spellings(tmp_path: Path, sep: str) -> None:
    # With commas in every line the sniffer would pick ",", the explicit tab wins.
    path = write(tmp_path, "t.tsv", "a,x\tb,y\n1,2\t3,4\n5,6\t7,8\n")
    data = load_table(path, sep=sep)
    assert data.details["delimiter"] == "\t"
    assert list(data.frame.columns) == ["a,x", "b,y"]


def test_explicit_sep_overrides_sniffing(tmp_path: Path) -> None:
    path = write(tmp_path, "c.csv", "a;b,c\n1;2,3\n4;5,6\n")
    assert list(load_table(path, sep=",").frame.columns) == ["a;b", "c"]
    assert list(load_table(path, sep=";").frame.columns) == ["a", "b,c"]


def test_bad_explicit_sep(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"c\.csv.*delimiter"):
        load_table(write(tmp_path, "c.csv", "a,b\n1,2\n"), sep=";;")


# --- encodings ------------------------------------------------------------------------------

ACCENTED = "name,city\nMüller,Köln\nJosé,café\n"


def test_utf8(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "u.csv", ACCENTED))
    assert data.details["encoding"] == "utf-8"
    assert data.frame["name"].tolist() == ["Müller", "José"]


def test_utf8_bom_is_removed_from_header(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "bom.csv", ACCENTED, encoding="utf-8-sig"))
    assert data.details["encoding"] == "utf-8-sig"
    assert list(data.frame.columns) == ["name", "city"]
    assert data.frame["city"].tolist() == ["Köln", "café"]


def test_bom_with_explicit_utf8(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "bom.csv", ACCENTED, encoding="utf-8-sig"), encoding="utf-8")
    assert list(data.frame.columns) == ["name", "city"]


def test_cp1252_fallback(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "w.csv", ACCENTED + "Zoë,€uro\n", encoding="cp1252"))
    assert data.details["encoding"] == "cp1252"
    assert data.frame["name"].tolist() == ["Müller", "José", "Zoë"]
    assert data.frame["city"].tolist() == ["Köln", "café", "€uro"]


def test_utf16_with_bom(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "w16.csv", ACCENTED, encoding="utf-16"))
    assert data.frame["city"].tolist() == ["Köln", "café"]


def test_explicit_encoding_overrides_sniffing(tmp_path: Path) -> None:
    # Valid UTF-8 bytes, but the user says latin-1: mojibake is what they asked for.
    path = write(tmp_path, "l.csv", "a\nü\n")
    data = load_table(path, encoding="latin-1")
    assert data.frame["a"].tolist() == ["Ã¼"]
    assert data.details["encoding"] == "iso8859-1"


def test_unknown_encoding(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"l\.csv.*not a known text encoding"):
        load_table(write(tmp_path, "l.csv", "a\n1\n"), encoding="klingon")


def test_undecodable_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.csv", b"a,b\n1,2\n3,x\x81\x8dy\n")
    with pytest.raises(InputError, match=r"bad\.csv: byte 0x81 at offset 11 \(line 3\).*--encoding"):
        load_table(path)


def test_explicit_encoding_that_does_not_fit(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"bad\.csv: byte 0xFC at offset 2 \(line 2\) is not valid UTF-8"):
        load_table(write(tmp_path, "bad.csv", b"a\n\xfc\n"), encoding="utf-8")


# --- other formats ----------------------------------------------------------------------------


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [34, 51, 29, 62],
            "zip": ["47677", "47602", "47678", "47905"],
            "weight": [70.5, 82.0, np.nan, 90.25],
            "diagnosis": ["flu", "NA", "cancer", "flu"],
        }
    )


def assert_same(loaded: pd.DataFrame, expected: pd.DataFrame) -> None:
    decoded = loaded.apply(lambda c: c.astype(c.cat.categories.dtype) if isinstance(c.dtype, pd.CategoricalDtype) else c)
    pd.testing.assert_frame_equal(decoded, expected, check_dtype=False)  # repeating text is loaded as codes
    for column in expected.columns:
        assert pd.api.types.is_numeric_dtype(loaded[column]) == pd.api.types.is_numeric_dtype(expected[column])


def test_csv_round_trip_keeps_na_strings(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "f.csv"
    frame.to_csv(path, index=False)
    data = load_table(path, encoding=None)
    assert data.frame["diagnosis"].tolist() == ["flu", "NA", "cancer", "flu"]
    assert data.frame["zip"].tolist() == ["47677", "47602", "47678", "47905"]  # a code, not a number
    assert data.schema.attributes["zip"].kind is Kind.TEXT
    assert data.frame["age"].dtype == np.int64
    assert data.frame["weight"].dtype == np.float64
    assert data.schema.attributes["age"].kind is Kind.NUMERIC
    assert data.schema.attributes["diagnosis"].kind is Kind.CATEGORICAL


def test_xlsx_round_trip(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "f.XLSX"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="first", index=False)
        frame.head(2).to_excel(writer, sheet_name="second", index=False)
    data = load_table(path)
    assert data.details == {"format": "xlsx", "sheet": "first"}
    assert_same(data.frame, frame)
    assert data.frame["age"].dtype == np.int64
    assert_same(load_table(path, sheet="second").frame, frame.head(2))
    assert_same(load_table(path, sheet=1).frame, frame.head(2))
    assert_same(load_table(path, sheet="1").frame, frame.head(2))
    with pytest.raises(InputError, match=r"f\.XLSX: has no sheet 'third'.*first, second"):
        load_table(path, sheet="third")


def test_sav_round_trip_with_value_labels(tmp_path: Path, frame: pd.DataFrame) -> None:
    pyreadstat = pytest.importorskip("pyreadstat")
    path = tmp_path / "f.sav"
    coded = frame.assign(sex=[1, 2, 1, 2])
    pyreadstat.write_sav(
        coded, str(path), variable_value_labels={"sex": {1: "male", 2: "female"}},
        column_labels={"age": "Age in years"},
    )
    data = load_table(path)
    assert data.details == {"format": "sav"}
    assert_same(data.frame, frame.assign(sex=["male", "female", "male", "female"]))
    assert data.frame["age"].dtype == np.int64
    assert data.schema.attributes["sex"].kind is Kind.CATEGORICAL


def test_dta_round_trip_with_value_labels(tmp_path: Path, frame: pd.DataFrame) -> None:
    pyreadstat = pytest.importorskip("pyreadstat")
    path = tmp_path / "f.dta"
    pyreadstat.write_dta(frame.assign(sex=[1, 2, 1, 2]), str(path), variable_value_labels={"sex": {1: "m", 2: "f"}})
    data = load_table(path)
    assert data.details == {"format": "dta"}
    assert_same(data.frame, frame.assign(sex=["m", "f", "m", "f"]))


@pytest.mark.parametrize("suffix", [".parquet", ".pq"])
def test_parquet_round_trip(tmp_path: Path, frame: pd.DataFrame, suffix: str) -> None:
    path = tmp_path / f"f{suffix}"
    frame.to_parquet(path, index=False)
    data = load_table(path)
    assert data.details == {"format": "parquet"}
    assert_same(data.frame, frame)


def test_parquet_non_string_column_names(tmp_path: Path) -> None:
    path = tmp_path / "n.parquet"
    pd.DataFrame({"a": [1, 2], " b ": [3, 4]}).to_parquet(path)
    assert list(load_table(path).frame.columns) == ["a", "b"]


# --- the real data ----------------------------------------------------------------------------


def test_adult_loads_without_options() -> None:
    data = load_table(shared_adult())  # skipped without the shared data, failed in CI (conftest)
    assert data.frame.shape == (30162, 9)
    assert data.details["delimiter"] == ";"
    assert pd.api.types.is_numeric_dtype(data.frame["age"])
    assert data.schema.attributes["age"].kind is Kind.NUMERIC


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"  \n\r\n\t \n", b"\xef\xbb\xbf"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(InputError, match=r"empty\.csv: the file is empty"):
        load_table(write(tmp_path, "empty.csv", content))


@pytest.mark.parametrize("content", ["a,b,c\n", "a,b,c", "a;b\n\n  \n"])
def test_header_only(tmp_path: Path, content: str) -> None:
    with pytest.raises(InputError, match=r"head\.csv: has a header line but no data rows"):
        load_table(write(tmp_path, "head.csv", content))


@pytest.mark.parametrize(
    ("content", "line", "fields"),
    [
        ("a,b,c\n1,2,3\n4,5,6,7\n8,9,10\n", 3, 4),  # more fields (pandas error)
        ("a,b,c\n1,2,3,4\n5,6,7\n", 2, 4),  # more fields on the first row (pandas would warn only)
        ("a,b,c\n1,2,3\n\n4,5\n6,7,8\n", 4, 2),  # fewer fields (pandas pads silently), blank line counted
        ("a;b;c\r\n1;2;3\r\n4;5\r\n", 3, 2),  # CRLF
        ('a,b,c\n1,"x\ny",3\n4,"5,5"\n', 4, 2),  # quotes: csv module path, multi-line record
        ('a,b,c\n1,"x\ny",3\n4,"5,5",6,7\n', 4, 4),
        ("a\tb\n1\t2\n\t\n3\t4\t5\n", 4, 3),
    ],
)
def test_ragged_rows(tmp_path: Path, content: str, line: int, fields: int) -> None:
    with pytest.raises(InputError, match=rf"rag\.csv: line {line} has {fields} fields? but the header has"):
        load_table(write(tmp_path, "rag.csv", content))


def test_missing_values_are_not_ragged(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "ok.csv", "a,b,c\n1,2,\n,,\n4,5,6\n"))
    assert data.frame["c"].isna().tolist() == [True, True, False]


def test_unclosed_quote(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"q\.csv: a quoted value starting on line 3 is never closed"):
        load_table(write(tmp_path, "q.csv", 'a,b\n1,2\n3,"four\n5,6\n'))


def test_unknown_extension(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"data\.json: unsupported file type '\.json'.*\.csv.*\.xlsx.*\.parquet"):
        load_table(write(tmp_path, "data.json", "{}"))


def test_damaged_xls_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"old\.xls: cannot be read as an \.xls workbook"):
        load_table(write(tmp_path, "old.xls", b"\xd0\xcf\x11\xe0"))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nowhere\.csv: file not found"):
        load_table(tmp_path / "nowhere.csv")


def test_folder_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(InputError, match=r"dir\.csv: is a folder"):
        load_table(tmp_path / "dir.csv")


@pytest.mark.parametrize("header", ["a,b,a", "a, b ,b", '"a",b,"a"'])
def test_duplicate_column_names(tmp_path: Path, header: str) -> None:
    with pytest.raises(InputError, match=r"dup\.csv: columns \d and 3 are both named '(a|b)'"):
        load_table(write(tmp_path, "dup.csv", f"{header}\n1,2,3\n"))


def test_empty_column_name(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"noname\.csv: column 2 .*has no name"):
        load_table(write(tmp_path, "noname.csv", "a, ,c\n1,2,3\n"))


def test_unnamed_empty_trailing_column_is_dropped(tmp_path: Path) -> None:
    data = load_table(write(tmp_path, "trail.csv", "a;b;\n1;2;\n3;4;\n"))
    assert list(data.frame.columns) == ["a", "b"]


def test_duplicate_names_in_xlsx(tmp_path: Path) -> None:
    path = tmp_path / "dup.xlsx"
    pd.DataFrame([["x", "x"], [1, 2]]).to_excel(path, header=False, index=False)
    with pytest.raises(InputError, match=r"dup\.xlsx: columns 1 and 2 are both named 'x'"):
        load_table(path)


@pytest.mark.parametrize("name", ["bad.parquet", "bad.xlsx", "bad.sav", "bad.dta"])
def test_corrupt_binary_files(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match=rf"{name.replace('.', '[.]')}: cannot be read as .*damaged"):
        load_table(write(tmp_path, name, b"this is not a real file at all\n" * 20))


def test_truncated_parquet(tmp_path: Path, frame: pd.DataFrame) -> None:
    good = tmp_path / "good.parquet"
    frame.to_parquet(good)
    cut = write(tmp_path, "cut.parquet", good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(InputError, match=r"cut\.parquet: cannot be read as a Parquet file"):
        load_table(cut)


def test_binary_file_named_csv(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"bin\.csv: contains NUL bytes"):
        load_table(write(tmp_path, "bin.csv", b"PK\x03\x04\x00\x00binary"))


# --- the input file is never modified --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [("keep.csv", "a;b\r\n1;x\r\n2;y\r\n".encode("cp1252")), ("keep.csv", "\ufeffa,b\n1,2\n".encode())],
)
def test_input_file_is_unchanged(tmp_path: Path, name: str, content: bytes) -> None:
    path = write(tmp_path, name, content)
    old = os.stat(path).st_mtime_ns - 10_000_000_000
    os.utime(path, ns=(old, old))
    load_table(path)
    assert path.read_bytes() == content
    assert os.stat(path).st_mtime_ns == old


# --- the vectorised field count agrees with the csv module -----------------------------------

_FIELD = st.one_of(
    st.text(alphabet="ab1 ;|\t", max_size=4),
    st.text(alphabet='ab,;\n"', max_size=4).map(lambda s: '"' + s.replace('"', '""') + '"'),
)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.lists(_FIELD, min_size=1, max_size=4), min_size=1, max_size=8),
    eol=st.sampled_from(["\n", "\r\n"]),
    blank=st.sampled_from(["", "  "]),
)
def test_vectorised_count_matches_csv_module(rows: list[list[str]], eol: str, blank: str) -> None:
    text = "h1,h2,h3" + eol + blank + eol + eol.join(",".join(row) for row in rows) + eol
    data = text.encode()
    expected = None
    for line, fields in sniffing._records(text, ","):
        if len(fields) != 3:
            expected = (line, len(fields))
            break
    assert sniffing._ragged_in_bytes(data, ",", 3) == expected


def test_extra_trailing_field_on_first_row_is_ragged(tmp_path: Path) -> None:
    # pandas would silently drop the extra (empty) field on every row here.
    with pytest.raises(InputError, match=r"trail\.csv: line 2 has 4 fields but the header has 3"):
        load_table(write(tmp_path, "trail.csv", "a,b,c\n1,2,3,\n4,5,6,\n"))


@pytest.mark.parametrize("suffix", [".xlsx", ".parquet", ".sav"])
def test_binary_input_file_is_unchanged(tmp_path: Path, frame: pd.DataFrame, suffix: str) -> None:
    path = tmp_path / f"keep{suffix}"
    if suffix == ".xlsx":
        frame.to_excel(path, index=False)
    elif suffix == ".parquet":
        frame.to_parquet(path)
    else:
        pytest.importorskip("pyreadstat").write_sav(frame, str(path))
    content = path.read_bytes()
    old = os.stat(path).st_mtime_ns - 10_000_000_000
    os.utime(path, ns=(old, old))
    load_table(path)
    assert path.read_bytes() == content
    assert os.stat(path).st_mtime_ns == old
