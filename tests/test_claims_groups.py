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

import html
import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.evaluation.group_disclosure import TOLERANCE
from ppdp_desktop.core.evaluation.report_model import percent
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
    the groups whose estimate is above ``bound`` and the records they hold, and the in-sample guess figure."""
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
    """Counted figures (exact)."""
    assert entry["groups"] == expected["groups"]
    assert entry["groups_above"] == expected["groups_above"]
    assert entry["largest_share"] == pytest.approx(expected["largest_share"], abs=tol)
    assert entry["records_above"] == pytest.approx(expected["records_above"], abs=max(tol * N, 0.05))
    assert entry["guess_right"] == pytest.approx(expected["guess_right"], abs=tol)


def _where_cells(release, sensitive: str) -> pd.DataFrame:
    """Each released group's counts of ``sensitive``, one ``ppdp estimate --where`` per group."""
    rows = []
    for labels, _ in release.table.groupby(QUASI):
        table = estimate_counts(release, sensitive, dict(zip(QUASI, labels)))
        rows.append(table.assign(**dict(zip(QUASI, labels))).rename(columns={"value": sensitive}))
    return pd.concat(rows)[[*QUASI, sensitive, "estimate"]]


def _dense(release, sensitive: str):
    """The published matrix of one perturbed column (no sub-tables) as a dense array ``P[y, x]``, its values and
    each record's released value as an index into them."""
    from ppdp_desktop.core.methods.perturbation.release import published_matrix

    entry = next(e for e in release.metadata["sensitive"] if e["attribute"] == sensitive)
    values = [str(v) for v in entry["values"]]
    return np.asarray(published_matrix(entry), dtype=float), values, pd.Index(values).get_indexer(release.table[sensitive])


def _bernstein_intervals(release, sensitive: str, groups: int) -> pd.DataFrame:
    """Every (group, value) interval, recomputed by brute force: the dense inverse ``W = P^-T``; for a share ``s``
    the records' variances add up to at most ``n (s own + (1 - s) other)`` (``own``: the variance of ``W[y, v]``
    for a record holding ``v``, ``other``: the largest for one holding another value); ``s`` is rejected where
    ``|a - s n| > c + sqrt(c^2 + 2 L V)`` (Bernstein, ``c = R L / 3``, ``R`` the range of ``W[., v]``), at ``L =
    log(2 cells / 0.05)``; the interval is every ``s`` on a fine grid that is not rejected."""
    matrix, values, codes = _dense(release, sensitive)
    w = np.linalg.inv(matrix).T
    expected = matrix.T @ (w * w)  # [x, v]: E[W[y, v]^2] for a record holding x
    own = np.diag(expected).copy()
    np.fill_diagonal(expected, -np.inf)
    other, reach = expected.max(axis=0), w.max(axis=0) - w.min(axis=0)
    log = np.log(2 * groups * len(values) / 0.05)
    grid = np.linspace(0.0, 1.0, 100_001)
    rows = []
    for labels, part in release.table.assign(code=codes).groupby(QUASI):
        observed = np.bincount(part["code"], minlength=len(values)).astype(float)
        n = observed.sum()
        for v in np.flatnonzero(observed):
            a = observed @ w[:, v]
            variance = n * (grid * own[v] + (1 - grid) * other[v])
            c = reach[v] * log / 3
            kept = np.abs(a - grid * n) <= c + np.sqrt(c * c + 2 * log * np.maximum(variance, other[v] * n))
            rows.append({**dict(zip(QUASI, labels)), sensitive: values[v], "low": grid[kept].min() if kept.any() else 0,
                         "high": grid[kept].max() if kept.any() else 1})
    return pd.DataFrame(rows)


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
    expected = _pandas_summary(_where_cells(release, sensitive), sensitive, 0.2)
    assert entry["bound"] == 0.2 and entry["bound_source"] == "the threshold" and entry["estimated"]
    assert entry["groups"] == expected["groups"]
    assert entry["largest_share"] == pytest.approx(expected["largest_share"], abs=tol)
    # the estimates' own count above the bound is stated as such; the groups counted above are those shown
    assert entry["groups_estimated_above"] == expected["groups_above"]
    assert entry["groups_above"] <= entry["groups_estimated_above"]
    assert entry["folds"] == 2 and 0 < entry["guess_right_margin"] < 0.5
    # the in-sample sum of each group's largest estimate is not what is stated (it is inflated by the noise)
    assert entry["guess_right"] != pytest.approx(expected["guess_right"], abs=1e-3)
    again = groups.for_release(release)  # the report of the written release says the same
    assert again.to_json() == {**entry}


@pytest.mark.parametrize("method", ["uniform", "finegrain"])
def test_groups_above_are_the_brute_force_bernstein_intervals(slice_csv, original, tmp_path, method):
    """The groups counted above the bound are those whose interval, recomputed by brute force with the dense
    inverse, lies above it; the example group's interval is its own; and every group counted above is above it
    on the original records (the claim)."""
    out = tmp_path / method
    assert _release(slice_csv, out, "--method", method, "--sensitive", "workclass", "--theta", "3") == 0
    release = read_release(out)
    d = groups.for_release(release)
    intervals = _bernstein_intervals(release, "workclass", d.n_groups)
    best = intervals.groupby(QUASI)["low"].max()
    assert d.groups_above == int((best > d.bound + 1e-9).sum()) and d.groups_above > 0
    assert d.largest_supported == pytest.approx(best.max(), abs=2e-5)
    shown = d.worst[0]
    row = intervals.set_index([*QUASI, "workclass"]).loc[(*shown.labels, shown.value)]
    assert (shown.low, shown.high) == pytest.approx((row["low"], row["high"]), abs=2e-5)
    assert d.example_interval == (min(shown.low, shown.share), max(shown.high, shown.share))
    truth = original.groupby(QUASI)["workclass"].value_counts(normalize=True)
    for g in d.worst:
        if g.supported > d.bound:
            assert truth.loc[(*g.labels, g.value)] >= g.low - 1e-12  # the interval holds the true share


def _halves(release, rows):
    from ppdp_desktop.core.data.released import LoadedRelease

    return LoadedRelease(release.folder, release.metadata, release.table.iloc[rows].reset_index(drop=True))


@pytest.mark.parametrize("method", ["uniform", "rr"])
def test_guess_right_is_the_cross_fitted_count_recomputed_with_pandas(slice_csv, tmp_path, method):
    """guess_right: each half of the records (by position) gets the guesses `ppdp estimate` makes from the other
    half (`--where` per group, or `--table --project` for rr); its own records count how many hold the guess by
    the unbiased estimate (the dense inverse, a Kronecker product for rr); the margin is 1.96 times the sum over
    the halves of the root of the sum of the squared weights."""
    from functools import reduce

    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table

    out = tmp_path / method
    extra = ["--theta", "3"] if method == "uniform" else ["--l", "3"]
    assert _release(slice_csv, out, "--method", method, "--sensitive", "workclass", *extra) == 0
    release = read_release(out)
    entry = release.metadata["group_disclosure"]
    position = np.arange(len(release.table))
    total = spread = 0.0
    for half in (0, 1):
        other = _halves(release, np.flatnonzero(position % 2 != half))
        mine = release.table[position % 2 == half]
        if method == "uniform":
            guesses = _pandas_summary(_where_cells(other, "workclass"), "workclass", 0.2)["guesses"]
            matrix, values, codes = _dense(release, "workclass")
            weights = np.linalg.inv(matrix).T  # [released, value]
            guessed = pd.Index(values).get_indexer(mine.join(guesses.rename("g"), on=QUASI)["g"])
            u = np.where(guessed >= 0, weights[codes[position % 2 == half], np.maximum(guessed, 0)], 0.0)
        else:
            cells = estimate_release_table(other, [*QUASI, "workclass"], project=True)
            guesses = _pandas_summary(cells, "workclass", 1 / 3)["guesses"]
            published = {e["attribute"]: e for e in release.metadata["randomized"]}
            columns = [*QUASI, "workclass"]
            labels = [[str(v) for v in published[c]["values"]] for c in columns]
            inverse = reduce(np.kron, [np.linalg.inv(np.asarray(published[c]["matrix"])) for c in columns])
            index = pd.MultiIndex.from_product(labels)
            chosen = np.zeros(len(index))
            chosen[index.get_indexer([(*g, v) for g, v in guesses.items()])] = 1.0
            observed = mine.groupby(columns).size().reindex(index, fill_value=0).to_numpy(float)
            weight = inverse.T @ chosen  # each released cell's weight in the guessed cells' estimated count
            u = np.repeat(weight, observed.astype(int))
        total += u.sum()
        spread += np.sqrt((u * u).sum())
    assert entry["guess_right"] == pytest.approx(min(max(total / N, 0), 1), abs=1e-6)
    assert entry["guess_right_margin"] == pytest.approx(1.959963984540054 * spread / N, abs=1e-6)


def _attack_on_people(people: pd.DataFrame, guesses: pd.Series, sensitive: str) -> float:
    """The group attacker on ``people``: each is guessed to have their group's guess."""
    guess = people.join(guesses.rename("guess"), on=QUASI)["guess"]
    return float((guess == people[sensitive]).mean())


@pytest.mark.parametrize("method", ["uniform", "finegrain", "rr"])
def test_custodian_checks_are_the_attacks_on_the_original_records(slice_csv, original, method):
    """The custodian's report: the cross-fitted guess on the original records (each record in the half of its
    place in the release, guessed as that half is) and the whole release's guess on the records in the data, both
    recomputed with pandas; the public figure is within its margin of the first."""
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.methods.rr.settings import RRSettings
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

    options = ({"options": RRSettings(l=3)} if method == "rr" else {"sensitivity": SensitivitySettings(theta=3)})
    result = anonymize(load_table(slice_csv), AnonymizationSettings("workclass", method, quasi=QUASI, seed=5, **options))
    d = groups.for_anonymization(result)
    key = lambda table: table.set_index(QUASI)[table.columns[-1]]  # noqa: E731 - labels -> guess
    assert d.measured_own == pytest.approx(_attack_on_people(original, key(d.guesses), "workclass"), abs=1e-12)
    half = np.empty(N, dtype=int)
    half[result.order] = np.arange(N) % 2  # the release's record j is the original record order[j]
    right = sum(_attack_on_people(original[half == h], key(d.fold_guesses[h]), "workclass") * (half == h).sum()
                for h in (0, 1))
    assert d.measured_right == pytest.approx(right / N, abs=1e-12)
    assert abs(d.guess_right - d.measured_right) <= d.guess_margin


def test_a_released_value_as_it_is_predicts_the_attack_on_the_original_exactly(slice_csv, original, tmp_path):
    """dp-microagg leaves an unprotected sensitive column as it is: the section counts it, exactly."""
    out = tmp_path / "dp"
    assert _release(slice_csv, out, "--method", "dp-microagg", "--attributes", "age", "--epsilon", "1", "--k", "25",
                    "--sensitive", "occupation") == 0
    release = read_release(out)
    entry = release.metadata["group_disclosure"]
    assert entry["estimated"] is False and entry["folds"] == 0 and entry["guess_right_margin"] == 0
    truth = _pandas_summary(original.groupby([*QUASI, "occupation"]).size().rename("estimate").reset_index(),
                            "occupation", 0.2)
    _check_figures(entry, truth, 1e-6)  # release.json rounds to 6 digits
    assert entry["largest_supported"] == entry["largest_share"]
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
    assert low <= first.share <= high and f"likely between {percent(low)} and {percent(high)}" in text
    said = " ".join(groups.lines(d))
    assert (f"would be right for about {percent(d.guess_right)} of the people whose own record the guess does not "
            "use, such as people not in the data") in said and "give or take" in said
    assert "their own released value, can make it right more often" in said
    head = groups.headline(d)
    assert f"in {d.groups_above:,} groups holding" in head and "with 95 % confidence for every group at once" in head
    assert f"Its estimates put {d.groups_noisy:,} more groups above it" in head or not d.groups_noisy
    assert f"the whole release's guess is right for {percent(d.measured_own)} of the people in the data" in said
    assert f"is right for {percent(d.measured_right)} of them" in said
    assert not any("Checked on the original records" in line for line in groups.lines(d.public()))


def test_demo_window_run_states_no_group_the_release_does_not_show(tmp_path):
    """The window's demo run (fine-grain on diagnosis, age/sex/postcode, k = 3, 95 % of values replaced): the
    section used to say the guess was right for about 43 % of the records and 1,009 groups (96 %) were above the
    threshold, where the guess is right for 12 % on the original records. Now: no group is shown above, the
    estimates' count is stated as noise, and the guess is within its margin of the attack it describes."""
    from dataclasses import replace

    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.demo import demo_settings
    from ppdp_desktop.core.settings import ProtectionSettings

    dataset = load_table(resource_path(DEMO_DATA))
    settings = replace(demo_settings(dataset, "finegrain", seed=1),
                       protection=ProtectionSettings(k=3, intervals={"age": [5, 10, 20]}))
    d = groups.for_anonymization(anonymize(dataset, settings))
    assert d.groups_above == 0 and d.groups_noisy > 900 and d.largest_share > 0.9
    assert "the release shows no diagnosis value holding more than the threshold = 20 % of a group" in groups.headline(d)
    assert "the release does not show that it holds more than 20 % of that group" in groups.example(d)
    assert abs(d.guess_right - d.measured_right) <= d.guess_margin
    assert d.guess_right + d.guess_margin < 0.2 < d.measured_own + 0.1  # not 43 %


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
    assert html.escape(groups.headline(d)) in page.groups.text.text()
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

    assert f"the {entry['groups']:,} groups" in line
    assert (f"in {entry['groups_above']:,} groups holding" in line if entry["groups_above"] else
            "the release shows no workclass value holding more than" in line)
    noisy = entry["groups_estimated_above"] - entry["groups_above"]
    more = "more " if entry["groups_above"] else ""
    assert f"{noisy:,} {more}groups above it (up to {percent(entry['largest_share'])})" in line or not noisy


@pytest.mark.parametrize("method", ["uniform", "rr"])
@pytest.mark.parametrize("figure", ["largest_share", "groups_above", "records_above", "guess_right",
                                    "groups_estimated_above", "guess_right_margin", "largest_supported"])
def test_verify_refuses_a_doctored_group_figure(written, tmp_path, capsys, method, figure):
    stated = {}

    def doctor(entry, meta):
        stated["said"] = entry[figure]
        entry[figure] = {"largest_share": entry[figure] / 2, "groups_above": entry[figure] - 3,
                         "records_above": round(entry[figure] * 0.6, 1) - 1.0, "guess_right": entry[figure] - 0.05,
                         "groups_estimated_above": entry[figure] - 2, "guess_right_margin": entry[figure] / 3,
                         "largest_supported": entry[figure] + 0.1}[figure]
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
                        "records_above", "guess_right", "largest_supported", "groups_estimated_above",
                        "guess_right_margin", "folds"):
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


# --- labels that stand for several values (personalized recoding) ----------------------------------------------

def _personalized(slice_csv, folder, monkeypatch, *extra):
    from tests.claims_helpers import PASSPHRASE

    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    out, key = folder / "release", folder / "release.ppdpkey"
    assert _release(slice_csv, out, "--method", "personalized", "--sensitive", "workclass", "--key", str(key),
                    *extra) == 0
    return out, key


def _aliases(out, key) -> tuple[set[str], dict[str, str]]:
    """From the sealed key: the labels standing for several values (an alias1 shared by several values) and what
    each code names."""
    from ppdp_desktop.core.data.checksums import manifest_sha256
    from ppdp_desktop.core.release import keyfile
    from tests.claims_helpers import PASSPHRASE

    aliases = keyfile.open_key(key, PASSPHRASE, manifest_sha256(out))["aliases"]["workclass"]
    several = {label for label, leaves in aliases["alias1"].items() if len(leaves) > 1}
    return several, dict(aliases["alias2"])


def test_a_label_for_several_values_counts_toward_none(slice_csv, tmp_path, monkeypatch):
    """Workclass recoded without a taxonomy: every record shows '*', which names no value, so no group holds a
    value and the guess is never right (it said 100 % before)."""
    out, key = _personalized(slice_csv, tmp_path, monkeypatch)
    release = read_release(out)
    assert set(release.table["workclass"]) == {"*"} and _aliases(out, key)[0] == {"*"}
    entry = release.metadata["group_disclosure"]
    assert entry["several_values"] == ["*"] and entry["several_records"] == N
    assert (entry["largest_share"], entry["groups_above"], entry["guess_right"]) == (0.0, 0, 0.0)
    readme = (out / "README.txt").read_text(encoding="utf-8")
    assert "stands for several values (*)" in " ".join(readme.split())
    d = groups.for_release(release, pd.read_csv(slice_csv, sep=";", dtype=str, keep_default_na=False))
    assert "every released workclass label stands for several values ('*')" in groups.headline(d)
    assert groups.example(d) == "" and groups.table(d) == [] and d.measured_own == 0.0


def test_values_and_codes_count_generalizations_do_not(slice_csv, original, tmp_path, monkeypatch):
    """Private published as it is, Self-emp-not-inc as an opaque code, every other value as '*': pandas from
    release.csv, with the key saying which labels stand for several values, gives release.json's figures; the
    custodian's attack on the original records decodes the code."""
    choices = tmp_path / "choices.csv"
    choices.write_text("value,choice\nPrivate,1\nSelf-emp-not-inc,3\n", encoding="utf-8")
    out, key = _personalized(slice_csv, tmp_path, monkeypatch, "--value-choices", str(choices))
    release = read_release(out)
    several, codes = _aliases(out, key)
    table = release.table[[*QUASI, "workclass"]]
    shown = set(table["workclass"])
    assert "Private" in shown and "*" in shown and shown & set(codes)  # a value, a code and a generalization
    named = table[~table["workclass"].isin(several)]
    size = table.groupby(QUASI).size()
    counts = named.groupby([*QUASI, "workclass"]).size().rename("n").reset_index()
    top = counts.sort_values([*QUASI, "workclass"]).sort_values("n", ascending=False, kind="stable").groupby(QUASI).head(1)
    top = top.set_index(QUASI).join(size.rename("size"))
    share = top["n"] / top["size"]
    entry = release.metadata["group_disclosure"]
    assert entry["estimated"] is False and entry["several_values"] == sorted(several & shown)
    assert entry["several_records"] == table["workclass"].isin(several).sum()
    assert entry["largest_share"] == pytest.approx(share.max(), abs=1e-6)
    assert entry["groups_above"] == int((share > 0.2 + TOLERANCE).sum())
    assert entry["records_above"] == pytest.approx(top.loc[share > 0.2 + TOLERANCE, "size"].sum())
    assert entry["guess_right"] == pytest.approx(top["n"].sum() / N, abs=1e-6)
    # the custodian's check: the guessed label decoded (a code names its value) against the original records
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
    from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings

    result = anonymize(load_table(slice_csv), AnonymizationSettings(
        "workclass", "personalized", quasi=QUASI, seed=5, options=RecodingSettings(),
        choices=ChoiceSettings(value_choices={"Private": 1, "Self-emp-not-inc": 3})))
    d = groups.for_anonymization(result)
    guesses = top["workclass"].map(lambda label: codes.get(label, label))
    assert d.measured_own == pytest.approx(_attack_on_people(original, guesses, "workclass"), abs=1e-12)
    assert d.guess_right == pytest.approx(entry["guess_right"], abs=1e-6)
