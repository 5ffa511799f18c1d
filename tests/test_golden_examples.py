"""The papers' worked examples (SPEC 2.1-2.2) with their exact golden values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.data.domain import encode_column
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.perturbation.solver import solve_exact, solve_lp
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement, gamma_of, theta_rule


def test_thesis_example_2_uniform_operator():
    gamma = float(gamma_of(1 / 5, 1 / 4))
    assert gamma == pytest.approx(4 / 3, abs=1e-15)
    domain, _ = encode_column(pd.Series(["a", "b", "b", "c", "c"]), "x")
    requirement = SensitivityRequirement(np.full(3, 1 / 5), np.full(3, 1 / 4), "test")
    plan = get_method("uniform").plan(domain, requirement)
    matrix = np.asarray(plan.matrix)  # the dense reference of the structured matrix
    np.testing.assert_allclose(np.diag(matrix), 4 / 10, atol=1e-15)
    np.testing.assert_allclose(matrix[~np.eye(3, dtype=bool)], 3 / 10, atol=1e-15)
    # At the maximal gamma the posterior reaches rho2 exactly (prior 1/5, 2/5, 2/5; observe y_1).
    post = privacy.posteriors(matrix, np.array([1 / 5, 2 / 5, 2 / 5]))
    assert post[0, 0] == pytest.approx(0.25, abs=1e-15)
    plan.verify()  # posterior <= rho2 with equality is accepted


# Thesis Ex. 10-11: HD 4, Cancer 4, AIDS 3, Malaria 2, H1N1 1; rho2 = 3 rho1.
THESIS_COUNTS = {"HD": 4, "Cancer": 4, "AIDS": 3, "Malaria": 2, "H1N1": 1}


@pytest.fixture
def thesis_domain():
    column = pd.Series([v for v, c in THESIS_COUNTS.items() for _ in range(c)])
    domain, codes = encode_column(column, "disease")
    order = [domain.values.index(v) for v in THESIS_COUNTS]  # paper order
    return domain, order


def test_thesis_example_10_11_gammas(thesis_domain):
    domain, order = thesis_domain
    requirement = theta_rule(domain, 3.0)
    np.testing.assert_allclose(requirement.gamma[order], [15, 15, 33 / 5, 9 / 2, 39 / 11], rtol=1e-13)


@pytest.mark.parametrize("solver", [solve_exact, solve_lp])
def test_thesis_example_10_11_optimal_operator(thesis_domain, solver):
    domain, order = thesis_domain
    requirement = theta_rule(domain, 3.0)
    p = solver(domain.prior, requirement.gamma)[order]
    np.testing.assert_allclose(p, [28 / 53, 28 / 53, 28 / 53, 119 / 424, 98 / 583], atol=1e-9)


def test_thesis_example_10_11_plan_values(thesis_domain):
    domain, order = thesis_domain
    requirement = theta_rule(domain, 3.0)
    fine = get_method("finegrain").plan(domain, requirement)
    np.testing.assert_allclose(np.diag(np.asarray(fine.matrix))[order],
                               [33 / 53, 33 / 53, 33 / 53, 45 / 106, 195 / 583], atol=1e-12)
    assert fine.record_utility == pytest.approx(669 / 1166, abs=1e-12)
    uniform = get_method("uniform").plan(domain, requirement)
    m = np.asarray(uniform.matrix)
    np.testing.assert_allclose(np.diag(m), 39 / 83, atol=1e-14)
    np.testing.assert_allclose(m[~np.eye(5, dtype=bool)], 11 / 83, atol=1e-14)
    assert uniform.record_utility == pytest.approx(39 / 83, abs=1e-14)
    fine.verify()
    uniform.verify()


def test_thesis_theorem_7_downward_claim_is_false(thesis_domain):
    """SPEC 1.2: with prior HD 0.78 / H1N1 0.22, observing y_HD gives H1N1 a posterior of 0.0701 <= 1/14."""
    domain, order = thesis_domain
    plan = get_method("finegrain").plan(domain, theta_rule(domain, 3.0))
    hd, h1n1 = order[0], order[4]
    prior = np.zeros(5)
    prior[hd], prior[h1n1] = 0.78, 0.22
    post = privacy.posteriors(plan.matrix, prior)
    assert post[hd, h1n1] == pytest.approx(0.0701, abs=5e-5)
    assert post[hd, h1n1] <= 1 / 14
    # The verifier reports it as a downward breach for that prior instead of claiming it away.
    report = privacy.verify("disease", domain.values, plan.matrix, plan.requirement, prior)
    assert [b["value"] for b in report.downward_breaches] == ["H1N1"]


def test_seed_000_examples_1_2():
    column = pd.Series(["SARS", "HIV", "SARS", "HIV", "H1N1", "cancer", "H1N1", "cancer"])
    domain, _ = encode_column(column, "Disease")
    order = [domain.values.index(v) for v in ["SARS", "HIV", "H1N1", "cancer"]]
    pairs = {"SARS": (1 / 10, 1 / 7), "HIV": (1 / 10, 1 / 4), "H1N1": (1 / 9, 19 / 35), "cancer": (1 / 8, 18 / 25)}
    rho1 = np.array([pairs[v][0] for v in domain.values])
    rho2 = np.array([pairs[v][1] for v in domain.values])
    requirement = SensitivityRequirement(rho1, rho2, "seed 000 Example 1")
    np.testing.assert_allclose(requirement.gamma[order], [1.5, 3, 9.5, 18], rtol=1e-13)
    uniform = get_method("uniform").plan(domain, requirement)
    np.testing.assert_allclose(np.diag(np.asarray(uniform.matrix)), 1 / 3, atol=1e-14)
    np.testing.assert_allclose(np.asarray(uniform.matrix)[~np.eye(4, dtype=bool)], 2 / 9, atol=1e-14)
    assert uniform.record_utility == pytest.approx(1 / 3, abs=1e-14)
    fine = get_method("finegrain").plan(domain, requirement)
    np.testing.assert_allclose(fine.retention[order], [0, 1 / 3, 1 / 3, 1 / 3], atol=1e-12)
    assert fine.record_utility == pytest.approx(0.4375, abs=1e-12)
    assert (fine.record_utility - 1 / 3) / fine.record_utility == pytest.approx(0.238, abs=1e-3)  # the paper's "24%"
    fine.verify()
