"""Claims battery, verdicts (issue 28, point 5): the re-identification verdict every face prints follows one rule
and agrees with the figures, measured here again from the written release; README.txt's list of what was done to
each column agrees with release.json and with the data; ``ppdp risk`` reads a release's data file as it reads the
folder.

The attacker behind the verdict: someone who knows a person is in the release and knows their quasi-identifiers
picks a record of the person's group, so a record's risk is one over the size of its group (records whose every
quasi-identifier is ``*`` are suppressed and cannot be picked out). Every expected figure below is computed from
release.csv with pandas, not taken from the app.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.claims_helpers import adult_frame, adult_slice, anonymize_faces, run_cli

N = 3_000  # records of the Adult slice
QUASI = ["age", "sex", "race", "education"]
THRESHOLD = 0.2
COMMON = ["--sep", ";", "--method", "finegrain", "--sensitive", "occupation", "--theta", "3", "--seed", "5",
          "--threshold", str(THRESHOLD)]
PROTECT = ["--quasi", ",".join(QUASI), "--intervals", "age=5,10,20"]
#: what each verdict's sentence starts with, and its colour in the reports
HEADS = {"protected": ("Re-identification: protected —", "ok"),
         "above threshold": ("Re-identification: k-anonymous, but above the threshold —", "warning"),
         "not protected": ("Re-identification: NOT protected —", "danger"),
         "not measured": ("Re-identification: not measured —", "warning")}
CASES = {"amber": [*PROTECT, "--k-anonymity", "3"], "green": [*PROTECT, "--k-anonymity", "5"],
         "red": ["--quasi", "age,sex,race"], "none": []}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return adult_slice(tmp_path_factory.mktemp("adult"), N)


@pytest.fixture(scope="module")
def faces(data, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("releases")
    return {name: anonymize_faces(data, folder / name, [*COMMON, *args]) for name, args in CASES.items()}


def measured(table: pd.DataFrame, quasi: list[str], k: int | None) -> dict:
    """The figures of the release, by pandas: groups of the records not suppressed, and the rule's verdict."""
    if not quasi:
        return {"verdict": "not measured"}
    suppressed = table[quasi].eq("*").all(axis=1)
    s = int(suppressed.sum())
    sizes = table.loc[~suppressed, quasi].groupby(quasi).size().to_numpy()
    size_of_record = np.repeat(sizes, sizes)
    above = int((1.0 / size_of_record > THRESHOLD).sum())
    # who matches no released group is one of the suppressed records: to the attacker they are a group of s
    star_above = s if s and 1.0 / s > THRESHOLD else 0
    below = 0 if k is None else int((size_of_record < k).sum())
    verdict = ("not protected" if k is None or below else "above threshold" if above + star_above else "protected")
    return {"verdict": verdict, "above": above + star_above, "smallest": int(sizes.min()), "suppressed": s,
            "uniques": int((sizes == 1).sum()), "n": int(len(size_of_record)), "star_above": star_above}


def flat(text: str) -> str:
    return " ".join(text.split())


def readme_verdict(readme: str) -> str:
    block = readme.split("Two verdicts\n", 1)[1].split("\n\n", 1)[0]
    return "Re-identification: " + flat(block.split("Re-identification:", 1)[1])


@pytest.mark.parametrize("case, k, expected", [("amber", 3, "above threshold"), ("green", 5, "protected"),
                                               ("red", None, "not protected"), ("none", None, "not measured")])
def test_every_face_states_the_verdict_the_figures_give(faces, case, k, expected):
    face = faces[case]
    entry = face.meta["reidentification"]
    quasi = list(entry["quasi_identifiers"])
    figures = measured(face.table, quasi, k)
    assert figures["verdict"] == expected  # the case is what it is meant to be, by pandas
    # release.json: the entry's verdict and its release figures' verdict (never "low" without quasi-identifiers)
    assert entry["verdict"] == expected and entry["release"]["verdict"] == expected
    head, level = HEADS[expected]
    sentence = readme_verdict(face.readme)  # README.txt
    assert sentence.startswith(head), sentence
    assert any(line.strip() == sentence for line in face.cli), face.cli  # the CLI summary: the same sentence
    raw = (face.folder / "report.html").read_text(encoding="utf-8")  # the report inside the release: the same
    assert f'<p class="{level}">{html.escape(sentence)}</p>' in raw  # sentence, in the verdict's colour
    assert flat(sentence) in flat(" ".join(face.custodian))  # the custodian's report
    code, out, err = run_cli(["verify", face.folder])  # verify measures it again and agrees
    assert code == 0 and f"OK re-identification verdict: {expected!r}, as stated" in out, out + err
    if quasi:
        code, out, _ = run_cli(["risk", face.folder, "--json"])
        assert code == 0 and json.loads(out)["verdict"] == expected
    if expected == "above threshold":  # why, in plain words, with the figures of this release
        smallest = figures["smallest"]
        why = (f"k = {k} means a record's risk can be 1/{k} = 33.3 %" if smallest == k else
               f"the smallest group has {smallest} records, so a record's risk can be 1/{smallest}")
        assert why in sentence and "above the threshold of 20 %" in sentence
        assert f"{figures['above']:,} of {N:,} records are above it" in sentence
        assert f"{figures['suppressed']:,} records suppressed" in sentence
        assert "A k of at least 5 would keep every group within 20 %" in sentence
    if expected == "protected":
        smallest = min(figures["smallest"], figures["suppressed"] or N)
        assert f"(the highest is {round(100 / smallest)} %)" in sentence
    if expected == "not protected":
        assert f"{figures['uniques']:,} of {figures['n']:,} records" in sentence and "No k was stated" in sentence


def _restated(source: Path, folder: Path, verdict: str, release_verdict: str) -> Path:
    """A copy of the release ``source`` whose release.json states other verdicts (checksums rewritten)."""
    import shutil

    from ppdp_desktop.core.data.checksums import write_checksums

    shutil.copytree(source, folder)
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    meta["reidentification"]["verdict"], meta["reidentification"]["release"]["verdict"] = verdict, release_verdict
    (folder / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    (folder / "SHA256SUMS").unlink()
    write_checksums(folder)
    return folder


def test_a_doctored_verdict_is_refused(faces, tmp_path):
    """An amber release whose release.json is made to say "protected" fails verify; so does one that says nothing
    was measured when it was."""
    folder = _restated(faces["amber"].folder, tmp_path / "doctored", "protected", "protected")
    code, _, err = run_cli(["verify", folder])
    assert code == 1 and "verdict 'protected', but the released data gives 'above threshold'" in err, err
    folder = _restated(faces["red"].folder, tmp_path / "unmeasured", "not measured", "not measured")
    code, _, err = run_cli(["verify", folder])
    assert code == 1 and "gives 'not protected'" in err, err


def test_an_earlier_versions_words_verify_with_todays_verdict_beside_them(faces, tmp_path):
    """A release written before the one rule said "verified" for any k it checked (and "high" for its figures when
    a record was above the threshold): it still verifies, and verify says what today's rule gives. Words the
    earlier rule would not have given are refused."""
    folder = _restated(faces["amber"].folder, tmp_path / "old", "verified", "high")
    code, out, err = run_cli(["verify", folder])
    assert code == 0, err
    assert ("OK re-identification verdict: 'verified', in the words of an earlier version; by today's rule it is "
            "'above threshold'") in out
    folder = _restated(faces["amber"].folder, tmp_path / "old-forged", "verified", "low")
    code, _, err = run_cli(["verify", folder])
    assert code == 1 and "verdict 'low', but the released data gives 'high'" in err, err


def columns_done(readme: str) -> dict[str, str]:
    """README's "What was done to each column" as column -> treatment (continuation lines joined)."""
    block = readme.split("What was done to each column\n", 1)[1].split("\n\n", 1)[0]
    out: dict[str, str] = {}
    last = None
    for line in block.splitlines():
        row = re.match(r"^  (\S+)\s{2,}(.*)$", line)
        if row:
            last = row.group(1)
            out[last] = row.group(2)
        elif last and re.match(r"^\s{6,}\S", line):
            out[last] += " " + line.strip()
        else:
            last = None
    return out


def test_readme_lists_every_column_as_release_json_and_the_data_say(faces):
    face = faces["amber"]
    done = columns_done(face.readme)
    meta, table, original = face.meta, face.table, adult_frame().head(N)
    assert list(done) == list(meta["attributes"])  # every column, none forgotten
    g = meta["reidentification"]["generalization"]
    suppressed = int(table[QUASI].eq("*").all(axis=1).sum())
    assert suppressed == g["suppressed"] > 0
    assert f"{suppressed:,} records were suppressed" in flat(face.readme)
    kept = table[~table[QUASI].eq("*").all(axis=1)]
    widths = [5, 10, 20]
    for name in QUASI:
        level, height = g["levels"][name], g["heights"][name]
        assert f"suppressed ('*') in {suppressed:,} records" in done[name]
        if level == 0:
            assert done[name].startswith("unchanged (level 0")
            assert set(kept[name]) <= set(original[name])
            continue
        assert done[name].startswith(f"generalized to level {level} of {height}")
        if name == "age" and level < height:  # every released label is a bin of the level's width, and the bins'
            w = widths[level - 1]  # counts are the original ages' counts less the suppressed records
            bounds = kept["age"].str.extract(r"^(\d+)-(\d+)$").astype(int)
            assert bounds.notna().all().all() and ((bounds[0] % w) == 0).all() and (bounds[1] - bounds[0] == w - 1).all()
            bins = (original["age"].astype(int) // w * w).value_counts()
            shown = bounds[0].value_counts()
            assert (shown <= bins.reindex(shown.index)).all() and int(bins.sum() - shown.sum()) == suppressed
    assert done["occupation"].startswith("randomized: fine-grain perturbation")
    assert max(meta["sensitive"][0]["retention"]) < 1
    for name in ("marital-status", "native-country", "workclass", "salary-class"):
        assert done[name] == "unchanged"  # and it is: the same multiset of values as the original's
        pd.testing.assert_series_equal(table[name].value_counts().sort_index(),
                                       original[name].value_counts().sort_index(), check_names=False)
    for section in ("What was done\n", "\n\n"):
        assert "Every other column is unchanged" not in face.readme.split(section)[0]
    assert "Every other column is unchanged" not in face.readme


def test_demo_release_lists_identifiers_pseudonyms_and_rr(tmp_path):
    """On the demo: identifiers removed and pseudonymized, randomized response's columns with their p, the
    columns it kept (p = 1) unchanged, and no column of the data the list does not describe."""
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.demo import demo_settings
    from ppdp_desktop.core.release.package import write_release

    demo = load_table(resource_path(DEMO_DATA))
    result = anonymize(demo, demo_settings(demo, "rr", seed=1))
    folder = write_release(result, tmp_path / "rel", key_path=tmp_path / "rel.ppdpkey",
                           passphrase="correct horse battery staple 8", include_report=False)
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    meta = json.loads((folder / "release.json").read_text(encoding="utf-8"))
    table = pd.read_csv(folder / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    done = columns_done(readme)
    pseudonym = meta["pseudonym_column"]
    assert set(done) == set(meta["attributes"]) | {pseudonym} and set(table.columns) <= set(done)
    for name, attribute in meta["attributes"].items():
        if attribute["role"] == "identifier":
            assert name not in table.columns and done[name].startswith("pseudonymized: removed (identifier)")
            assert f"column {pseudonym!r}" in done[name]
    assert done[pseudonym].startswith("added") and table[pseudonym].is_unique
    randomized = {e["attribute"]: e["p"] for e in meta["randomized"]}
    assert randomized and all(p < 1 for p in randomized.values())
    for name, p in randomized.items():
        assert done[name].startswith(f"randomized: randomized response (each record kept its value with probability "
                                     f"p = {p:.4g}")
    for name in set(meta["attributes"]) - set(randomized):
        if meta["attributes"][name]["role"] != "identifier":
            assert done[name] == "unchanged"
            assert sorted(table[name]) == sorted(demo.frame[name].astype(str).where(demo.frame[name].notna(), ""))
    assert meta["reidentification"]["verdict"] == "not protected"  # rr asks no k


def test_risk_on_the_release_csv_and_on_the_folder_give_the_same_figures(faces):
    folder = faces["amber"].folder
    quasi = ",".join(QUASI)
    code, by_folder, _ = run_cli(["risk", folder, "--json"])
    assert code == 0
    code, by_file, _ = run_cli(["risk", folder / "release.csv", "--quasi", quasi, "--k", "3", "--json"])
    assert code == 0
    by_folder, by_file = json.loads(by_folder), json.loads(by_file)
    assert by_file == by_folder  # every figure, the verdict and the records left out
    figures = measured(faces["amber"].table, QUASI, 3)
    assert by_file["suppressed_left_out"] == figures["suppressed"] > 0
    assert by_file["n_records"] == N - figures["suppressed"] and by_file["records_above_threshold"] == figures["above"]
    code, plain, _ = run_cli(["risk", folder / "release.csv", "--quasi", quasi, "--json"])  # no k stated: not protected
    plain = json.loads(plain)
    same = {key: value for key, value in plain.items() if key not in ("k", "records_below_k", "verdict")}
    assert same == {key: by_folder[key] for key in same} and plain["verdict"] == "not protected"
    code, text, _ = run_cli(["risk", folder / "release.csv", "--quasi", quasi, "--k", "3"])
    assert f"{figures['suppressed']:,} suppressed records (every quasi-identifier '*') are left out" in text
    assert "Re-identification: k-anonymous, but above the threshold" in text


def test_the_window_shows_k_3_at_20_percent_in_amber_with_the_reason(window, qtbot):
    """Driven like a person: the demo, its quasi-identifiers protected with k = 3 (typed into the k box) and the
    threshold left at 20 %; the report page's verdict is amber, never green, and says why."""
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QPoint, Qt

    from ppdp_desktop.gui.pages.report_page import RISK_COLORS

    method_step, run_step, report_step = 3, 4, 5
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(method_step)
    page = window.pages[method_step]
    section = page.protection
    page.scroll.ensureWidgetVisible(section.enabled)
    qtbot.mouseClick(section.enabled, Qt.MouseButton.LeftButton, pos=QPoint(8, section.enabled.height() // 2))
    page.scroll.ensureWidgetVisible(section.k)
    section.k.setFocus()
    qtbot.keyClick(section.k, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(section.k, "3")
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    assert window.state.project.protection["k"] == 3 and window.state.project.protection["threshold"] == 0.2
    window.go_to(run_step)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    window.go_to(report_step)
    report_page = window.pages[report_step]
    reid = window.state.outcome.reports[0].reidentification
    after = reid.after
    assert after.k == 3 and after.records_below_k == 0 and after.records_above_threshold > 0  # the figures
    text = report_page.privacy_label.text()
    amber = RISK_COLORS["warning"]
    assert f"<b style='color:{amber}'>Re-identification: k-anonymous, but above the threshold" in text
    assert "k = 3 means a record&#x27;s risk can be 1/3 = 33.3 %, above the threshold of 20 %" in text
    assert f"{after.records_above_threshold:,} records" in text and RISK_COLORS["ok"] not in text.split("Re-identification")[1]
    brief = report_page.brief_label.text()  # the plain first page: the same verdict, amber
    assert f"<b style='color:{amber}'>Re-identification: k-anonymous, but above the threshold" in brief
    assert "#c77800" in report_page.privacy_box.styleSheet()  # the privacy box is amber too, not plain


@pytest.mark.parametrize("suppressed, code", [(1, "above threshold"), (4, "above threshold"), (6, "protected"),
                                              (12, "protected")])
def test_a_few_suppressed_records_are_a_group_of_their_own(suppressed, code):
    """k = 10 holds on the released groups; the suppressed records (all '*') are left out of the figures, as ARX
    does, but someone who knows a person is in the release and finds no released group matching them knows the
    person is one of the suppressed: a risk of 1/s. The verdict counts that group against the threshold (20 %)."""
    from ppdp_desktop.core.privacy.risk import analyse_risk, suppressed_records
    from ppdp_desktop.core.privacy.verdict import risk_verdict

    table = pd.DataFrame({"age": ["20-29"] * 10 + ["30-39"] * 12 + ["*"] * suppressed,
                          "sex": ["F"] * 10 + ["M"] * 12 + ["*"] * suppressed})
    star = suppressed_records(table, ["age", "sex"])
    analysis = analyse_risk(table[~star], ["age", "sex"], THRESHOLD, k=10)
    assert analysis.records_above_threshold == 0 and int(star.sum()) == suppressed  # the ARX figures
    verdict = risk_verdict(analysis, suppressed=suppressed)
    assert verdict.code == code
    risk = 1 / suppressed  # the attacker's: exactly the suppressed records match no released group
    assert (risk > THRESHOLD) == (code == "above threshold")
    text = verdict.text
    if suppressed < 10:
        assert f"every record apart from the {suppressed} suppressed one" in text
    else:
        assert "every record shares its quasi-identifiers with at least 9 others" in text
    if code == "above threshold":
        assert f"a risk of 1/{suppressed} = {round(100 * risk)} %" in text and f"{suppressed} of 22" not in text
        assert f"{suppressed:,} of {22 + suppressed} records" in text
    else:
        assert f"(the highest is {round(100 * max(risk, 1 / 10), 1):g} %)" in text


@pytest.mark.parametrize("threshold", [0.05, 0.1, 1 / 3, 0.2, 0.25, 0.3, 0.5, 1.0])
def test_the_k_the_amber_verdict_suggests_is_the_smallest_that_keeps_every_group_within(threshold):
    from ppdp_desktop.core.privacy.verdict import safe_k

    k = safe_k(threshold)
    assert 1 / k <= threshold and (k == 1 or 1 / (k - 1) > threshold)
