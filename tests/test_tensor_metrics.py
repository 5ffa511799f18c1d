"""Seed 001 section V evaluation measures on contingency tensors (SPEC 2.4)."""
from __future__ import annotations

import numpy as np
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation.metrics import kl_divergence, pearson_chi_square
from ppdp_desktop.core.evaluation.tensor_metrics import (
    cube_marginals,
    cube_relative_error,
    groupby_relative_error,
    uncertainty_coefficient,
    uncertainty_table,
)


def test_distances_take_tensors_cell_by_cell():
    # the distances are metrics.py's (pinned there); on a tensor they match its cells position by position
    p = np.array([[1.0, 1.0], [1.0, 1.0]])  # uniform 1/4
    q = np.array([[2.0, 1.0], [1.0, 0.0]])  # 1/2, 1/4, 1/4, 0
    # KL = 1/4 ln(1/2) + 0 + 0 + 1/4 ln(1/4 / 1e-12): a missing cell costs a large, finite amount
    assert kl_divergence(p, q) == pytest.approx(0.25 * np.log(0.5) + 0.25 * np.log(0.25 / 1e-12))
    # Pearson (the original as expected): (1/4)^2/(1/4) + 0 + 0 + (1/4)^2/(1/4) = 0.5
    assert pearson_chi_square(p, q) == pytest.approx(0.5)
    assert pearson_chi_square(p, q) == pearson_chi_square(p.ravel(), q.ravel())
    # negative estimates are clipped before normalizing: [3, 0] / 3 against [3/4, 1/4]
    assert pearson_chi_square(np.array([3.0, 1.0]), np.array([3.0, -1.0])) == pytest.approx(
        (1 - 0.75) ** 2 / 0.75 + 0.25**2 / 0.25)


def test_zero_for_identical_inputs():
    t = np.random.default_rng(0).integers(1, 20, size=(3, 4, 2)).astype(float)
    assert kl_divergence(t, t) == pytest.approx(0.0, abs=1e-12)
    assert pearson_chi_square(t, 5 * t) == pytest.approx(0.0, abs=1e-12)
    assert groupby_relative_error(t, t) == 0.0
    assert cube_relative_error(t, t) == 0.0


def test_groupby_relative_error_known_example():
    true = np.array([[10.0, 0.0], [4.0, 5.0]])
    est = np.array([[12.0, 3.0], [4.0, 2.5]])
    # cells with true > 0: 2/10, 0/4, 2.5/5 -> mean 0.7/3
    assert groupby_relative_error(true, est) == pytest.approx((0.2 + 0.0 + 0.5) / 3)


def test_cube_includes_total_and_every_axis():
    rng = np.random.default_rng(1)
    t = rng.integers(0, 10, size=(2, 3, 4)).astype(float)
    keeps = [k for k, _, _ in cube_marginals(t, t)]
    assert len(keeps) == 8 and () in keeps and (0, 1, 2) in keeps
    assert all((a,) in keeps for a in range(3))
    assert [k for k, _, _ in cube_marginals(t, t, max_dims=1)] == [(), (0,), (1,), (2,)]
    total = dict((k, (tm, em)) for k, tm, em in cube_marginals(t, t))[()]
    assert float(total[0]) == t.sum()


def test_cube_relative_error_pooled_hand_example():
    true = np.array([[1.0, 3.0], [0.0, 4.0]])
    est = np.array([[2.0, 3.0], [1.0, 4.0]])
    # base cells: 1/1, 0, 0 ; axis-0 sums (4, 4) vs (5, 5): 1/4, 1/4 ;
    # axis-1 sums (1, 7) vs (3, 7): 2, 0 ; total 8 vs 10: 1/4
    errs = [1.0, 0, 0, 0.25, 0.25, 2.0, 0.0, 0.25]
    assert cube_relative_error(true, est) == pytest.approx(np.mean(errs))
    assert cube_relative_error(true, est, max_dims=0) == pytest.approx(0.25)


def test_uncertainty_coefficient_independent_and_deterministic():
    px, py = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.4])
    assert uncertainty_coefficient(1000 * np.outer(px, py)) == pytest.approx(0.0, abs=1e-12)
    assert uncertainty_coefficient(np.diag([5.0, 3.0, 2.0])) == pytest.approx(1.0)
    # X determined by Y (Y finer than X): U(X|Y) = 1, U(Y|X) < 1
    joint = np.array([[2.0, 3.0, 0.0], [0.0, 0.0, 5.0]])
    assert uncertainty_coefficient(joint) == pytest.approx(1.0)
    assert uncertainty_coefficient(joint.T) < 1.0
    assert uncertainty_coefficient(np.array([[4.0, 6.0]])) == 0.0  # constant X


def test_uncertainty_table_pairs():
    # axis 0 and axis 1 identical, axis 2 independent of both
    base = np.diag([3.0, 2.0, 5.0])
    t = base[:, :, None] * np.array([0.5, 0.5])[None, None, :]
    u = uncertainty_table(t)
    assert u.shape == (3, 3)
    assert u[0, 1] == pytest.approx(1.0) and u[1, 0] == pytest.approx(1.0)
    assert np.allclose([u[0, 2], u[2, 0], u[1, 2], u[2, 1]], 0.0, atol=1e-12)
    assert np.allclose(np.diag(u), 1.0)


def test_errors():
    with pytest.raises(ParameterError, match="shapes"):
        kl_divergence(np.ones(3), np.ones(4))
    with pytest.raises(ParameterError, match="shapes"):
        groupby_relative_error(np.ones(3), np.ones(4))
    with pytest.raises(ParameterError, match="negative"):
        pearson_chi_square(np.array([1.0, -1.0]), np.ones(2))
    with pytest.raises(ParameterError, match="sum to 0"):
        kl_divergence(np.ones(2), np.array([-1.0, 0.0]))
    with pytest.raises(ParameterError):
        groupby_relative_error(np.zeros(3), np.ones(3))


def test_rr_release_checks_do_not_import_scipy_stats():
    """rr's group-disclosure measurement imports this module on every rr job; scipy.stats (~1 s to import) is
    imported only where the uncertainty coefficient is computed."""
    import subprocess
    import sys

    code = ("import sys, ppdp_desktop.core.methods.rr.evaluation as e, ppdp_desktop.core.evaluation.tensor_metrics; "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
