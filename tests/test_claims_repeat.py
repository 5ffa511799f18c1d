"""The repeated-release sentences (issue 30), parsed from a real second release of adult records and checked
against an independent computation: the counts they state, the same released values they promise for unchanged
patients (against someone who holds both releases and links them), the cumulative epsilon from the published
matrix, and the kept plan."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from claims_helpers import ldp_epsilon
from conftest import shared_adult
from test_repeated_releases import SECRET, N, _release, _released_by_patient, _settings

from ppdp_desktop.core.privacy.persistent import PersistentKeys


@pytest.fixture(autouse=True)
def own_ledger(tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_every_repeated_release_sentence_holds(adult):
    keys = PersistentKeys(SECRET)
    first = _release(adult, _settings("uniform", "claims", keys, theta=False))
    second_frame = adult.copy()
    rows = np.arange(0, N, 30)
    values = sorted(adult["occupation"].dropna().unique())
    second_frame.loc[rows, "occupation"] = [values[(values.index(v) + 1) % len(values)]
                                            for v in second_frame.loc[rows, "occupation"]]
    second = _release(second_frame, _settings("uniform", "claims", keys, theta=False))
    text = " ".join(second.repeat.sentences())

    found = re.search(r"This is release (\d+) of project 'claims'.*Of its ([\d,]+) records, ([\d,]+) are of patients "
                      r"released before in this project \(([\d,]+) unchanged, ([\d,]+) changed\) and ([\d,]+) are new",
                      text)
    assert found, text
    ordinal, records, matched, unchanged, changed, new = (_number(g) for g in found.groups())
    same_value = (adult["occupation"].fillna("") == second_frame["occupation"].fillna("")).to_numpy()
    assert (ordinal, records, matched, new) == (2, N, N, 0)
    assert (unchanged, changed) == (same_value.sum(), (~same_value).sum())

    # "sees the same released values again": the attacker's two views of every unchanged patient are equal
    a, b = _released_by_patient(first, adult), _released_by_patient(second, second_frame)
    ids = adult["patient_id"].to_numpy()
    assert (a[ids[same_value]].to_numpy() == b[ids[same_value]].to_numpy()).all()

    # "the epsilons of all releases add up to at most X": X is twice the published matrix's epsilon, rounded up
    epsilon = ldp_epsilon(second.plan.matrix.to_dense())
    stated = _number(re.search(r"add up to at most (\d+(?:\.\d+)?)", text).group(1))
    assert 2 * epsilon <= stated < 2 * epsilon + 0.1
    assert _number(re.search(r"cumulative epsilon above (\d+(?:\.\d+)?)", text).group(1)) == stated

    # "The plan of release 1 of this project was kept": the same pairs and retentions
    assert "The plan of release 1 of this project was kept" in text
    np.testing.assert_array_equal(second.plan.retention, first.plan.retention)
    np.testing.assert_array_equal(second.plan.requirement.rho2, first.plan.requirement.rho2)


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, nrows=N)
    frame.insert(0, "patient_id", [f"P{i:05d}" for i in range(len(frame))])
    return frame
