"""One battery over every registered method (scikit-learn's common tests, for us)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import REGISTRY, get_method
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.privacy.randomness import RandomSource, job_randomness
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, SensitivitySettings

METHODS = sorted(REGISTRY)
#: methods that replace no column: generalization only (the job generalizes the quasi-identifiers; nothing is randomized)
REPLACES_NOTHING = {"generalization"}


def _dataset(values) -> Dataset:
    n = len(values)
    return Dataset(pd.DataFrame({"id": [f"P{i}" for i in range(n)], "age": np.arange(n) % 90, "x": values}))


def _settings(name: str, **sensitivity) -> AnonymizationSettings:
    if not sensitivity:  # partitioning takes one pair for all values; the others the theta rule
        sensitivity = {"rho1": 0.12, "rho2": 0.5} if name == "partition" else {"theta": 3.0}
    if name == "rr":  # randomized response bounds the linking risk given the quasi-identifiers
        return AnonymizationSettings("x", name, ["id"], ["age"], options=RRSettings(l=1.5, randomize="both"))
    if name == "generalization":  # k-anonymity of age, nothing randomized
        return AnonymizationSettings("x", name, ["id"], ["age"], protection=ProtectionSettings(k=5, intervals={"age": [10, 30]}))
    if name == "dp-microagg":  # differential privacy protects the listed attributes; no pairs, no sensitive column
        dp = DPSettings(attributes=["age"], epsilon=1.0, k=10, domains={"age": (0, 89)})
        return AnonymizationSettings("", name, ["id"], [], options=dp)
    return AnonymizationSettings("x", name, ["id"], [], SensitivitySettings(**sensitivity))


@pytest.fixture
def values():
    rng = np.random.default_rng(0)
    return rng.choice(["a", "b", "c", "d", "e"], 3000, p=[0.5, 0.2, 0.15, 0.1, 0.05])


@pytest.mark.parametrize("name", METHODS)
def test_method_has_plain_language_description(name):
    method = REGISTRY[name]
    assert method.name == name and method.title and len(method.summary) > 80
    assert "not" in method.summary  # says what it does not protect against


@pytest.mark.parametrize("name", METHODS)
def test_plan_verifies_and_same_seed_gives_same_columns(name, values):
    dataset = _dataset(values)
    plan = get_method(name).prepare(dataset, _settings(name))
    guarantee = plan.verify()
    assert guarantee["verified"] is True and "kind" in guarantee
    first = plan.apply(dataset.frame, RandomSource(42))
    second = plan.apply(dataset.frame, RandomSource(42))
    assert first.columns.keys() == second.columns.keys() and (bool(first.columns) or name in REPLACES_NOTHING)
    for column in first.columns:
        np.testing.assert_array_equal(first.columns[column], second.columns[column])
        assert len(first.columns[column]) == len(values)
    json.dumps(plan.release_json(), allow_nan=False)
    json.dumps(plan.key_json(), allow_nan=False)
    assert plan.describe()


@pytest.mark.parametrize("name", METHODS)
def test_applying_in_chunks_uses_the_same_plan(name, values):
    """A plan holds statistics only: applying it to two halves gives columns of the same domain."""
    dataset = _dataset(values)
    plan = get_method(name).prepare(dataset, _settings(name))
    rng = RandomSource(1)
    refusals = {  # plans that depend on the whole table refuse a part of it
        "partition": "do not match the partition plan",  # it deals exact counts of records to sub-tables
        "dp-microagg": "clusters the whole table",  # its clusters are k consecutive records of the whole column
    }
    if name in REPLACES_NOTHING:
        assert not plan.apply(dataset.frame.iloc[:1500], rng).columns
        return
    if name in refusals:
        with pytest.raises(ParameterError, match=refusals[name]):
            plan.apply(dataset.frame.iloc[:1500], rng)
        return
    column = next(iter(plan.apply(dataset.frame, rng).columns))  # the sensitive or a randomized column
    halves = [plan.apply(dataset.frame.iloc[s], rng).columns[column] for s in (slice(0, 1500), slice(1500, None))]
    whole = plan.apply(dataset.frame, rng).columns[column]
    assert set(np.concatenate(halves)) <= set(whole) | set(np.concatenate(halves)) and len(np.concatenate(halves)) == 3000


@pytest.mark.parametrize("name", METHODS)
def test_two_values_and_missing_values(name):
    dataset = _dataset(["yes", None, "no", "yes"] * 25)
    result = anonymize(dataset, _settings(name, rho1=0.3, rho2=0.6) if name != "personalized" else _settings(name))
    assert result.guarantee["verified"]
    assert len(result.table) == 100 and "id" not in result.table.columns


@pytest.mark.parametrize("name", METHODS)
def test_identifiers_become_unique_pseudonyms(name, values):
    result = anonymize(_dataset(values), _settings(name))
    ids = result.table["pseudonym"]
    assert ids.is_unique and ids.str.fullmatch(r"R[0-9a-f]{32}").all()
    assert "id" not in result.table.columns
    # The pseudonym is not derived from the identifier: the map is the only link.
    mapping = dict(zip(result.pseudonym_map["pseudonym"], result.pseudonym_map["id"]))
    assert all(mapping[p] not in p for p in ids[:50])


@pytest.mark.parametrize("name", ["uniform", "finegrain"])
def test_no_value_to_protect_is_a_clear_error(name, values):
    with pytest.raises(ParameterError, match="No value of 'x' needs protection"):
        get_method(name).prepare(_dataset(values), _settings(name, theta=1000.0))


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(ParameterError, match="choose one of: uniform, finegrain"):
        get_method("nope")


def test_seed_defaults_to_the_secure_source():
    (_, a), (_, b) = job_randomness(None), job_randomness(None)
    assert a != b and a.bit_length() > 64
