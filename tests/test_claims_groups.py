"""Claims battery, group disclosure (issue 28.4): what a release's statistics reveal about a group.

On 3,000 Adult records: the report's and release.json's figures equal an independent pandas computation from the
release's own estimates (``ppdp estimate --where`` per group for a perturbed column, ``ppdp estimate --table
--project`` for randomized response); the attacker who guesses each group's most frequent estimated value is right
for the share the section predicts, on the release's estimated population exactly and on people drawn from it (not
in the data), and on the original records as the custodian's report says; the stronger bound refuses a release
with a group above it and lets through one without (the bound set just below and at the largest share pandas
finds on the original groups); the window shows the section and the option.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.evaluation.group_disclosure import TOLERANCE
from ppdp_desktop.core.release.analysis import estimate_counts
from ppdp_desktop.core.report import groups
from tests.conftest import shared_adult

QUASI = ["sex", "race"]
N = 3000


@pytest.fixture(scope="module")
def slice_csv(tmp_path_factory):
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False).head(N)
    path = tmp_path_factory.mktemp("adult") / "adult3k.csv"
    frame.to_csv(path, sep=";", index=False)
    return path


@pytest.fixture(scope="module")
def original(slice_csv):
    return pd.read_csv(slice_csv, sep=";", dtype=str, keep_default_na=False)


def _release(slice_csv, out, *extra):
    code = main(["-q", "anonymize", str(slice_csv), "--out", str(out), "--quasi", ",".join(QUASI), "--seed", "5",
                 "--no-report", *extra])
    return code


def _pandas_summary(cells: pd.DataFrame, sensitive: str, bound: float) -> dict:
    """From estimated counts per (group, value): each group's most frequent value (ties: first label), its share,
    the groups above ``bound`` and the records they hold, and how often guessing that value is right."""
    cells = cells[cells["estimate"] > 0].sort_values([*QUASI, sensitive])
    per = cells.groupby(QUASI, sort=False)["estimate"]
    total = per.transform("sum")
    top = cells.assign(total=total).sort_values("estimate", ascending=False, kind="stable").groupby(QUASI).head(1)
    top = top[top["total"] > 0]
    share = top["estimate"] / top["total"]
    above = share > bound + TOLERANCE
    return {"groups": len(top), "largest_share": share.max(), "groups_above": int(above.sum()),
            "records_above": top.loc[above, "total"].sum(), "guess_right": top["estimate"].sum() / top["total"].sum(),
            "guesses": top.set_index(QUASI)[sensitive]}


def _check_figures(entry: dict, expected: dict, tol: float) -> None:
    assert entry["groups"] == expected["groups"]
    assert entry["groups_above"] == expected["groups_above"]
    assert entry["largest_share"] == pytest.approx(expected["largest_share"], abs=tol)
    assert entry["records_above"] == pytest.approx(expected["records_above"], abs=max(tol * N, 0.05))
    assert entry["guess_right"] == pytest.approx(expected["guess_right"], abs=tol)


@pytest.mark.parametrize("method, sensitive, extra, tol", [
    ("uniform", "workclass", ["--theta", "3"], 1e-6),
    ("finegrain", "workclass", ["--theta", "3"], 2e-3),  # the report stops iterative Bayes sooner than estimate
    ("partition", "occupation", ["--rho1", "0.1", "--rho2", "0.4"], 1e-6),
])
def test_section_equals_pandas_from_the_release_estimates(slice_csv, tmp_path, method, sensitive, extra, tol):
    out = tmp_path / method
    assert _release(slice_csv, out, "--method", method, "--sensitive", sensitive, *extra) == 0
    release = read_release(out)
    entry = release.metadata["group_disclosure"]
    rows = []
    for labels, _ in release.table.groupby(QUASI):  # one `ppdp estimate --where` per released group
        table = estimate_counts(release, sensitive, dict(zip(QUASI, labels)))
        rows.append(table.assign(**dict(zip(QUASI, labels))).rename(columns={"value": sensitive}))
    cells = pd.concat(rows)[[*QUASI, sensitive, "estimate"]]
    expected = _pandas_summary(cells, sensitive, 0.2)
    assert entry["bound"] == 0.2 and entry["bound_source"] == "the threshold" and entry["estimated"]
    _check_figures(entry, expected, tol)
    again = groups.for_release(release)  # the report of the written release says the same
    assert again.groups_above == entry["groups_above"] and again.guess_right == pytest.approx(entry["guess_right"], abs=1e-6)
    # the figures are the un-mixed ones: counting the released values as they are would give others
    raw = _pandas_summary(release.table.groupby([*QUASI, sensitive]).size().rename("estimate").reset_index(),
                          sensitive, 0.2)
    assert abs(raw["guess_right"] - entry["guess_right"]) > 0.01


def test_rr_section_equals_pandas_from_the_estimated_table(slice_csv, tmp_path):
    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table

    out = tmp_path / "rr"
    assert _release(slice_csv, out, "--method", "rr", "--sensitive", "workclass", "--l", "3") == 0
    release = read_release(out)
    entry = release.metadata["group_disclosure"]
    table = estimate_release_table(release, [*QUASI, "workclass"], project=True)  # ppdp estimate --table --project
    expected = _pandas_summary(table, "workclass", 1 / 3)
    assert entry["bound"] == pytest.approx(1 / 3) and entry["bound_source"] == "1/l"
    _check_figures(entry, expected, 1e-6)


def _attack_on_people(people: pd.DataFrame, guesses: pd.Series, sensitive: str) -> float:
    """The group attacker on ``people``: each is guessed to have their group's most frequent estimated value."""
    guess = people.join(guesses.rename("guess"), on=QUASI)["guess"]
    return float((guess == people[sensitive]).mean())


@pytest.mark.parametrize("method, extra", [("uniform", ["--theta", "3"]), ("rr", ["--l", "3"])])
def test_map_attacker_is_right_as_often_as_the_section_predicts(slice_csv, original, tmp_path, method, extra):
    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table

    out = tmp_path / method
    assert _release(slice_csv, out, "--method", method, "--sensitive", "workclass", *extra) == 0
    release = read_release(out)
    predicted = release.metadata["group_disclosure"]["guess_right"]
    if method == "rr":
        cells = estimate_release_table(release, [*QUASI, "workclass"], project=True)
    else:
        cells = pd.concat(estimate_counts(release, "workclass", dict(zip(QUASI, labels)))
                          .assign(**dict(zip(QUASI, labels))).rename(columns={"value": "workclass"})
                          for labels, _ in release.table.groupby(QUASI))
    cells = cells[cells["estimate"] > 0]
    summary = _pandas_summary(cells[[*QUASI, "workclass", "estimate"]], "workclass", 0.2)
    # exact on the release: its estimated population, each group guessed its most frequent value
    population = cells.assign(guess=cells.join(summary["guesses"].rename("g"), on=QUASI)["g"])
    right = population.loc[population["guess"] == population["workclass"], "estimate"].sum()
    assert right / population["estimate"].sum() == pytest.approx(predicted, abs=1e-6)
    # Monte-Carlo: people drawn from what the release says (none of them in the data)
    rng = np.random.default_rng(7)
    drawn = cells.iloc[rng.choice(len(cells), size=200_000, p=(cells["estimate"] / cells["estimate"].sum()).to_numpy())]
    success = _attack_on_people(drawn[[*QUASI, "workclass"]].reset_index(drop=True), summary["guesses"], "workclass")
    assert abs(success - predicted) < 4 * np.sqrt(predicted * (1 - predicted) / 200_000)
    # on the original records: what the custodian's report states is the attack on them
    measured = groups.for_release(release, original).measured_right
    assert measured == pytest.approx(_attack_on_people(original, summary["guesses"], "workclass"), abs=1e-12)


def test_a_released_value_as_it_is_predicts_the_attack_on_the_original_exactly(slice_csv, original, tmp_path):
    """dp-microagg leaves an unprotected sensitive column as it is: the section counts it, exactly."""
    out = tmp_path / "dp"
    assert _release(slice_csv, out, "--method", "dp-microagg", "--attributes", "age", "--epsilon", "1", "--k", "25",
                    "--sensitive", "occupation") == 0
    release = read_release(out)
    entry = release.metadata["group_disclosure"]
    assert entry["estimated"] is False
    truth = _pandas_summary(original.groupby([*QUASI, "occupation"]).size().rename("estimate").reset_index(),
                            "occupation", 0.2)
    _check_figures(entry, truth, 1e-6)  # release.json rounds to 6 digits
    assert _attack_on_people(original, truth["guesses"], "occupation") == pytest.approx(entry["guess_right"], abs=1e-6)
    protected = tmp_path / "dp-protected"
    assert _release(slice_csv, protected, "--method", "dp-microagg", "--attributes", "age", "--epsilon", "1",
                    "--k", "25", "--sensitive", "age") == 0
    assert "noisy value" in read_release(protected).metadata["group_disclosure"]["not_measured"]


def _largest_share(original: pd.DataFrame, quasi: list[str], sensitive: str) -> tuple[float, tuple]:
    shares = original.groupby(quasi)[sensitive].value_counts(normalize=True)
    return float(shares.max()), shares.idxmax()


@pytest.mark.parametrize("method, extra", [("uniform", ["--theta", "3"]), ("finegrain", ["--theta", "3"])])
def test_group_bound_refuses_above_and_passes_at_the_largest_share(slice_csv, original, tmp_path, capsys, method,
                                                                    extra):
    largest, where = _largest_share(original, ["sex"], "workclass")
    args = ["-q", "anonymize", str(slice_csv), "--quasi", "sex", "--sensitive", "workclass", "--method", method,
            "--seed", "5", "--no-report", *extra]
    refused = tmp_path / "refused"
    assert main([*args, "--out", str(refused), "--group-bound", f"{largest - 1e-4:.6f}"]) == 1
    err = capsys.readouterr().err
    assert not refused.exists() and "Nothing was written" in err
    assert f"sex {where[0]}" in err and f"{largest:.0%} {where[1]!r}" in err  # names the worst group
    passed = tmp_path / "passed"
    assert main([*args, "--out", str(passed), "--group-bound", repr(largest)]) == 0
    entry = json.loads((passed / "release.json").read_text())["group_disclosure"]
    assert entry["required"] is True and entry["bound"] == pytest.approx(largest, abs=1e-6)


def test_group_bound_follows_the_released_groups_under_k(slice_csv, original):
    """Under k-anonymity the bound is checked on the generalized groups (suppressed records left out)."""
    from dataclasses import replace

    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, SensitivitySettings

    dataset = load_table(slice_csv)
    base = AnonymizationSettings("salary-class", "uniform", quasi=["sex", "race", "marital-status"],
                                 sensitivity=SensitivitySettings(theta=3), seed=5,
                                 protection=ProtectionSettings(k=200))
    first = anonymize(dataset, base)
    released = first.reidentification.generalization.apply(original[base.quasi])
    kept = ~released.eq("*").all(axis=1)
    table = released[kept].assign(s=original.loc[kept, "salary-class"])
    largest = float(table.groupby(base.quasi)["s"].value_counts(normalize=True).max())
    below = replace(base, protection=ProtectionSettings(k=200, require_group_bound=True, group_bound=largest - 1e-4))
    with pytest.raises(PrivacyError, match="group bound does not hold"):
        anonymize(dataset, below)
    at = replace(base, protection=ProtectionSettings(k=200, require_group_bound=True, group_bound=largest))
    assert groups.for_anonymization(anonymize(dataset, at)).required


def test_rr_group_bound_is_one_over_l(slice_csv, original, tmp_path, capsys):
    largest, _ = _largest_share(original, ["sex"], "salary-class")
    args = ["-q", "anonymize", str(slice_csv), "--quasi", "sex", "--sensitive", "salary-class", "--method", "rr",
            "--seed", "5", "--no-report", "--group-bound"]
    assert main([*args, "--out", str(tmp_path / "a"), "--l", "3"]) == 1
    assert "1/l = 33%" in capsys.readouterr().err and not (tmp_path / "a").exists()
    assert main([*args, "--out", str(tmp_path / "b"), "--l", repr(1 / largest)]) == 0


def test_report_words_name_the_attacker(slice_csv):
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

    result = anonymize(load_table(slice_csv), AnonymizationSettings(
        "workclass", "uniform", quasi=QUASI, sensitivity=SensitivitySettings(theta=3), seed=5))
    d = groups.for_anonymization(result)
    first = d.worst[0]
    text = groups.example(d)
    assert text.startswith("In the release, an estimated ") and "whether or not they are in the data" in text
    assert f"{first.records:,.0f} records with sex {first.labels[0]!r} and race {first.labels[1]!r}" in text
    low, high = d.example_interval
    assert low <= first.share <= high
    assert any("Checked on the original records" in line for line in groups.lines(d))
    assert not any("Checked on the original records" in line for line in groups.lines(d.public()))


# --- the window -------------------------------------------------------------------------------------------------

def test_window_shows_the_section_and_the_option(qtbot, slice_csv):
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QPoint, Qt

    from ppdp_desktop.core.jobs import run_job
    from ppdp_desktop.core.progress import CancelToken, no_progress
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings
    from ppdp_desktop.gui.pages.report_page import ReportPage
    from ppdp_desktop.gui.protection_editor import ProtectionSection
    from ppdp_desktop.gui.state import WizardState

    outcome = run_job(load_table(slice_csv), [AnonymizationSettings(
        "workclass", "uniform", quasi=QUASI, sensitivity=SensitivitySettings(theta=3), seed=5)], no_progress,
        CancelToken())
    state = WizardState()
    page = ReportPage(state)
    qtbot.addWidget(page)
    state.set_outcome(outcome)
    d = outcome.reports[0].group_disclosure
    tab = page.sections.indexOf(page.groups)
    assert page.sections.tabText(tab) == "What a group reveals"
    assert groups.headline(d) in page.groups.text.text()
    shown = [[page.groups.table.item(r, c).text() for c in range(4)] for r in range(page.groups.table.rowCount())]
    assert shown == [list(row) for row in groups.table(d)] and shown
    assert groups.example(d).replace("'", "&#x27;") in page.brief_label.text()

    section = ProtectionSection(state)
    qtbot.addWidget(section)
    section.refresh()
    section.show()
    box = section.group_limit  # clicked on its indicator, as a user does
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    section.group_bound.setValue(30.0)
    assert state.project.protection["require_group_bound"] is True
    assert state.project.protection["group_bound"] == pytest.approx(0.3)
    settings = state.project.protection_settings()
    assert settings.require_group_bound and settings.group_bound == pytest.approx(0.3)
    section.refresh()  # read back from the project
    assert section.group_limit.isChecked() and section.group_bound.value() == pytest.approx(30.0)
