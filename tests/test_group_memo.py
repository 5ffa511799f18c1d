"""The group-disclosure measurement is reused only for the same cells and entries (core/methods/group_memo.py):
a release read back with every cell and release.json entry equal gets the figures measured just before (the job's
own, in memory) without measuring again; one changed cell, entry or argument is measured afresh, so verify still
refuses a release whose written cells differ from what was measured. And a partitioned job measures once."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.methods import group_estimates, group_memo
from ppdp_desktop.core.streaming.readback import read_back
from tests.conftest import shared_adult

QUASI = ["sex", "race"]


@pytest.fixture(scope="module")
def partitioned(tmp_path_factory):
    """A partitioned release of 3,000 Adult records (workclass by sex and race), read back as categories."""
    folder = tmp_path_factory.mktemp("memo")
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False).head(3000)
    frame.to_csv(folder / "adult.csv", sep=";", index=False)
    assert main(["-q", "anonymize", str(folder / "adult.csv"), "--out", str(folder / "out"), "--seed", "5",
                 "--no-report", "--method", "partition", "--sensitive", "workclass", "--rho1", "0.1", "--rho2", "0.5",
                 "--quasi", ",".join(QUASI)]) == 0
    return read_back(folder / "out", None)


@pytest.fixture
def counted(monkeypatch):
    """The number of measurements computed (not recalled), with no measurement remembered at the start."""
    calls = []
    computed = group_estimates._measure
    monkeypatch.setattr(group_estimates, "_measure", lambda *a, **k: calls.append(1) or computed(*a, **k))
    group_memo.forget()
    yield calls
    group_memo.forget()


def _copy(release: LoadedRelease, table: pd.DataFrame | None = None, **meta) -> LoadedRelease:
    return LoadedRelease(release.folder, {**json.loads(json.dumps(release.metadata)), **meta},
                         release.table.copy() if table is None else table)


def _measure(release: LoadedRelease):
    return group_estimates.measure(release, QUASI, "workclass", 0.5, "the group bound")


def test_the_same_cells_are_measured_once(partitioned, counted):
    first = _measure(partitioned)
    table = partitioned.table.copy()
    table["sex"] = table["sex"].cat.reorder_categories(list(reversed(table["sex"].cat.categories)))  # codes differ
    again = _measure(_copy(partitioned, table))
    assert len(counted) == 1
    assert first.applies and first.estimated
    assert again.to_json() == first.to_json()
    assert again is not first


def test_a_changed_cell_is_measured_again(partitioned, counted):
    first = _measure(partitioned)
    table = partitioned.table.copy()
    held = table["workclass"].astype(str).to_numpy().copy()
    other = next(v for v in pd.unique(held) if v != held[0])
    held[0] = other  # one record's released value, still in its domain
    table["workclass"] = pd.Categorical(held)
    again = _measure(_copy(partitioned, table))  # measured afresh (or not measurable: outside its sub-table)
    assert len(counted) == 2
    assert first.applies and (not again.applies or again.to_json() != first.to_json() or again is not first)


@pytest.mark.parametrize("edit", ["entry", "argument", "text"])
def test_a_changed_entry_argument_or_column_type_is_measured_again(partitioned, counted, edit):
    _measure(partitioned)
    if edit == "entry":
        sensitive = json.loads(json.dumps(partitioned.metadata["sensitive"]))
        sensitive[0]["subtables"][0]["rho1"] = 0.2
        group_estimates.measure(_copy(partitioned, sensitive=sensitive), QUASI, "workclass", 0.5, "the group bound")
    elif edit == "argument":
        group_estimates.measure(_copy(partitioned), QUASI, "workclass", 0.4, "the group bound")
    else:  # plain text columns: compared by nothing, so measured
        table = partitioned.table.astype(str)
        group_estimates.measure(_copy(partitioned, table), QUASI, "workclass", 0.5, "the group bound")
    assert len(counted) == 2


def test_a_partitioned_job_measures_its_release_once(tmp_path, counted, capsys):
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False).head(2000)
    frame.to_csv(tmp_path / "adult.csv", sep=";", index=False)
    assert main(["-q", "anonymize", str(tmp_path / "adult.csv"), "--out", str(tmp_path / "out"), "--seed", "5",
                 "--no-report", "--method", "partition", "--sensitive", "workclass", "--rho1", "0.1", "--rho2", "0.5",
                 "--quasi", ",".join(QUASI)]) == 0
    assert len(counted) == 1  # for release.json; the written file's check recalled it
    meta = json.loads((tmp_path / "out" / "release.json").read_text(encoding="utf-8"))
    assert meta["group_disclosure"]["groups"] > 1
    assert main(["verify", str(tmp_path / "out")]) == 0  # a recipient's verify (every cell as text) passes


def test_the_written_file_is_still_what_is_checked(partitioned, counted):
    """The job's check of its written file, the genuine measurement remembered: a file whose records hold other
    values (the released values and sub-tables paired with other records' groups) is measured again and refused."""
    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.report.group_check import recheck_group_disclosure

    assert recheck_group_disclosure(partitioned)[0].startswith("group disclosure: recomputed")
    assert len(counted) == 1
    assert recheck_group_disclosure(_copy(partitioned))[0].startswith("group disclosure: recomputed")
    assert len(counted) == 1  # the same cells: recalled
    table = partitioned.table.copy()
    for name in ("workclass", "subtable"):
        table[name] = table[name].iloc[::-1].to_numpy()
    with pytest.raises(PrivacyError, match="group_disclosure"):
        recheck_group_disclosure(_copy(partitioned, table))
    assert len(counted) == 2
