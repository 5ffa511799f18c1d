"""dp-microagg and blank cells (issue 31, point 6): a protected column with blanks needs a choice (a value of their
own, their records left out, or imputed), the refusal names the blanks by the rows a person finds them on, each
choice keeps the guarantee and the release says which was used; the command line takes ``--blanks COL=CHOICE``."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from clinical_data import BLANK_COLUMN, write_clinical_xlsx
from openpyxl import load_workbook

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.taxonomy.tree import Taxonomy

PASSPHRASE = "correct horse battery staple 31"


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def clinical(tmp_path_factory):
    """A 600-case clinical export (title row 1, header row 2) and the sheet rows whose Station cell is blank."""
    path = write_clinical_xlsx(tmp_path_factory.mktemp("clinical") / "klinik.xlsx", 600, seed=3)
    sheet = load_workbook(path, read_only=True).worksheets[0]
    header = [c.value for c in next(sheet.iter_rows(min_row=2, max_row=2))]
    column = header.index(BLANK_COLUMN)
    return path, [r[0].row for r in sheet.iter_rows(min_row=3) if r[column].value in (None, "")]


def _anonymize_clinical(clinical, tmp_path, *extra):
    return ["anonymize", clinical[0], "--header-row", "2", "--method", "dp-microagg", "--attributes",
            f"{BLANK_COLUMN},Größe (cm)", "--epsilon", "1", "--k", "10", "--identifier", "Patienten-Nr.", "--out",
            tmp_path / "release", "--key", tmp_path / "release.ppdpkey", "--passphrase-file", _passphrase(tmp_path),
            *extra]


def _passphrase(tmp_path):
    path = tmp_path / "passphrase.txt"
    path.write_text(PASSPHRASE + "\n", encoding="utf-8")
    return path


def test_the_command_line_names_the_blank_cells_by_their_sheet_rows(clinical, tmp_path, capsys):
    """Without a choice the job stops with one line naming the column, how many blanks, the first five rows as Excel
    numbers them (title and header rows counted) and the flag with its choices; nothing is written."""
    code, _, err = run(_anonymize_clinical(clinical, tmp_path), capsys)
    rows = clinical[1]
    assert code == 2 and err.count("\n") == 1, err
    assert (f"Column '{BLANK_COLUMN}' of klinik.xlsx has {len(rows)} blank cell(s) (rows "
            f"{', '.join(map(str, rows[:4]))} and {rows[4]} of sheet 'Fälle', and {len(rows) - 5} more)") in err
    assert f"--blanks {BLANK_COLUMN}=CHOICE: value" in err and "drop" in err and "impute" in err
    assert not (tmp_path / "release").exists()


@pytest.mark.parametrize("choice", ["value", "drop", "impute"])
def test_each_choice_makes_a_release_that_verifies_and_says_it(clinical, tmp_path, capsys, choice):
    """``--blanks Station=CHOICE``: the release verifies, release.json records the choice and the number of blank
    cells, README.txt says it in words, and leaving the records out releases only the others."""
    code, out, err = run(_anonymize_clinical(clinical, tmp_path, "--blanks", f"{BLANK_COLUMN}={choice}"), capsys)
    assert code == 0, err
    blanks = len(clinical[1])
    folder = tmp_path / "release"
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    entry = next(e for e in meta["protected"] if e["attribute"] == BLANK_COLUMN)
    assert entry["blanks"]["choice"] == choice and entry["blanks"]["cells"] == blanks
    assert meta["parameters"]["blanks"] == {BLANK_COLUMN: choice}
    assert len(pd.read_csv(folder / "release.csv")) == (600 - blanks if choice == "drop" else 600)
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    assert f"Blank cells: '{BLANK_COLUMN}': " in readme
    assert "blank cells: " in out
    disclosed = f"learns whether a person's '{BLANK_COLUMN}' cell was blank"  # what leaving records out gives away
    assert (disclosed in " ".join(meta["guarantee"]["not_covered"])) == (choice == "drop")
    assert (disclosed in " ".join(readme.split())) == (choice == "drop")
    assert run(["verify", folder], capsys)[0] == 0


def test_the_report_of_a_written_release_treats_the_originals_blanks_as_the_job_did(clinical, tmp_path, capsys):
    """``ppdp report ORIGINAL RELEASE`` on a release whose blank cells were left out: the original's blanks are left
    out the same way, so the report is built (it stopped at the first blank before)."""
    assert run(_anonymize_clinical(clinical, tmp_path, "--blanks", f"{BLANK_COLUMN}=drop"), capsys)[0] == 0
    code, _, err = run(["report", clinical[0], tmp_path / "release", "--header-row", "2", "--out",
                        tmp_path / "report.html"], capsys)
    assert code == 0, err
    assert (tmp_path / "report.html").stat().st_size > 1000


def _dataset(frame: pd.DataFrame) -> Dataset:
    return Dataset(frame)


def _settings(attributes, blanks, **options) -> AnonymizationSettings:
    return AnonymizationSettings(sensitive="", method="dp-microagg", seed=3,
                                 options=DPSettings(attributes, 1.0, 5, blanks=blanks, **options))


def test_a_number_column_takes_drop_or_the_middle_of_its_range_never_a_value_of_its_own():
    """A number column's blank cannot be a value of its own (refused, naming the rows); imputed, it is the middle of
    the declared range (60 for 0:120), a fixed value; dropped, its records are left out."""
    age = [30.0, np.nan, 50.0, 70.0, np.nan] * 20
    frame = pd.DataFrame({"age": age, "los": range(100)})
    dataset = _dataset(frame)
    assert dataset.schema.attributes["age"].kind is Kind.NUMERIC
    with pytest.raises(ParameterError, match=r"holds numbers, so its 40 blank cell\(s\) \(data rows 2, 5, 7, 10 and "
                                             r"12 \(counting the records from 1\), and 35 more\) cannot be a value"):
        anonymize(dataset, _settings(["age"], {"age": "value"}))
    imputed = anonymize(dataset, _settings(["age"], {"age": "impute"}, domains={"age": (0.0, 120.0)}))
    assert imputed.dataset.frame["age"].tolist() == [60.0 if np.isnan(a) else a for a in age]
    assert any("40 blank cells imputed as 60.0 (the middle of its declared range, 0 to 120" in line
               for line in imputed.plan.describe())
    dropped = anonymize(dataset, _settings(["age"], {"age": "drop"}))
    assert len(dropped.table) == 60 and dropped.dataset.frame["age"].notna().all()


def test_a_categorical_blank_joins_a_given_taxonomy_as_a_leaf_or_takes_its_root():
    """With a grouped taxonomy: a value of its own adds '(blank)' under the root (released labels all in it, the
    plan verified); imputed, a blank is the root's label, which the flat taxonomy of the data does not hold twice."""
    taxonomy = Taxonomy("ward", "Any")
    for group, wards in {"Medicine": ["Cardio", "Neuro"], "Surgery": ["Trauma"]}.items():
        taxonomy.add("Any", group)
        for ward in wards:
            taxonomy.add(group, ward)
    frame = pd.DataFrame({"ward": (["Cardio", None, "Neuro", "Trauma", ""] * 20)})
    settings = _settings(["ward"], {"ward": "value"}, taxonomies={"ward": taxonomy})
    result = anonymize(_dataset(frame), settings)
    published = result.plan.attributes[0].taxonomy
    assert published.node("(blank)").parent.label == "Any" and taxonomy.find("(blank)") is None
    assert set(result.table["ward"].astype(str)) <= set(published.parents())
    assert result.plan.attributes[0].blanks.cells == 40 and result.guarantee["verified"]
    imputed = anonymize(_dataset(frame), _settings(["ward"], {"ward": "impute"}, taxonomies={"ward": taxonomy}))
    assert set(imputed.dataset.frame["ward"]) == {"Cardio", "Neuro", "Trauma", "Any"}
    flat = anonymize(_dataset(frame), _settings(["ward"], {"ward": "impute"}))
    assert flat.plan.attributes[0].taxonomy.leaf_labels() == ["Cardio", "Neuro", "Trauma"]


def test_the_blank_label_does_not_take_a_value_the_column_has():
    """A column already holding "(blank)" gets "(blank 2)" for its blank cells."""
    frame = pd.DataFrame({"ward": (["(blank)", None, "Neuro"] * 10)})
    result = anonymize(_dataset(frame), _settings(["ward"], {"ward": "value"}))
    assert result.plan.attributes[0].blanks.fill == "(blank 2)"


def test_the_blanks_flag_is_checked_when_read(tmp_path, capsys):
    """A choice that is none of value, drop, impute is refused on one line naming the flag and what it takes."""
    path = tmp_path / "w.csv"
    path.write_text("ward,los\nA,1\n,2\nB,3\n", encoding="utf-8")
    code, _, err = run(["anonymize", path, "--out", tmp_path / "o", "--method", "dp-microagg", "--attributes", "ward",
                        "--epsilon", "1", "--k", "1", "--blanks", "ward=maybe"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "--blanks 'ward=maybe' must look like COL=CHOICE with CHOICE one of value, drop, impute" in err


def test_a_streamed_job_fills_blank_cells_but_does_not_leave_records_out(tmp_path, capsys):
    """Streamed (``--streaming``), a value of their own works as in memory (the report's sample filled alike) and the
    release verifies; leaving records out is refused on one line, saying what to do instead."""
    path = tmp_path / "w.csv"
    path.write_text("id,ward,los\n" + "".join(f"P{i},{'ABC '[i % 4].strip()},{i % 30 + 1}\n" for i in range(400)),
                    encoding="utf-8")
    base = ["anonymize", path, "--method", "dp-microagg", "--attributes", "ward,los", "--epsilon", "1", "--k", "10",
            "--identifier", "id", "--passphrase-file", _passphrase(tmp_path), "--streaming"]
    code, _, err = run([*base, "--out", tmp_path / "value", "--blanks", "ward=value"], capsys)
    assert code == 0, err
    assert run(["verify", tmp_path / "value"], capsys)[0] == 0
    code, _, err = run([*base, "--out", tmp_path / "drop", "--blanks", "ward=drop"], capsys)
    assert code == 2 and err.count("\n") == 1 and "a streamed job cannot do" in err
    assert not (tmp_path / "drop").exists()
