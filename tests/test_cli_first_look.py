"""The command line reads a file as the window does (issue 31, point 12): the window's first look
(``inspect_file``) is shared, what it is sure of is applied and said in one line, and what it is not sure of is
suggested by its option -- on the clinical .xlsx (title in row 1, header in row 2) and on text files."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from tests.clinical_data import TITLE, clinical_frame, write_clinical_xlsx

SENSITIVE = "Hauptdiagnose (ICD-10)"


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def clinical_xlsx(tmp_path_factory) -> Path:
    return write_clinical_xlsx(tmp_path_factory.mktemp("clinic") / "klinik.xlsx", n=400)


def _anonymize(data: Path, out: Path, *extra) -> list:
    return ["anonymize", data, "--out", out, "--sensitive", SENSITIVE, "--identifier", "Patienten-Nr.",
            "--method", "uniform", "--theta", "3", "--no-report", "--seed", "4", *extra]


def test_anonymize_reads_the_header_below_the_title_and_says_so(clinical_xlsx, tmp_path, capsys):
    code, _, err = run(_anonymize(clinical_xlsx, tmp_path / "rel"), capsys)
    assert code == 0, err
    assert ("ppdp: note: klinik.xlsx: reading the column names from row 2 (row 1 holds a title); give --header-row N "
            "to choose another row.") in err.splitlines()
    meta = json.loads((tmp_path / "rel" / "release.json").read_text(encoding="utf-8"))
    assert set(meta["attributes"]) == set(clinical_frame(100).columns)
    assert meta["n_records"] == 400 and TITLE not in json.dumps(meta, ensure_ascii=False)
    # a header row given wins over the first look: nothing applied, nothing said
    code, _, err = run(_anonymize(clinical_xlsx, tmp_path / "other", "--header-row", "1"), capsys)
    error = err.splitlines()[-1]
    assert code == 3 and error.startswith("ppdp: error: klinik.xlsx: ") and "have no name in the header" in error
    assert "note" not in err and "--header-row" not in err and not (tmp_path / "other").exists()


def test_a_title_the_look_is_not_sure_of_is_suggested_not_applied(tmp_path, capsys):
    """Row 1 holds two cells (a title and a date?) above ten columns: maybe a title, maybe a header with names
    missing. Nothing is applied; the error names the option to give."""
    path = tmp_path / "export.xlsx"
    frame = clinical_frame(100)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="Fälle", index=False, startrow=1)
        writer.sheets["Fälle"].cell(row=1, column=1, value=TITLE)
        writer.sheets["Fälle"].cell(row=1, column=2, value="Stand 1.3.2025")
    code, _, err = run(["risk", path, "--quasi", "Geschlecht,PLZ"], capsys)
    assert code == 3 and err.count("\n") == 1, err
    assert "have no name in the header" in err
    assert ("Row 1 has 2 filled cells but most rows have 9: if it is a title, give --header-row N with the row that "
            "holds the column names (row 2 is the first that fills as many).") in err
    code, out, err = run(["risk", path, "--quasi", "Geschlecht,PLZ", "--header-row", "2"], capsys)
    assert code == 0 and "Geschlecht and PLZ" in out and "note" not in err


def test_a_text_file_with_a_title_and_decimal_commas(tmp_path, capsys):
    """A spreadsheet saved as CSV: the title followed by empty fields, a decimal comma (sure: 70,5 cannot be a
    thousands separator), read as the window reads it."""
    path = tmp_path / "export.csv"
    path.write_text(f"{TITLE};;;\nPLZ;Gewicht;Ort;Geschlecht\n01067;70,5;Köln;w\n04109;82;Bonn;m\n01067;90,25;Köln;w\n"
                    "04109;65,5;Bonn;m\n", encoding="utf-8")
    code, out, err = run(["risk", path, "--quasi", "Gewicht", "--json"], capsys)
    assert code == 0, err
    assert "ppdp: note: export.csv: reading the column names from row 2 (row 1 holds a title)" in err
    assert ("ppdp: note: export.csv: reading numbers with a decimal comma (column 'Gewicht' holds 70,5); give "
            "--decimal . to keep such values as written.") in err
    assert json.loads(out)["n_records"] == 4
    code, out, err = run(["risk", path, "--quasi", "Gewicht", "--decimal", ".", "--header-row", "2"], capsys)
    assert code == 0 and "note" not in err


def test_thousands_or_decimals_is_asked_not_guessed(tmp_path, capsys):
    """"1,234" may be a decimal comma or a thousands separator: the values stay as written and the option is
    suggested."""
    path = tmp_path / "counts.csv"
    path.write_text("Ort;Betrag\nKöln;1,234\nBonn;2,500\nKöln;12\n", encoding="utf-8")
    code, _, err = run(["risk", path, "--quasi", "Betrag", "--k", "2"], capsys)
    assert code == 0, err
    assert ("ppdp: note: counts.csv: column 'Betrag' holds values such as 1,234: if the comma is a decimal mark, give "
            '--decimal "," to read them as numbers.') in err


def test_a_second_sheet_is_suggested(tmp_path, capsys):
    path = tmp_path / "two.xlsx"
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        pd.DataFrame({"sex": ["F", "M", "F"], "age": [30, 40, 30]}).to_excel(writer, sheet_name="data", index=False)
        pd.DataFrame({"note": ["x"]}).to_excel(writer, sheet_name="Notizen 2025", index=False)
    code, _, err = run(["risk", path, "--quasi", "sex"], capsys)
    assert code == 0, err
    assert ("ppdp: note: two.xlsx: the workbook has 2 sheets (data, Notizen 2025); the first, 'data', is read: give "
            "--sheet NAME to read another.") in err
    assert run(["risk", path, "--quasi", "sex", "--sheet", "data"], capsys)[2] == ""


def test_the_header_is_the_first_full_row_when_most_rows_have_a_blank(tmp_path):
    """Most records leave "Station" blank, so most rows fill 9 cells of 10: the header (10 names) is still row 2,
    not the first record that fills 9 (the window's first look took row 3)."""
    from ppdp_desktop.core.data.inspection import inspect_file
    from ppdp_desktop.core.data.loading import load_table

    path = tmp_path / "blanks.xlsx"
    frame = clinical_frame(100)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="Fälle", index=False, startrow=1)
        writer.sheets["Fälle"].cell(row=1, column=1, value=TITLE)
    facts = inspect_file(path)
    assert facts.options == {"header_row": 2} and facts.sure_options() == {"header_row": 2}
    assert len(load_table(path, **facts.options).frame) == 100
