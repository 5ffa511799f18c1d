"""Local recoding instead of whole-record suppression (issue 33): judged on the released text alone.

Each release is checked by grouping its rows by their exact quasi-identifier strings with pandas (no hierarchy, no
codes): every group other than the fully suppressed rows (all '*') has at least k rows and meets the criteria, and
local recoding never suppresses more whole records than the global solution it starts from.
"""
from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_desktop.cli import main
from ppdp_desktop.core.generalization import Hierarchy, check_k_anonymity, optimal_generalization
from ppdp_desktop.core.generalization.check_criteria import check_criteria
from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.local_recoding import recode_locally
from ppdp_desktop.core.generalization.recoding import LocalRecoding
from ppdp_desktop.core.release.lookup_marks import column_marks
from ppdp_desktop.core.settings import ProtectionSettings
from tests.conftest import shared_adult

ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def text_groups(text: pd.DataFrame) -> tuple[pd.Series, int]:
    """The sizes of the released groups (rows grouped by their exact strings; all-'*' rows left out) and how many
    rows are all '*'."""
    strings = text.astype(str)
    star = strings.eq("*").all(axis=1)
    return strings[~star].groupby(list(strings.columns)).size(), int(star.sum())


def assert_text_ok(text: pd.DataFrame, k: int, limit: float, suppressed: int) -> None:
    sizes, stars = text_groups(text)
    assert (sizes >= k).all(), sizes[sizes < k].head()
    assert stars == suppressed
    assert check_k_anonymity(text, k, limit) == (True, suppressed)


@pytest.fixture(scope="module")
def adult():
    frame = pd.read_csv(shared_adult(), sep=";")
    hierarchies = {a: Hierarchy.from_arx_csv(shared_adult(f"adult_hierarchy_{a}.csv"), a, frame[a]) for a in ADULT_QIS}
    return frame, hierarchies


def star_cells(text: pd.DataFrame) -> int:
    return int(text.astype(str).eq("*").to_numpy().sum())


def test_adult_keeps_more_records_whole_and_suppresses_fewer_cells(adult):
    frame, hierarchies = adult
    found = optimal_generalization(frame[ADULT_QIS], hierarchies, 5, 0.05)
    local = recode_locally(frame[ADULT_QIS], found)
    assert local.local is not None and local.local.global_suppressed == found.suppressed == 1192
    global_text, local_text = found.apply(frame[ADULT_QIS]), local.apply(frame[ADULT_QIS])
    assert_text_ok(global_text, 5, 0.05, found.suppressed)
    assert_text_ok(local_text, 5, 0.05, local.suppressed)
    kept_global, kept_local = len(frame) - found.suppressed, len(frame) - local.suppressed
    assert kept_local > kept_global  # 30,162 against 28,970 records released
    assert local.suppressed == 0 and star_cells(local_text) < star_cells(global_text)  # 32,720 against 38,506 cells '*'
    assert local.local.precision > found.precision
    # the records the global node keeps are released exactly as before; only its outliers changed
    kept = ~found.suppressed_mask(frame[ADULT_QIS])
    assert local_text[kept].astype(str).equals(global_text[kept].astype(str))
    words = "\n".join(local.lines())
    assert "1,192 records the chosen node alone would suppress whole, 1,192 are released instead" in words
    assert "never suppresses more records than whole-record suppression alone" in words
    entry = local.to_json()["local_recoding"]
    assert sum(r["records"] for r in entry["rounds"]) + sum(entry["cells_suppressed"].values()) == 1192


def test_adult_with_distinct_diversity_meets_the_criteria_on_the_text(adult):
    frame, hierarchies = adult
    columns = [*ADULT_QIS, "occupation"]
    sensitive = Hierarchy.from_rows("occupation", [[v] for v in sorted(frame["occupation"].unique())])
    criteria = Criteria(k=5, distinct_l=3)
    found = optimal_generalization(frame[columns], hierarchies, 5, 0.05, criteria=criteria, sensitive=sensitive)
    local = recode_locally(frame[columns], found)
    assert local.local is not None and local.suppressed < found.suppressed
    text = local.apply(frame[columns])
    table = text.assign(occupation=frame["occupation"].to_numpy())
    assert check_criteria(table, ADULT_QIS, "occupation", criteria, 0.05)[:2] == (True, local.suppressed)
    distinct = table[~text.astype(str).eq("*").all(axis=1)].astype(str).groupby(ADULT_QIS)["occupation"].nunique()
    assert (distinct >= 3).all()
    assert_text_ok(text, 5, 0.05, local.suppressed)


def test_text_is_the_judge_a_coarser_label_equal_to_a_finer_one_joins_its_group():
    # c's level-2 label "ab" is the level-1 label of a and b: released at level 2, the two c records join the
    # "ab" group of three in the text (five records), although on their own they are fewer than k = 3.
    h = Hierarchy.from_rows("x", [["a", "ab", "T"], ["b", "ab", "T"], ["c", "c", "ab"]])
    frame = pd.DataFrame({"x": ["a", "a", "b", "c", "c"]})
    found = optimal_generalization(frame, {"x": h}, 3, 0.5)
    assert found.levels == {"x": 1} and found.suppressed == 2
    plan = LocalRecoding(((2,),), (2,), (0,), False, 2, 0, 0.0)
    text = replace(found, local=plan, suppressed=0).apply(frame)
    assert text["x"].astype(str).tolist() == ["ab"] * 5
    assert check_k_anonymity(text, 3, 0.5) == (True, 0)


def test_single_cells_are_suppressed_where_a_round_finds_no_node():
    # The three outliers have no node of their own within the limit (0 of 3 may be suppressed) but the top, which
    # releases nothing; suppressing y alone puts (a, q) and (a, r) in a group of two as (a, *).
    x, y = Hierarchy.from_rows("x", [["a"], ["b"]]), Hierarchy.from_rows("y", [["p"], ["q"], ["r"], ["s"]])
    frame = pd.DataFrame({"x": list("aaaabbbbaab"), "y": list("ppppppppqrs")})
    found = optimal_generalization(frame, {"x": x, "y": y}, 2, 0.3)
    assert found.levels == {"x": 0, "y": 0} and found.suppressed == 3
    local = recode_locally(frame, found)
    assert local.local is not None and local.local.rounds == () and local.local.cells == (0, 2)
    text = local.apply(frame).astype(str)
    assert text.iloc[8:].to_numpy().tolist() == [["a", "*"], ["a", "*"], ["*", "*"]]
    assert_text_ok(text, 2, 0.3, 1)
    assert "2 records released with a single quasi-identifier cell suppressed to '*' (the others at a node's levels): " \
           "y 2." in local.lines()
    assert recode_locally(frame, found, cells=False).suppressed == 3


@st.composite
def colliding_table(draw):
    """Two or three quasi-identifiers whose labels come from a tiny alphabet, so labels of different levels (and
    values) collide, '*' included below the top."""
    alphabet = ["A", "B", "v0", "v1", "*"]
    hierarchies, columns = {}, {}
    n = draw(st.integers(4, 40))
    for j in range(draw(st.integers(2, 3))):
        values = [f"v{i}" for i in range(draw(st.integers(1, 5)))]
        level1 = {v: draw(st.sampled_from(alphabet[:4])) for v in values}
        level2 = {label: draw(st.sampled_from(alphabet)) for label in sorted(set(level1.values()))}
        rows = [[v, level1[v], level2[level1[v]]] for v in values]
        if len({r[-1] for r in rows}) == 1 and rows[0][-1] in values:
            rows = [r[:2] for r in rows]
        try:
            hierarchies[f"q{j}"] = Hierarchy.from_rows(f"q{j}", rows)
        except Exception:  # levels that do not nest (a label shared by two groups): another draw
            hierarchies[f"q{j}"] = Hierarchy.from_rows(f"q{j}", [[v] for v in values])
        columns[f"q{j}"] = draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))
    return pd.DataFrame(columns, dtype=object), hierarchies


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(colliding_table(), st.integers(2, 4), st.sampled_from([0.1, 0.3, 0.5]), st.booleans())
def test_random_tables_text_check_passes_and_never_suppresses_more(table, k, suppression, cells):
    frame, hierarchies = table
    try:
        found = optimal_generalization(frame, hierarchies, k, suppression)
    except Exception:
        return  # no node within the limit: nothing to recode
    local = recode_locally(frame, found, cells=cells)
    assert local.suppressed <= found.suppressed
    if local.local is not None:
        assert_text_ok(local.apply(frame), k, suppression, local.suppressed)
        assert int(local.suppressed_mask(frame).sum()) == local.suppressed


def test_the_option_is_declared_once_with_its_flag_and_project_key():
    declared = ProtectionSettings.declarations()["local_recoding"]
    assert declared.flag == "--local-recoding" and declared.default is False
    assert ProtectionSettings.from_json({"local_recoding": True}).local_recoding is True
    assert ProtectionSettings(local_recoding=True).to_json()["local_recoding"] is True


def test_cli_local_recoding_release_verifies(adult, tmp_path, capsys):
    out = tmp_path / "adult"
    hierarchy_args = [arg for a in ADULT_QIS for arg in ("--hierarchy", f"{a}={shared_adult(f'adult_hierarchy_{a}.csv')}")]
    code = main(["anonymize", str(shared_adult()), "--out", str(out), "--sensitive", "occupation", "--quasi",
                 ",".join(ADULT_QIS), "--method", "uniform", "--rho1", "0.1", "--rho2", "0.4", "--seed", "3",
                 "--k-anonymity", "5", "--local-recoding", *hierarchy_args])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert "Local recoding: of the 1,192 records" in stdout
    assert main(["verify", str(out)]) == 0
    meta = json.loads((out / "release.json").read_text())
    entry = meta["reidentification"]["generalization"]
    assert entry["suppressed"] == 0 and entry["local_recoding"]["global_suppressed"] == 1192
    text = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    assert_text_ok(text[ADULT_QIS], 5, 0.05, 0)
    readme = (out / "README.txt").read_text()
    assert "local recoding: 58 records at level 1" in readme  # race: no longer called unchanged
    marks = column_marks(meta, ADULT_QIS)  # a decoded file's marks: race is not the patient's value in every record
    assert marks["race"].status == "generalized" and "up to level 1 of 1" in marks["race"].what
