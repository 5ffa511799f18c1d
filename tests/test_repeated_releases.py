"""Next month's release (issue 30): the same patients released again give nothing more away.

The attacker of these tests holds every release of a project and links a patient's records across them (here by
the patient number, which is what linking by the unchanged columns achieves at best). Under persistent randomness
an unchanged patient's released values are the same draws in every release, so k releases show one draw: the
posterior bound of one release (rho2) and rr's risk bound (1/l) hold for all of them together. A changed value gets
a fresh draw and its epsilon adds up in the ledger, exactly. Real data: the shared adult set.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from conftest import shared_adult

from ppdp_desktop.cli import main as cli_main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.repeat.ledger import Ledger
from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings, SensitivitySettings

N = 3000
SECRET = bytes(range(32))


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, nrows=N)
    frame.insert(0, "patient_id", [f"P{i:05d}" for i in range(len(frame))])
    return frame


@pytest.fixture(autouse=True)
def own_ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))


def _settings(method: str, project: str, keys: PersistentKeys | None, theta: bool = True,
              **repeat) -> AnonymizationSettings:
    options = {"rr": RRSettings(l=3.0, randomize="s")}.get(method)
    settings = AnonymizationSettings("occupation", method, ["patient_id"], ["sex", "race"] if method == "rr" else [],
                                     SensitivitySettings(theta=3.0) if method in ("uniform", "finegrain") and theta
                                     else SensitivitySettings(rho1=0.1, rho2=0.5) if method != "rr"
                                     else SensitivitySettings())
    if options is not None:
        settings.options = options
    settings.repeat = RepeatSettings(project_id=project, keys=keys, **repeat)
    return settings


def _release(frame: pd.DataFrame, settings: AnonymizationSettings, publish: bool = True):
    """One release, recorded in the ledger as the pipeline records it (pending, then published)."""
    result = anonymize(Dataset(frame), settings)
    if publish:
        from pathlib import Path

        entry = result.repeat.ledger_entry(result.plan.method, {})
        with Ledger() as ledger:
            pending = ledger.begin(entry, Path(os.environ["PPDP_DATA_DIR"]) / f"r{entry.project_id}", "0" * 64)
            ledger.mark_published(pending)
    return result


def _released_by_patient(result, frame: pd.DataFrame) -> pd.Series:
    """Each patient's released occupation (the applied column is in the original row order)."""
    return pd.Series(np.asarray(result.applied.columns["occupation"], dtype=object), index=frame["patient_id"].to_numpy())


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition", "rr"])
def test_an_unchanged_patient_gets_the_same_released_value_in_every_release(adult, method):
    keys = PersistentKeys(SECRET)
    first = _release(adult, _settings(method, f"p-{method}", keys))
    shuffled = adult.sample(frac=1.0, random_state=1).reset_index(drop=True)
    second = _release(shuffled, _settings(method, f"p-{method}", keys))
    a, b = _released_by_patient(first, adult), _released_by_patient(second, shuffled)
    same = (a == b.reindex(a.index)).mean()
    assert same == 1.0, f"{method}: {same:.3f} of the patients got the same released value"
    assert second.repeat.cumulative.ordinal == 2 and second.repeat.cumulative.unchanged == N
    assert second.repeat.cumulative.changed == 0 and second.repeat.cumulative.new == 0
    # without the secret the draws are fresh: most released values differ, and every matched record composes
    fresh = _release(shuffled, _settings(method, f"p-{method}", None))
    c = _released_by_patient(fresh, shuffled)
    assert (a == c.reindex(a.index)).mean() < 0.9
    assert fresh.repeat.cumulative.changed == N
    assert fresh.repeat.cumulative.epsilon_cumulative_max == pytest.approx(
        first.repeat.cumulative.epsilon_release * 2 if np.isfinite(first.repeat.cumulative.epsilon_release) else np.inf)


def test_ten_releases_teach_the_attacker_nothing_more_than_one(adult):
    """The repeated-release attack (k = 2 and 10) on fine-grain: the attacker multiplies the k observations'
    likelihoods (the best he can do when he believes them independent) or sees that they are one draw; either way
    no record's posterior exceeds its rho2, as for one release."""
    keys = PersistentKeys(SECRET)
    settings = _settings("finegrain", "ten", keys)
    releases = [_release(adult.sample(frac=1.0, random_state=s).reset_index(drop=True), settings) for s in range(10)]
    by_patient = [_released_by_patient(r, adult.sample(frac=1.0, random_state=s).reset_index(drop=True))
                  for s, r in enumerate(releases)]
    stacked = pd.concat(by_patient, axis=1)
    assert (stacked.nunique(axis=1) == 1).all()  # one draw, shown ten times
    plan = releases[0].plan
    matrix = np.asarray(plan.matrix.dense() if hasattr(plan.matrix, "dense") else plan.matrix)
    prior = plan.domain.counts / plan.domain.counts.sum()
    rho2 = np.asarray(plan.requirement.rho2, dtype=float)
    observed = plan.domain.encode(stacked.iloc[:, 0])
    posterior = prior[None, :] * matrix[observed, :]  # one observation: what ten identical ones are
    posterior /= posterior.sum(axis=1, keepdims=True)
    assert (posterior <= rho2[None, :] + 1e-9).all()
    assert releases[-1].repeat.cumulative.epsilon_cumulative_max == pytest.approx(releases[0].repeat.cumulative.epsilon_release)


def test_changed_values_compose_exactly(adult):
    keys = PersistentKeys(SECRET)
    first = _release(adult, _settings("uniform", "changes", keys, theta=False))  # one pair: p does not move with counts
    changed = adult.copy()
    rows = np.arange(0, N, 30)  # 100 patients whose occupation changed
    values = sorted(adult["occupation"].dropna().unique())
    changed.loc[rows, "occupation"] = [values[(values.index(v) + 1) % len(values)] for v in changed.loc[rows, "occupation"]]
    second = _release(changed, _settings("uniform", "changes", keys, theta=False))
    eps = first.repeat.cumulative.epsilon_release
    assert second.repeat.cumulative.changed == len(rows) and second.repeat.cumulative.unchanged == N - len(rows)
    assert second.repeat.cumulative.epsilon_cumulative_max == pytest.approx(2 * eps)
    assert second.repeat.cumulative.epsilon_changed_max == pytest.approx(2 * eps)


def test_a_release_past_the_budget_is_refused_before_anything_is_written(adult):
    keys = PersistentKeys(SECRET)
    eps = _release(adult, _settings("uniform", "budget", None)).repeat.cumulative.epsilon_release
    _release(adult, _settings("uniform", "budget", None, budget=2.5 * eps))  # 2 eps: within
    with pytest.raises(PrivacyError, match="budget"):
        _release(adult, _settings("uniform", "budget", None, budget=2.5 * eps))  # 3 eps: past it
    reasoned = _release(adult, _settings("uniform", "budget", None, budget=2.5 * eps,
                                         override_reason="audit of 2026-12 asked for it"))
    assert reasoned.repeat.override_reason == "audit of 2026-12 asked for it"
    assert keys is not None


def test_dp_microaggregation_composes_every_release(adult):
    from ppdp_desktop.core.methods.dp.settings import DPSettings

    frame = adult.assign(age=pd.to_numeric(adult["age"]))
    settings = AnonymizationSettings("", "dp-microagg", ["patient_id"], [])
    settings.options = DPSettings(attributes=["age"], epsilon=1.0, k=50, domains={"age": (17.0, 90.0)})
    settings.repeat = RepeatSettings(project_id="dp", keys=PersistentKeys(SECRET))
    for k in (1, 2, 3):
        result = _release(frame, settings)
        assert result.repeat.cumulative.epsilon_cumulative_max == pytest.approx(float(k))


def test_the_command_line_releases_again_and_says_so(adult, tmp_path, capsys):
    data = tmp_path / "adult.csv"
    adult.to_csv(data, index=False)
    more = pd.concat([adult.sample(frac=1.0, random_state=7), adult.head(200).assign(
        patient_id=[f"Q{i:05d}" for i in range(200)])]).reset_index(drop=True)
    data2 = tmp_path / "adult-next.csv"
    more.to_csv(data2, index=False)
    passphrase = tmp_path / "pass.txt"
    passphrase.write_text("correct horse battery staple orbit\n")
    common = ["--sensitive", "occupation", "--identifier", "patient_id", "--method", "uniform", "--rho1", "0.1",
              "--rho2", "0.5", "--project", "adult-monthly", "--passphrase-file", str(passphrase), "--no-report"]
    assert cli_main(["anonymize", str(data), "--out", str(tmp_path / "r1"), "--key", str(tmp_path / "r1.key"),
                     "--budget", "4", *common]) == 0
    assert cli_main(["anonymize", str(data2), "--out", str(tmp_path / "r2"), "--key", str(tmp_path / "r2.key"),
                     *common]) == 0
    out = capsys.readouterr()
    meta = json.loads((tmp_path / "r2" / "release.json").read_text(encoding="utf-8"))
    block = meta["repeated_release"]
    assert block["ordinal"] == 2 and block["unchanged"] == N and block["new"] == 200
    assert "release 2" in " ".join(block["statement"]).lower()
    assert "release 2" in out.err.lower() or "release 2" in out.out.lower()
    assert "Repeated releases" in (tmp_path / "r2" / "README.txt").read_text(encoding="utf-8")
    # the custodian's note (a secret made at a path of this PC) is said in the summary, never in the release
    assert "Made the custodian secret" in out.out
    for name in ("release.json", "README.txt"):
        text = (tmp_path / "r1" / name).read_text(encoding="utf-8")
        assert "custodian secret of project" not in text and "custodian.secret" not in text
    with Ledger() as ledger:
        assert [r.ordinal for r in ledger.releases("adult-monthly")] == [1, 2]
        assert ledger.releases("adult-monthly")[-1].budget == 4
    # the third, with fresh draws (another secret passphrase cannot open the secret: refused), then past the budget
    code = cli_main(["anonymize", str(data2), "--out", str(tmp_path / "r3"), "--key", str(tmp_path / "r3.key"),
                     "--secret", str(tmp_path / "elsewhere.secret"), *common])
    err = capsys.readouterr().err
    assert code != 0 and "budget" in err and not (tmp_path / "r3").exists()
    assert len([line for line in err.splitlines() if line.startswith("ppdp: error")]) == 1


def test_method_epsilons_for_the_ledger():
    from ppdp_desktop.core.methods.rr.method import rr_epsilon

    assert rr_epsilon(2, 0.75) == pytest.approx(np.log(3.0))
    assert rr_epsilon(5, 0.2) == 0.0 and rr_epsilon(1, 0.3) == 0.0
    assert rr_epsilon(3, 1.0) == np.inf
    assert get_method("uniform").release_epsilon(None, {"epsilon_ldp": 1.5}) == 1.5
    assert get_method("uniform").release_epsilon(None, {"epsilon_ldp": None}) == np.inf


def test_the_theta_rule_keeps_the_project_s_plan_while_it_fits(adult):
    """theta's pairs (rho1 = f/n) move with the counts; the project keeps its first plan (same values, same rule) so
    that records added next month do not make every draw fresh; a new value makes a new plan (all draws fresh)."""
    keys = PersistentKeys(SECRET)
    first = _release(adult, _settings("finegrain", "theta", keys))
    added = adult.head(300).assign(patient_id=[f"N{i:05d}" for i in range(300)])
    more = pd.concat([adult.sample(frac=1.0, random_state=3), added]).reset_index(drop=True)
    second = _release(more, _settings("finegrain", "theta", keys))
    assert second.plan.parameters.get("kept_from_release") == 1
    np.testing.assert_array_equal(second.plan.retention, first.plan.retention)
    a, b = _released_by_patient(first, adult), _released_by_patient(second, more)
    assert (a == b.reindex(a.index)).mean() == 1.0
    assert second.repeat.cumulative.unchanged == N and second.repeat.cumulative.new == 300
    assert second.plan.parameters["asked"] == first.plan.requirement.rule
    assert any("plan of release 1" in line for line in second.repeat.sentences())
    new_value = more.copy()
    new_value.loc[0, "occupation"] = "Astronaut"
    third = _release(new_value, _settings("finegrain", "theta", keys))
    assert "kept_from_release" not in third.plan.parameters
    assert third.repeat.cumulative.changed >= N - 1


def test_rr_keeps_the_project_s_p_while_the_risk_stays_within_the_bound(adult):
    keys = PersistentKeys(SECRET)
    first = _release(adult, _settings("rr", "rr-kept", keys))
    added = adult.head(300).assign(patient_id=[f"N{i:05d}" for i in range(300)])
    more = pd.concat([adult.sample(frac=1.0, random_state=4), added]).reset_index(drop=True)
    second = _release(more, _settings("rr", "rr-kept", keys))
    assert second.plan.parameters.p_s == first.plan.parameters.p_s
    assert second.guarantee["max_risk"] <= 1 / 3 + 1e-9  # verified on the new records, as any plan
    a, b = _released_by_patient(first, adult), _released_by_patient(second, more)
    assert (a == b.reindex(a.index)).mean() == 1.0 and second.repeat.cumulative.unchanged == N
    assert first.plan.kept_from_release is None and second.plan.kept_from_release == 1
    assert any(line.startswith("The chances of keeping a value of release 1 of this project were kept")
               for line in second.repeat.sentences())


def test_without_a_patient_number_the_draws_are_fresh_and_it_is_said(adult):
    """Patients alike in every unchanged column must not share a draw: without an identifier column the custodian
    secret is not used for the draws, and the statement says why and what to do."""
    settings = _settings("uniform", "no-id", PersistentKeys(SECRET), theta=False)
    settings.identifiers = []
    frame = adult.drop(columns=["patient_id"])[["sex", "occupation"]]  # 2 identities for 3,000 records
    result = _release(frame.assign(patient_id=range(len(frame))).drop(columns=["patient_id"]), settings)
    assert not result.repeat.persistent and not result.applied.mechanisms
    assert any("No identifier column is tagged" in line for line in result.repeat.sentences())
    released = pd.Series(np.asarray(result.applied.columns["occupation"], dtype=object))
    same_group = frame["sex"].eq("Male") & frame["occupation"].eq("Sales")
    assert released[same_group.to_numpy()].nunique() > 1  # not one shared draw for the whole group


@pytest.mark.parametrize("method", ["uniform", "partition", "rr"])
def test_ten_releases_of_each_method_show_one_draw(adult, method):
    """k = 10 on the other methods (fine-grain above): every unchanged patient's released value is the same in all ten,
    so the attacker holding them sees one draw, whose guarantee (rho2; rr's risk <= 1/l) each release verified."""
    keys, frame = PersistentKeys(SECRET), adult.head(1000)
    shuffles = [frame.sample(frac=1.0, random_state=s).reset_index(drop=True) for s in range(10)]
    releases = [_release(f, _settings(method, f"ten-{method}", keys)) for f in shuffles]
    stacked = pd.concat([_released_by_patient(r, f) for r, f in zip(releases, shuffles)], axis=1)
    assert (stacked.nunique(axis=1) == 1).all()
    assert all(r.guarantee["verified"] for r in releases)
    if method == "rr":
        assert max(r.guarantee["max_risk"] for r in releases) <= 1 / 3 + 1e-9
    assert releases[-1].repeat.cumulative.unchanged == 1000 and releases[-1].repeat.cumulative.ordinal == 10
