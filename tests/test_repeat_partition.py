"""Perturbation partitioning released again (issue 30): the project's layout is kept while it fits.

Next month's counts would plan other sub-tables, and every patient's draw would be fresh. The kept layout splits
each value's records among the same sub-tables in the same proportions and keeps each sub-table's retention as
*stages*: the first is the earlier release's own (the same draw for an unchanged patient), and where a protected
value's share rose, a later stage redraws what was drawn so that the published retention is what Eq. 9 allows for
the new counts. The attacker holds both releases and links the patients by their number.
"""
from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shared_adult
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.streamed import open_streamed
from ppdp_desktop.core.methods.partition.kept import MAX_STAGES, _lowered, kept_partition, layout_state
from ppdp_desktop.core.methods.partition.subtables import gamma_of, partition_domain
from ppdp_desktop.core.methods.perturbation.uniform import uniform_retention
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.repeat.ledger import Ledger
from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings, SensitivitySettings
from ppdp_desktop.core.streaming.release import write_streamed_release

SECRET = bytes(range(32))


@pytest.fixture(autouse=True)
def own_ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))


def _settings(sensitive: str, identifier: str, rho1: float, rho2: float, project: str = "monthly",
              seed: int | None = None) -> AnonymizationSettings:
    settings = AnonymizationSettings(sensitive, "partition", [identifier], [], SensitivitySettings(rho1=rho1, rho2=rho2),
                                     seed=seed)
    settings.repeat = RepeatSettings(project_id=project, keys=PersistentKeys(SECRET))
    return settings


def _release(frame: pd.DataFrame, settings: AnonymizationSettings):
    """One release, recorded in the ledger as the pipeline records it."""
    result = anonymize(Dataset(frame), settings)
    entry = result.repeat.ledger_entry(result.plan.method, {})
    with Ledger() as ledger:
        ledger.mark_published(ledger.begin(entry, Path(os.environ["PPDP_DATA_DIR"]) / f"r{len(frame)}", "0" * 64))
    return result


def _by_patient(result, frame: pd.DataFrame, identifier: str, column: str) -> pd.Series:
    return pd.Series(np.asarray(result.applied.columns[column]), index=frame[identifier].to_numpy())


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, usecols=["sex", "occupation"])
    frame.insert(0, "patient_id", [f"P{i:06d}" for i in range(len(frame))])
    return frame


def test_added_records_leave_the_patients_of_last_month_their_released_values(adult):
    """adult.csv's occupation in three sub-tables; next month the rows are reordered and 1,000 patients added: the
    layout is kept, >= 95 % of last month's patients keep their released value and their sub-table."""
    first_month = adult.iloc[:-1000]
    settings = _settings("occupation", "patient_id", 0.13, 0.25)
    first = _release(first_month, settings)
    assert first.plan.blocks.n_subtables >= 3 and first.plan.kept_from_release is None
    second_month = adult.sample(frac=1.0, random_state=2).reset_index(drop=True)
    second = _release(second_month, _settings("occupation", "patient_id", 0.13, 0.25))
    assert second.plan.kept_from_release == 1 and second.guarantee["verified"]
    a = _by_patient(first, first_month, "patient_id", "occupation")
    b = _by_patient(second, second_month, "patient_id", "occupation").reindex(a.index)
    assert (a == b).mean() >= 0.95
    column = first.plan.subtable_column
    moved = _by_patient(first, first_month, "patient_id", column) != _by_patient(
        second, second_month, "patient_id", column).reindex(a.index)
    assert moved.mean() < 0.01
    # the accounting: a patient dealt to another sub-table is a fresh draw (its mechanism differs), counted as changed
    cumulative = second.repeat.cumulative
    assert cumulative.changed == int(moved.sum()) and cumulative.new == 1000
    # planned afresh from the new counts, the layout moves and the same attack finds far fewer unchanged values
    afresh = _settings("occupation", "patient_id", 0.13, 0.25, project="afresh")
    _release(first_month, afresh)
    again = _settings("occupation", "patient_id", 0.13, 0.25, project="afresh")
    again.repeat.previous_plan = {"method": "none"}  # what a plan that does not fit looks like
    fresh = _release(second_month, again)
    assert fresh.plan.kept_from_release is None
    c = _by_patient(fresh, second_month, "patient_id", "occupation").reindex(a.index)
    assert (_by_patient(_release(first_month, _settings("occupation", "patient_id", 0.13, 0.25, project="x")),
                        first_month, "patient_id", "occupation") == c).mean() < 0.9


def _skewed(n: int, m: int = 40, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, m + 1) ** 0.7
    return pd.DataFrame({"id": [f"P{i:06d}" for i in range(n)],
                         "dx": rng.choice([f"v{i:02d}" for i in range(m)], n, p=p / p.sum())})


def test_a_lowered_retention_redraws_last_month_s_value_whatever_the_true_value():
    """1,500 records of one rare diagnosis added: its share rises, so the sub-table's retention must fall (a second
    stage q). Last month's patients: their released value is redrawn from last month's with probability 1 - q, as
    often when last month's value was the true one as when it was not (the redraw does not look at the true
    value: post-processing, so both releases together tell no more than the first). Monte-Carlo, 5 sigma."""
    frame = _skewed(20_000)
    first = _release(frame, _settings("dx", "id", 0.05, 0.3))
    added = pd.DataFrame({"id": [f"Q{i:06d}" for i in range(1500)], "dx": "v05"})
    month = pd.concat([frame, added]).sample(frac=1.0, random_state=3).reset_index(drop=True)
    second = _release(month, _settings("dx", "id", 0.05, 0.3))
    (stages,) = second.plan.stages
    assert len(stages) == 2 and stages[0] == first.plan.stages[0][0] and stages[1] < 0.95
    p, q = stages
    m = second.plan.domain.m
    # the published retention is the product, within what Eq. 9 allows for the new counts, and verified
    rho1_i = float(second.plan.partition.rho1_i[0])
    assert second.plan.blocks.retention[0] == p * q <= uniform_retention(float(gamma_of(rho1_i, 0.3)), m)
    assert second.guarantee["verified"]
    y1 = _by_patient(first, frame, "id", "dx")
    y2 = _by_patient(second, month, "id", "dx").reindex(y1.index)
    true = frame.set_index("id")["dx"].reindex(y1.index)
    rate = (1 - q) * (m - 1) / m  # redrawn, and landed on another value
    for group in (y1 == true, y1 != true):
        n = int(group.sum())
        changed = float((y2[group] != y1[group]).mean())
        assert abs(changed - rate) <= 5 * math.sqrt(rate * (1 - rate) / n), (n, changed, rate)
    # the statement: every patient of last month is unchanged and redrawn, and is promised nothing more than that
    cumulative = second.repeat.cumulative
    assert cumulative.unchanged == len(frame) == cumulative.rederived
    lines = second.repeat.sentences()
    assert not any("sees the same released values again" in line for line in lines)
    assert any(f"{len(frame):,} records are unchanged, drawn as before and then redrawn" in line for line in lines)
    assert cumulative.epsilon_cumulative_max == pytest.approx(first.repeat.cumulative.epsilon_release)
    assert any(line.startswith("The sub-tables of release 1 of this project were kept") for line in lines)
    assert any(line.startswith("In 1 of the 1 sub-tables the share of a protected value has risen") for line in lines)


def test_the_layout_is_planned_afresh_for_a_new_value_or_another_pair():
    frame = _skewed(5000)
    _release(frame, _settings("dx", "id", 0.05, 0.3))
    assert _release(frame, _settings("dx", "id", 0.05, 0.3)).plan.kept_from_release == 1
    assert _release(frame, _settings("dx", "id", 0.06, 0.3)).plan.kept_from_release is None
    added = pd.DataFrame({"id": ["Q1"], "dx": ["a new diagnosis"]})
    newer = _release(pd.concat([frame, added], ignore_index=True), _settings("dx", "id", 0.06, 0.3))
    assert newer.plan.kept_from_release is None


def test_a_kept_layout_streams_to_the_bytes_of_the_in_memory_release(tmp_path, monkeypatch):
    """The second month (a stage added) in memory and streamed in chunks of 997, each against a copy of the same
    ledger: the same data file, byte for byte."""
    frame = _skewed(20_000)
    month = pd.concat([frame, pd.DataFrame({"id": [f"Q{i}" for i in range(1500)], "dx": "v05"})])
    path = tmp_path / "month.csv"
    month.to_csv(path, index=False)
    write_release(anonymize(Dataset(frame), _settings("dx", "id", 0.05, 0.3, seed=4)), tmp_path / "first")
    shutil.copytree(tmp_path / "data", tmp_path / "data-2")
    kinds = {"id": "text"}
    memory = anonymize(load_table(path, kinds=kinds), _settings("dx", "id", 0.05, 0.3, seed=5))
    assert memory.plan.kept_from_release == 1 and len(memory.plan.stages[0]) == 2
    write_release(memory, tmp_path / "memory")
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data-2"))
    write_streamed_release(open_streamed(path, kinds=kinds), _settings("dx", "id", 0.05, 0.3, seed=5),
                           tmp_path / "streamed", chunk_size=997, include_report=False)
    data = [(tmp_path / d / json.loads((tmp_path / d / "release.json").read_text())["data_file"]).read_bytes()
            for d in ("memory", "streamed")]
    assert data[0] == data[1]
    streamed = json.loads((tmp_path / "streamed" / "release.json").read_text())
    assert streamed["parameters"]["kept_from_release"] == 1


# --- the kept layout on value counts alone -----------------------------------------------------------------------
counts_strategy = st.lists(st.integers(1, 400), min_size=3, max_size=30)


@settings(max_examples=60, deadline=None)
@given(counts_strategy, st.integers(0, 2**32 - 1), st.floats(0.02, 0.3), st.floats(0.35, 0.9))
def test_a_kept_layout_holds_the_new_counts_within_eq_9(counts, seed, rho1, rho2):
    """Whatever the new counts, a kept layout (when it fits) holds exactly the new counts, in the same entries,
    keeps every earlier stage, and publishes a retention no higher than Eq. 9 allows for each sub-table's new top
    protected share below rho2."""
    counts = np.array(counts, dtype=np.int64)
    if not np.any(counts <= rho1 * counts.sum()):
        return
    try:
        partition = partition_domain(counts, rho1, rho2)
    except Exception:  # no valid partition for these counts: nothing to keep
        return
    table = partition.table_counts
    gamma = partition.gamma_i
    first = [[float(uniform_retention(g, k)) if np.isfinite(g) else 1.0]
             for g, k in zip(gamma, np.diff(table.indptr))]
    state = layout_state(table, first)
    rng = np.random.default_rng(seed)
    new = np.maximum(counts + rng.integers(-counts // 4, counts // 4 + 3), 0)
    kept = kept_partition(state, new, rho1, rho2)
    if kept is None:
        return
    split, stages = kept
    assert np.array_equal(np.asarray(split.table_counts.sum(axis=0)).ravel(), new)
    assert np.array_equal(split.table_counts.indices, table.indices)
    assert np.array_equal(split.table_counts.indptr, table.indptr) and np.all(split.table_counts.data >= 1)
    assert np.all(split.rho1_i < rho2)
    sizes = np.diff(split.table_counts.indptr)
    for s, stage in enumerate(stages):
        assert stage[:1] == first[s] and len(stage) <= MAX_STAGES
        allowed = uniform_retention(float(gamma_of(split.rho1_i[s], rho2)), sizes[s]) if split.rho1_i[s] > 0 else 1.0
        assert math.prod(stage) <= allowed


@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=5), st.floats(0.001, 1.0))
def test_a_lowered_chain_never_exceeds_what_is_needed(stages, needed):
    lowered = _lowered(stages, needed)
    assert lowered[:len(stages)] == stages
    if math.prod(stages) <= needed:
        assert lowered == stages
    else:
        assert len(lowered) == len(stages) + 1 and math.prod(lowered) <= needed
        assert math.prod(lowered) >= needed * (1 - 1e-12)


def test_a_damaged_layout_is_not_kept():
    counts = np.array([50, 40, 30, 20, 10, 5, 5, 5])
    partition = partition_domain(counts, 0.1, 0.5)
    state = layout_state(partition.table_counts, [[0.5]] * partition.table_counts.shape[0])
    assert kept_partition(state, counts, 0.1, 0.5) is not None
    for broken in ({**state, "stages": []}, {**state, "counts": [0] * len(state["counts"])},
                   {**state, "indices": [99] * len(state["indices"])}, {k: v for k, v in state.items() if k != "indptr"}):
        assert kept_partition(broken, counts, 0.1, 0.5) is None


def test_the_in_memory_job_fingerprints_its_records_once_and_releases_the_same(monkeypatch):
    """bind_job's identity fingerprints (the deal's persistent draws) are those release_chunk uses for the same
    table: computed once, and the release is the one computed twice gives."""
    import ppdp_desktop.core.anonymize as job_module

    frame = _skewed(3000)
    computed = job_module.identity_fingerprints
    calls: list[int] = []
    monkeypatch.setattr(job_module, "identity_fingerprints", lambda *a: calls.append(1) or computed(*a))
    once = anonymize(Dataset(frame), _settings("dx", "id", 0.1, 0.5, seed=3))
    assert len(calls) == 1
    bind = job_module.bind_job
    monkeypatch.setattr(job_module, "bind_job", lambda job, table, **_: bind(job, table))  # nothing kept
    twice = anonymize(Dataset(frame), _settings("dx", "id", 0.1, 0.5, seed=3))
    assert len(calls) == 3
    pd.testing.assert_frame_equal(once.table, twice.table)
