"""The sentences around a generalization that is asked for criteria but no k (issue 33): k = 1 promises no group
size, so no face may say "at least 1 records" or "at least 0 others"; each says what the criteria promise instead,
and each figure it states is counted here from the released file with plain pandas."""
from __future__ import annotations

import contextlib
import html
import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.checksums import write_checksums
from ppdp_desktop.core.generalization import Criteria
from ppdp_desktop.core.privacy.risk import analyse_risk
from ppdp_desktop.core.privacy.verdict import PROTECTED, risk_verdict
from tests.conftest import shared_adult

QUASI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
SENSITIVE = "occupation"
WRONG = ("at least 0 other", "at least 1 records", "groups smaller than k = 1", "1-anonymous",
         "k-anonymous, but above", "reach k-anonymity")


def hierarchy_args() -> list[str]:
    return [a for q in QUASI for a in ("--hierarchy", f"{q}={shared_adult(f'adult_hierarchy_{q}.csv')}")]


@pytest.fixture(scope="module")
def no_k_release(tmp_path_factory) -> tuple[Path, str]:
    """adult released by generalization only with distinct 3-diversity on occupation and no --k-anonymity."""
    folder = tmp_path_factory.mktemp("nok") / "rel"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["anonymize", str(shared_adult()), "--method", "generalization", "--sensitive", SENSITIVE,
                     "--quasi", ",".join(QUASI), *hierarchy_args(), "--l-diversity", "3", "--seed", "7",
                     "--out", str(folder)])
    assert code == 0
    return folder, " ".join(out.getvalue().split())


def test_without_k_every_face_says_what_the_criteria_promise_and_it_holds(no_k_release, capsys):
    folder, printed = no_k_release
    readme = " ".join((folder / "README.txt").read_text(encoding="utf-8").split())
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    code = main(["verify", str(folder)])
    verified = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert meta["reidentification"]["generalization"]["k"] == 1
    for text in (printed, readme, verified, json.dumps(meta)):
        for wrong in WRONG:
            assert wrong not in text, wrong
    table = pd.read_csv(folder / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    star = table[QUASI].eq("*").all(axis=1)
    groups = table[~star].groupby(QUASI)[SENSITIVE]
    smallest = int(groups.size().min())
    # the promise the criteria make (3 different occupations, so 3 records per group) holds on the released file
    assert groups.nunique().min() >= 3 and smallest >= 3
    assert (f"No k was asked (k = 1), but the criteria below make every released combination of {', '.join(QUASI)} "
            "shared by at least 3 records.") in printed
    # the verdict says k promises nothing, then what was measured (the smallest group is above the 20 % threshold)
    above = int(groups.size()[groups.size() < 5].sum())
    verdict = (f"Re-identification: above the threshold — no k was asked (k = 1), so no group size is promised, but the "
               f"smallest group has {smallest} records, so a record's risk can be 1/{smallest}")
    assert verdict in printed and verdict in readme
    assert f"{above:,} of {len(table):,} records are above it" in printed
    assert f"{int(star.sum()):,} records were suppressed to meet the criteria below" in readme
    report = " ".join((folder / "report.html").read_text(encoding="utf-8").split())
    assert "Generalization only (distinct 3-diversity)" in report and "k = 1" not in report.split("</h1>")[0]
    assert f"OK suppression: {int(star.sum()):,} records suppressed, at most 5.0% allowed (no k was asked: k = 1)" \
        in verified


def test_k_1_verdict_within_the_threshold_names_the_smallest_group_measured():
    frame = pd.DataFrame({"a": list("xxxxyyyyy"), "b": ["1"] * 9})
    verdict = risk_verdict(analyse_risk(frame, ["a", "b"], threshold=0.25, k=1), suppressed=0)
    assert verdict.code == PROTECTED
    assert verdict.text.startswith("Re-identification: protected — no k was asked (k = 1), so no group size is "
                                   "promised, but the smallest released group measured has 4 records, and no record's "
                                   "risk is above the threshold of 25 %")
    assert "at least 0 other" not in verdict.text


@pytest.mark.parametrize(("criteria", "size"), [
    (Criteria(distinct_l=3), 3), (Criteria(entropy_l=2.5), 3), (Criteria(recursive_c=2.0, recursive_l=4), 4),
    (Criteria(highest_risk=0.1), 10), (Criteria(t=0.2), 1), (Criteria(k=5, distinct_l=2), 5)])
def test_the_group_size_the_criteria_promise(criteria, size):
    assert criteria.group_size == size
    first = criteria.lines("occupation")[0]
    if criteria.k == 1:
        assert "not asked (k = 1)" in first and not re.search(r"at least 1 records", first)
        assert (f"at least {size} records" in first) == (size > 1)


@pytest.fixture(scope="module")
def recoded_release(tmp_path_factory) -> Path:
    """adult by generalization only with k = 5, distinct 3-diversity on occupation and local recoding."""
    folder = tmp_path_factory.mktemp("local") / "rel"
    code = main(["anonymize", str(shared_adult()), "--method", "generalization", "--sensitive", SENSITIVE,
                 "--quasi", ",".join(QUASI), *hierarchy_args(), "--k-anonymity", "5", "--l-diversity", "3",
                 "--local-recoding", "--no-report", "--seed", "7", "--out", str(folder)])
    assert code == 0
    return folder


def test_a_locally_recoded_release_with_criteria_writes_and_verifies(recoded_release, capsys):
    capsys.readouterr()
    assert main(["verify", str(recoded_release)]) == 0
    out = capsys.readouterr().out
    assert "OK criteria: Distinct 3-diversity: every released group has at least 3 different values of occupation." in out
    g = json.loads((recoded_release / "release.json").read_text(encoding="utf-8"))["reidentification"]["generalization"]
    assert g["local_recoding"]["rounds"]  # records were released at other levels than the node's
    table = pd.read_csv(recoded_release / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    star = table[QUASI].eq("*").all(axis=1)
    groups = table[~star].groupby(QUASI)[SENSITIVE]
    assert groups.size().min() >= 5 and groups.nunique().min() >= 3  # counted here, every level mixed


def test_a_tampered_group_of_a_locally_recoded_release_fails_verify(recoded_release, tmp_path, capsys):
    tampered = tmp_path / "rel"
    shutil.copytree(recoded_release, tampered)
    table = pd.read_csv(tampered / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    star = table[QUASI].eq("*").all(axis=1)
    sizes = table[~star].groupby(QUASI).size()
    labels = sizes.idxmin()  # a smallest group
    rows = (~star) & table[QUASI].eq(pd.Series(labels, index=QUASI)).all(axis=1)
    table.loc[rows, SENSITIVE] = table.loc[rows, SENSITIVE].iloc[0]
    table.to_csv(tampered / "release.csv", index=False, encoding="utf-8-sig")
    write_checksums(tampered)
    capsys.readouterr()
    assert main(["verify", str(tampered)]) != 0
    err = capsys.readouterr().err
    assert "fails distinct 3-diversity" in err and "Traceback" not in err


def test_the_generalizations_considered_are_in_release_json_and_the_report_and_hold(no_k_release):
    folder, _ = no_k_release
    g = json.loads((folder / "release.json").read_text(encoding="utf-8"))["reidentification"]["generalization"]
    found = g["alternatives"]
    assert len(found) == 5 and found[0]["levels"] == g["levels"] and found[0]["suppressed"] == g["suppressed"]
    values = [a["metric_value"] for a in found]
    assert values == sorted(values) and {a["metric"] for a in found} == {"precision"}
    original = pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False)
    files = {q: pd.read_csv(shared_adult(f"adult_hierarchy_{q}.csv"), sep=";", header=None, dtype=str,
                            keep_default_na=False).set_index(0) for q in QUASI}
    n = len(original)
    for a in found:  # each node counted here from the hierarchy files: its suppressed records and its precision loss
        generalized = pd.DataFrame({q: original[q] if a["levels"][q] == 0 else original[q].map(files[q][a["levels"][q]])
                                    for q in QUASI})
        generalized[SENSITIVE] = original[SENSITIVE]
        distinct = generalized.groupby(QUASI)[SENSITIVE].transform("nunique")
        suppressed = int((distinct < 3).sum())
        assert a["suppressed"] == suppressed
        steps = sum(a["levels"][q] / g["heights"][q] for q in QUASI) / len(QUASI)
        assert a["metric_value"] == pytest.approx((steps * (n - suppressed) + suppressed) / n, abs=1e-6)
    text = " ".join(re.sub(r"<[^>]+>", " ", (folder / "report.html").read_text(encoding="utf-8")).split())
    assert "Other generalizations considered" in text
    second = found[1]
    differs = ", ".join(f"{q} level {second['levels'][q]} of {g['heights'][q]} (chosen: {g['levels'][q]})"
                        for q in QUASI if second["levels"][q] != g["levels"][q])
    assert f"2. {differs}: {second['suppressed']:,} records suppressed (the chosen node: {g['suppressed']:,})" in text
    assert "considered" not in (folder / "README.txt").read_text(encoding="utf-8")


def test_a_quasi_identifier_kept_at_level_0_is_not_called_unchanged_when_records_were_suppressed(tmp_path):
    """Found under Xvfb: with age, sex and race kept exact and 425 records suppressed, the report's first page said
    "Released unchanged: sex, age, race, ...", though the suppressed records show '*'. A quasi-identifier at level 0
    is said to keep its own values where the generalization keeps them, with the suppressed count (counted here)."""
    folder = tmp_path / "rel"
    args = ["anonymize", shared_adult(), "--method", "generalization", "--sensitive", SENSITIVE,
            "--quasi", "age,sex,race", "--intervals", "age=5,10,20", "--max-level", "age=1",
            *[a for q in ("sex", "race") for a in ("--hierarchy", f"{q}={shared_adult(f'adult_hierarchy_{q}.csv')}")],
            "--k-anonymity", "5", "--l-diversity", "3", "--out", str(folder)]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([str(a) for a in args]) == 0
    table = pd.read_csv(folder / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    levels = meta["reidentification"]["generalization"]["levels"]
    suppressed = int(table[["age", "sex", "race"]].eq("*").all(axis=1).sum())
    assert levels == {"age": 0, "sex": 0, "race": 0} and suppressed > 0
    report = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", (folder / "report.html").read_text(encoding="utf-8"))).split())
    unchanged = re.search(r"Released unchanged: ([^.]*)\.", report)
    assert unchanged is None or not {"age", "sex", "race"} & set(unchanged.group(1).split(", "))
    for q in ("age", "sex", "race"):
        assert (f"{q} (quasi-identifier): its own values where the generalization keeps them; '*' for the "
                f"{suppressed:,} suppressed records.") in report
