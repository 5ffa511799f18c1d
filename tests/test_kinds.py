"""Column kinds: code-like columns stay text (leading zeros survive into the release), dates are dates,
the user's kind wins (import options, ``--kind``), and the import options (sheet, decimal comma, header
row, .xls) read what the file holds."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.inspection import inspect_file
from ppdp_desktop.core.data.kinds import guess_kind, name_words
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.schema import Kind, parse_kind, parse_kind_assignments
from ppdp_desktop.core.errors import InputError, ParameterError, TaxonomyError
from ppdp_desktop.core.generalization.dates import date_rows

DATA = Path(__file__).parent / "data"


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def kinds(dataset) -> dict[str, str]:
    return {name: a.kind.value for name, a in dataset.schema.attributes.items()}


# --- guessing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "values", "kind"),
    [
        ("age", ["34", "51", "29"], Kind.NUMERIC),
        ("weight", ["70.5", "82", " 90.25 "], Kind.NUMERIC),
        ("zip", ["47677", "47602", "47677"], Kind.TEXT),  # a code-like name
        ("ZIPCode", ["47677", "47602"], Kind.TEXT),
        ("PatientID", ["1", "2", "3"], Kind.TEXT),
        ("area", ["02134", "47602", "47677"], Kind.TEXT),  # a leading zero
        ("record", ["123456", "123457", "123458"], Kind.TEXT),  # fixed width >= 5, all different
        ("income", ["12345", "12345", "23456"], Kind.NUMERIC),  # fixed width but repeated: a quantity
        ("admitted", ["2024-03-17", "2023-11-30"], Kind.DATE),
        ("born", ["17.03.1950", "30.11.1961"], Kind.DATE),
        ("seen", ["2024-03-17 10:15", "2024-03-18T08:00:00"], Kind.DATE),
        ("diagnosis", ["flu", "cancer"], Kind.CATEGORICAL),
        ("mixed", ["1", "two"], Kind.CATEGORICAL),
        ("words", ["nan", "inf"], Kind.CATEGORICAL),
        ("badday", ["2024-02-30", "2024-03-01"], Kind.CATEGORICAL),  # not a real date
        ("empty", [None, None], Kind.CATEGORICAL),
    ],
)
def test_guess_kind(column: str, values: list[str | None], kind: Kind) -> None:
    assert guess_kind(pa.array(values, pa.string()), column) is kind


def test_name_words_split_camel_case_and_separators() -> None:
    assert name_words("PatientID") == {"patient", "id"}
    assert name_words("zip_code") == {"zip", "code"}
    assert name_words("ZIPCode") == {"zip", "code"}
    assert "id" not in name_words("width") | name_words("valid")


def test_parse_kind_words_and_errors() -> None:
    assert parse_kind("text-identifier") is Kind.TEXT
    assert parse_kind(" Numeric ") is Kind.NUMERIC
    assert parse_kind_assignments(["zip=text", "a=b=date"]) == {"zip": "text", "a=b": "date"}
    with pytest.raises(ParameterError, match=r"Unknown kind 'bogus' of column 'zip'"):
        parse_kind("bogus", "zip")
    with pytest.raises(ParameterError, match=r"--kind 'zip' is not COLUMN=KIND"):
        parse_kind_assignments(["zip"])


# --- exact text -----------------------------------------------------------------------------------

CELL = st.text(alphabet="0123456789 ,.-+eE/abcé\"", min_size=1, max_size=8).filter(lambda s: s.strip() == s)


@settings(max_examples=60, deadline=None)
@given(st.lists(CELL, min_size=1, max_size=20))
def test_a_text_column_keeps_exactly_the_text_written(tmp_path_factory, cells: list[str]) -> None:
    path = tmp_path_factory.mktemp("exact") / "t.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["code", "n"])
        writer.writerows([c, i] for i, c in enumerate(cells))
    loaded = load_table(path, kinds={"code": "text"})
    assert loaded.frame["code"].tolist() == cells
    assert loaded.schema.attributes["code"].kind is Kind.TEXT


def test_leading_zeros_survive_into_the_release(tmp_path: Path, capsys) -> None:
    data = write(tmp_path, "z.csv", "PatientID,ZIPCode,age,diagnosis\n017,02134,34,flu\n018,47602,51,asthma\n"
                 "019,02139,29,flu\n020,02139,44,cold\n021,02134,61,flu\n022,47602,38,cold\n")
    out = tmp_path / "rel"
    code = main(["anonymize", str(data), "--out", str(out), "--sensitive", "diagnosis", "--identifier", "PatientID",
                 "--quasi", "ZIPCode", "--method", "uniform", "--rho1", "0.2", "--rho2", "0.6", "--seed", "5",
                 "--no-report"])
    assert code == 0, capsys.readouterr().err
    released = pd.read_csv(out / "release.csv", dtype=str, encoding="utf-8-sig")
    assert sorted(released["ZIPCode"]) == ["02134", "02134", "02139", "02139", "47602", "47602"]


def test_kind_option_makes_digits_numbers_or_text(tmp_path: Path) -> None:
    path = write(tmp_path, "k.csv", "zip,age\n02134,34\n47602,51\n")
    assert load_table(path, kinds={"zip": "numeric"}).frame["zip"].tolist() == [2134, 47602]
    loaded = load_table(path, kinds={"age": "categorical"})
    assert loaded.frame["age"].tolist() == ["34", "51"]
    assert kinds(loaded) == {"zip": "text", "age": "categorical"}


def test_a_kind_that_does_not_fit_names_file_column_row_and_value(tmp_path: Path) -> None:
    path = write(tmp_path, "k.csv", "dx,day\nflu,2024-01-01\n12,2024-01-02\n")
    with pytest.raises(InputError, match=r"k\.csv: column 'dx' is set to numeric but line 2 holds 'flu'"):
        load_table(path, kinds={"dx": "numeric"})
    with pytest.raises(InputError, match=r"k\.csv: column 'dx' is set to date"):
        load_table(path, kinds={"dx": "date"})
    with pytest.raises(InputError, match=r"k\.csv: a kind is given for column 'nope'"):
        load_table(path, kinds={"nope": "text"})


def test_cli_kind_flag(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "k.csv", "zip,age\n02134,34\n02134,51\n47602,51\n")
    assert main(["risk", str(path), "--quasi", "zip", "--kind", "zip=numeric", "--json"]) == 0
    assert main(["risk", str(path), "--quasi", "zip", "--kind", "zip=wrong"]) == 2
    err = capsys.readouterr().err
    assert "Unknown kind 'wrong' of column 'zip'" in err and "Traceback" not in err


# --- import options ----------------------------------------------------------------------------------


def test_decimal_comma_and_title_row(tmp_path: Path) -> None:
    path = write(tmp_path, "de.csv", "Export vom 1.3.2024\n\nid;Gewicht;Ort\n1;70,5;Köln\n2;82;Bonn\n3;90,25;Köln\n")
    facts = inspect_file(path)
    assert facts.options == {"header_row": 2, "decimal": ","}
    assert len(facts.doubts) == 2 and "title" in facts.doubts[0] and "decimal comma" in facts.doubts[1]
    loaded = load_table(path, **facts.options)
    assert loaded.frame["Gewicht"].tolist() == [70.5, 82.0, 90.25]
    assert loaded.details["decimal"] == "," and loaded.details["header_row"] == "2"
    # without the options the commas stay text (nothing is guessed into a number)
    plain = load_table(path, header_row=2)
    assert plain.frame["Gewicht"].tolist() == ["70,5", "82", "90,25"]


def test_header_row_beyond_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"h\.csv: has no row 9 to take the column names from"):
        load_table(write(tmp_path, "h.csv", "a,b\n1,2\n"), header_row=9)
    with pytest.raises(InputError, match=r"the header row 'x' is not usable"):
        load_table(write(tmp_path, "h.csv", "a,b\n1,2\n"), header_row="x")


def test_preview_reads_only_the_first_rows(tmp_path: Path) -> None:
    lines = "\n".join(f"{i},{i % 7}" for i in range(200_000))
    path = write(tmp_path, "big.csv", "n,m\n" + lines + "\n")
    preview = load_table(path, rows=20)
    assert preview.frame["n"].tolist() == list(range(20))


def test_cp1252_and_one_sheet_are_doubts_or_not(tmp_path: Path) -> None:
    latin = write(tmp_path, "w.csv", "city,n\nBesançon,1\n", encoding="cp1252")
    assert any("Windows-1252" in d for d in inspect_file(latin).doubts)
    plain = write(tmp_path, "p.csv", "city,n\nBesançon,1\nLyon,2\n")
    assert inspect_file(plain).doubts == []


def test_xls_workbook_with_title_row_and_two_sheets() -> None:
    path = DATA / "clinic.xls"
    facts = inspect_file(path)
    assert facts.sheets == ["patients", "notes"] and facts.options == {"header_row": 2}
    loaded = load_table(path, **facts.options)
    assert loaded.details == {"format": "xls", "sheet": "patients", "header_row": "2"}
    assert loaded.frame["ZIPCode"].tolist() == ["02134", "47602", "02139"]
    assert loaded.frame["city"].tolist() == ["Besançon", "Boston", "Köln"]
    assert kinds(loaded) == {"PatientID": "text", "ZIPCode": "text", "age": "numeric", "city": "categorical",
                             "diagnosis": "categorical"}
    assert load_table(path, sheet="notes").frame.columns.tolist() == ["note"]


def test_xlsx_code_column_and_dates(tmp_path: Path) -> None:
    path = tmp_path / "c.xlsx"
    pd.DataFrame({"patient_id": [101, 102], "admitted": pd.to_datetime(["2024-03-17", "2024-04-02"]),
                  "weight": [70.5, 82.0]}).to_excel(path, index=False)
    loaded = load_table(path)
    assert kinds(loaded) == {"patient_id": "text", "admitted": "date", "weight": "numeric"}
    assert loaded.frame["patient_id"].tolist() == ["101", "102"]
    assert loaded.frame["admitted"].tolist() == ["2024-03-17", "2024-04-02"]


# --- dates as quasi-identifiers ---------------------------------------------------------------------


def test_date_rows_month_year_decade() -> None:
    rows = date_rows("admitted", ["2024-03-17", "2019-12-01", None])
    assert rows == [["2019-12-01", "2019-12", "2019", "2010-2019"], ["2024-03-17", "2024-03", "2024", "2020-2029"]]


def test_date_rows_leave_out_an_ambiguous_month() -> None:
    assert date_rows("d", ["01/02/2024", "03/04/2024"]) == [["01/02/2024", "2024", "2020-2029"],
                                                           ["03/04/2024", "2024", "2020-2029"]]
    assert date_rows("d", ["31/01/2024"])[0][1] == "2024-01"  # day first: 31 is no month
    with pytest.raises(TaxonomyError, match=r"'d' is not a column of dates"):
        date_rows("d", ["2024-01-01", "soon"])


def test_a_date_quasi_identifier_is_generalized_by_month_and_year(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(1)
    days = pd.date_range("2023-01-01", "2024-12-31").strftime("%Y-%m-%d").to_numpy()
    frame = pd.DataFrame({"admitted": rng.choice(days, 400), "dx": rng.choice(["flu", "cold", "cancer"], 400)})
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "rel"
    assert main(["anonymize", str(data), "--out", str(out), "--sensitive", "dx", "--quasi", "admitted",
                 "--k-anonymity", "5", "--method", "uniform", "--rho1", "0.2", "--rho2", "0.6", "--seed", "2",
                 "--no-report"]) == 0, capsys.readouterr().err
    released = pd.read_csv(out / "release.csv", dtype=str, encoding="utf-8-sig")["admitted"]
    assert released.str.fullmatch(r"\d{4}-\d{2}|\d{4}|\*").all()
    assert released.value_counts().min() >= 5


def test_a_project_reads_its_file_with_its_import_options(tmp_path: Path) -> None:
    from ppdp_desktop.core.jobs import load_job
    from ppdp_desktop.core.progress import CancelToken
    from ppdp_desktop.core.project import Project

    data = write(tmp_path, "de.csv", "Titel\nFall;Gewicht\n007;70,5\n008;82\n")
    project = Project(data_path=str(data), load_options={"header_row": 2, "decimal": ",", "kinds": {"Fall": "text"}})
    project.save(tmp_path / "p.ppdp")
    again = Project.load(tmp_path / "p.ppdp")
    dataset = load_job(again.data_path, dict(again.load_options), lambda *_: None, CancelToken())
    assert dataset.frame["Fall"].tolist() == ["007", "008"]
    assert dataset.frame["Gewicht"].tolist() == [70.5, 82.0]


def test_a_flat_taxonomy_does_not_hide_the_built_in_levels() -> None:
    from ppdp_desktop.core.data.schema import Attribute, Role, Schema
    from ppdp_desktop.core.protection import hierarchies_for
    from ppdp_desktop.core.settings import ProtectionSettings
    from ppdp_desktop.core.taxonomy.tree import Taxonomy

    frame = pd.DataFrame({"zip": ["02134", "02139", "47602"], "day": ["2024-01-02", "2024-02-03", "2023-05-06"]})
    schema = Schema({"zip": Attribute("zip", Role.QUASI_IDENTIFIER, Kind.TEXT),
                     "day": Attribute("day", Role.QUASI_IDENTIFIER, Kind.DATE)})
    flat = {c: Taxonomy.flat(c, frame[c].unique()) for c in frame}
    found = hierarchies_for(frame, ["zip", "day"], schema, ProtectionSettings(k=2), flat)
    assert "0213*" in found["zip"].labels(1)
    assert "2024" in found["day"].labels(2)


def test_cli_identifiers_are_read_as_text() -> None:
    from ppdp_desktop.cli.commands import load_options
    from ppdp_desktop.cli.parser import build_parser

    args = build_parser().parse_args(["anonymize", "d.csv", "--out", "o", "--sensitive", "dx", "--identifier",
                                      "case,mrn", "--kind", "mrn=numeric", "--decimal", ",", "--header-row", "2"])
    assert load_options(args) == {"decimal": ",", "header_row": 2, "kinds": {"case": "text", "mrn": "numeric"}}


def test_text_identifiers_that_are_not_digits() -> None:
    assert guess_kind(pa.array(["P01", "P02", "P01"]), "patient_id") is Kind.TEXT
    names = [f"Person {i}" for i in range(60)]
    assert guess_kind(pa.array(names), "name") is Kind.TEXT
    assert guess_kind(pa.array(names[:10]), "name") is Kind.CATEGORICAL  # too few to tell
    assert guess_kind(pa.array(["flu", "gout"] * 40), "diagnosis") is Kind.CATEGORICAL


# --- the guess asks a sample first (issue 34), with the whole column's answer -----------------------


@pytest.mark.parametrize(
    ("column", "values", "kind"),
    [
        ("n", [str(i % 90) for i in range(1500)] + ["many"], Kind.CATEGORICAL),  # a word after the sample
        ("n", [str(i % 90) for i in range(1500)] + [" 7 "], Kind.NUMERIC),  # spaces after the sample
        ("n", [str(i % 90 + 10) for i in range(1500)] + ["012"], Kind.TEXT),  # a leading zero after it
        ("n", [str(100_000 + i) for i in range(1500)] + ["100001"], Kind.NUMERIC),  # fixed width, one repeat
        ("day", ["2024-03-01"] * 1500 + ["2024-02-30"], Kind.CATEGORICAL),  # no such day, after the sample
        ("day", ["01.03.2024"] * 1500 + ["2024-03-01"], Kind.CATEGORICAL),  # two formats
        ("name", [f"p{i}" for i in range(1500)] + ["p3"], Kind.CATEGORICAL),  # all different but the last
        ("name", [f"p{i}" for i in range(1501)], Kind.TEXT),
    ],
)
def test_a_rule_broken_after_the_sample_decides_the_kind(column: str, values: list[str], kind: Kind) -> None:
    assert guess_kind(pa.array(values, pa.string()), column) is kind


def test_the_load_types_a_long_file_as_its_whole_columns_say(tmp_path: Path) -> None:
    rows = [f"{i % 90},{'2024-03-01' if i < 4000 else '2024-13-01'},{i % 7 + 0.5},{i:06d}" for i in range(5000)]
    path = write(tmp_path, "long.csv", "age,day,w,ref\n" + "\n".join(rows) + "\n")
    loaded = load_table(path)
    assert kinds(loaded) == {"age": "numeric", "day": "categorical", "w": "numeric", "ref": "text"}
    assert loaded.frame["ref"].iloc[:2].tolist() == ["000000", "000001"]
    assert str(loaded.frame["age"].dtype) == "int64" and str(loaded.frame["w"].dtype) == "float64"


def test_the_heap_is_trimmed_as_the_parsed_text_is_typed(monkeypatch) -> None:
    """Each time the columns typed since the last trim held TRIM_BYTES of parsed text, their freed memory is handed
    back (issue 34: the load's peak); the frame is the same as without the trims."""
    from ppdp_desktop.core.data import kinds

    names = ["id", "sex", "age"]
    texts = [[f"P{i}" for i in range(300)], ["F", "M", "F"] * 100, [str(20 + i % 50) for i in range(300)]]

    def typed() -> pd.DataFrame:
        columns: list[pa.ChunkedArray | None] = [pa.chunked_array([pa.array(t, pa.large_string())]) for t in texts]
        return kinds.type_text_columns(columns, names, None, "d.csv")[0]

    plain = typed()
    trims = []
    monkeypatch.setattr(kinds, "return_freed", lambda: trims.append(1) or True)
    monkeypatch.setattr(kinds, "TRIM_BYTES", 1)
    pd.testing.assert_frame_equal(typed(), plain)
    assert len(trims) == 3  # after every column here
    trims.clear()
    monkeypatch.setattr(kinds, "TRIM_BYTES", 1 << 40)
    typed()
    assert trims == []
