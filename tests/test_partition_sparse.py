"""Perturbation Partitioning's sparse planner (issue 18) gives exactly the plan of the dense one.

The dense phases below are the planner as it was before it went sparse (kept here verbatim as the
reference): every field of the :class:`Partition` must come out identical, on small count vectors with
ties, zeros, values above rho1 and single-value domains, and each phase on its own inputs.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.sparse.csgraph import reverse_cuthill_mckee, shortest_path

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.partition import phases
from ppdp_desktop.core.methods.partition.phases import balance, candidate_orders, distribute_rest, merge
from ppdp_desktop.core.methods.partition.subtables import eps_of, gamma_of, partition_domain

ALL_STARTS_LIMIT = 32


# ------------------------------------------------------------------ the dense reference (pre issue 18)
def _dense_balance(counts, theta):
    rem = np.asarray(counts, dtype=np.int64).copy()
    m = rem.size
    rows = []
    while rem.sum() > 0:
        total = int(rem.sum())
        order = np.argsort(-rem, kind="stable")
        mu = rem[order]
        mu_theta = int(mu[theta - 1]) if theta <= m else 0
        mu_next = int(mu[theta]) if theta < m else 0
        if total - theta * max(int(mu[0]) - mu_theta, mu_next) >= theta * mu_theta:
            h = mu_theta
        else:
            h = (total - theta * mu_next) // theta
        h = min(max(h, 0), mu_theta)
        if h == 0:
            group = rem.copy()
        else:
            group = np.zeros(m, dtype=np.int64)
            group[order[:theta]] = h
        rows.append(group)
        rem = rem - group
    return np.vstack(rows) if rows else np.zeros((0, m), dtype=np.int64)


def _dense_distribute_rest(groups, rest):
    rest = np.asarray(rest, dtype=np.int64)
    n_rest = int(rest.sum())
    if n_rest == 0 or groups.shape[0] == 0:
        return groups.copy()
    sizes = groups.sum(axis=1)
    quota = (sizes * n_rest) // int(sizes.sum())
    quota[-1] += n_rest - quota.sum()
    q_hi = np.cumsum(quota)
    q_lo = q_hi - quota
    vorder = np.argsort(-rest, kind="stable")
    v_hi = np.cumsum(rest[vorder])
    v_lo = v_hi - rest[vorder]
    overlap = np.minimum(q_hi[:, None], v_hi[None, :]) - np.maximum(q_lo[:, None], v_lo[None, :])
    out = groups.copy()
    out[:, vorder] += np.clip(overlap, 0, None)
    return out


def _dense_adjacency(groups):
    a = sparse.csr_matrix((groups > 0).astype(np.int64))
    b = (a @ a.T).tocsr()
    b.setdiag(0)
    b.eliminate_zeros()
    return b


def _dense_cm_component(b, deg, start, seen):
    out = [start]
    seen[start] = True
    queue = deque([start])
    while queue:
        node = queue.popleft()
        nbrs = b.indices[b.indptr[node]:b.indptr[node + 1]]
        nbrs = nbrs[~seen[nbrs]]
        nbrs = nbrs[np.lexsort((nbrs, deg[nbrs]))]
        for nb in nbrs.tolist():
            seen[nb] = True
            out.append(nb)
            queue.append(nb)
    return out


def _dense_components(b, deg):
    seen = np.zeros(b.shape[0], dtype=bool)
    comps = []
    for node in np.lexsort((np.arange(b.shape[0]), deg)).tolist():
        if not seen[node]:
            comps.append(_dense_cm_component(b, deg, node, seen))
    return comps


def _dense_pseudo_peripheral(b, deg, comp):
    node = min(comp, key=lambda x: (deg[x], x))
    ecc = -1
    while True:
        dist = shortest_path(b, unweighted=True, indices=node)
        finite = np.isfinite(dist)
        far = float(dist[finite].max())
        if far <= ecc:
            return node
        ecc = far
        cands = np.flatnonzero(finite & (dist == far))
        node = int(cands[np.lexsort((cands, deg[cands]))][0])


def _dense_candidate_orders(groups, limit=ALL_STARTS_LIMIT):
    t = groups.shape[0]
    if t == 0:
        return []
    b = _dense_adjacency(groups)
    deg = np.diff(b.indptr)
    orders = [reverse_cuthill_mckee(b, symmetric_mode=True).astype(int).tolist()]
    comps = _dense_components(b, deg)
    if t <= limit:
        starts = list(range(t))
    else:
        starts = sorted({s for c in comps if len(c) > 1 for s in (c[0], _dense_pseudo_peripheral(b, deg, c))})
    for s in starts:
        seen = np.zeros(t, dtype=bool)
        own = _dense_cm_component(b, deg, s, seen)
        others = [node for c in comps for node in c if not seen[node]]
        for seq in (own + others, others + own):
            orders.append(seq)
            orders.append(seq[::-1])
    orders.append(list(range(t)))
    unique = {}
    for o in orders:
        unique.setdefault(tuple(o), None)
    return [list(o) for o in unique]


def _dense_run_cost(run_counts, sa_prime, n, rho2, a):
    size = run_counts.sum(axis=-1).astype(float)
    rho1_i = run_counts[..., sa_prime].max(axis=-1, initial=0) / np.maximum(size, 1.0)
    m_i = np.count_nonzero(run_counts, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = m_i * rho1_i * (1.0 - rho2) / (rho2 - rho1_i)
        cost = size / n * a / np.sqrt(size) * (ratio + 1.0)
    return np.where((rho1_i < rho2) & (size > 0), cost, np.inf)


def _dense_merge(ordered, sa_prime, rho2, a):
    t = ordered.shape[0]
    n = int(ordered.sum())
    prefix = np.vstack([np.zeros((1, ordered.shape[1]), dtype=np.int64), np.cumsum(ordered, axis=0)])
    best = np.full(t + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(t + 1, dtype=np.int64)
    for j in range(1, t + 1):
        runs = prefix[j][None, :] - prefix[:j]
        total = best[:j] + _dense_run_cost(runs, sa_prime, n, rho2, a)
        i = int(np.argmin(total))
        best[j], back[j] = total[i], i
    cuts = [t]
    while cuts[-1] > 0 and np.isfinite(best[t]):
        cuts.append(int(back[cuts[-1]]))
    return float(best[t]), cuts[::-1]


def _dense_partition_domain(counts, rho1, rho2, delta=0.05):
    """Everything but the checks of ``partition_domain`` before issue 18 (a dict of its fields)."""
    c = np.asarray(counts).astype(np.int64)
    n = int(c.sum())
    a = 2.0 * math.sqrt(math.log(2.0 / delta))
    sa_prime = c <= rho1 * n
    protected = np.where(sa_prime, c, 0)
    if protected.sum() == 0:
        return None  # "protects nothing"
    theta = int(protected.sum()) // int(protected.max())
    groups = _dense_distribute_rest(_dense_balance(protected, theta), np.where(sa_prime, 0, c))
    best = None
    for order in _dense_candidate_orders(groups):
        eps, cuts = _dense_merge(groups[order], sa_prime, rho2, a)
        if np.isfinite(eps) and (best is None or eps < best[0] - 1e-12):
            best = (eps, order, cuts)
    if best is None:
        return None  # "no valid partition"
    eps_part, order, cuts = best
    subtables = [order[i:j] for i, j in zip(cuts[:-1], cuts[1:])]
    table_counts = np.vstack([groups[s].sum(axis=0) for s in subtables])
    size = table_counts.sum(axis=1)
    rho1_i = table_counts[:, sa_prime].max(axis=1) / size
    gamma_i = gamma_of(rho1_i, rho2)
    eps_i = eps_of(size, np.count_nonzero(table_counts, axis=1), gamma_i, a)
    eps_part = float(np.sum(size / n * eps_i))
    eps_up = float(eps_of(np.array([n]), np.array([np.count_nonzero(c)]), gamma_of(rho1, rho2), a)[0])
    return dict(groups=groups, order=list(order), subtables=subtables, table_counts=table_counts, rho1_i=rho1_i,
                gamma_i=gamma_i, eps_i=eps_i, eps_part=eps_part, eps_unpartitioned=eps_up, a=a, theta=theta,
                sa_prime=sa_prime)


# ---------------------------------------------------------------------------------------- helpers
def _canonical(matrix) -> bool:
    """int64 CSR with sorted indices and no stored zeros (``m_i`` and the users rely on it)."""
    return (sparse.issparse(matrix) and matrix.format == "csr" and matrix.dtype == np.int64
            and matrix.has_sorted_indices and np.all(matrix.data > 0))


def _same_plan(p, ref) -> None:
    assert _canonical(p.groups) and _canonical(p.table_counts)
    np.testing.assert_array_equal(p.groups.toarray(), ref["groups"])
    np.testing.assert_array_equal(p.table_counts.toarray(), ref["table_counts"])
    assert p.order == ref["order"] and p.subtables == ref["subtables"]
    np.testing.assert_array_equal(p.m_i, np.count_nonzero(ref["table_counts"], axis=1))
    for name in ("rho1_i", "gamma_i", "eps_i", "sa_prime"):
        np.testing.assert_array_equal(getattr(p, name), ref[name])  # bit for bit
    for name in ("eps_part", "eps_unpartitioned", "a", "theta"):
        assert getattr(p, name) == ref[name], name


@st.composite
def count_vectors(draw):
    m = draw(st.integers(1, 40))
    top = draw(st.sampled_from([3, 12, 60, 400]))  # small tops give many ties
    counts = np.array(draw(st.lists(st.integers(0, top), min_size=m, max_size=m)), dtype=np.int64)
    if counts.sum() == 0:
        counts[draw(st.integers(0, m - 1))] = 1
    heavy = draw(st.lists(st.integers(0, m - 1), max_size=3))  # values far above rho1
    counts[heavy] *= draw(st.integers(1, 20))
    rho1 = draw(st.floats(0.01, 0.9))
    rho2 = draw(st.floats(rho1 + 0.005, 0.995))
    return counts, rho1, rho2


# ------------------------------------------------------------------------------------------ tests
def test_thesis_example_same_plan():
    ex = np.array([12, 8, 6, 5, 4, 3, 1, 1, 1, 1])
    for rho1, rho2 in ((1 / 3, 2 / 3), (1 / 4, 2 / 3), (0.2, 0.3)):
        _same_plan(partition_domain(ex, rho1, rho2), _dense_partition_domain(ex, rho1, rho2))


def _check_same(counts, rho1, rho2) -> None:
    ref = _dense_partition_domain(counts, rho1, rho2)
    if ref is None:
        with pytest.raises(ParameterError):
            partition_domain(np.array(counts), rho1, rho2)
    else:
        _same_plan(partition_domain(np.array(counts), rho1, rho2), ref)


@pytest.mark.parametrize("counts", [[7], [0, 5, 0], [1, 1], [3, 3, 3, 3, 3, 3, 3], [9, 1, 1, 0, 1]])
def test_tiny_domains_same_plan(counts):
    for rho1, rho2 in ((0.2, 0.5), (0.5, 0.9), (0.95, 0.99), (0.05, 0.06)):
        _check_same(counts, rho1, rho2)


@settings(max_examples=300, deadline=None)
@given(count_vectors(), st.booleans())
def test_sparse_planner_gives_the_dense_plan(problem, implicit_graph):
    counts, rho1, rho2 = problem
    assume(0 < rho1 < rho2 < 1)
    limit = phases.GRAPH_LIMIT
    phases.GRAPH_LIMIT = 0 if implicit_graph else limit  # B never built: SharedValues' searches
    try:
        _check_same(counts, rho1, rho2)
    finally:
        phases.GRAPH_LIMIT = limit


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=40), st.integers(1, 45))
def test_balance_matches_dense(counts, theta):
    counts = np.array(counts, dtype=np.int64)
    got = balance(counts, theta)
    assert _canonical(got) and got.shape[1] == counts.size
    np.testing.assert_array_equal(got.toarray(), _dense_balance(counts, theta))


@st.composite
def group_matrices(draw, max_t=30, max_m=14):
    t = draw(st.integers(1, max_t))
    m = draw(st.integers(1, max_m))
    density = draw(st.sampled_from([0.15, 0.4, 0.9]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    g = rng.integers(1, draw(st.sampled_from([2, 5, 50])), size=(t, m)) * (rng.random((t, m)) < density)
    empty = g.sum(axis=1) == 0
    g[empty, rng.integers(0, m, size=int(empty.sum()))] = 1  # no empty group
    return g.astype(np.int64), rng


@settings(max_examples=200, deadline=None)
@given(group_matrices(), st.integers(0, 60))
def test_distribute_rest_matches_dense(problem, scale):
    groups, rng = problem
    rest = rng.integers(0, scale + 1, size=groups.shape[1]) * (rng.random(groups.shape[1]) < 0.5)
    for arg in (groups, sparse.csr_array(groups)):
        got = distribute_rest(arg, rest)
        assert _canonical(got)
        np.testing.assert_array_equal(got.toarray(), _dense_distribute_rest(groups, rest))


@settings(max_examples=300, deadline=None)
@given(group_matrices(max_t=45), st.booleans())
def test_candidate_orders_match_dense(problem, implicit_graph):
    groups, _ = problem
    limit = phases.GRAPH_LIMIT
    phases.GRAPH_LIMIT = 0 if implicit_graph else 10**12
    try:
        assert candidate_orders(sparse.csr_array(groups)) == _dense_candidate_orders(groups)
    finally:
        phases.GRAPH_LIMIT = limit


@settings(max_examples=100, deadline=None)
@given(group_matrices(max_t=45, max_m=30))
def test_shared_values_degrees_and_scipy_rcm(problem):
    """The searches without B give B's degrees and scipy's own RCM order (seeds, row order, ties)."""
    groups, _ = problem
    graph = phases.SharedValues(sparse.csr_array(groups))
    b = _dense_adjacency(groups)
    np.testing.assert_array_equal(graph.deg, np.diff(b.indptr))
    assert graph.scipy_rcm() == reverse_cuthill_mckee(b, symmetric_mode=True).astype(int).tolist()


@settings(max_examples=400, deadline=None)
@given(group_matrices(max_t=40), st.floats(0.05, 0.95), st.floats(0.0, 1.0))
def test_merge_matches_dense(problem, rho2, share):
    groups, rng = problem
    sa_prime = rng.random(groups.shape[1]) < share
    a = 2 * math.sqrt(math.log(40))
    eps, cuts = merge(sparse.csr_array(groups), sa_prime, rho2, a)
    ref_eps, ref_cuts = _dense_merge(groups, sa_prime, rho2, a)
    assert cuts == ref_cuts
    assert eps == ref_eps or (math.isinf(eps) and math.isinf(ref_eps))


def test_a_few_hundred_groups_match_dense():
    """A few hundred groups, long runs in the optimum; B from A A^T and from the searches."""
    rng = np.random.default_rng(7)
    w = 1 / np.arange(1, 301) ** 1.1
    counts = np.bincount(np.concatenate([np.arange(300), rng.choice(300, size=20_000, p=w / w.sum())]))
    for rho1, rho2 in ((0.1, 0.5), (0.05, 0.12)):
        p = partition_domain(counts, rho1, rho2)
        assert p.groups.shape[0] > 40
        ref_orders = _dense_candidate_orders(p.groups.toarray())
        assert candidate_orders(p.groups) == ref_orders
        limit = phases.GRAPH_LIMIT
        phases.GRAPH_LIMIT = 0
        try:
            assert candidate_orders(p.groups) == ref_orders
        finally:
            phases.GRAPH_LIMIT = limit
        dense = p.groups.toarray()
        for order in ref_orders[:3]:
            assert merge(p.groups[order], p.sa_prime, rho2, p.a) == _dense_merge(dense[order], p.sa_prime, rho2, p.a)
