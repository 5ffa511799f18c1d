"""The repeated-release sentences of a method that randomizes nothing (issue 33): a generalization-only release
speaks of the intersection of a patient's groups across releases, never of draws or of an epsilon "the method gives
none for some draws"; the ledger flags the combined groups smaller than the size the criteria promise when no k was
asked. A randomizing method keeps its sentences about draws. The combined groups are counted here with pandas."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import ADULT_DIR, shared_adult

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.repeat.ledger import Ledger
from ppdp_desktop.core.report import repeated
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, RepeatSettings, SensitivitySettings

QUASI = ["age", "sex", "race", "marital-status", "education"]
HIERARCHIES = ("race", "marital-status", "education")
DRAWS = ("random draws", "drawn anew", "drawn as before", "the method gives none", "fresh", "Persistent randomness")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, nrows=4000)
    frame.insert(0, "patient_id", [f"P{i:05d}" for i in range(len(frame))])
    return frame


def _settings(method: str, **protection) -> AnonymizationSettings:
    given = ProtectionSettings(suppression=0.05, intervals={"age": (5, 10, 20)},
                               hierarchies={c: str(ADULT_DIR / f"adult_hierarchy_{c}.csv") for c in HIERARCHIES},
                               **protection)
    settings = AnonymizationSettings("occupation", method, ["patient_id"], list(QUASI),
                                     SensitivitySettings(rho1=0.1, rho2=0.5), protection=given)
    settings.repeat = RepeatSettings(project_id="words", keys=PersistentKeys(bytes(32)))
    return settings


def _release(frame: pd.DataFrame, settings: AnonymizationSettings, folder: Path):
    result = anonymize(Dataset(frame), settings)
    entry = result.repeat.ledger_entry(result.plan.method, {})
    with Ledger() as ledger:
        ledger.mark_published(ledger.begin(entry, folder, "0" * 64))
    return result


def _groups(result) -> pd.Series:
    labels = result.table[QUASI].astype(str).agg("|".join, axis=1).to_numpy()
    return pd.Series(labels, index=result.pseudonym_map["patient_id"].to_numpy())


def test_two_generalized_releases_speak_of_the_intersection_of_groups_not_of_draws(adult, tmp_path):
    settings = _settings("generalization", l_diversity=3)  # no k: the criteria promise groups of 3
    first = _release(adult.iloc[:3000], settings, tmp_path / "r1")
    alone = " ".join(first.repeat.sentences())
    assert "Nothing in it is randomized, so it has no epsilon" in alone and "intersection" in alone
    second = anonymize(Dataset(adult.iloc[1000:4000].sample(frac=1.0, random_state=3)), settings)
    said = " ".join(second.repeat.sentences())
    for word in DRAWS:
        assert word not in said, word
    assert "Nothing in this release is randomized: each patient is released generalized, not drawn." in said
    assert "no epsilon bounds what they reveal together (a generalized release has none" in said
    # the intersection of each patient's two groups, counted independently against the 3 records the criteria promise
    both = pd.concat({"a": _groups(first), "b": _groups(second)}, axis=1, join="inner")
    sizes = both.groupby(["a", "b"])["a"].transform("size")
    i = second.repeat.intersection
    assert i is not None and i.by_criteria and i.k == 3
    assert (i.common, i.shrunk, i.smallest) == (len(both), int((sizes < 3).sum()), int(sizes.min()))
    assert "k = 3" not in said
    assert i.shrunk  # the new records changed some groups
    assert "in a group smaller than the 3 records the criteria promise (the smallest holds" in " ".join(i.sentences())
    rows = dict(repeated.figure_rows(second.repeat))
    assert rows["Randomized"] == "no (generalization only)"
    assert rows["Epsilon of this release (largest)"] == "none (nothing randomized)"
    assert not any(word in f for f in rows for word in DRAWS)
    assert "intersection of their groups" in repeated.meaning(second.repeat)


def test_a_randomizing_method_still_speaks_of_its_draws(adult, tmp_path):
    settings = _settings("uniform", k=5)
    settings.repeat = RepeatSettings(project_id="words-rr")  # no custodian secret: every draw fresh
    _release(adult.iloc[:2000], settings, tmp_path / "r1")
    second = anonymize(Dataset(adult.iloc[:2000]), settings)
    said = " ".join(second.repeat.sentences())
    assert "This release's random draws are fresh, not persistent" in said
    assert second.repeat.cumulative.randomized
    assert dict(repeated.figure_rows(second.repeat))["Persistent randomness"] == "no (fresh draws)"
    assert repeated.meaning(second.repeat) == repeated.MEANING


def test_a_budget_refuses_a_release_without_epsilon_saying_why(adult):
    """A project with an epsilon budget cannot hold a release that randomizes nothing (it has no epsilon): the
    refusal says so, and does not suggest raising the budget (no budget would do)."""
    from ppdp_desktop.core.errors import PrivacyError

    settings = _settings("generalization", k=5)
    settings.repeat.budget = 3.0
    with pytest.raises(PrivacyError) as refused:
        anonymize(Dataset(adult.iloc[:3000]), settings)
    said = str(refused.value)
    assert "nothing in it is randomized, so it has no epsilon and no budget can hold it" in said
    assert "--over-budget-reason TEXT" in said and "Raise the budget" not in said
    settings.repeat.override_reason = "a generalized release, reviewed by the board"
    assert anonymize(Dataset(adult.iloc[:3000]), settings).table is not None
