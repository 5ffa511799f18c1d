"""The divergences' ``rel_entr`` in numpy (issue 34: a report no longer imports scipy.special for it) agrees
with scipy's, edge cases included."""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.evaluation import metrics


def test_rel_entr_agrees_with_scipy():
    from scipy.special import rel_entr

    rng = np.random.default_rng(3)
    x = rng.random(10_000) * rng.choice([1e-9, 1e-3, 1.0, 1e3], 10_000)
    y = rng.random(10_000) * rng.choice([1e-12, 1e-3, 1.0, 1e3], 10_000)
    x[::7] = 0.0
    np.testing.assert_allclose(metrics.rel_entr(x, y), rel_entr(x, y), rtol=1e-12, atol=0)  # log of a ratio near 1: a few ulps
    edges_x = np.array([0.0, 0.0, 1.0, 1.0, -1.0, np.nan, 1.0, 0.0])
    edges_y = np.array([0.0, 2.0, 0.0, -1.0, 1.0, 1.0, np.nan, -1.0])
    np.testing.assert_array_equal(metrics.rel_entr(edges_x, edges_y), rel_entr(edges_x, edges_y))


def test_the_divergences_agree_with_scipys():
    from scipy.special import rel_entr

    p = np.array([10.0, 0.0, 5.0, 85.0])
    q = np.array([12.0, 1.0, 0.0, 87.0])
    shares_p, shares_q = p / p.sum(), q / q.sum()
    kl = rel_entr(shares_p, np.maximum(shares_q, metrics.FLOOR)).sum()
    assert abs(metrics.kl_divergence(p, q) - kl) <= 1e-12 * abs(kl)
    mix = (shares_p + shares_q) / 2
    jsd = (rel_entr(shares_p, mix).sum() + rel_entr(shares_q, mix).sum()) / (2 * np.log(2))
    assert abs(metrics.jensen_shannon(p, q) - jsd) <= 1e-12 * jsd
