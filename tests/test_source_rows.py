"""A loaded table knows where each record sits in its file, so messages name the row or line a person finds it on
(issue 31, point 6): title and header rows counted, blank rows skipped as the file has them, a quoted value spanning
lines counted as the lines it takes."""
from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import Workbook

from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.source_rows import rows_text
from ppdp_desktop.core.errors import InputError


def test_a_text_file_names_each_record_by_its_line(tmp_path: Path) -> None:
    """A title line, a blank line, the header on line 3, then records on lines 4, 6 (after a blank line) and 7-8
    (a quoted value over two lines) and 9."""
    path = tmp_path / "t.csv"
    path.write_text('Export 2025\n\nid,note\n1,a\n\n2,b\n3,"two\nlines"\n4,d\n', encoding="utf-8")
    dataset = load_table(path, header_row=2)
    assert dataset.frame["note"].tolist() == ["a", "b", "two\nlines", "d"]
    assert rows_text(dataset, [0, 1, 2, 3]) == "lines 4, 6, 7 and 9"
    assert rows_text(dataset, [3]) == "line 9"


def test_a_plain_text_file_counts_its_lines_without_parsing_them(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("id,x\n" + "".join(f"{i},{i}\n" for i in range(1000)), encoding="utf-8")
    dataset = load_table(path)
    assert dataset.source_rows.rows is None and dataset.source_rows.first == 2
    assert rows_text(dataset, list(range(990, 1000)), limit=3) == "lines 992, 993 and 994, and 7 more"


def test_a_workbook_names_each_record_by_its_sheet_row(tmp_path: Path) -> None:
    """A title in row 1, the header in row 3 (row 2 empty), records in rows 4, 5 and 7 (row 6 empty)."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Fälle"
    sheet["A1"] = "Klinikum – Export"
    for row, values in {3: ("id", "ward"), 4: (1, "A"), 5: (2, None), 7: (3, "B")}.items():
        for col, value in enumerate(values, start=1):
            sheet.cell(row=row, column=col, value=value)
    path = tmp_path / "w.xlsx"
    book.save(path)
    dataset = load_table(path, header_row=2)  # the second non-blank row, as the import options count
    assert dataset.frame["ward"].tolist()[::2] == ["A", "B"]
    assert rows_text(dataset, [0, 1, 2]) == "rows 4, 5 and 7 of sheet 'Fälle'"


def test_a_value_that_does_not_fit_its_kind_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "k.csv"
    path.write_text("Titel\nage,dx\n34,a\n\nforty,b\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"k\.csv: column 'age' is set to numeric but line 5 holds 'forty'"):
        load_table(path, header_row=2, kinds={"age": "numeric"})


def test_a_table_made_in_memory_counts_its_records() -> None:
    import pandas as pd

    from ppdp_desktop.core.data.dataset import Dataset

    assert rows_text(Dataset(pd.DataFrame({"a": range(10)})), [0, 4]) == "data rows 1 and 5 (counting the records from 1)"
