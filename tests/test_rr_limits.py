"""rr refuses at once a table too large to plan and check, naming the columns and what to coarsen (issue 31, point
7: sex, birth date and postcode of 5,000 clinical records ran 765 s before failing on a limit that names --table)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from clinical_data import clinical_frame, write_clinical_xlsx

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.rr import limits
from ppdp_desktop.core.methods.rr import method as rr_method
from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.settings import AnonymizationSettings

QUASI, SENSITIVE = ["Geschlecht", "Geburtsdatum", "PLZ"], "Hauptdiagnose (ICD-10)"
#: what the refusal must name: every column with its number of values, the combinations, the column to coarsen
NAMED = ["Geschlecht (3 values)", "Geburtsdatum (4,562 values)", "PLZ (10 values)",
         "Hauptdiagnose (ICD-10) (12 values)", "1,642,320 combinations", "646 million steps",
         "Geburtsdatum has the most values", "at most about 1,700", "the month or year instead of the day"]


@pytest.fixture
def no_planning(monkeypatch):
    """The optimizer and the table of combinations must not be reached: the limit is checked first."""
    def reached(*_args, **_kwargs):
        raise AssertionError("the optimizer ran (or the table was built) before the limit was checked")

    monkeypatch.setattr(rr_method, "optimal_parameters", reached)
    monkeypatch.setattr(rr_method, "contingency", reached)


@pytest.fixture(scope="module")
def clinical_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("clinical") / "klinik.csv"
    clinical_frame().to_csv(path, index=False, sep=";")
    return path


def test_the_clinical_job_is_refused_before_planning(clinical_csv, no_planning):
    dataset = load_table(clinical_csv)
    settings = AnonymizationSettings(SENSITIVE, "rr", quasi=QUASI, options=RRSettings(l=3.0))
    with pytest.raises(ParameterError) as caught:
        anonymize(dataset, settings)
    message = str(caught.value)
    assert all(part in message for part in NAMED), message
    assert "remove it from the quasi-identifiers (--quasi COLS; it is then released as it is)" in message
    assert "--table" not in message and caught.value.setting == "quasi"


def test_the_command_line_refuses_the_over_limit_job_at_once_in_one_line(tmp_path, capsys, no_planning):
    data = write_clinical_xlsx(tmp_path / "klinik.xlsx")
    code = main(["anonymize", str(data), "--header-row", "2", "--method", "rr", "--sensitive", SENSITIVE,
                 "--quasi", ",".join(QUASI), "--l", "3", "--out", str(tmp_path / "release")])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ppdp: error: Randomized response cannot plan"), err
    assert all(part in err for part in NAMED), err
    # the only option named is the one the user typed, said with what it is for
    assert "(--quasi COLS; it is then released as it is)" in err
    assert "Traceback" not in err and "--table" not in err
    assert not (tmp_path / "release").exists()


def test_a_coarser_birth_date_is_within_the_limits():
    months = [3, 900, 10, 12]  # the birth month instead of the day, as the refusal suggests
    assert limits.within_limits(months) and limits.within_limits([16, 7, 2, 5, 7])  # adult, seed 001's setting
    assert not limits.within_limits([3, 4562, 10, 12])
    dims = [3, 4562, 10, 12]
    most = limits.most_values(dims, 1)
    assert limits.within_limits([3, most, 10, 12]) and not limits.within_limits([3, most + 1, 10, 12])


def test_the_sensitive_column_is_to_be_coarsened_not_removed(no_planning):
    frame = pd.DataFrame({"sex": ["f", "m"] * 4_000, "code": [f"C{i:04d}" for i in range(8_000)]})
    settings = AnonymizationSettings("code", "rr", quasi=["sex"], options=RRSettings(l=3.0))
    with pytest.raises(ParameterError) as caught:
        rr_method.RandomizedResponse().prepare(Dataset(frame), settings)
    message = str(caught.value)
    assert "the quasi-identifier sex (2 values) with the sensitive column code (8,000 values)" in message
    assert "code has the most values: coarsen it" in message and "remove it" not in message


def test_an_estimated_table_too_large_names_no_option_the_user_did_not_type():
    """The report estimates these tables too (the group-disclosure section): its refusal names no --table."""
    table = pd.DataFrame({f"c{i}": [str(v) for v in range(3_000)] for i in range(9)})
    release = LoadedRelease(Path("."), {"randomized": []}, table)
    with pytest.raises(ParameterError) as caught:
        estimate_release_table(release, list(table.columns))
    assert str(caught.value).startswith("A table of 9 columns (c0, c1, c2, c3, c4, c5, c6, c7, c8) is too many")
    with pytest.raises(ParameterError) as caught:
        estimate_release_table(release, ["c0", "c1"])
    assert str(caught.value).startswith("The estimated table of c0, c1 would have at least 9,000,000 combinations")
    assert "--" not in str(caught.value)
