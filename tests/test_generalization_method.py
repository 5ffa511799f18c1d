"""The generalization-only method and the criteria's flags (issue 33): ``ppdp anonymize --method generalization`` on
adult with ARX's hierarchies, ``ppdp verify`` re-checking k and every criterion on the released text (a tampered group
refused by name), README.txt's levels, criteria and suppressed records checked against the release itself, each
criterion's flag through a project file, a randomization method behind l-diversity, and the command line's refusals.

The expectations are computed here from the released files and the hierarchy files with plain pandas, never from the
app's own search or checker."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.checksums import write_checksums
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings
from tests.conftest import shared_adult

QUASI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
SENSITIVE = "occupation"


def run(args, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def hierarchy_args() -> list[str]:
    return [a for q in QUASI for a in ("--hierarchy", f"{q}={shared_adult(f'adult_hierarchy_{q}.csv')}")]


def read_release(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")


@pytest.fixture(scope="module")
def adult_release(tmp_path_factory) -> Path:
    """adult.csv released by generalization only: 8 QIs with ARX's hierarchies, k = 5, distinct 3-diversity on
    occupation."""
    folder = tmp_path_factory.mktemp("generalization") / "rel"
    code = main(["anonymize", str(shared_adult()), "--method", "generalization", "--sensitive", SENSITIVE,
                 "--quasi", ",".join(QUASI), *hierarchy_args(), "--k-anonymity", "5", "--l-diversity", "3",
                 "--no-report", "--seed", "7", "--out", str(folder)])
    assert code == 0
    return folder


def test_adult_k5_distinct_3_diversity_release_verifies_and_its_readme_is_true(adult_release, capsys):
    code, out, err = run(["verify", adult_release], capsys)
    assert code == 0, err
    assert "OK criteria: Distinct 3-diversity: every released group has at least 3 different values of occupation." in out
    table, original = read_release(adult_release), pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False)
    meta = json.loads((adult_release / "release.json").read_text(encoding="utf-8"))
    g = meta["reidentification"]["generalization"]
    # nothing randomized: occupation is the original column (the same multiset), and no column was added
    assert sorted(table[SENSITIVE]) == sorted(original[SENSITIVE]) and set(table.columns) == set(original.columns)
    # every released group (records not all '*') has >= 5 records and >= 3 occupations, counted here
    star = table[QUASI].eq("*").all(axis=1)
    groups = table[~star].groupby(QUASI)[SENSITIVE]
    assert groups.size().min() >= 5 and groups.nunique().min() >= 3
    suppressed = int(star.sum())
    assert 0 < suppressed <= int(0.05 * len(table)) and g["suppressed"] == suppressed
    readme = " ".join((adult_release / "README.txt").read_text(encoding="utf-8").split())
    assert f"{suppressed:,} records were suppressed to reach k-anonymity and the criteria below" in readme
    assert "k-anonymity: every released group has at least 5 records." in readme
    assert "Distinct 3-diversity: every released group has at least 3 different values of occupation." in readme
    generalized = 0
    for q in QUASI:
        level, height = g["levels"][q], g["heights"][q]
        rows = pd.read_csv(shared_adult(f"adult_hierarchy_{q}.csv"), sep=";", header=None, dtype=str,
                           keep_default_na=False)
        if 0 < level < height:
            generalized += 1
            column = rows.set_index(0)[level]  # the ARX file's label of each value at this level
            labels = column.drop_duplicates()
            expected = original[q].map(column)
            assert (table.loc[~star, q].isin(labels)).all()  # the released column is at the stated level
            assert set(table.loc[~star, q]) <= set(expected)
            said = re.search(rf"{re.escape(q)} generalized: level {level} of {height} \(([\d,]+) groups, e\.g\. (.+?) "
                             r"becomes (.+?)\);", readme)
            assert said, q
            assert int(said.group(1).replace(",", "")) == len(labels)
            assert column[said.group(2)] == said.group(3)  # the example is what the hierarchy file says
        elif level == 0:
            assert f"{q} unchanged (level 0 of its hierarchy: the values themselves)" in readme
            assert set(table.loc[~star, q]) <= set(original[q])
        else:
            assert f"{q} generalized to level {height} of {height}, the top of its hierarchy" in readme
            assert set(table[q]) == {"*"}
    assert generalized >= 1


def test_a_group_made_homogeneous_fails_verify_naming_the_group_and_criterion(adult_release, tmp_path, capsys):
    tampered = tmp_path / "rel"
    shutil.copytree(adult_release, tampered)
    table = read_release(tampered)
    star = table[QUASI].eq("*").all(axis=1)
    sizes = table[~star].groupby(QUASI).size()
    labels = sizes.index[int(np.argmax(sizes.to_numpy() == sizes.min()))]  # a smallest group
    rows = (~star) & table[QUASI].eq(pd.Series(labels, index=QUASI)).all(axis=1)
    table.loc[rows, SENSITIVE] = table.loc[rows, SENSITIVE].iloc[0]  # every member the same occupation
    table.to_csv(tampered / "release.csv", index=False, encoding="utf-8-sig")
    write_checksums(tampered)  # an unsigned release: the forger rewrites the checksums too
    code, out, err = run(["verify", tampered], capsys)
    assert code != 0
    message = [line for line in err.splitlines() if line.strip()]
    assert len(message) == 1, err
    group = ", ".join(f"{q} {v}" for q, v in zip(QUASI, labels))
    assert f"the group {group} ({int(rows.sum()):,} records, 1 different value of occupation) fails distinct 3-diversity" \
        in message[0]


def test_hierarchical_t_closeness_over_arx_occupation_hierarchy_verifies(tmp_path, capsys):
    hierarchy = shared_adult("adult_hierarchy_occupation.csv")
    code, out, err = run(["anonymize", shared_adult(), "--method", "generalization", "--sensitive", SENSITIVE,
                          "--quasi", ",".join(QUASI), *hierarchy_args(), "--hierarchy", f"{SENSITIVE}={hierarchy}",
                          "--k-anonymity", "2", "--t-closeness", "0.2", "--t-distance", "hierarchical", "--no-report",
                          "--out", tmp_path / "rel"], capsys)
    assert code == 0, err
    code, out, err = run(["verify", tmp_path / "rel"], capsys)
    assert code == 0, err
    assert "OK criteria: 0.2-closeness (hierarchical ground distance)" in out
    g = json.loads((tmp_path / "rel" / "release.json").read_text(encoding="utf-8"))["reidentification"]["generalization"]
    rows = pd.read_csv(hierarchy, sep=";", header=None, dtype=str, keep_default_na=False)
    assert g["sensitive_chains"] == {r[0]: list(r) for r in rows.itertuples(index=False)}  # the file's chains


def test_k_alone_with_no_sensitive_column_releases_nothing_randomized(tmp_path, capsys):
    frame = pd.DataFrame({"zip": [f"{10100 + i % 40}" for i in range(400)], "sex": ["F", "M"] * 200,
                          "dx": ["a", "b", "c", "d", "e"] * 80})
    frame.to_csv(tmp_path / "d.csv", index=False)
    code, out, err = run(["anonymize", tmp_path / "d.csv", "--method", "generalization", "--quasi", "zip,sex",
                          "--k-anonymity", "12", "--suppression", "0", "--no-report", "--out", tmp_path / "rel"], capsys)
    assert code == 0, err
    code, out, err = run(["verify", tmp_path / "rel"], capsys)
    assert code == 0, err
    table = read_release(tmp_path / "rel")
    assert table.groupby(["zip", "sex"]).size().min() >= 12
    assert sorted(table["dx"]) == sorted(frame["dx"])  # the other columns as they were


CRITERIA = {"k": 4, "l_diversity": 2, "entropy_l": 1.5, "recursive": [3.0, 2], "t_closeness": 0.4,
            "t_distance": "hierarchical", "average_risk": 0.1, "highest_risk": 0.25}
FLAGS = ["--k-anonymity", "4", "--l-diversity", "2", "--entropy-l", "1.5", "--recursive", "3,2", "--t-closeness", "0.4",
         "--t-distance", "hierarchical", "--average-risk", "0.1", "--highest-risk", "0.25"]


def test_each_criterion_flag_round_trips_through_a_project_file(tmp_path):
    from ppdp_desktop.cli.commands import _protection
    from ppdp_desktop.cli.parser import build_parser

    args = build_parser().parse_args(["anonymize", "d.csv", "--out", "x", *FLAGS])
    given = _protection(args)
    assert {name: getattr(given, name) for name in CRITERIA} == CRITERIA
    project = Project(method="generalization", protection=given.to_json())
    project.save(tmp_path / "p.ppdp")
    back = Project.load(tmp_path / "p.ppdp").protection_settings()
    assert {name: getattr(back, name) for name in CRITERIA} == CRITERIA
    assert Project.load(tmp_path / "p.ppdp").settings().protection.recursive == [3.0, 2]


def test_a_randomization_method_with_l_diversity_meets_it_on_the_original_values():
    rng = np.random.default_rng(5)
    n = 3000
    frame = pd.DataFrame({"zip": rng.choice([f"{z:05d}" for z in range(1000, 1060)], n), "sex": rng.choice(["F", "M"], n),
                          "dx": rng.choice(["flu", "asthma", "gout", "cancer", "ulcer"], n, p=[0.6, 0.2, 0.1, 0.06, 0.04])})
    settings = AnonymizationSettings("dx", "uniform", [], ["zip", "sex"], protection=ProtectionSettings(l_diversity=3),
                                     seed=3)
    settings.sensitivity.theta = 3.0
    result = anonymize(Dataset(frame), settings)
    released = result.table.reset_index(drop=True)
    truth = frame["dx"].to_numpy()[result.order]  # release row i is original record order[i]
    star = released[["zip", "sex"]].astype(str).eq("*").all(axis=1).to_numpy()
    kept = released.loc[~star, ["zip", "sex"]].astype(str).assign(dx=truth[~star])
    assert kept.groupby(["zip", "sex"])["dx"].nunique().min() >= 3  # on the true values
    entry = result.reidentification.to_json()["generalization"]
    assert entry["criteria"]["distinct_l"] == 3 and entry["criteria_checked_on"] == "original"


def test_verify_of_a_randomized_release_claims_only_what_it_rechecks(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 3000
    pd.DataFrame({"zip": rng.integers(100, 130, n).astype(str), "sex": rng.choice(["F", "M"], n),
                  "dx": rng.choice(["flu", "asthma", "gout", "cancer", "ulcer"], n)}).to_csv(tmp_path / "d.csv", index=False)
    code, out, err = run(["anonymize", tmp_path / "d.csv", "--method", "uniform", "--sensitive", "dx", "--theta", "3",
                          "--quasi", "zip,sex", "--l-diversity", "3", "--highest-risk", "0.05", "--no-report",
                          "--out", tmp_path / "rel"], capsys)
    assert code == 0, err
    code, out, err = run(["verify", tmp_path / "rel"], capsys)
    assert code == 0, err
    ok = [line for line in out.splitlines() if line.startswith("OK criteria")]
    assert ok == ["OK criteria: Highest prosecutor risk at most 0.05: every released group has at least 20 records.",
                  "OK criteria on 'dx' (Distinct 3-diversity: every released group has at least 3 different values of dx.) "
                  "were checked on the original values before writing; the released values are randomized, so the "
                  "release cannot show them"]
    readme = " ".join((tmp_path / "rel" / "README.txt").read_text(encoding="utf-8").split())
    assert "those on 'dx' hold for its original values, checked before the values were randomized" in readme
    assert "at least 1 records" not in readme


@pytest.mark.parametrize("flags, named", [
    ([], "Generalization only needs k-anonymity (--k-anonymity K) or a privacy criterion"),
    (["--recursive", "3"], "--recursive must be C,L with C a number above 0 and L a whole number from 2"),
    (["--recursive", "0,2"], "--recursive must be C,L"),
    (["--l-diversity", "0"], "--l-diversity must be a whole number from 1"),
    (["--entropy-l", "0.5"], "--entropy-l must be a number from 1"),
    (["--t-closeness", "2"], "--t-closeness must be a number from 0 to 1"),
    (["--average-risk", "0"], "--average-risk must be"),
    (["--highest-risk", "1.5"], "--highest-risk must be"),
    (["--t-distance", "tree", "--t-closeness", "0.2"], "--t-distance: invalid choice: 'tree'"),
])
def test_malformed_or_missing_criteria_are_refused_in_one_line_naming_the_flag(tmp_path, capsys, flags, named):
    data = tmp_path / "d.csv"
    pd.DataFrame({"zip": ["1", "2"] * 20, "dx": ["a", "b", "c", "d"] * 10}).to_csv(data, index=False)
    code, out, err = run(["anonymize", data, "--method", "generalization", "--sensitive", "dx", "--quasi", "zip",
                          *flags, "--out", tmp_path / "rel"], capsys)
    lines = [line for line in err.splitlines() if line.strip() and not re.match(r"ppdp: +\d+%", line)]
    assert code != 0 and not (tmp_path / "rel").exists()
    assert len(lines) == 1 and named in lines[0], err


def test_l_diversity_without_a_sensitive_column_and_hierarchical_t_without_a_tree_are_refused(tmp_path, capsys):
    data = tmp_path / "d.csv"
    pd.DataFrame({"zip": ["1", "2"] * 20, "dx": ["a", "b", "c", "d"] * 10}).to_csv(data, index=False)
    base = ["anonymize", data, "--method", "generalization", "--quasi", "zip", "--out", tmp_path / "rel"]
    code, out, err = run([*base, "--l-diversity", "2"], capsys)
    assert code != 0 and "--sensitive COL" in err and len(err.strip().splitlines()) == 1
    code, out, err = run([*base, "--sensitive", "dx", "--t-closeness", "0.3", "--t-distance", "hierarchical"], capsys)
    assert code != 0 and "--t-distance equal" in err and "single level" in err and len(err.strip().splitlines()) == 1
