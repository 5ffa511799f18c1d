"""The randomness contract (issue 29, point 1): the job's keyed, per-record source is the only randomness a
method can reach. A plug-in that asks it for a sequential draw, or a plan handed anything else, fails closed
with an error that names the keyed streams; nothing reachable from the source is a numpy generator; and the
source the job hands a plan draws the same for a record however the records are cut into chunks."""
from __future__ import annotations

import gc
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize, bind_job, plan_job, release_chunk
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.methods import REGISTRY, get_method, register, unregister
from ppdp_desktop.core.outcome import Applied
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.privacy.randomness import (
    RandomnessContractError,
    RandomSource,
    job_randomness,
    keyed_streams,
    simulation_generator,
)
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, SensitivitySettings
from tests.toy_method import ToyMethod, ToyPlan

SEQUENTIAL = {  # what a plug-in author used to numpy might reach for, and how
    "random": lambda r: r.random(5),
    "integers": lambda r: r.integers(0, 10, size=5),
    "permutation": lambda r: r.permutation(5),
    "choice": lambda r: r.choice(5),
    "generator": lambda r: r.generator.random(5),
    "bit_generator": lambda r: np.random.Generator(r.bit_generator).random(5),
    "spawn": lambda r: r.spawn(1),
}
NUMPY_RANDOM = (np.random.Generator, np.random.BitGenerator, np.random.RandomState, np.random.SeedSequence)


@dataclass
class GreedyPlan(ToyPlan):
    """A plug-in plan that draws the way its author knows from numpy."""

    reach: str = "random"

    def apply(self, frame: pd.DataFrame, randomness: RandomSource) -> Applied:
        SEQUENTIAL[self.reach](randomness)
        return super().apply(frame, randomness)


class GreedyMethod(ToyMethod):
    name = "greedy-plugin"
    title = "Greedy plug-in (randomness contract test)"
    reach = "random"

    def prepare(self, dataset, settings) -> GreedyPlan:
        return GreedyPlan(settings.sensitive, 0.5, method=self.name, reach=self.reach)


@dataclass
class KeyedPlan(ToyPlan):
    """A plug-in plan that keeps the contract: each record's value moves by its own keyed draw; it notes what
    the job handed it."""

    seen: list[type] = field(default_factory=list)  # type(randomness) per call

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0, bound: None = None) -> Applied:
        self.seen.append(type(randomness))
        draws = randomness.keyed.stream(self.attribute, "toy").integers(start, start + len(frame), 1000)
        return Applied({self.attribute: frame[self.attribute].to_numpy() + draws})


class KeyedMethod(ToyMethod):
    name = "keyed-plugin"
    title = "Keyed plug-in (randomness contract test)"

    def prepare(self, dataset, settings) -> KeyedPlan:
        return KeyedPlan(settings.sensitive, 0.5, method=self.name)


@pytest.fixture
def frame() -> pd.DataFrame:
    n = 503
    return pd.DataFrame({"id": [f"P{i}" for i in range(n)], "x": np.arange(n) * 7 % 101})


def _settings(method: str, seed: int = 11) -> AnonymizationSettings:
    return AnonymizationSettings("x", method, ["id"], [], seed=seed)


@pytest.mark.parametrize("reach", sorted(SEQUENTIAL))
def test_a_plugin_reaching_for_a_sequential_draw_fails_closed_naming_the_keyed_streams(reach, frame):
    method = GreedyMethod()
    method.reach = reach
    register(method)
    try:
        with pytest.raises(RandomnessContractError) as caught:
            anonymize(Dataset(frame), _settings(method.name))
    finally:
        unregister(method.name)
    error = caught.value
    assert isinstance(error, PrivacyError) and isinstance(error, AttributeError)  # the CLI and window show it
    assert repr(reach) in str(error) and "randomness.keyed.stream(column, draw)" in str(error)
    assert "Nothing was drawn" in str(error)


def test_hasattr_says_no_sequential_draw_is_there():
    source = RandomSource(3)
    assert not any(hasattr(source, name) for name in SEQUENTIAL)
    assert hasattr(source, "keyed") and hasattr(source, "shuffle_order")


@pytest.mark.parametrize("given", [np.random.default_rng(1), np.random.PCG64(1), 1, KeyedRandomness(1)],
                         ids=["Generator", "BitGenerator", "seed", "KeyedRandomness"])
def test_a_plan_handed_anything_but_the_source_refuses_it(given):
    with pytest.raises(RandomnessContractError, match="takes the job's RandomSource.*randomness.keyed.stream"):
        keyed_streams(given)
    n = 600
    values = np.random.default_rng(0).choice(list("abcde"), n, p=[0.5, 0.2, 0.15, 0.1, 0.05])
    frame = pd.DataFrame({"id": [f"P{i}" for i in range(n)], "age": np.arange(n) % 90, "x": values})
    for name in sorted(REGISTRY):  # every built-in plan, whatever it draws (personalized draws nothing)
        plan = get_method(name).prepare(Dataset(frame), _builtin_settings(name))
        with pytest.raises(RandomnessContractError):
            plan.apply(frame, given)


def _builtin_settings(name: str) -> AnonymizationSettings:
    from ppdp_desktop.core.methods.dp.settings import DPSettings
    from ppdp_desktop.core.methods.rr.settings import RRSettings

    if name == "rr":
        return AnonymizationSettings("x", name, ["id"], ["age"], options=RRSettings(l=1.5, randomize="both"))
    if name == "generalization":
        return AnonymizationSettings("x", name, ["id"], ["age"], protection=ProtectionSettings(k=5, intervals={"age": [10]}))
    if name == "dp-microagg":
        return AnonymizationSettings("", name, ["id"], [], options=DPSettings(attributes=["age"], epsilon=1.0, k=10,
                                                                              domains={"age": (0, 89)}))
    pairs = {"rho1": 0.12, "rho2": 0.5} if name == "partition" else {"theta": 3.0}
    return AnonymizationSettings("x", name, ["id"], [], SensitivitySettings(**pairs))


def test_nothing_reachable_from_the_source_is_a_numpy_generator():
    source, _ = job_randomness(5)
    public = {name for name in dir(source) if not name.startswith("_")}
    assert public == {"keyed", "shuffle_order", "with_records"}  # a new attribute must be read here first
    for name in public - {"with_records"}:
        value = getattr(source, name)
        assert not isinstance(value, NUMPY_RANDOM), name
    assert not isinstance(source.shuffle_order(10), NUMPY_RANDOM)
    numpy_names = {n for kind in (np.random.Generator, np.random.PCG64) for n in dir(kind) if not n.startswith("_")}
    assert not [n for n in sorted(numpy_names) if hasattr(source, n)]  # no draw handed on to a generator either
    for name in (n for n in dir(source.keyed) if not n.startswith("_")):
        assert not isinstance(getattr(source.keyed, name), NUMPY_RANDOM), f"keyed.{name}"
    # nor anything the object holds, public or not, two levels down (no generator kept aside)
    held = [r for r in gc.get_referents(source) if not isinstance(r, type)]
    held += [r for h in held for r in gc.get_referents(h) if not isinstance(r, type)]
    assert held and not any(isinstance(r, NUMPY_RANDOM) for r in held)
    with pytest.raises(AttributeError):
        source.generator = np.random.default_rng(0)  # nothing can be tacked on either


def test_the_job_hands_a_plugin_the_keyed_source_and_its_draws_do_not_depend_on_the_chunking(frame):
    method = register(KeyedMethod())
    try:
        whole = anonymize(Dataset(frame), _settings(method.name))
        job = plan_job(Dataset(frame), _settings(method.name))
        bound = bind_job(job, frame)
        for size in (5, 64, 250):
            chunks = [release_chunk(job, bound, frame.iloc[a:a + size], a).rows for a in range(0, len(frame), size)]
            rows = pd.concat(chunks, ignore_index=True)
            pd.testing.assert_frame_equal(rows.take(job.randomness.shuffle_order(len(frame))).reset_index(drop=True),
                                          whole.table)
        assert set(job.plan.seen) == {RandomSource}
    finally:
        unregister(method.name)
    moved = whole.table["x"].to_numpy() - frame["x"].to_numpy()[whole.order]
    assert moved.min() >= 0 and moved.max() < 1000 and len(set(moved)) > 100  # the keyed draws did move the values
    other = register(KeyedMethod())
    try:
        assert not anonymize(Dataset(frame), _settings(other.name, seed=12)).table["x"].equals(whole.table["x"])
    finally:
        unregister(other.name)


def test_a_simulation_has_its_own_generator_from_its_seed():
    a, b = simulation_generator(9), simulation_generator(9)
    assert isinstance(a, np.random.Generator) and a.random() == b.random()
    assert simulation_generator(None).random() != simulation_generator(None).random()
