"""Estimates that make sense (issue 17, point 2): the non-negative MLE by default, with an interval made
for that estimator by a seeded parametric bootstrap, so the estimate lies inside its own interval and the
interval covers the truth about as often as it says."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.methods.perturbation.plan import perturb_codes, retention_matrix
from ppdp_desktop.core.privacy.reconstruction import estimate_with_interval, iterative_bayesian, iterative_bayesian_many


def test_many_equals_one_at_a_time() -> None:
    rng = np.random.default_rng(0)
    matrix = retention_matrix(np.array([0.6, 0.5, 0.4, 0.7]))
    observed = rng.integers(0, 200, (4, 5)).astype(float)
    together = iterative_bayesian_many(observed, matrix, tol=1e-12, max_iter=20_000)
    alone = np.column_stack([iterative_bayesian(observed[:, r], matrix, tol=1e-12, max_iter=20_000)
                             for r in range(5)])
    np.testing.assert_allclose(together, alone, rtol=1e-6, atol=1e-6)


def test_mle_interval_holds_its_estimate_and_covers_the_truth() -> None:
    m = 6
    retention = np.full(m, 0.5)
    matrix = retention_matrix(retention)
    true = np.array([500, 300, 100, 50, 30, 20])
    codes = np.repeat(np.arange(m), true).astype(np.int32)
    covered, trials = 0.0, 200  # 200 seeded releases
    for seed in range(trials):
        observed = np.bincount(perturb_codes(codes, retention, np.random.default_rng(seed)), minlength=m)
        estimate, low, high = estimate_with_interval(observed, matrix)
        assert (estimate >= 0).all() and (low <= estimate).all() and (estimate <= high).all()
        covered += ((low <= true) & (true <= high)).mean()
    assert covered / trials >= 0.93


def test_ppdp_estimate_shows_non_negative_estimates_inside_their_intervals(tmp_path, capsys) -> None:
    import json

    rng = np.random.default_rng(3)
    n = 3000
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n),
                          "diagnosis": rng.choice(["flu", "asthma", "gout", "rare1", "rare2"], n,
                                                  p=[0.6, 0.3, 0.094, 0.003, 0.003])})
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "rel"
    assert main(["anonymize", str(data), "--out", str(out), "--sensitive", "diagnosis", "--rho1", "0.05",
                 "--rho2", "0.3", "--no-report", "--seed", "2"]) == 0
    capsys.readouterr()
    assert main(["estimate", str(out), "--sensitive", "diagnosis", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(r["estimate"] >= 0 and r["ci_low"] <= r["estimate"] <= r["ci_high"] for r in rows)
    assert sum(r["estimate"] for r in rows) == pytest.approx(n)
    assert main(["estimate", str(out), "--sensitive", "diagnosis", "--json", "--estimator", "unbiased"]) == 0
    unbiased = json.loads(capsys.readouterr().out)
    assert [r["estimate"] for r in unbiased] == pytest.approx([r["unbiased"] for r in rows])
