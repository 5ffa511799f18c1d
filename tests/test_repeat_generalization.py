"""Generalized releases repeat safely (issue 30): a project's next release keeps the lattice node of its last
generalized release while that node is still k-anonymous on the new records; otherwise it searches afresh and says
so. Before anything is published, the job computes what combining the two releases reveals: records whose combined
group (the records sharing their group in both releases) holds fewer than k. Such a release is refused unless a
reason is given, as past the budget; the ledger keeps the reason.

The attacker: someone who holds both releases and links their records (here by the patient number, the best linking
can do); the figures are checked by an independent pandas groupby over the two released tables. Real data: the
shared adult set with its ARX hierarchies.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import ADULT_DIR, shared_adult

from ppdp_desktop.cli import main as cli_main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.generalization import node_generalization, optimal_generalization
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.protection import hierarchies_for
from ppdp_desktop.core.repeat.ledger import Ledger
from ppdp_desktop.core.repeat.outcome import NODE_QUASI
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, RepeatSettings, SensitivitySettings

QUASI = ["age", "sex", "race", "marital-status", "education"]
HIERARCHIES = ("race", "marital-status", "education")
K = 5


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, nrows=5000)
    frame.insert(0, "patient_id", [f"P{i:05d}" for i in range(len(frame))])
    return frame


def _protection(quasi: list[str]) -> ProtectionSettings:
    return ProtectionSettings(k=K, suppression=0.05, intervals={"age": (5, 10, 20)},
                              hierarchies={c: str(ADULT_DIR / f"adult_hierarchy_{c}.csv") for c in HIERARCHIES if c in quasi})


def _settings(quasi: list[str] = QUASI, project: str = "monthly", reason: str | None = None) -> AnonymizationSettings:
    settings = AnonymizationSettings("occupation", "uniform", ["patient_id"], list(quasi),
                                     SensitivitySettings(rho1=0.1, rho2=0.5), protection=_protection(quasi))
    settings.repeat = RepeatSettings(project_id=project, keys=PersistentKeys(bytes(32)), override_reason=reason)
    return settings


def _release(frame: pd.DataFrame, settings: AnonymizationSettings, folder: Path):
    """One release, recorded in the ledger as the pipeline records it (pending, then published)."""
    result = anonymize(Dataset(frame), settings)
    entry = result.repeat.ledger_entry(result.plan.method, {})
    with Ledger() as ledger:
        ledger.mark_published(ledger.begin(entry, folder, "0" * 64))
    return result


def _levels(result, quasi: list[str] = QUASI) -> list[int]:
    return [result.reidentification.generalization.levels[q] for q in quasi]


def _groups(result, quasi: list[str]) -> pd.Series:
    """Each patient's released group (their generalized quasi-identifiers as one text), by patient number."""
    table = result.table
    labels = table[quasi].astype(str).agg("|".join, axis=1).to_numpy()
    return pd.Series(labels, index=result.pseudonym_map["patient_id"].to_numpy())


def _shrunk(first, second, quasi: list[str]) -> tuple[int, int]:
    """Independently: the records in both releases whose combined group holds fewer than k of them, and the smallest."""
    both = pd.concat({"a": _groups(first, quasi), "b": _groups(second, quasi)}, axis=1, join="inner")
    sizes = both.groupby(["a", "b"])["a"].transform("size")
    return int((sizes < K).sum()), int(sizes.min())


def test_the_next_release_keeps_the_node_and_the_intersection_is_the_tables(adult, tmp_path):
    """1,000 patients added: the search alone would choose another node; the project's node is kept. Combined, the
    records suppressed in the first release and shown now hide among fewer than k: flagged in a warning and in the
    release's statement before anything is written; every figure is the groupby's."""
    first = _release(adult.iloc[:2000], _settings(), tmp_path / "r1")
    more = adult.iloc[:3000].sample(frac=1.0, random_state=2)
    alone = anonymize(Dataset(more), _settings(project=""))  # no project: the optimal node for these records
    assert _levels(alone) != _levels(first)
    second = _release(more, _settings(), tmp_path / "r2")
    [warning] = second.repeat.warnings
    assert "Release 2 of project 'monthly', combined with release 1, puts" in warning
    assert _levels(second) == _levels(first)
    report = second.repeat.intersection
    shrunk, smallest = _shrunk(first, second, QUASI)
    assert report.same_node and report.common == 2000 and shrunk > 0
    assert (report.shrunk, report.smallest) == (shrunk, smallest)
    assert f"puts {shrunk:,} records in a group smaller than k = {K} (the smallest holds {smallest})" in warning
    statement = " ".join(second.repeat.to_json()["statement"])
    assert "uses the same generalization as the project's previous generalized release" in statement
    assert f"{shrunk:,} records would be in a group smaller than k = {K}" in statement
    assert "generalized to the same levels as in release 1 of this project" in statement
    with Ledger() as ledger:
        kept = ledger.releases("monthly")
    assert [r.node for r in kept] == [_levels(first), _levels(first)]
    assert kept[-1].parameters[NODE_QUASI] == QUASI
    assert kept[-1].override_reason is None


def test_the_same_records_again_combine_into_the_same_groups(adult, tmp_path):
    first = _release(adult.iloc[:2000], _settings(), tmp_path / "r1")
    second = anonymize(Dataset(adult.iloc[:2000].sample(frac=1.0, random_state=4)), _settings())
    assert _levels(second) == _levels(first)
    report = second.repeat.intersection
    assert (report.shrunk, report.common, report.same_node) == (0, 2000, True)
    assert report.smallest == _shrunk(first, second, QUASI)[1]


def test_a_node_no_longer_k_anonymous_is_searched_afresh_and_said(adult, tmp_path):
    first = _release(adult.iloc[:3000], _settings(), tmp_path / "r1")
    few = adult.iloc[:400]
    hierarchies = hierarchies_for(few, QUASI, Dataset(few).schema, _protection(QUASI), {})
    assert node_generalization(few[QUASI], hierarchies, K, 0.05, _levels(first)) is None  # the old node fails here
    second = anonymize(Dataset(few), _settings(reason="a smaller cohort this month"))
    assert _levels(second) != _levels(first)
    assert _levels(second) == [optimal_generalization(few[QUASI], hierarchies, K, 0.05).levels[q] for q in QUASI]
    notes = second.repeat.notes
    assert any(f"were not kept because they are no longer {K}-anonymous within the suppression limit" in n
               for n in notes)
    report = second.repeat.intersection
    assert not report.same_node and (report.shrunk, report.smallest) == _shrunk(first, second, QUASI)
    assert "a different generalization from the project's previous generalized release" in " ".join(
        second.repeat.sentences())


def test_other_quasi_identifiers_are_generalized_afresh(adult, tmp_path):
    _release(adult.iloc[:2000], _settings(), tmp_path / "r1")
    quasi = ["age", "sex", "race", "marital-status"]
    second = anonymize(Dataset(adult.iloc[:2000]), _settings(quasi, reason="fewer quasi-identifiers"))
    hierarchies = hierarchies_for(adult.iloc[:2000], quasi, Dataset(adult.iloc[:2000]).schema, _protection(quasi), {})
    optimal = optimal_generalization(adult.iloc[:2000][quasi], hierarchies, K, 0.05)
    assert _levels(second, quasi) == [optimal.levels[q] for q in quasi]
    assert any("The quasi-identifiers differ from those release 1 of this project generalized (age, sex, race, "
               "marital-status, education)" in n for n in second.repeat.notes)
    assert not second.repeat.intersection.same_node


def test_a_fixed_node_has_the_figures_the_search_gives_it(adult):
    frame = adult.iloc[:2000]
    hierarchies = hierarchies_for(frame, QUASI, Dataset(frame).schema, _protection(QUASI), {})
    best = optimal_generalization(frame[QUASI], hierarchies, K, 0.05)
    node = [best.levels[q] for q in QUASI]
    fixed = node_generalization(frame[QUASI], hierarchies, K, 0.05, node)
    assert fixed is not None and fixed.n_nodes_checked == 1
    assert (fixed.levels, fixed.suppressed, fixed.precision) == (best.levels, best.suppressed, best.precision)
    top = [h.height for h in hierarchies.values()]
    coarse = node_generalization(frame[QUASI], hierarchies, K, 0.05, top)
    assert coarse is not None and coarse.precision == 0.0 and coarse.suppressed == 0
    applied = coarse.apply(frame[QUASI])
    assert applied.groupby(QUASI, observed=True).size().min() >= K
    assert node_generalization(frame[QUASI], hierarchies, K, 0.05, [0] * len(QUASI)) is None  # nothing generalized
    assert node_generalization(frame[QUASI], hierarchies, K, 0.05, [top[0] + 1, *top[1:]]) is None  # beyond the top
    assert node_generalization(frame[QUASI], hierarchies, K, 0.05, top[:-1]) is None  # a level missing


def test_the_command_line_warns_in_one_line_and_says_it_in_the_release(adult, tmp_path, capsys):
    first, second = tmp_path / "adult.csv", tmp_path / "adult-next.csv"
    adult.iloc[:2000].to_csv(first, index=False)
    adult.iloc[:3000].sample(frac=1.0, random_state=2).to_csv(second, index=False)
    common = ["--method", "uniform", "--sensitive", "occupation", "--rho1", "0.1", "--rho2", "0.5", "--identifier",
              "patient_id", "--quasi", ",".join(QUASI), "--k-anonymity", str(K), "--suppression", "0.05",
              "--intervals", "age=5,10,20", "--project", "adult-kanon", "--seed", "3", "--no-report"]
    for column in HIERARCHIES:
        common += ["--hierarchy", f"{column}={ADULT_DIR / f'adult_hierarchy_{column}.csv'}"]
    assert cli_main(["anonymize", str(first), "--out", str(tmp_path / "r1"), *common]) == 0
    capsys.readouterr()
    assert cli_main(["anonymize", str(second), "--out", str(tmp_path / "r2"), *common]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if "combined with release 1" in line]
    assert len(warnings) == 1 and warnings[0].startswith("ppdp: warning:") and "group smaller than k = 5" in warnings[0]
    out = captured.out
    assert "would be in a group smaller than k = 5" in out and "the same levels as in release 1" in out
