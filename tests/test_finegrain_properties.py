"""Invariants of the fine-grain solver and the verifier (hypothesis)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.data.domain import encode_column
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.methods import REGISTRY
from ppdp_desktop.core.methods.perturbation.plan import retention_matrix
from ppdp_desktop.core.methods.perturbation.solver import objective, solve_exact, solve_lp
from ppdp_desktop.core.privacy.amplification import verify
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement, theta_rule

PERTURBATION_METHODS = [name for name, method in sorted(REGISTRY.items()) if hasattr(method, "plan")]


@st.composite
def instances(draw, max_m: int = 12):
    m = draw(st.integers(2, max_m))
    counts = np.array(draw(st.lists(st.integers(1, 1000), min_size=m, max_size=m)), dtype=float)
    gammas = draw(
        st.lists(
            st.one_of(st.floats(1.01, 40.0), st.just(np.inf)),
            min_size=m,
            max_size=m,
        )
    )
    return counts / counts.sum(), np.array(gammas)


def feasible(p: np.ndarray, gamma: np.ndarray, tol: float = 1e-9) -> bool:
    m = len(p)
    for i in np.flatnonzero(np.isfinite(gamma)):
        others = np.delete(p, i)
        if (m - 1) * p[i] + gamma[i] * others.max() > gamma[i] - 1 + tol:
            return False
    return bool(np.all(p >= -tol) and np.all(p <= 1 + tol))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_exact_solver_equals_lp(instance):
    weights, gamma = instance
    exact = solve_exact(weights, gamma)
    assert feasible(exact, gamma)
    lp = solve_lp(weights, gamma)
    # HiGHS stops at a 1e-7 feasibility tolerance; the exact solver is never worse than it.
    assert objective(weights, exact) == pytest.approx(objective(weights, lp), abs=1e-7)


def test_exact_solver_equals_lp_on_larger_random_instances():
    rng = np.random.default_rng(7)
    for m in (30, 80, 150):
        weights = rng.random(m) ** 3
        weights /= weights.sum()
        gamma = 1 + rng.random(m) * rng.choice([0.5, 3.0, 30.0], m)
        gamma[rng.random(m) < 0.2] = np.inf
        exact = solve_exact(weights, gamma)
        assert feasible(exact, gamma)
        assert objective(weights, exact) == pytest.approx(objective(weights, solve_lp(weights, gamma)), abs=1e-7)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30))
def test_retention_matrices_are_column_stochastic(retention):
    matrix = retention_matrix(np.array(retention))
    assert np.all(matrix >= 0)
    np.testing.assert_allclose(matrix.sum(axis=0), 1.0, atol=1e-12)


column_strategy = st.lists(st.sampled_from(list("abcdefgh")), min_size=20, max_size=200).filter(lambda v: len(set(v)) >= 2)


@settings(max_examples=150, deadline=None)
@given(column_strategy, st.floats(1.2, 20.0), st.sampled_from(PERTURBATION_METHODS))
def test_verifier_accepts_every_plan_the_methods_make(values, theta, method):
    domain, _ = encode_column(pd.Series(values), "x")
    requirement = theta_rule(domain, theta)
    if not requirement.concern.any():
        return
    plan = REGISTRY[method].plan(domain, requirement)
    plan.verify()


@settings(max_examples=150, deadline=None)
@given(column_strategy, st.floats(1.2, 20.0), st.sampled_from(PERTURBATION_METHODS), st.integers(0, 10**6), st.floats(1.05, 3.0))
def test_verifier_rejects_tampered_plans(values, theta, method, where, factor):
    domain, _ = encode_column(pd.Series(values), "x")
    requirement = theta_rule(domain, theta)
    if not requirement.concern.any():
        return
    plan = REGISTRY[method].plan(domain, requirement)
    # Raise one protected value's retention beyond what its pair allows.
    protected = np.flatnonzero(requirement.concern)
    j = protected[where % len(protected)]
    tampered = plan.retention.copy()
    m = domain.m
    # The largest diagonal-to-off-diagonal ratio gamma_j allows for value j, given the others:
    limit = (requirement.gamma[j] * (1 - tampered.max(initial=0, where=np.arange(m) != j)) - 1) / (m - 1)
    assume(max(limit, 0.0) * factor + 0.05 < 1.0)
    tampered[j] = max(limit, 0.0) * factor + 0.05
    with pytest.raises(PrivacyError):
        verify("x", domain.values, retention_matrix(tampered), requirement, domain.prior)


def test_verifier_rejects_non_stochastic_and_negative_matrices():
    requirement = SensitivityRequirement(np.array([0.2, 0.2]), np.array([0.5, 0.5]), "t")
    prior = np.array([0.5, 0.5])
    with pytest.raises(PrivacyError, match="sums to"):
        verify("x", ("a", "b"), np.array([[0.6, 0.4], [0.3, 0.6]]), requirement, prior)
    with pytest.raises(PrivacyError, match="negative"):
        verify("x", ("a", "b"), np.array([[1.2, 0.4], [-0.2, 0.6]]), requirement, prior)
    with pytest.raises(PrivacyError, match="amplifies"):
        verify("x", ("a", "b"), np.eye(2), requirement, prior)
