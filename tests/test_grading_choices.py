"""Graded grouping (seed 004's example) and per-record choices."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.errors import InputError, ParameterError
from ppdp_desktop.core.methods.personalized.choices import ChoiceRule, parse_choice_column
from ppdp_desktop.core.methods.personalized.grading import plan_grading


def test_seed_004_grading_example():
    """Category 1 = [10, 40]: 21 -> 1.366..., 22 -> 1.4; the top of a category -> c + 0.999."""
    grading = plan_grading(pd.Series([10, 21, 22, 40, 41, 70]), "age", bounds=[(10, 40), (41, 70)])
    grades = grading.grade(np.array([10, 21, 22, 40, 41, 70]))
    assert grades[1] == pytest.approx(1 + 11 / 30, abs=10.0 ** -grading.decimals)
    assert str(grades[1]).startswith("1.366") or str(grades[1]).startswith("1.367")
    assert grades[2] == pytest.approx(1.4)
    assert list(grades[[0, 3, 4, 5]]) == [1.0, 1.999, 2.0, 2.999]
    np.testing.assert_array_equal(grading.ungrade(grades), [10, 21, 22, 40, 41, 70])


@pytest.mark.parametrize("how", ["equal-width", "quantile"])
@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.integers(-10_000, 10_000), min_size=2, max_size=300), k=st.integers(1, 8))
def test_grading_keeps_order_and_reverses_exactly(how, values, k):
    x = np.array(values, dtype=float)
    grading = plan_grading(pd.Series(x), "v", k, how)
    grades = grading.grade(x)
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(grades[order]) >= 0)  # order kept
    np.testing.assert_array_equal(grading.ungrade(grades), x)
    assert np.all((grades >= 1) & (grades < grading.k + 1))


def test_grading_of_decimals_reverses_exactly():
    x = np.round(np.random.default_rng(1).normal(37.0, 0.8, 5000), 1)
    grading = plan_grading(pd.Series(x), "temperature", 5, "quantile")
    np.testing.assert_array_equal(grading.ungrade(grading.grade(x)), x)


def test_grading_errors_name_the_problem():
    with pytest.raises(InputError, match=r"'income'.*rows \[2\]"):
        plan_grading(pd.Series([1, None, 3]), "income")
    with pytest.raises(ParameterError, match="outside every category"):
        plan_grading(pd.Series([5, 50]), "age", bounds=[(10, 40), (41, 70)])
    with pytest.raises(ParameterError, match="non-overlapping"):
        plan_grading(pd.Series([15]), "age", bounds=[(10, 40), (30, 70)])


def test_choice_column_errors_name_the_rows():
    with pytest.raises(InputError, match=r"row 2 \('4'\), row 3 \('x'\), row 4 \(''\)"):
        parse_choice_column(pd.Series(["1", "4", "x", None, "3"]), "privacy")
    np.testing.assert_array_equal(parse_choice_column(pd.Series([1, 2.0, "3"]), "c"), [1, 2, 3])


def test_choice_rule_precedence():
    frame = pd.DataFrame({"dx": ["flu", "hiv", "flu", "cancer"]})
    rule = ChoiceRule(per_value={"hiv": 3, "flu": 1}, default=2)
    np.testing.assert_array_equal(rule.choices(frame, "dx"), [1, 3, 1, 2])
    with pytest.raises(ParameterError, match="'measles'"):
        ChoiceRule(per_value={"measles": 3}).choices(frame, "dx")
    with pytest.raises(ParameterError, match="must be 1, 2 or 3"):
        ChoiceRule(default=4)
