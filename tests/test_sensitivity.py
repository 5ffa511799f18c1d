"""Sensitivity pairs: the theta rule, one pair for all, per-value overrides and their errors."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.data.domain import encode_column
from ppdp_desktop.core.errors import InputError, ParameterError
from ppdp_desktop.core.privacy.sensitivity import constant_pairs, read_pairs_file, theta_rule, with_overrides


@pytest.fixture
def domain():
    return encode_column(pd.Series(["flu"] * 6 + ["hiv"] + ["cold"] * 3), "diagnosis")[0]


def test_theta_rule_leaves_frequent_values_unconstrained(domain):
    req = theta_rule(domain, 2.5)  # 1/theta = 0.4: flu (0.6) carries no concern
    by_value = dict(zip(domain.values, zip(req.rho1, req.rho2)))
    assert np.isnan(by_value["flu"][0])
    assert by_value["hiv"] == pytest.approx((0.1, 0.25))
    assert by_value["cold"] == pytest.approx((0.3, 0.75))
    assert np.isinf(req.gamma[domain.values.index("flu")])


@pytest.mark.parametrize("theta", [1.0, 0.5, -2.0, float("nan")])
def test_theta_must_exceed_one(domain, theta):
    with pytest.raises(ParameterError, match="theta must be greater than 1"):
        theta_rule(domain, theta)


@pytest.mark.parametrize("pair", [(0.3, 0.3), (0.5, 0.2), (0.0, 0.5), (0.2, 1.0)])
def test_bad_pairs_are_refused(domain, pair):
    with pytest.raises(ParameterError, match="0 < rho1 < rho2 < 1"):
        constant_pairs(domain, *pair)


def test_pairs_file_overrides_named_values(domain, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("value,rho1,rho2\nhiv,0.05,0.2\n", encoding="utf-8")
    req = with_overrides(theta_rule(domain, 2.5), domain, read_pairs_file(path), "pairs.csv")
    i = domain.values.index("hiv")
    assert (req.rho1[i], req.rho2[i]) == (0.05, 0.2)


@pytest.mark.parametrize(
    "text, message",
    [
        ("hiv,0.05\n", "line 1: expected 3 fields"),
        ("value,rho1,rho2\nhiv,0.3,0.1\n", "0 < rho1 < rho2 < 1"),
        ("hiv,0.1,0.2\nhiv,0.1,0.3\n", "given twice"),
        ("value,rho1,rho2\nhiv,x,0.2\n", "must be numbers"),
    ],
)
def test_pairs_file_errors_name_the_line(tmp_path, text, message):
    path = tmp_path / "pairs.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises((InputError, ParameterError), match=message):
        read_pairs_file(path)


def test_override_of_unknown_value_is_named(domain):
    with pytest.raises(ParameterError, match="'measles' does not occur"):
        with_overrides(theta_rule(domain, 2.5), domain, {"measles": (0.1, 0.2)}, "pairs.csv")


def test_missing_values_are_one_more_category():
    domain, codes = encode_column(pd.Series(["a", None, "b", "a", np.nan]), "x")
    assert domain.values[-1] is None and domain.m == 3
    assert list(domain.counts) == [2, 1, 2]
    assert list(domain.decode(codes)) == ["a", None, "b", "a", None]


def test_single_valued_or_empty_sensitive_column_is_refused():
    with pytest.raises(InputError, match="single value"):
        encode_column(pd.Series(["a", "a"]), "x", "t.csv")
    with pytest.raises(InputError, match="no records"):
        encode_column(pd.Series([], dtype=object), "x", "t.csv")
