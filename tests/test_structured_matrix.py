"""A retention matrix held by its parameters equals the dense matrix it stands for (issue 18, point 1)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.perturbation.plan import retention_matrix
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.privacy.structured import RetentionMatrix

_TO_DENSE = RetentionMatrix.to_dense


def _refuse(self):
    raise AssertionError("a dense matrix was built")


RETENTION = st.integers(1, 12).flatmap(
    lambda m: arrays(np.float64, m, elements=st.floats(0.02, 1.0, allow_nan=False)))


@settings(max_examples=200, deadline=None)
@given(RETENTION, st.data())
def test_products_solve_and_entries_equal_the_dense_matrix(retention, data):
    structured, dense = RetentionMatrix(retention), retention_matrix(retention)
    m = len(retention)
    assert np.allclose(structured.to_dense(), dense)
    f = data.draw(arrays(np.float64, m, elements=st.floats(0, 1e6)))
    many = data.draw(arrays(np.float64, (m, 3), elements=st.floats(0, 1e6)))
    assert np.allclose(structured @ f, dense @ f)
    assert np.allclose(structured @ many, dense @ many)
    assert np.allclose(structured.T @ f, dense.T @ f)
    assert np.allclose(structured.T @ many, dense.T @ many)
    assert np.allclose(structured.diagonal(), np.diag(dense))
    i, j = data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, m - 1))
    assert structured.entry(i, j) == pytest.approx(dense[i, j])
    assert np.allclose(structured.solve(f), np.linalg.solve(dense, f), rtol=1e-7, atol=1e-6 * (1 + np.abs(f).max()))


# Identified enough that EM stops near the maximum: where a value is kept with p near 0 the likelihood is flat and
# EM's stopping point (either way) is arbitrary to a few records.
WELL_IDENTIFIED = st.integers(1, 12).flatmap(
    lambda m: arrays(np.float64, m, elements=st.floats(0.3, 1.0, allow_nan=False)))


@settings(max_examples=100, deadline=None)
@given(WELL_IDENTIFIED, st.data())
def test_estimators_give_the_same_counts_either_way(retention, data):
    m = len(retention)
    observed = data.draw(arrays(np.float64, m, elements=st.integers(0, 5000).map(float)))
    structured, dense = RetentionMatrix(retention), retention_matrix(retention)
    expected = reconstruction.iterative_bayesian(observed, dense, tol=1e-13, max_iter=200_000)
    estimate, low, high = reconstruction.estimate_with_interval(observed, dense)
    # where every value is kept alike the structured estimate is the exact maximum in closed form, and iterative
    # Bayes only creeps towards it near the edge of the simplex: they agree to a small share of n, the closed
    # form's likelihood never lower
    close = 1e-3 * (1 + observed.sum())
    structured.__class__.to_dense = _refuse  # the estimators must never build the dense matrix
    try:
        got = reconstruction.iterative_bayesian(observed, structured)
        assert np.allclose(got, expected, atol=close)
        best = _log_likelihood(dense, observed, expected)
        assert _log_likelihood(dense, observed, got) >= best - 1e-10 * abs(best) - 1e-6  # EM's own stopping error
        assert np.allclose(reconstruction.inverse(observed, structured), np.linalg.solve(dense, observed),
                           rtol=1e-7, atol=1e-6 * (1 + observed.sum()))
        e2, l2, h2 = reconstruction.estimate_with_interval(observed, structured)
        assert np.allclose(e2, estimate, atol=close)
        # the bootstrap redraws from the estimate: last-bit differences can move a draw where the likelihood is
        # flat (a value kept with p near 0), so the bands agree to a share of n, not to the last digit
        band = 2.0 + 0.05 * observed.sum()  # on a handful of records, one draw more or less
        assert np.allclose(l2, low, atol=band) and np.allclose(h2, high, atol=band)
    finally:
        structured.__class__.to_dense = _TO_DENSE


def test_a_value_never_kept_falls_back_and_all_zero_is_singular():
    retention = np.array([0.0, 0.5, 0.9])
    o = np.array([10.0, 20.0, 30.0])
    assert np.allclose(RetentionMatrix(retention).solve(o), np.linalg.solve(retention_matrix(retention), o))
    with pytest.raises(ParameterError, match="singular"):
        RetentionMatrix(np.zeros(3)).solve(o)
    with pytest.raises(ParameterError):
        RetentionMatrix(np.array([1.5]))


def test_seventy_thousand_values_fit_in_memory():
    m = 70_000
    retention = np.linspace(0.1, 0.9, m)
    matrix = RetentionMatrix(retention)
    true = np.random.default_rng(0).integers(0, 50, m).astype(float)
    assert np.allclose(matrix.solve(matrix @ true), true)


ANY_RETENTION = st.integers(1, 10).flatmap(lambda m: arrays(
    np.float64, m, elements=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0, allow_nan=False))))


@settings(max_examples=300, deadline=None)
@given(ANY_RETENTION, st.data())
def test_amplification_and_posteriors_from_parameters_equal_the_dense_check(retention, data):
    from ppdp_desktop.core.privacy.amplification import (
        amplification,
        posteriors,
        retention_amplification,
        retention_posterior_extremes,
    )

    m = len(retention)
    dense = retention_matrix(retention)
    weights = data.draw(arrays(np.float64, m, elements=st.one_of(st.just(0.0), st.floats(0.0, 1.0))))
    prior = weights / weights.sum() if weights.sum() > 0 else np.full(m, 1.0 / m)
    expected = amplification(dense)
    got = retention_amplification(retention)
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    assert np.allclose(got[np.isfinite(got)], expected[np.isfinite(expected)], rtol=1e-9)
    post = posteriors(dense, prior)
    seen = dense.sum(axis=1) > 0
    largest, smallest = retention_posterior_extremes(retention, prior)
    assert np.allclose(largest, post.max(axis=0), atol=1e-12)
    assert np.allclose(smallest, np.where(seen[:, None], post, np.inf).min(axis=0), atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 30), st.floats(1.2, 20.0), st.data())
def test_the_guarantee_check_says_the_same_of_both_forms(m, theta, data):
    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.privacy.amplification import verify
    from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement  # noqa: F401 - the type checked

    counts = np.asarray(data.draw(st.lists(st.integers(1, 500), min_size=m, max_size=m)), dtype=float)
    import pandas as pd

    from ppdp_desktop.core.data.domain import encode_column
    from ppdp_desktop.core.settings import SensitivitySettings

    column = pd.Series(np.repeat([f"v{i}" for i in range(m)], counts.astype(int)))
    domain, _ = encode_column(column, "x", "t")
    requirement = SensitivitySettings(theta=theta).requirement(domain)
    retention = data.draw(arrays(np.float64, m, elements=st.floats(0.0, 1.0, allow_nan=False)))
    values = list(domain.values)
    outcomes = []
    for matrix in (retention_matrix(retention), RetentionMatrix(retention)):
        try:
            report = verify("x", values, matrix, requirement, domain.prior)
            outcomes.append(("ok", report.achieved_gamma, report.max_posterior, report.epsilon_ldp,
                             [b["value"] for b in report.downward_breaches]))
        except PrivacyError as exc:
            outcomes.append(("refused", str(exc).split(":")[0]))
    dense, structured = outcomes
    assert dense[0] == structured[0]
    if dense[0] == "ok":
        assert np.allclose(dense[1], structured[1], rtol=1e-9) and np.allclose(dense[2], structured[2], atol=1e-12)
        assert dense[3] == pytest.approx(structured[3]) and dense[4] == structured[4]
    else:
        assert dense[1] == structured[1]


# --- blocks (perturbation partitioning: one block per sub-table) and the closed-form estimate -----------------

BLOCKS = st.lists(st.tuples(st.integers(1, 6), st.floats(0.05, 1.0, allow_nan=False)), min_size=1, max_size=5)


def _blocks(spec):
    sizes = np.array([size for size, _ in spec])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    retention = np.repeat([p for _, p in spec], sizes)
    return RetentionMatrix(retention, starts), sizes, starts


@settings(max_examples=200, deadline=None)
@given(BLOCKS, st.data())
def test_block_matrices_equal_their_dense_block_diagonal(spec, data):
    matrix, sizes, starts = _blocks(spec)
    dense = matrix.to_dense()
    m = matrix.m
    assert np.allclose(dense.sum(axis=0), 1.0)
    for start, size in zip(starts, sizes):  # nothing leaves its block
        assert np.all(dense[start:start + size, :start] == 0) and np.all(dense[start:start + size, start + size:] == 0)
    f = data.draw(arrays(np.float64, m, elements=st.floats(0, 1e5)))
    many = data.draw(arrays(np.float64, (m, 2), elements=st.floats(0, 1e5)))
    assert np.allclose(matrix @ f, dense @ f) and np.allclose(matrix @ many, dense @ many)
    assert np.allclose(matrix.T @ f, dense.T @ f) and np.allclose(matrix.T @ many, dense.T @ many)
    assert np.allclose(matrix.diagonal(), np.diag(dense))
    assert np.allclose(matrix.solve(f), np.linalg.solve(dense, f), rtol=1e-7, atol=1e-6 * (1 + f.max(initial=0)))
    i, j = data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, m - 1))
    assert matrix.entry(i, j) == pytest.approx(dense[i, j])
    lo, hi = matrix.row_extremes()  # within each row's own block
    for start, size in zip(starts, sizes):
        rows = dense[start:start + size, start:start + size]
        assert np.allclose(lo[start:start + size], rows.min(axis=1)) and np.allclose(hi[start:start + size], rows.max(axis=1))


def _log_likelihood(dense, observed, f):
    q = dense @ f
    return float(np.sum(np.where(observed > 0, observed * np.log(np.maximum(q, 1e-300)), 0.0)))


@settings(max_examples=200, deadline=None)
@given(BLOCKS, st.data())
def test_the_closed_form_estimate_is_the_maximum_iterative_bayes_climbs_to(spec, data):
    matrix, sizes, starts = _blocks(spec)
    dense = matrix.to_dense()
    observed = data.draw(arrays(np.float64, matrix.m, elements=st.integers(0, 300).map(float)))
    closed = matrix.mle(observed)
    assert np.all(closed >= 0)
    assert np.allclose(matrix.block_sum(closed), matrix.block_sum(observed))  # each sub-table keeps its records
    for start, size in zip(starts, sizes):  # iterative Bayes block by block, on the dense reference
        part = slice(start, start + size)
        if observed[part].sum() == 0:
            assert np.all(closed[part] == 0)
            continue
        em = reconstruction.iterative_bayesian(observed[part], dense[part, part], tol=1e-13, max_iter=200_000)
        assert _log_likelihood(dense[part, part], observed[part], closed[part]) >= \
            _log_likelihood(dense[part, part], observed[part], em) - 1e-7
        assert np.allclose(closed[part], em, atol=1e-3 * (1 + observed[part].sum()))
    many = matrix.mle(np.stack([observed, observed[::-1]], axis=1))
    assert np.allclose(many[:, 0], closed) and np.allclose(many[:, 1], matrix.mle(observed[::-1]))


def test_estimators_use_the_closed_form_where_it_exists_and_sum_by_value():
    """Two sub-tables share value 1: their estimates and bootstrap replicates add up by value."""
    matrix = RetentionMatrix(np.array([0.6, 0.6, 0.3, 0.3, 0.3]), np.array([0, 2]))
    observed = np.array([120.0, 80.0, 50.0, 30.0, 20.0])
    groups = np.array([0, 1, 1, 2, 3])  # entries -> values
    estimate, low, high = reconstruction.estimate_with_interval(observed, matrix, groups=groups, n_groups=4)
    per_entry = matrix.mle(observed)
    assert np.allclose(estimate, np.bincount(groups, weights=per_entry, minlength=4))
    assert np.all(low <= estimate) and np.all(estimate <= high) and estimate.sum() == pytest.approx(300)
    again = reconstruction.estimate_with_interval(observed, matrix, groups=groups, n_groups=4)
    assert all(np.array_equal(a, b) for a, b in zip(again, (estimate, low, high)))  # seeded, and remembered


def test_redraws_are_exactly_multinomial_on_large_domains():
    """The Poisson + top-up sampler keeps the total and matches the multinomial's means and variances."""
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.full(400, 0.3))
    draws = reconstruction.multinomial(rng, 5000, probs, 4000)
    assert draws.shape == (4000, 400) and np.all(draws.sum(axis=1) == 5000)
    big = probs > 0.01
    mean_z = (draws.mean(axis=0) - 5000 * probs)[big] / np.sqrt(5000 * probs * (1 - probs) / 4000)[big]
    assert np.abs(mean_z).max() < 5
    ratio = draws.var(axis=0)[big] / (5000 * probs * (1 - probs))[big]
    assert 0.9 < np.median(ratio) < 1.1


def test_the_count_query_workload_is_the_same_with_either_form():
    import pandas as pd

    from ppdp_desktop.core.evaluation.workload import count_query_error, run_workload
    from ppdp_desktop.core.methods.perturbation.plan import perturb_codes

    rng = np.random.default_rng(2)
    n, m = 20_000, 12
    true = rng.integers(0, m, n)
    retention = rng.uniform(0.2, 0.9, m)
    released = perturb_codes(true, retention, rng)
    conditions = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y"], n)})
    structured = count_query_error(conditions, true, released, RetentionMatrix(retention), seed=4)
    dense = retention_matrix(retention)
    inverse = np.linalg.inv(dense)  # the old dense path, as the reference
    scanned = run_workload(conditions, true, m, lambda mask: inverse @ np.bincount(released[mask], minlength=m), seed=4)
    assert structured.n_queries == scanned.n_queries
    assert np.allclose(structured.mean_error, scanned.mean_error, rtol=1e-9, equal_nan=True)


def test_plausibility_bounds_are_those_of_the_dense_matrix():
    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.privacy.plausibility import check_counts_plausible

    retention = np.array([0.2, 0.5, 0.7])
    for matrix in (retention_matrix(retention), RetentionMatrix(retention)):
        check_counts_plausible(np.array([400, 320, 280]), matrix, ["a", "b", "c"], "x")
        with pytest.raises(PrivacyError, match="not randomized"):  # far more 'a' than 20 % + noise can give
            check_counts_plausible(np.array([990, 5, 5]), matrix, ["a", "b", "c"], "x")
    blocks = RetentionMatrix(np.array([0.5, 0.5, 0.5, 0.5]), np.array([0, 2]))
    with pytest.raises(PrivacyError, match="sub-table 1"):  # a block's counts are judged by its own records
        check_counts_plausible(np.array([50, 50, 99, 1]), blocks, ["a", "b", "c", "d"], "x",
                               ["sub-table 0", "sub-table 0", "sub-table 1", "sub-table 1"])


def test_a_dense_copy_of_a_large_domain_is_refused():
    """np.asarray(matrix) on a diagnosis-sized domain would take tens of gigabytes: it fails at once instead."""
    matrix = RetentionMatrix(np.full(70_000, 0.2))
    with pytest.raises(ParameterError, match="by its parameters only"):
        np.asarray(matrix)


def test_the_closed_form_estimate_stops_where_rounding_would_cycle(monkeypatch):
    """A real sub-table (from a 15,000-value partition's bootstrap) where a value sits on the edge of the support:
    with c allowed to grow by rounding, Newton's method cycled until its step limit (17,727 steps, 140 s on the
    whole table). Now it stops within a few steps, at the point iterative Bayes reaches."""
    observed = np.array([5.0, 32, 7, 6, 8, 9, 7, 9, 24, 13, 13, 24, 21, 23])
    retention = np.concatenate([[0.5], np.full(13, 0.4800000000000001)])
    matrix = RetentionMatrix(retention, np.array([0, 1]))  # next to a one-value block: sums per block
    calls = []
    original = RetentionMatrix.block_sum
    monkeypatch.setattr(RetentionMatrix, "block_sum", lambda self, x: calls.append(1) or original(self, x))
    closed = matrix.mle(observed)
    assert len(calls) <= 3 + 2 * 5  # the total, then two sums a step: a handful of steps, not one per value
    monkeypatch.undo()
    em = reconstruction.iterative_bayesian(observed[1:], retention_matrix(retention[1:]), tol=1e-13, max_iter=200_000)
    assert np.allclose(closed[1:], em, atol=1e-3 * observed[1:].sum()) and closed[0] == 5.0


# ---- values never kept (retention 0): a singular matrix is still a channel (issue 28 defect) ---------------------
WITH_ZEROS = st.lists(st.tuples(st.integers(1, 6), st.integers(0, 10_000)), min_size=1, max_size=4).flatmap(
    lambda spec: st.tuples(st.just(spec), arrays(np.float64, sum(s for s, _ in spec), elements=st.one_of(
        st.just(0.0), st.floats(0.01, 1.0, allow_nan=False)))))


@settings(max_examples=300, deadline=None)
@given(WITH_ZEROS, st.data())
def test_values_never_kept_are_solved_by_the_pseudo_inverse_in_o_m(spec_retention, data):
    spec, retention = spec_retention
    sizes = np.array([size for size, _ in spec])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    matrix = RetentionMatrix(retention, starts)
    dense = matrix.to_dense()
    o = data.draw(arrays(np.float64, matrix.m, elements=st.integers(0, 5000).map(float)))
    many = data.draw(arrays(np.float64, (matrix.m, 3), elements=st.integers(0, 5000).map(float)))
    empty_block = np.add.reduceat(retention <= 0, starts) == sizes
    RetentionMatrix.to_dense = _refuse  # solved from the parameters, never densely
    try:
        if empty_block.any():  # no value of a block is ever kept: refused, clearly
            with pytest.raises(ParameterError, match="singular"):
                matrix.solve(o)
            return
        got, got_many = matrix.solve(o), matrix.solve(many)
    finally:
        RetentionMatrix.to_dense = _TO_DENSE
    pinv = np.linalg.pinv(dense)
    tol = 1e-6 * (1 + o.sum()) / max(1e-2, retention[retention > 0].min())
    assert np.allclose(got, pinv @ o, atol=tol)
    assert np.allclose(got_many, pinv @ many, atol=tol * many.sum() / (1 + o.sum()) + tol)
    # where the matrix is invertible (at most one value never kept per block) it is the inverse
    if np.all(np.add.reduceat(retention <= 0, starts) <= 1):
        assert np.allclose(got, np.linalg.solve(dense, o), atol=tol)


def test_finegrain_with_one_pair_on_native_country_releases_verifies_and_compares(tmp_path):
    """The reported crash: fine-grain on Adult's native-country (2,000 records, rho = (0.02, 0.1)) gives 35 of 36
    values retention 0. It releases, verifies, compares, and every face says those values are never kept and
    that only their total can be estimated; the estimates are P's pseudo-inverse on the released counts."""
    import json

    from tests.claims_helpers import adult_slice, run_cli

    data = adult_slice(tmp_path, 2000)
    out = tmp_path / "release"
    code, stdout, stderr = run_cli(["anonymize", data, "--method", "finegrain", "--sensitive", "native-country",
                                    "--rho1", "0.02", "--rho2", "0.1", "--out", out, "-q"])
    assert code == 0, stderr
    code, verified, stderr = run_cli(["verify", out])
    assert code == 0, verified + stderr
    entry = json.loads((out / "release.json").read_text(encoding="utf-8"))["sensitive"][0]
    retention = np.asarray(entry["retention"], dtype=float)
    never = [str(v) for v, p in zip(entry["values"], retention) if p <= 0]
    assert len(never) >= 2  # the case: P is singular
    said = f"{len(never)} values are never kept (retention 0)"
    readme = " ".join((out / "README.txt").read_text(encoding="utf-8").split())
    assert said in readme and "only their sum is meaningful" in readme
    for report in (out / "report.html", tmp_path / "release.custodian-report.html"):
        assert said in report.read_text(encoding="utf-8")
    # the recipient's estimate: the pseudo-inverse of the published matrix, on the released counts
    code, table, stderr = run_cli(["estimate", out, "--sensitive", "native-country"])
    assert code == 0, stderr
    released = pd.read_csv(out / "release.csv", sep=None, engine="python", dtype=str)["native-country"]
    observed = released.value_counts().reindex(entry["values"], fill_value=0).to_numpy(dtype=float)
    expected = np.linalg.pinv(RetentionMatrix(retention).to_dense()) @ observed
    got = reconstruction.inverse(observed, RetentionMatrix(retention))
    assert np.allclose(got, expected, atol=1e-6 * observed.sum())
    shares = got[retention <= 0]
    assert np.allclose(shares, shares[0])  # one equal share each, as said
    code, compared, stderr = run_cli(["compare", data, "--sensitive", "native-country", "--methods",
                                      "finegrain,uniform", "--rho1", "0.02", "--rho2", "0.1"])
    assert code == 0, stderr
    assert re.search(r"^finegrain\s", compared, re.M) and "internal error" not in stderr
