"""One battery over every registered method (scikit-learn's common tests, for us)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.domain import encode_column
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import REGISTRY, get_method
from ppdp_desktop.core.rng import make_rng
from ppdp_desktop.core.sensitivity import constant_pairs, theta_rule

METHODS = sorted(REGISTRY)


@pytest.fixture
def column():
    rng = np.random.default_rng(0)
    return pd.Series(rng.choice(["a", "b", "c", "d", "e"], 5000, p=[0.5, 0.2, 0.15, 0.1, 0.05]))


@pytest.mark.parametrize("name", METHODS)
def test_method_has_plain_language_description(name):
    method = REGISTRY[name]
    assert method.name == name and method.title and len(method.summary) > 80
    assert "not" in method.summary  # says what it does not protect against


@pytest.mark.parametrize("name", METHODS)
def test_same_seed_same_result_and_codes_stay_in_domain(name, column):
    domain, codes = encode_column(column, "x")
    plan = REGISTRY[name].plan(domain, theta_rule(domain, 3.0))
    plan.verify()
    first = plan.apply(codes, make_rng(42)[0])
    second = plan.apply(codes, make_rng(42)[0])
    np.testing.assert_array_equal(first, second)
    assert first.shape == codes.shape and first.min() >= 0 and first.max() < domain.m
    assert not np.array_equal(first, plan.apply(codes, make_rng(43)[0]))


@pytest.mark.parametrize("name", METHODS)
def test_two_value_domain_and_one_record_per_value(name):
    domain, codes = encode_column(pd.Series(["yes", "no"]), "x")
    plan = REGISTRY[name].plan(domain, constant_pairs(domain, 0.3, 0.6))
    plan.verify()
    assert plan.apply(codes, make_rng(1)[0]).shape == (2,)


@pytest.mark.parametrize("name", METHODS)
def test_missing_values_are_perturbed_as_a_category(name):
    domain, codes = encode_column(pd.Series(["a", None, "b", "a", None, "c"] * 50), "x")
    plan = REGISTRY[name].plan(domain, constant_pairs(domain, 0.2, 0.5))
    plan.verify()
    released = domain.decode(plan.apply(codes, make_rng(3)[0]))
    assert None in set(released)


@pytest.mark.parametrize("name", METHODS)
def test_no_value_to_protect_is_a_clear_error(name, column):
    domain, _ = encode_column(column, "x")
    with pytest.raises(ParameterError, match="No value of 'x' needs protection"):
        REGISTRY[name].plan(domain, theta_rule(domain, 1000.0))


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(ParameterError, match="choose one of: uniform, finegrain"):
        get_method("nope")


def test_seed_defaults_to_the_secure_source():
    (_, a), (_, b) = make_rng(None), make_rng(None)
    assert a != b and a.bit_length() > 64
