"""Claims battery, k-anonymous generalization of the quasi-identifiers (issue 28): the stated k, the suppressed
count, the levels and every sentence built on them — the CLI summary and ``--json``, README.txt, release.json and
the reports — checked on a slice of the real Adult data by an independent pandas groupby on the written release
and by the generalization read back from the ARX hierarchy files.

The attacker: someone who knows a person is in the release and knows their quasi-identifiers (the prosecutor),
and who can read the published levels. Suppressed records are a group of their own: whoever finds no released
group matching a person learns that the person is one of them.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from tests.claims_helpers import adult_slice, anonymize_faces, cli_job, flat, number, one, same_release
from tests.conftest import ADULT_DIR

N_RECORDS = 2000
HIERARCHIES = ("race", "marital-status", "education")
#: name -> (quasi-identifiers, k, suppression limit); the second leaves fewer suppressed records than k
CONFIGS = {
    "k5": (["age", "sex", "race", "marital-status", "education"], 5, 0.05),
    "k10-few-suppressed": (["age", "sex", "race", "marital-status"], 10, 0.01),
}


def _args(quasi: list[str], k: int, limit: float) -> list[str]:
    args = ["--method", "uniform", "--sensitive", "occupation", "--theta", "3", "--quasi", ",".join(quasi),
            "--k-anonymity", str(k), "--suppression", str(limit), "--intervals", "age=5,10,20", "--seed", "2"]
    for column in HIERARCHIES:
        if column in quasi:
            args += ["--hierarchy", f"{column}={ADULT_DIR / f'adult_hierarchy_{column}.csv'}"]
    return args


@pytest.fixture(scope="module", params=list(CONFIGS))
def case(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("claims-kanon")
    data = adult_slice(folder, N_RECORDS)
    quasi, k, limit = CONFIGS[request.param]
    args = _args(quasi, k, limit)
    faces = anonymize_faces(data, folder / request.param, args)
    dataset, settings = cli_job(data, args)
    result = anonymize(dataset, settings)
    assert same_release(result, faces.table)  # the written release, with each row's original record
    original = dataset.frame.astype(str).take(result.order).reset_index(drop=True)
    table = faces.table
    suppressed = (table[quasi] == "*").all(axis=1).to_numpy()
    classes = table.loc[~suppressed, quasi].groupby(quasi, sort=False).size()
    return dict(name=request.param, faces=faces, quasi=quasi, k=k, limit=limit, table=table, original=original,
                suppressed=suppressed, classes=classes, generalization=faces.meta["reidentification"]["generalization"])


def test_stated_k_and_suppressed_are_the_release_s(case):
    """Every face's k and suppressed count equal a groupby of release.csv: rows whose every quasi-identifier is
    '*' are the suppressed ones, every other combination is shared by at least k records, within the limit."""
    faces, k = case["faces"], case["k"]
    s = int(case["suppressed"].sum())
    assert case["classes"].min() >= k
    assert s <= math.floor(case["limit"] * N_RECORDS)
    for generalization in (case["generalization"], faces.document["reidentification"]["generalization"]):
        assert (generalization["k"], generalization["suppressed"], generalization["n_records"]) == (k, s, N_RECORDS)
    for text in ("\n".join(faces.cli), flat(faces.readme), "\n".join(faces.custodian), "\n".join(faces.report)):
        heads = re.findall(r"Re-identification: [^—\n]+ — every record (?:apart from the [\d,]+ suppressed ones? )?"
                           r"shares its quasi-identifiers with at least "
                           r"([\d,]+) others? \(k = (\d+), verified\).*?; ([\d,]+) records? suppressed", text)
        assert heads and {(int(number(a)), int(b), int(number(c))) for a, b, c in heads} == {(k - 1, k, s)}
    lines = "\n".join(faces.cli)
    combination = one(r"Every released combination of (.+?)( apart from the suppressed records)? is shared by at "
                      r"least (\d+) records\.", lines)
    assert combination[1].split(", ") == case["quasi"] and int(combination[3]) == k
    count = one(r"([\d,]+) of ([\d,]+) records suppressed \(([\d.]+)%; at most ([\d.]+)% allowed\): their "
                r"quasi-identifiers are all '\*'\.", lines)
    assert (int(number(count[1])), int(number(count[2]))) == (s, N_RECORDS)
    assert float(count[3]) == pytest.approx(100 * s / N_RECORDS, abs=0.005)
    assert float(count[4]) == pytest.approx(100 * case["limit"], abs=0.005)
    # README's list of what was done to each column names the same suppressed count for every quasi-identifier
    readme = flat(case["faces"].readme)
    assert [int(number(n)) for n in re.findall(r"suppressed \('\*'\) in ([\d,]+) records?", readme)] == [s] * len(case["quasi"])
    assert int(number(one(r"([\d,]+) records? (?:were|was) suppressed to reach k-anonymity", readme)[1])) == s


def test_suppressed_records_are_the_small_classes(case):
    """The suppressed records are exactly those whose generalized combination is shared by fewer than k records of
    the original, and nothing but their quasi-identifiers is changed."""
    table, original, quasi = case["table"], case["original"], case["quasi"]
    kept = ~case["suppressed"]
    generalized = pd.DataFrame({c: _generalize(c, original[c], case) for c in quasi})
    sizes = generalized.groupby(quasi, sort=False)[quasi[0]].transform("size").to_numpy()
    np.testing.assert_array_equal(case["suppressed"], sizes < case["k"])
    assert (table.loc[kept, quasi].to_numpy() == generalized.loc[kept, quasi].to_numpy()).all()
    unchanged = [c for c in table.columns if c not in quasi and c != "occupation"]
    assert (table[unchanged].to_numpy() == original[unchanged].to_numpy()).all()


def _levels(case) -> dict[str, tuple[int, int]]:
    """Each quasi-identifier's (level, height) as release.json states them."""
    g = case["generalization"]
    return {c: (g["levels"][c], g["heights"][c]) for c in case["quasi"]}


def _generalize(column: str, values: pd.Series, case) -> pd.Series:
    """``values`` at the column's stated level, read from the ARX hierarchy file (column 0 the value, column L its
    level-L label); a level 0 keeps the value, the top level is '*' (also for age's intervals)."""
    level, height = _levels(case)[column]
    if level == 0:
        return values
    if level == height:
        return pd.Series("*", index=values.index)
    assert column in HIERARCHIES, f"no independent reading of {column!r} at level {level}"
    rows = pd.read_csv(ADULT_DIR / f"adult_hierarchy_{column}.csv", sep=";", header=None, dtype=str)
    return values.map(dict(zip(rows[0], rows[level])))


def test_level_sentences(case):
    """CLI and report: "X: kept as is (level 0 of H)", "X: not released, every value shown as '*' (level H of H)",
    "X: level L of H (e.g. V becomes W)". The levels are release.json's, the example is the hierarchy's, and the
    release shows it."""
    lines = "\n".join(case["faces"].cli)
    levels = _levels(case)
    for column in case["quasi"]:
        level, height = levels[column]
        found = one(rf"^  {re.escape(column)}: (.*)$", lines, re.M)[1]
        if level == 0:
            assert found == f"kept as is (level 0 of {height})"
        elif level == height:
            assert found == f"not released, every value shown as '*' (level {height} of {height})"
        else:
            example = one(rf"level {level} of {height} \(e\.g\. (.+) becomes (.+)\)", found)
            value, label = example[1], example[2]
            assert _generalize(column, pd.Series([value]), case)[0] == label
            shown = case["table"].loc[(case["original"][column] == value) & ~case["suppressed"], column]
            assert len(shown) and set(shown) == {label}
        assert found in "\n".join(case["faces"].custodian)


def test_suppressed_group_smaller_than_k_is_said_and_attacked(case):
    """Where fewer records than k are suppressed, the generalization's sentences say what the prosecutor gets: a
    person whose quasi-identifiers match no released group is one of the suppressed records. The attack: every
    such person is found among exactly the suppressed rows, and their unchanged columns are read off them."""
    s, k = int(case["suppressed"].sum()), case["k"]
    lines = "\n".join(case["faces"].cli)
    few = re.search(r"Only ([\d,]+) records? (?:were|was) suppressed, fewer than k = (\d+): someone who knows a person's "
                    r"quasi-identifiers and finds no released group matching them learns that the person is (?:one of "
                    r"these records|this record) \(a risk of (\d+)%\)\.", lines)
    if not 0 < s < k:
        assert few is None and " apart from the suppressed records " not in lines
        return
    assert case["name"] == "k10-few-suppressed"
    assert few and (int(number(few[1])), int(few[2]), int(few[3])) == (s, k, round(100 / s))
    assert "apart from the suppressed records is shared" in lines
    quasi, original, table = case["quasi"], case["original"], case["table"]
    released = set(map(tuple, table.loc[~case["suppressed"], quasi].to_numpy()))
    generalized = pd.DataFrame({c: _generalize(c, original[c], case) for c in quasi})
    unmatched = np.array([tuple(row) not in released for row in generalized.to_numpy()])
    np.testing.assert_array_equal(unmatched, case["suppressed"])  # the attacker tells them apart, each one
    if s == 1:  # re-identified: the suppressed row is the person, their unchanged columns are theirs
        unchanged = [c for c in table.columns if c not in quasi and c != "occupation"]
        assert (table.loc[unmatched, unchanged].to_numpy() == original.loc[unmatched, unchanged].to_numpy()).all()


def test_headline_every_record_shares_with_k_minus_one(case):
    """The verdict: "every record [apart from the N suppressed ones] shares its quasi-identifiers with at least k-1
    others", then either "no record's risk is above the threshold of T %" or "R of N records are above it". Counted
    over every released record, the suppressed ones (one group, all '*': whoever matches no released group is one
    of them) included."""
    s, k = int(case["suppressed"].sum()), case["k"]
    sizes = np.concatenate([case["classes"].to_numpy(), [s] if s else []])  # every group, the suppressed one too
    text = "\n".join(case["faces"].cli)
    head = one(r"every record (?:apart from the ([\d,]+) suppressed ones? )?shares its quasi-identifiers with at least "
               r"([\d,]+) others? \(k = (\d+), verified\)", text)
    assert int(number(head[2])) == k - 1 and int(head[3]) == k
    if head[1] is None:
        assert sizes.min() >= k
    else:
        assert int(number(head[1])) == s and 0 < s < k and case["classes"].min() >= k
    threshold = case["faces"].meta["reidentification"]["release"]["threshold"]
    above = int(np.sum(sizes[1.0 / sizes > threshold + 1e-12]))
    within = re.search(r"and no record's risk is above the threshold of (\d+) %", text)
    counted = re.search(r"([\d,]+) of ([\d,]+) records? (?:is|are) above it", text)
    assert (within is None) != (counted is None)
    if within:
        assert above == 0 and int(within[1]) == round(100 * threshold)
    else:
        assert int(number(counted[1])) == above > 0 and int(number(counted[2])) == N_RECORDS
    assert case["name"] != "k10-few-suppressed" or head[1] is not None and counted  # the case it was made for
