"""Risk in the population in a release (issue 33): ``ppdp anonymize --sampling-fraction F --population FILE`` puts
population uniqueness and journalist risk, measured on the RELEASED quasi-identifiers (suppressed records left out),
into release.json, the report and the CLI summary; every sentence is checked against an independent recount of
release.csv and of the population table (a pandas groupby, the age bands made by hand).

The attacker: someone who knows a person's quasi-identifiers and that the person belongs to the population the
data was drawn from, but not whether the person is in the file (the journalist).
"""
from __future__ import annotations

import pytest

from ppdp_desktop.core.generalization import Hierarchy
from ppdp_desktop.core.privacy.journalist import PopulationTable
from ppdp_desktop.core.privacy.population import generalize_population
from ppdp_desktop.core.privacy.uniqueness import PITMAN, SNB, ZAYATZ, estimate_uniqueness
from ppdp_desktop.core.privacy.verdict import _pct
from ppdp_desktop.core.settings import ProtectionSettings
from tests.claims_helpers import adult_frame, adult_slice, anonymize_faces, flat, run_cli
from tests.conftest import ADULT_DIR

N = 2000
FRACTION = 0.066
COMMON = ["--method", "uniform", "--sensitive", "occupation", "--theta", "3", "--seed", "2"]


def _band(age: str) -> str:
    low = int(age) // 5 * 5
    return f"{low}-{low + 4}"


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    folder = tmp_path_factory.mktemp("population-release")
    census = adult_frame().groupby(["age", "sex", "race"], sort=True).size().reset_index(name="count")
    census.to_csv(folder / "census.csv", sep=";", index=False)
    return folder, adult_slice(folder, N), census


@pytest.fixture(scope="module")
def generalized(adult):
    folder, data, census = adult
    args = [*COMMON, "--quasi", "age,sex,race", "--k-anonymity", "5", "--intervals", "age=5,10,20", "--threshold",
            "0.01", "--sampling-fraction", str(FRACTION), "--population", folder / "census.csv"]
    return anonymize_faces(data, folder / "k5", args), census


def test_journalist_risk_is_measured_on_the_released_bands(generalized):
    """The journalist figures equal a recount: release.csv without its suppressed rows, each record's F the census
    count of its released (age band, sex, race), the census's ages the sample lacks left out (the hierarchy built
    from the data does not know them, so they can only make F smaller)."""
    faces, census = generalized
    table = faces.table
    suppressed = (table[["age", "sex", "race"]] == "*").all(axis=1)
    kept = table[~suppressed]
    assert 0 < suppressed.sum() < N
    sample = adult_frame().head(N)
    known = census["age"].isin(set(sample["age"])) & census["sex"].isin(set(sample["sex"])) & census["race"].isin(
        set(sample["race"]))
    counted = census[known].assign(age=lambda f: f["age"].map(_band)).groupby(["age", "sex", "race"])["count"].sum()
    big = kept.join(counted.rename("F"), on=["age", "sex", "race"])["F"].to_numpy()
    risk = 1.0 / big
    entry = faces.meta["reidentification"]["population"]
    j = entry["journalist"]
    assert entry["n_records"] == N and entry["n_released"] == len(kept) and entry["suppressed_left_out"] == suppressed.sum()
    assert j["n_records"] == len(kept) and j["population_size"] == census["count"].sum()
    assert j["highest_risk"] == pytest.approx(risk.max()) and j["average_risk"] == pytest.approx(risk.mean())
    assert j["records_above_threshold"] == int((risk > 0.01).sum()) > 0
    assert j["population_uniques"] == int((big == 1).sum())
    assert j["generalized_to_release"] is True and j["rows_left_out"] == int((~known).sum()) > 0
    # every sentence, in the report inside the release and in the CLI summary
    report, cli = flat(" ".join(faces.report)), flat(" ".join(faces.cli))
    above = int((risk > 0.01).sum())
    expected = [
        "Risk in the population",
        "Attacker: someone who knows a person's age, sex, race and that the person belongs to the population the data "
        "was drawn from, but not whether the person is in this file. Measured on the "
        f"{len(kept):,} records whose quasi-identifiers are released, the {suppressed.sum():,} suppressed left out.",
        f"Against the population table census.csv ({census['count'].sum():,} people): the highest risk is "
        f"{_pct(risk.max())} (the fewest people sharing a record's quasi-identifiers: {int(big.min()):,}); on average "
        f"{_pct(risk.mean())}.",
        f"{int((big == 1).sum()):,} records are the only person in the population with their quasi-identifiers; "
        f"{above:,} record{'s are' if above != 1 else ' is'} above the threshold of 1 %.",
        "The population table was counted at the original level; its counts were added up to the released levels of "
        "the quasi-identifiers before comparing.",
        f"{int((~known).sum()):,} rows of the population table hold a value the release's hierarchies do not know and "
        "were left out: that can only make the stated risk higher than it is.",
    ]
    readme = flat(faces.readme)
    for sentence in expected:
        assert sentence in report and sentence in cli and sentence in readme, sentence
    # with k = 5 no released record is alone: population uniqueness is 0 and says why
    u = entry["population_uniqueness"]
    assert u["model"] == "none" and u["population_uniques"] == 0 and u["population_size"] == pytest.approx(N / FRACTION)
    assert (f"Population uniqueness in a population of about {round(N / FRACTION):,} people, of which the file is 6.6 %: "
            "no released record is alone with its quasi-identifiers, so nobody in the population is the only one with "
            "a released combination either.") in report


def test_population_uniqueness_of_a_release_without_k(adult):
    """Without generalization the released quasi-identifiers are the data's: the estimates equal the models' on a
    groupby of release.csv, and the sentences give each model's estimate and the rule's choice."""
    folder, data, _ = adult
    faces = anonymize_faces(data, folder / "plain", [*COMMON, "--quasi", "age,sex,race,education",
                                                      "--sampling-fraction", str(FRACTION)])
    sizes = faces.table.groupby(["age", "sex", "race", "education"]).size().value_counts().to_dict()
    expected = estimate_uniqueness(sizes, FRACTION)
    entry = faces.meta["reidentification"]["population"]
    u = entry["population_uniqueness"]
    assert entry["journalist"] is None and entry["suppressed_left_out"] == 0
    assert u["model"] == expected.model == PITMAN and u["sample_uniques"] == sizes[1]
    assert u["population_uniques"] == pytest.approx(expected.uniques, rel=1e-9) and expected.uniques > 0
    report = flat(" ".join(faces.report))
    each = "; ".join(f"{m} {'no estimate' if expected.estimates[m] is None else f'{round(expected.estimates[m]):,}'}"
                     for m in (PITMAN, ZAYATZ, SNB))
    for sentence in (
        f"Population uniqueness in a population of about {round(N / FRACTION):,} people, of which the file is 6.6 %: "
        f"about {round(expected.uniques):,} people ({_pct(expected.share)}) are estimated to be the only one in the "
        f"population with their released quasi-identifiers, about {round(expected.in_data):,} of them in the release: "
        "whoever knows such a person's quasi-identifiers and finds a matching record knows it is theirs.",
        f"Estimates by model: {each}. Dankar et al.'s rule, as ARX applies it, takes Pitman's, as the released "
        "records are at most 10 % of the population.",
    ):
        assert sentence in report, sentence


def test_a_population_table_that_does_not_fit_is_refused_in_one_line(adult, tmp_path):
    """A count smaller than the release's own class: one line naming the file, the line and the value; nothing
    written. A table that is not there: refused before the data is read."""
    folder, data, census = adult
    small = census.copy()
    small.loc[0, "count"] = 0
    small.to_csv(tmp_path / "bad.csv", sep=";", index=False)
    code, _, err = run_cli(["anonymize", data, "--out", tmp_path / "out", *COMMON, "--quasi", "age,sex,race",
                            "--population", tmp_path / "bad.csv"])
    assert code != 0 and "Traceback" not in err and not (tmp_path / "out").exists()
    assert "bad.csv, line 2: the count '0' is not a whole number of at least 1." in err
    code, _, err = run_cli(["anonymize", data, "--out", tmp_path / "out", *COMMON, "--quasi", "age,sex,race",
                            "--population", tmp_path / "none.csv"])
    assert code != 0 and "none.csv: cannot read the population table (no such file)" in err


def test_generalize_population_adds_counts_and_takes_either_level():
    """A table at the original level and the same at the released level give the same counts; a value the
    hierarchy does not know is left out and counted."""
    from ppdp_desktop.core.generalization.result import Generalization

    age = Hierarchy.from_intervals("age", ["31", "34", "47"], [10])
    sex = Hierarchy.from_rows("sex", [["f"], ["m"]])
    g = Generalization({"age": 1, "sex": 0}, {"age": 2, "sex": 1}, 2, 0.0, 3, 0, 0.5, 1, {"age": age, "sex": sex})
    raw = PopulationTable("p.csv", ("age", "sex"), {("31", "f"): 4, ("34", "f"): 6, ("47", "m"): 3, ("99", "m"): 8},
                          {("31", "f"): 2, ("34", "f"): 3, ("47", "m"): 4, ("99", "m"): 5}, 21)
    table, changed, left = generalize_population(raw, g)
    assert table.counts == {("30-39", "f"): 10, ("40-49", "m"): 3} and changed and left == 1
    assert table.lines[("30-39", "f")] == 2 and table.total == 21
    banded = PopulationTable("p.csv", ("age", "sex"), {("30-39", "f"): 10, ("40-49", "m"): 3},
                             {("30-39", "f"): 2, ("40-49", "m"): 3}, 13)
    again, changed, left = generalize_population(banded, g)
    assert again.counts == table.counts and not changed and left == 0


def test_the_project_keeps_the_population_settings(adult):
    """Declared once: the project file keeps them, ``ppdp anonymize`` has the options, a bad fraction is refused."""
    folder, _, _ = adult
    settings = ProtectionSettings(sampling_fraction=0.02, population=str(folder / "census.csv"))
    again = ProtectionSettings.from_json(settings.to_json())
    assert again.sampling_fraction == 0.02 and again.population == str(folder / "census.csv")
    with pytest.raises(Exception, match="sampling-fraction"):
        ProtectionSettings(sampling_fraction=1.5).check()
    code, out, _ = run_cli(["anonymize", "--help"])
    assert code == 0 and "--sampling-fraction F" in out and "--population FILE" in out
    assert ADULT_DIR.is_dir()


def test_verify_estimates_the_stated_population_uniqueness_again(adult, tmp_path):
    """ppdp verify re-estimates the population uniqueness from the released records and the stated fraction, says it
    cannot re-measure the journalist risk (the population table is not in the release), and refuses a release.json
    whose stated estimate was changed."""
    import hashlib
    import json
    import shutil

    folder, data, _ = adult
    source = folder / "plain"
    if not source.is_dir():
        anonymize_faces(data, source, [*COMMON, "--quasi", "age,sex,race,education", "--sampling-fraction", str(FRACTION)])
    code, out, err = run_cli(["verify", source])
    assert code == 0, err
    assert "population uniqueness: estimated again from the released records" in out + err
    altered = tmp_path / "altered"
    shutil.copytree(source, altered)
    meta = json.loads((altered / "release.json").read_text(encoding="utf-8"))
    meta["reidentification"]["population"]["population_uniqueness"]["population_uniques"] *= 0.5
    (altered / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    names = sorted(p.name for p in altered.iterdir() if p.name not in ("SHA256SUMS", "SIGNATURE"))
    (altered / "SHA256SUMS").write_text("".join(
        f"{hashlib.sha256((altered / n).read_bytes()).hexdigest()}  {n}\n" for n in names), encoding="utf-8")
    code, out, err = run_cli(["verify", altered])
    assert code != 0 and "population uniques" in err and "the release was altered" in err, err


def test_verify_says_it_cannot_remeasure_the_journalist_risk(generalized):
    """The custodian's population table is not part of the release: verify says the journalist figures are not
    measured again, on a line of its own without the "OK" it could not earn, and still re-estimates the population
    uniqueness."""
    faces, _ = generalized
    code, out, err = run_cli(["verify", faces.folder])
    assert code == 0, err
    assert ("\nNOT CHECKED journalist risk: stated against the custodian's population table, which is not part of the "
            "release, so it is not measured again") in out  # said, never after "OK"
    assert "OK NOT CHECKED" not in out and "OK journalist" not in out
    assert "population uniqueness: estimated again from the released records" in out + err
