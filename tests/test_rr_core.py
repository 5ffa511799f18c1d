"""Randomized response under attribute disclosure (SPEC 1.3, 2.4): risk, optimizer, estimation."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.rr.parameters import (
    apply_axes,
    contingency,
    disclosure_risk,
    estimate_tensor,
    marginal,
    max_risk,
    optimal_parameters,
    project_to_simplex,
    randomize_codes,
    reconstruction_probability,
    rr_matrix,
    utility_objective,
)


def _kron(mats):
    out = np.ones((1, 1))
    for m in mats:
        out = np.kron(out, m)
    return out


def _brute_R(pi, P):
    """Lemma 1 literally: R(mu) = sum_nu P[nu|mu] * P[nu|mu] pi_mu / lambda_nu."""
    lam = P @ pi
    R = np.zeros_like(pi)
    for mu in range(pi.size):
        for nu in range(pi.size):
            if lam[nu] > 0:
                R[mu] += P[nu, mu] * P[nu, mu] * pi[mu] / lam[nu]
    return R


def _brute_risk(counts, p_qi, p_s):
    dims = counts.shape
    joint = counts.reshape(-1, dims[-1]) / counts.sum()
    pa = joint.sum(axis=1)
    R_qi = np.ones(pa.size)
    if p_qi is not None:
        R_qi = _brute_R(pa, _kron([rr_matrix(d, p) for d, p in zip(dims[:-1], p_qi)]))
    risk = np.zeros_like(joint)
    for a in range(joint.shape[0]):
        if pa[a] == 0:
            continue
        cond = joint[a] / pa[a]
        R_s = np.ones(dims[-1]) if p_s is None else _brute_R(cond, rr_matrix(dims[-1], p_s))
        for u in range(dims[-1]):
            if joint[a, u] > 0:
                risk[a, u] = R_qi[a] * cond[u] * R_s[u]
    return risk.reshape(dims)


def _random_table(rng, n_qi=None, zeros=True):
    n_qi = n_qi or int(rng.integers(2, 4))
    dims = tuple(int(d) for d in rng.integers(2, 6, size=n_qi + 1))
    counts = rng.integers(0, 8, size=dims).astype(float)
    if zeros:
        counts[rng.random(dims) < 0.3] = 0
    counts.flat[0] += 1
    return counts


def _random_p(rng, d):
    return float(1 / d + rng.random() * (1 - 1 / d))


def test_rr_matrix():
    m = rr_matrix(4, 0.7)
    assert np.allclose(m.sum(axis=0), 1) and np.allclose(np.diag(m), 0.7)
    assert np.allclose(m[0, 1], 0.1)
    assert np.array_equal(rr_matrix(1, 0.3), [[1.0]])
    with pytest.raises(ParameterError):
        rr_matrix(3, 0.2)


def test_contingency_counts():
    a = np.array([0, 1, 1, 2])
    s = np.array([1, 0, 0, 1])
    t = contingency([a, s], [3, 2])
    assert t.shape == (3, 2) and t[1, 0] == 2 and t[0, 1] == 1 and t[2, 1] == 1 and t.sum() == 4


def test_apply_axes_equals_kron():
    rng = np.random.default_rng(1)
    for _ in range(10):
        dims = rng.integers(1, 6, size=int(rng.integers(1, 4)))
        x = rng.random(dims)
        mats = [rng.random((d, d)) for d in dims]
        assert np.allclose(apply_axes(x, mats).ravel(), _kron(mats) @ x.ravel())


def test_reconstruction_probability_equals_brute_force():
    rng = np.random.default_rng(2)
    for _ in range(10):
        dims = tuple(rng.integers(2, 5, size=3))
        pi = rng.random(dims) * (rng.random(dims) > 0.3)
        pi /= pi.sum()
        mats = [rr_matrix(d, _random_p(rng, d)) for d in dims]
        assert np.allclose(reconstruction_probability(pi, mats).ravel(), _brute_R(pi.ravel(), _kron(mats)))


@pytest.mark.parametrize("randomize", ["qi", "s", "both"])
def test_risk_equals_brute_force(randomize):
    rng = np.random.default_rng({"qi": 3, "s": 4, "both": 5}[randomize])
    for _ in range(8):
        c = _random_table(rng)
        p_qi = [_random_p(rng, d) for d in c.shape[:-1]] if randomize != "s" else None
        p_s = _random_p(rng, c.shape[-1]) if randomize != "qi" else None
        r = disclosure_risk(c, p_qi, p_s)
        assert np.allclose(r, _brute_risk(c, p_qi, p_s))
        assert max_risk(c, p_qi, p_s) == pytest.approx(r.max())
        assert np.all(r[c == 0] == 0)


def test_limits_no_and_full_randomization():
    rng = np.random.default_rng(6)
    c = _random_table(rng)
    qi = c.sum(axis=-1, keepdims=True)
    cond = np.divide(c, qi, out=np.zeros_like(c), where=qi > 0)
    assert np.allclose(disclosure_risk(c, None, None), cond)
    assert np.allclose(disclosure_risk(c, [1.0] * (c.ndim - 1), 1.0), cond)
    full = [1 / d for d in c.shape[:-1]]
    assert np.allclose(disclosure_risk(c, full, None), c / c.sum())          # pi_{alpha,u}


def test_each_part_minimized_at_full_randomization():
    rng = np.random.default_rng(7)
    for _ in range(10):
        c = _random_table(rng)
        qd, sd = c.shape[:-1], c.shape[-1]
        full_qi = [1 / d for d in qd]
        for _ in range(5):
            p_qi = [_random_p(rng, d) for d in qd]
            p_s = _random_p(rng, sd)
            assert max_risk(c, full_qi, None) <= max_risk(c, p_qi, None) + 1e-12
            assert max_risk(c, None, 1 / sd) <= max_risk(c, None, p_s) + 1e-12
            assert max_risk(c, full_qi, 1 / sd) <= max_risk(c, p_qi, p_s) + 1e-12
            # cellwise too (Property 1)
            assert np.all(disclosure_risk(c, full_qi, None) <= disclosure_risk(c, p_qi, None) + 1e-12)
            assert np.all(disclosure_risk(c, None, 1 / sd) <= disclosure_risk(c, None, p_s) + 1e-12)


def _grid_best(c, tau, randomize):
    qd, sd = c.shape[:-1], c.shape[-1]
    axes, dims = [], []
    if randomize != "s":
        dims += list(qd)
    if randomize != "qi":
        dims += [sd]
    axes = [np.append(np.arange(1 / d + 0.05, 1.0, 0.05), 1.0) for d in dims]
    best = np.inf
    for ps in itertools.product(*axes):
        p_qi = list(ps[:len(qd)]) if randomize != "s" else None
        p_s = ps[-1] if randomize != "qi" else None
        if max_risk(c, p_qi, p_s) <= tau:
            best = min(best, utility_objective(dims, ps))
    return best


@pytest.mark.parametrize("randomize,seed", [("qi", 10), ("qi", 11), ("both", 12), ("s", 13), ("qi", 14)])
def test_optimizer_feasible_and_beats_grid(randomize, seed):
    rng = np.random.default_rng(seed)
    dims = tuple(int(d) for d in rng.integers(2, 5, size=3))
    c = rng.integers(0, 10, size=dims).astype(float)
    c[rng.random(dims) < 0.2] = 0
    c.flat[0] += 1
    p_qi0 = [1 / d for d in dims[:-1]] if randomize != "s" else None
    p_s0 = 1 / dims[-1] if randomize != "qi" else None
    lo, hi = max_risk(c, p_qi0, p_s0), max_risk(c, None, None)
    tau = lo + 0.4 * (hi - lo)
    res = optimal_parameters(c, 1 / tau, randomize)
    assert res.verified_max_risk <= tau * (1 + 1e-9)
    assert max_risk(c, res.p_qi, res.p_s) == pytest.approx(res.verified_max_risk)
    ps = (list(res.p_qi) if res.p_qi else []) + ([res.p_s] if res.p_s is not None else [])
    ds = (list(dims[:-1]) if res.p_qi else []) + ([dims[-1]] if res.p_s is not None else [])
    assert res.objective == pytest.approx(utility_objective(ds, ps))
    assert res.objective <= _grid_best(c, tau, randomize) * (1 + 1e-3)


def test_optimizer_trivial_and_infeasible():
    c = np.array([[5.0, 5.0], [0.0, 3.0]])
    res = optimal_parameters(c, 1.0, "both")                      # l = 1: no randomization needed
    assert res.p_qi == (1.0,) and res.p_s == 1.0 and res.objective == 1.0
    with pytest.raises(ParameterError, match="full randomization"):
        optimal_parameters(c, 100.0, "s")


def test_randomize_codes_matrix():
    rng = np.random.default_rng(20)
    codes = np.zeros(200_000, dtype=np.int64)
    out = randomize_codes(codes, 4, 0.55, rng)
    freq = np.bincount(out, minlength=4) / codes.size
    assert np.allclose(freq, rr_matrix(4, 0.55)[:, 0], atol=0.005)


def _sample_table(rng, n, dims):
    probs = rng.dirichlet(np.ones(int(np.prod(dims)))).reshape(dims)
    flat = rng.choice(probs.size, size=n, p=probs.ravel())
    return list(np.unravel_index(flat, dims))


def _estimate_runs(rng, codes, dims, ps, runs):
    mats = [rr_matrix(d, p) for d, p in zip(dims, ps)]
    ests = []
    for _ in range(runs):
        pert = [randomize_codes(c, d, p, rng) for c, d, p in zip(codes, dims, ps)]
        ests.append(estimate_tensor(contingency(pert, dims), mats))
    return np.array(ests)


def test_monte_carlo_estimate_unbiased_and_consistent():
    rng = np.random.default_rng(21)
    dims, ps = (3, 4, 3), (0.7, 0.6, 0.8)
    codes = _sample_table(rng, 3000, dims)
    truth = contingency(codes, dims)
    ests = _estimate_runs(rng, codes, dims, ps, 200)
    se = ests.std(axis=0, ddof=1) / np.sqrt(len(ests))
    assert np.all(np.abs(ests.mean(axis=0) - truth) <= 4 * se + 1e-9)
    assert ests.sum(axis=(1, 2, 3)) == pytest.approx(np.full(200, 3000.0))

    def rel_err(n):
        cs = _sample_table(np.random.default_rng(22), n, dims)
        t = contingency(cs, dims) / n
        e = _estimate_runs(rng, cs, dims, ps, 40) / n
        return np.sqrt(((e - t) ** 2).sum(axis=(1, 2, 3))).mean()

    assert rel_err(20_000) < 0.6 * rel_err(2_000)


def test_projection_and_marginal():
    t = np.array([[3.0, -1.0], [2.0, 1.0]])
    p = project_to_simplex(t)
    assert p.min() >= 0 and p.sum() == pytest.approx(t.sum())
    x = np.arange(24.0).reshape(2, 3, 4)
    assert np.array_equal(marginal(x, [0, 2]), x.sum(axis=1))
    assert np.array_equal(marginal(x, [1]), x.sum(axis=(0, 2)))
