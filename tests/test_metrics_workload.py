"""Metrics with hand-computed values, and the seeded count-query workload."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.evaluation import metrics
from ppdp_desktop.core.evaluation.workload import condition_columns, count_query_error
from ppdp_desktop.core.methods.perturbation.plan import perturb_codes, retention_matrix


def test_metrics_hand_computed():
    actual = np.array([50.0, 30, 20])
    estimate = np.array([40.0, 36, 24])
    assert metrics.reconstruction_error(actual, estimate) == pytest.approx((10 / 50 + 6 / 30 + 4 / 20) / 3)
    assert metrics.aggregate_utility(actual, estimate) == pytest.approx(1 - (0.1 + 0.06 + 0.04) / 3)
    p, q = actual / 100, estimate / 100
    assert metrics.kl_divergence(actual, estimate) == pytest.approx(float(np.sum(p * np.log(p / q))))
    assert metrics.pearson_chi_square(actual, estimate) == pytest.approx(float(np.sum((q - p) ** 2 / p)))
    mix = (p + q) / 2
    js = 0.5 * np.sum(p * np.log2(p / mix)) + 0.5 * np.sum(q * np.log2(q / mix))
    assert metrics.jensen_shannon(actual, estimate) == pytest.approx(js)
    assert metrics.relative_errors(actual, estimate) == pytest.approx([0.2, 0.2, 0.2])
    assert metrics.relative_errors(np.array([0.0, 4]), np.array([1.0, 5])) == pytest.approx([0.25])  # f_i > 0 only
    assert metrics.record_utility(np.array([0.5, 0.5]), np.array([[0.7, 0.4], [0.3, 0.6]])) == pytest.approx(0.65)


def test_distances_are_zero_for_equal_and_bounded():
    a = np.array([3.0, 2, 1])
    assert metrics.kl_divergence(a, a) == 0 and metrics.pearson_chi_square(a, a) == 0
    assert metrics.jensen_shannon(a, a) == pytest.approx(0.0, abs=1e-15)
    assert metrics.jensen_shannon(np.array([1.0, 0]), np.array([0.0, 1])) == pytest.approx(1.0)
    assert math.isfinite(metrics.kl_divergence(a, np.array([5.0, -1, 0])))  # negative estimates clipped


def _table(n=20_000, seed=3):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(list("ABCDE"), n),
            "year": rng.integers(2015, 2020, n),
            "income": rng.integers(0, 10**6, n),
        }
    )
    codes = rng.choice(6, n, p=[0.4, 0.25, 0.15, 0.1, 0.06, 0.04]).astype(np.int32)
    return frame, codes


def test_workload_without_perturbation_has_zero_error_and_is_seeded():
    frame, codes = _table()
    cols = condition_columns(frame, exclude=[])
    assert "income" not in cols  # too many distinct values for equality conditions
    result = count_query_error(frame[cols], codes, codes, np.eye(6), seed=1)
    assert all(e == pytest.approx(0.0, abs=1e-9) for e in result.mean_error)
    assert result.n_queries[0] >= result.n_queries[1] >= result.n_queries[2] > 0
    again = count_query_error(frame[cols], codes, codes, np.eye(6), seed=1)
    assert again == result


def test_workload_error_grows_with_noise_and_shrinks_with_selectivity():
    frame, codes = _table()
    cols = condition_columns(frame, exclude=[])
    rng = np.random.default_rng(0)
    errors = []
    for p in (0.9, 0.4):
        retention = np.full(6, p)
        released = perturb_codes(codes, retention, rng)
        errors.append(count_query_error(frame[cols], codes, released, retention_matrix(retention), seed=1).mean_error)
    assert errors[1][0] > errors[0][0]  # more noise, more error
    assert errors[1][2] < errors[1][0]  # larger selections are estimated better


def test_utility_summary_on_the_demo(tmp_path):
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.methods.perturbation.report import summarize
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

    dataset = load_table(resource_path(DEMO_DATA))
    settings = AnonymizationSettings("diagnosis", "uniform", ["patient_id", "name"], [], SensitivitySettings(theta=20), seed=4)
    summary = summarize(anonymize(dataset, settings))
    assert 0 < summary.record_utility < 1 and 0.9 < summary.aggregate_utility <= 1
    assert summary.workload is not None and summary.workload.n_queries[0] > 0
    assert 0 <= summary.jensen_shannon < 0.1
    assert len(summary.lines()) == 3


def test_condition_columns_rules_out_a_many_valued_column_from_its_first_records(monkeypatch):
    """Issue 34: a column with more than 100 values among its first records is not counted whole (the report's
    workload on 1M rows counted every identifier, postcode and measurement); the choice stays the definition's."""
    from ppdp_desktop.core.evaluation import workload

    n = 3 * workload.PREFIX_ROWS
    rng = np.random.default_rng(5)
    late = np.where(np.arange(n) < workload.PREFIX_ROWS, 1, np.arange(n) % 500)  # its many values come late
    frame = pd.DataFrame({"income": rng.integers(0, 10**6, n), "late": late,
                          "sex": rng.choice(["F", "M", None], n), "one": np.zeros(n)})
    counted: list[tuple[str, int]] = []
    nunique, factorized = pd.Series.nunique, workload.factorized
    monkeypatch.setattr(pd.Series, "nunique", lambda self, *a, **k: counted.append((self.name, len(self)))
                        or nunique(self, *a, **k))
    monkeypatch.setattr(workload, "factorized", lambda values: counted.append((values.name, len(values)))
                        or factorized(values))
    chosen = condition_columns(frame, exclude=[])
    whole = [name for name, length in counted if length == n]
    monkeypatch.undo()
    definition = [c for c in frame.columns if 1 < frame[c].nunique(dropna=False) <= 100]
    assert chosen == definition == ["sex"]
    assert "income" not in whole  # ruled out from its first records alone
    assert whole == ["late", "sex", "one"]  # few values at first: each counted whole, once


@pytest.mark.parametrize("wide", [False, True])  # few possible cells (a table of the keys) / many (hashed)
def test_the_aggregated_workload_gives_the_scans_figures(wide):
    """Issue 34: single-column conditions answered from the column's marginal table and the cells numbered from a
    table of their keys give the figures of scanning the records query by query (run_workload), to the last bit."""
    from ppdp_desktop.core.evaluation.workload import ColumnMarginals, run_workload
    from ppdp_desktop.core.privacy import reconstruction

    rng = np.random.default_rng(11)
    n, m = 30_000, 6
    frame = pd.DataFrame({"sex": rng.choice(["F", "M", None], n), "region": rng.choice(list("ABCDE"), n),
                          "year": rng.integers(2015, 2020, n).astype(float)})
    frame.loc[rng.random(n) < 0.05, "year"] = np.nan
    if wide:  # 100 x 100 possible pairs, 100 present: more possible cells than 4 per record, few real ones
        frame["a"] = rng.integers(0, 100, n)
        frame["b"] = frame["a"]
    true = rng.choice(m, n, p=[0.4, 0.25, 0.15, 0.1, 0.06, 0.04]).astype(np.int64)
    matrix = retention_matrix(np.full(m, 0.6))
    released = perturb_codes(true, np.full(m, 0.6), rng)
    for seed in (0, 3):
        fast = count_query_error(frame, true, released, matrix, seed=seed)
        scan = run_workload(frame, true, m, lambda mask: reconstruction.inverse(np.bincount(released[mask], minlength=m),
                                                                                 matrix), seed=seed)
        assert fast.n_queries == scan.n_queries and sum(fast.n_queries) > 0
        np.testing.assert_allclose(fast.mean_error, scan.mean_error, rtol=1e-12)
    codes = [pd.factorize(frame[c], use_na_sentinel=False)[0] for c in frame.columns]
    marginals = ColumnMarginals(codes, true, released, m)
    for column, value in ((0, 2), (1, 4), (2, 0)):  # "sex" None, "region" E, "year" first seen
        chosen = codes[column] == value
        got_true, got_released = marginals.counts(column, value)
        np.testing.assert_array_equal(got_true, np.bincount(true[chosen], minlength=m))
        np.testing.assert_array_equal(got_released, np.bincount(released[chosen], minlength=m))
