"""Claims battery, group disclosure (issue 28.4): what a release's statistics reveal about a group.

On 3,000 Adult records: the report's and release.json's figures equal an independent pandas computation from the
release's own estimates (``ppdp estimate --where`` per group for a perturbed column, ``ppdp estimate --table
--project`` for randomized response); the attacker who guesses each group's most frequent estimated value is right
for the share the section predicts, on the release's estimated population exactly and on people drawn from it (not
in the data), and on the original records as the custodian's report says; the stronger bound refuses a release
with a group above it and lets through one without (the bound set just below and at the largest share pandas
finds on the original groups); the window shows the section and the option; ``ppdp verify`` recomputes every figure
of release.json's entry and refuses a doctored one (the checksums rewritten, no signature); the example group's
interval is Fieller's, recomputed here with the dense inverse of the published matrices (its coverage is measured
in benchmarks/bench_group_disclosure.py --coverage).
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


# --- ppdp verify recomputes release.json's group_disclosure -----------------------------------------------------

@pytest.fixture(scope="module")
def written(slice_csv, tmp_path_factory):
    """Genuine releases of the slice: uniform and rr (workclass by sex and race)."""
    folder = tmp_path_factory.mktemp("group-verify")
    runs = {"uniform": ["--theta", "3"], "rr": ["--l", "3"]}
    for method, extra in runs.items():
        assert _release(slice_csv, folder / method, "--method", method, "--sensitive", "workclass", *extra) == 0
    return folder


def _doctored(written, method: str, tmp_path, edit):
    """A copy of a genuine release with ``edit(entry, meta)`` applied to release.json and the checksums rewritten
    to match (what a forger without the signing key can do)."""
    import shutil

    from ppdp_desktop.core.data.checksums import write_checksums

    release = tmp_path / method
    shutil.copytree(written / method, release)
    meta = json.loads((release / "release.json").read_text(encoding="utf-8"))
    edit(meta.get("group_disclosure"), meta)
    (release / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    for name in ("SHA256SUMS", "SIGNATURE"):
        (release / name).unlink(missing_ok=True)
    write_checksums(release)
    return release


@pytest.mark.parametrize("method", ["uniform", "rr"])
def test_verify_recomputes_the_group_figures_of_a_genuine_release(written, capsys, method):
    assert main(["verify", str(written / method)]) == 0
    captured = capsys.readouterr()
    out = captured.out + captured.err
    entry = json.loads((written / method / "release.json").read_text())["group_disclosure"]
    line = next(l for l in out.splitlines() if "group disclosure" in l)
    assert "recomputed from the release, as stated" in line
    from ppdp_desktop.core.evaluation.report_model import percent

    assert f"the {entry['groups']:,} groups" in line and f"holds up to {percent(entry['largest_share'])}" in line


@pytest.mark.parametrize("method", ["uniform", "rr"])
@pytest.mark.parametrize("figure", ["largest_share", "groups_above", "records_above", "guess_right"])
def test_verify_refuses_a_doctored_group_figure(written, tmp_path, capsys, method, figure):
    stated = {}

    def doctor(entry, meta):
        stated["said"] = entry[figure]
        entry[figure] = {"largest_share": entry[figure] / 2, "groups_above": entry[figure] - 3,
                         "records_above": round(entry[figure] * 0.6, 1), "guess_right": entry[figure] - 0.05}[figure]
        stated["forged"] = entry[figure]

    release = _doctored(written, method, tmp_path, doctor)
    assert main(["verify", str(release)]) == 1
    err = capsys.readouterr().err
    assert f"group_disclosure.{figure} = {stated['forged']!r}" in err and "the release was altered" in err, err
    given = float(err.split("but the release gives ")[1].split(" ")[0])  # the recomputed figure: the genuine one
    assert given == pytest.approx(stated["said"], abs=0.1 if figure == "records_above" else 1.5e-6)


@pytest.mark.parametrize("how, expected", [
    ("bound", "states a group bound of 0.9 as 1/l"),
    ("quasi", "is about the groups of ['sex']"),
    ("not measured", "says group_disclosure was not measured"),
    ("estimated", "group_disclosure.estimated = False"),
])
def test_verify_refuses_a_doctored_group_entry(written, tmp_path, capsys, how, expected):
    def doctor(entry, meta):
        if how == "bound":  # rr's bound is 1/l: a larger one would hide the groups above it
            entry["bound"], entry["groups_above"], entry["records_above"] = 0.9, 0, 0.0
        elif how == "quasi":
            entry["quasi_identifiers"] = ["sex"]
        elif how == "not measured":
            for key in ("bound", "bound_source", "estimated", "groups", "records", "largest_share", "groups_above",
                        "records_above", "guess_right"):
                entry.pop(key)
            entry["not_measured"] = "no quasi-identifiers were named, so there are no groups to look at"
        else:
            entry["estimated"] = False

    release = _doctored(written, "rr", tmp_path, doctor)
    assert main(["verify", str(release)]) == 1
    err = capsys.readouterr().err
    assert expected in err, err


def test_a_release_without_the_group_entry_still_verifies(written, tmp_path, capsys):
    """Releases written before issue 28 have no group_disclosure."""
    release = _doctored(written, "uniform", tmp_path, lambda entry, meta: meta.pop("group_disclosure"))
    assert main(["verify", str(release)]) == 0
    captured = capsys.readouterr()
    assert "checksums" in captured.out + captured.err and "group disclosure" not in captured.out + captured.err


# --- the example group's interval -------------------------------------------------------------------------------

def _fieller_by_roots(a_row: np.ndarray, b_row: np.ndarray, observed: np.ndarray, strata: np.ndarray, z: float):
    """Fieller's interval for <a_row, o> / <b_row, o> with o multinomial within each stratum, by np.roots."""
    def cov(x, y):
        between = sum((x[strata == s] @ observed[strata == s]) * (y[strata == s] @ observed[strata == s])
                      / observed[strata == s].sum() for s in np.unique(strata) if observed[strata == s].sum() > 0)
        return float((x * y * observed).sum() - between)

    a, b = a_row @ observed, b_row @ observed
    vaa, vab, vbb = cov(a_row, a_row), cov(a_row, b_row), cov(b_row, b_row)
    roots = np.sort(np.roots([b * b - z * z * vbb, -2 * a * b + 2 * z * z * vab, a * a - z * z * vaa]).real)
    return float(roots[0]), float(roots[1])


@pytest.mark.parametrize("method", ["uniform", "rr"])
def test_the_example_interval_is_fiellers_on_the_dense_inverse(written, method):
    """The interval of the example group's share is Fieller's for the unbiased (inverted) estimate, recomputed
    here with the dense inverse of the published matrix (a Kronecker product of the matrices for rr), at the
    simultaneous level over every (group, value) cell; it holds the share shown."""
    from statistics import NormalDist

    from ppdp_desktop.core.methods.group_interval import LEVEL, share_interval
    from ppdp_desktop.core.methods.perturbation.release import published_matrix

    release = read_release(written / method)
    d = groups.for_release(release)
    shown = d.worst[0]
    low, high = d.example_interval
    assert low <= shown.share <= high
    in_group = np.logical_and.reduce([release.table[c] == v for c, v in zip(QUASI, shown.labels)])
    if method == "uniform":
        entry = release.metadata["sensitive"][0]
        values = [str(v) for v in entry["values"]]
        inverse = np.linalg.inv(np.asarray(published_matrix(entry)))
        observed = release.table.loc[in_group, "workclass"].value_counts().reindex(values, fill_value=0).to_numpy(float)
        a_row, b_row, strata = inverse[values.index(shown.value)], np.ones(len(values)), np.zeros(len(values), int)
    else:
        from functools import reduce

        published = {e["attribute"]: e for e in release.metadata["randomized"]}
        labels = [[str(v) for v in published[c]["values"]] for c in [*QUASI, "workclass"]]
        inverse = reduce(np.kron, [np.linalg.inv(np.asarray(published[c]["matrix"])) for c in [*QUASI, "workclass"]])
        index = pd.MultiIndex.from_product(labels)
        observed = release.table.groupby([*QUASI, "workclass"]).size().reindex(index, fill_value=0).to_numpy(float)
        cell = index.get_loc((*shown.labels, shown.value))
        in_cell_group = [index.get_loc((*shown.labels, v)) for v in labels[-1]]
        a_row, b_row, strata = inverse[cell], inverse[in_cell_group].sum(axis=0), np.zeros(len(index), int)
    cells = d.n_groups * len(release.metadata["sensitive"][0]["values"] if method == "uniform"
                             else release.metadata["randomized"][-1]["values"])
    for comparisons in (1, cells):
        z = NormalDist().inv_cdf(1 - (1 - LEVEL) / comparisons / 2)
        expected = _fieller_by_roots(a_row, b_row, observed, strata, z)
        found = share_interval(release, QUASI, "workclass", shown.labels, shown.value, comparisons=comparisons)
        assert found == pytest.approx((max(expected[0], 0.0), min(expected[1], 1.0)), abs=1e-9)
    assert (low, high) == pytest.approx((min(found[0], shown.share), max(found[1], shown.share)), abs=1e-12)
