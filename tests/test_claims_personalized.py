"""Claims battery, personalized recoding (issue 28): the method gives no formal guarantee, and every face says
so — the CLI summary and ``--json``, README.txt, release.json, both reports and the window's description — and
none calls anything about the recoded values verified or guaranteed. What the faces do say about the release is
checked on a slice of the real Adult data against the sealed key, and against two attacks that need no key:

* the frequency attacker knows roughly how common each occupation is (the whole Adult file's shares, a published
  table) and matches each opaque code to a value by how often it occurs;
* the spacing attacker knows the smallest age in the data (the survey's floor) and that categories are of equal
  width (the default), and reads every graded age from the spacing of the positions.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.personalized.grading import Grading
from ppdp_desktop.core.release.lookup import KeyRing
from tests.claims_helpers import PASSPHRASE, adult_frame, adult_slice, anonymize_faces, cli_job, flat, number, one

N_RECORDS = 1000
ATTRIBUTE = "occupation"
#: per-value choices: the three commonest shown as they are, three generalized (alias1), the rest as codes
CHOICES = {"Prof-specialty": 1, "Craft-repair": 1, "Exec-managerial": 1, "Sales": 2, "Other-service": 2,
           "Adm-clerical": 2, "Machine-op-inspct": 3, "Transport-moving": 3, "Tech-support": 3,
           "Handlers-cleaners": 3, "Farming-fishing": 3, "Protective-serv": 3, "Priv-house-serv": 3, "Armed-Forces": 3}
#: name -> arguments: a recoded column with a graded one, and a graded numeric column alone
CONFIGS = {
    "recoded": ["--sensitive", ATTRIBUTE, "--value-choices", "{choices}", "--graded", "age"],
    "graded-only": ["--sensitive", "age", "--graded", "age"],
}
#: what no face of a release without a guarantee may say about its sensitive values
CLAIMED = re.compile(r"guarantee[ds]? verified|verified guarantee|guarantee (?:is |was )?verified|\bguaranteed\b|"
                     r"protected \(verified\)|protected, checked", re.I)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("claims-personalized")
    (folder / "choices.csv").write_text("".join(f"{v},{c}\n" for v, c in CHOICES.items()), encoding="utf-8")
    (folder / "pass.txt").write_text(PASSPHRASE + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module", params=list(CONFIGS))
def case(request, folder):
    data = adult_slice(folder, N_RECORDS)
    key = folder / f"{request.param}.ppdpkey"
    args = [a.format(choices=folder / "choices.csv") for a in CONFIGS[request.param]]
    args += ["--method", "personalized", "--key", key, "--passphrase-file", folder / "pass.txt", "--seed", "3"]
    faces = anonymize_faces(data, folder / request.param, args)
    ring = KeyRing.open(folder / request.param, key, PASSPHRASE)
    dataset, settings = cli_job(data, args)
    return dict(name=request.param, faces=faces, ring=ring, dataset=dataset, settings=settings,
                original=dataset.frame.astype(str))


def test_every_face_says_there_is_no_formal_guarantee(case):
    faces = case["faces"]
    cli = "\n".join(faces.cli)
    assert "no formal privacy guarantee (keyed recoding" in cli and "Sensitive values: no formal guarantee" in cli
    for guarantee in (faces.document["guarantee"], faces.meta["guarantee"]):
        assert guarantee["kind"] == "none" and "verified" not in guarantee
        assert guarantee["statement"].startswith("Personalized recoding gives no formal privacy guarantee")
    readme = flat(faces.readme)
    assert "Sensitive values: no formal guarantee." in readme
    assert "What it guarantees No formal privacy guarantee." in readme
    for lines in (faces.report, faces.custodian):
        assert "NO FORMAL PRIVACY GUARANTEE." in " ".join(lines)
        assert one(r"Sensitive values \(\w+\): no formal guarantee\. (.*)$", "\n".join(lines), re.M)
    assert "It gives no formal privacy guarantee" in get_method("personalized").summary


def test_no_face_calls_anything_verified_or_guaranteed(case):
    """No quasi-identifier is protected here, so nothing may be called verified or guaranteed."""
    texts = case["faces"].all_text()
    texts["window"] = get_method("personalized").summary
    for name, text in texts.items():
        found = CLAIMED.search(text)
        assert found is None, f"{name} says {found[0]!r}: {text[max(found.start() - 80, 0):found.end() + 80]!r}"


def _kinds(case) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Each released cell of the recoded column: shown as it is, as alias1 (the flat taxonomy's root, '*') or as a
    code (anything else); told apart without the key, as a recipient would."""
    cells = case["faces"].table[ATTRIBUTE]
    labels = set(case["original"][ATTRIBUTE])
    as_is = cells.isin(labels)
    alias1 = cells == "*"
    return cells, as_is, alias1


@pytest.mark.parametrize("case", ["recoded"], indirect=True)
def test_choice_counts_and_exact_counts(case):
    """Custodian's report: "A % of the records (N1) show their occupation as it is, B % (N2) only a more general
    value (alias1) and C % (N3) an opaque code (alias2)", and "A recipient can count K of the M occupation values
    exactly (together P of the records): every record holding them shows them as they are." Counted on release.csv
    and the original slice. The window: records whose choice is to publish the value are not protected (they
    show it)."""
    text = "\n".join(case["faces"].custodian)
    found = one(rf"[^()]+ of the records \(([\d,]+)\) show their {ATTRIBUTE} as it is, [^()]+ \(([\d,]+)\) only a "
                r"more general value \(alias1\) and [^()]+ \(([\d,]+)\) an opaque code \(alias2\)", text)
    cells, as_is, alias1 = _kinds(case)
    assert [int(number(g)) for g in found.groups()] == [int(as_is.sum()), int(alias1.sum()), int((~as_is & ~alias1).sum())]
    original = case["original"][ATTRIBUTE].value_counts()
    shown = cells[as_is].value_counts().reindex(original.index, fill_value=0)
    exact = shown == original
    counted = one(rf"A recipient can count (\d+) of the (\d+) {ATTRIBUTE} values exactly \(together (\S+ %) of the "
                  r"records\): every record holding them shows them as they are\.", text)
    assert (int(counted[1]), int(counted[2])) == (int(exact.sum()), len(original))
    assert set(original.index[exact]) == {v for v, c in CHOICES.items() if c == 1}  # exactly the values shown


@pytest.mark.parametrize("case", ["recoded"], indirect=True)
def test_codes_are_meaningless_but_keep_their_values_counts(case):
    """Custodian's report: "Records can be counted per opaque code (N codes in use, one per occupation value). The
    code itself says nothing, but it is as frequent as its value among the records shown as codes: anyone who knows
    roughly how common each occupation value is can often match the codes to the values by their counts." Checked
    with the key; then the frequency attacker, without it."""
    text = "\n".join(case["faces"].custodian)
    found = one(rf"Records can be counted per opaque code \((\d+) codes in use, one per {ATTRIBUTE} value\)\. The code "
                r"itself says nothing, but it is as frequent as its value among the records shown as codes: anyone who "
                rf"knows roughly how common each {ATTRIBUTE} value is can often match the codes to the values by their "
                r"counts\.", text)
    cells, as_is, alias1 = _kinds(case)
    codes = cells[~as_is & ~alias1].value_counts()
    key = case["ring"].payload["aliases"][ATTRIBUTE]["alias2"]  # code -> value, from the sealed key
    assert int(found[1]) == len(codes) == len({key[c] for c in codes.index})
    original = case["original"][ATTRIBUTE].value_counts()
    for code, count in codes.items():  # as frequent as its value (every record of the value chose a code here)
        assert count == original[key[code]]
    # "says nothing": a code is drawn at random, not made from the value: another run of the same job (same seed)
    # gives other codes
    again = anonymize(case["dataset"], case["settings"]).table[ATTRIBUTE].astype(str)
    assert not set(codes.index) & set(again)
    # the frequency attacker: public shares (the whole Adult file), codes matched to the values not shown as they
    # are, by the closest expected count (one value per code)
    public = adult_frame()[ATTRIBUTE].value_counts(normalize=True)
    candidates = [v for v in public.index if v not in set(cells[as_is])]
    cost = np.abs(np.log1p(codes.to_numpy(float))[:, None] - np.log1p(len(cells) * public[candidates].to_numpy())[None, :])
    rows, cols = linear_sum_assignment(cost)
    right = sum(codes.iloc[i] for i, j in zip(rows, cols) if key[codes.index[i]] == candidates[j])
    share = right / codes.sum()
    assert share >= 0.4 and share >= 3 / len(codes), f"the frequency attack decoded {share:.0%} of the coded records"
    assert "only the sealed key" not in text  # it is not the only way back
    # knowing the counts exactly (a published table of this data), every code whose count is unique is decoded
    exact = {c: original.index[original == n] for c, n in codes.items()}
    assert all(len(v) > 1 or v[0] == key[c] for c, v in exact.items())


def test_grades_keep_order_and_give_the_amounts_away(case):
    """README: graded values are "category + position within secret bounds (order kept)"; report: "The positions
    keep the spacing of the values, so anyone who knows a few records' age (or its smallest value, with categories
    of equal width) can work out the bounds and read every amount." The key's bounds give the truth; the spacing
    attacker, who knows only the smallest age of the survey, reads every age."""
    faces = case["faces"]
    assert "are shown as category + position within secret bounds (order kept)" in flat(faces.readme)
    found = one(r"age is released as (\d+) numbered categories with secret bounds, plus each record's position inside "
                r"its category: a recipient can rank records and count them per category\. The positions keep the "
                r"spacing of the values, so anyone who knows a few records' age \(or its smallest value, with "
                r"categories of equal width\) can work out the bounds and read every amount\.", "\n".join(faces.custodian))
    grading = Grading.from_key_json("age", case["ring"].payload["graded"]["age"])
    assert int(found[1]) == grading.k
    grades = faces.table["age"].astype(float).to_numpy()
    truth = grading.ungrade(grades)
    assert sorted(truth) == sorted(case["original"]["age"].astype(float))  # the key reads the data back
    order = np.argsort(grades, kind="stable")
    assert np.all(np.diff(truth[order]) >= 0)  # order kept
    lowest = float(adult_frame()["age"].astype(float).min())  # the survey's floor: public
    category = np.floor(grades).astype(int)
    position = grades - category
    width = {}
    for c in np.unique(category):  # the values are whole years: the smallest gap between positions is one year
        spots = np.unique(position[category == c])
        steps = np.round(np.diff(spots) / np.diff(spots).min())
        width[c] = steps.sum() / (spots[-1] - spots[0])
    start = {c: lowest + (c - 1) * width[1] for c in width}  # equal width: each category starts one width on
    guess = np.round(np.array([start[c] for c in category]) + position * np.array([width[c] for c in category]))
    assert np.mean(guess == truth) >= 0.99, f"the spacing attack read {np.mean(guess == truth):.0%} of the ages"


def test_the_release_json_statement_names_what_leaks(case):
    """release.json's statement (the first page shows it): protection only as far as aliases and bounds stay secret,
    and they can be worked out without the key — as the two attacks above show."""
    statement = case["faces"].meta["guarantee"]["statement"]
    assert "they can be worked out without the key" in statement
    assert json.dumps(case["faces"].document["guarantee"]["statement"]) == json.dumps(statement)
