"""The three phases of Perturbation Partitioning (SPEC 2.3; thesis ch. 4, Figs. 10, 13, 14).

Pure statistics on value counts: balancing builds the initial groups, rearranging orders them by
Reverse Cuthill-McKee on ``B = A A^T``, merging cuts the ordered groups into sub-tables by dynamic
programming. No records, no Qt.
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy is imported when a plan is made, not when the window opens
    from scipy import sparse

# Try RCM from every start node when there are at most this many groups; else a few good starts.
ALL_STARTS_LIMIT = 32


# --------------------------------------------------------------------------- phase 1: balancing
def balance(counts: np.ndarray, theta: int) -> np.ndarray:
    """Initial groups of a theta-balanced count vector (Fig. 10, Eq. 22); rows = groups in order."""
    rem = np.asarray(counts, dtype=np.int64).copy()
    m = rem.size
    rows: list[np.ndarray] = []
    while rem.sum() > 0:
        total = int(rem.sum())
        order = np.argsort(-rem, kind="stable")  # descending; earlier value wins ties
        mu = rem[order]
        mu_theta = int(mu[theta - 1]) if theta <= m else 0
        mu_next = int(mu[theta]) if theta < m else 0
        # sigma(mu_theta) >= mu_theta, in exact integer arithmetic (times theta)
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


def distribute_rest(groups: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """Hand out the records of the non-SA' values ``rest`` proportionally to the group sizes.

    Group ``j`` receives ``floor(|g_j|/|T'| * |T''|)`` records, the remainder goes to the last group;
    records are handed out value by value, most frequent value first (ties: listed first).
    """
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
    # overlap of group interval [q_lo, q_hi) with value interval [v_lo, v_hi): (groups x values)
    overlap = np.minimum(q_hi[:, None], v_hi[None, :]) - np.maximum(q_lo[:, None], v_lo[None, :])
    out = groups.copy()
    out[:, vorder] += np.clip(overlap, 0, None)
    return out


# ------------------------------------------------------------------------ phase 2: rearranging
def _adjacency(groups: np.ndarray) -> sparse.csr_matrix:
    from scipy import sparse

    a = sparse.csr_matrix((groups > 0).astype(np.int64))
    b = (a @ a.T).tocsr()
    b.setdiag(0)
    b.eliminate_zeros()
    return b


def _cm_component(b: sparse.csr_matrix, deg: np.ndarray, start: int, seen: np.ndarray) -> list[int]:
    """Cuthill-McKee BFS of one component; neighbours by increasing degree, ties by index."""
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


def _components(b: sparse.csr_matrix, deg: np.ndarray) -> list[list[int]]:
    seen = np.zeros(b.shape[0], dtype=bool)
    comps = []
    for node in np.lexsort((np.arange(b.shape[0]), deg)).tolist():
        if not seen[node]:
            comps.append(_cm_component(b, deg, node, seen))
    return comps


def _pseudo_peripheral(b: sparse.csr_matrix, deg: np.ndarray, comp: list[int]) -> int:
    """George-Liu pseudo-peripheral node of a component."""
    node = min(comp, key=lambda x: (deg[x], x))
    ecc = -1
    while True:
        from scipy.sparse.csgraph import shortest_path

        dist = shortest_path(b, unweighted=True, indices=node)
        finite = np.isfinite(dist)
        far = float(dist[finite].max())
        if far <= ecc:
            return node
        ecc = far
        cands = np.flatnonzero(finite & (dist == far))
        node = int(cands[np.lexsort((cands, deg[cands]))][0])


def candidate_orders(groups: np.ndarray) -> list[list[int]]:
    """Group orders to try: scipy's RCM, RCM from each (or each good) start node, their reverses.

    For every start node ``s`` the component of ``s`` is ordered by Cuthill-McKee from ``s`` and put
    first or last among the other components (each from its min-degree node); all four of
    (first, last) x (CM, reversed CM) are tried. This reproduces MATLAB's symrcm order on Ex. 8.
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    t = groups.shape[0]
    if t == 0:
        return []
    b = _adjacency(groups)
    deg = np.diff(b.indptr)
    orders: list[list[int]] = [reverse_cuthill_mckee(b, symmetric_mode=True).astype(int).tolist()]
    comps = _components(b, deg)
    if t <= ALL_STARTS_LIMIT:
        starts = list(range(t))
    else:
        starts = sorted({s for c in comps if len(c) > 1 for s in (c[0], _pseudo_peripheral(b, deg, c))})
    for s in starts:
        seen = np.zeros(t, dtype=bool)
        own = _cm_component(b, deg, s, seen)
        others = [node for c in comps for node in c if not seen[node]]
        for seq in (own + others, others + own):
            orders.append(seq)
            orders.append(seq[::-1])
    orders.append(list(range(t)))  # creation order last: RCM orders win ties
    unique: dict[tuple[int, ...], None] = {}
    for o in orders:
        unique.setdefault(tuple(o), None)
    return [list(o) for o in unique]


# --------------------------------------------------------------------------- phase 3: merging
def run_cost(run_counts: np.ndarray, sa_prime: np.ndarray, n: int, rho2: float, a: float) -> np.ndarray:
    """|T_i|/|T| * eps_i for each row of run counts (inf when rho1_i >= rho2)."""
    size = run_counts.sum(axis=-1).astype(float)
    rho1_i = run_counts[..., sa_prime].max(axis=-1, initial=0) / np.maximum(size, 1.0)
    m_i = np.count_nonzero(run_counts, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # m_i / (gamma_i - 1) = m_i rho1_i (1 - rho2) / (rho2 - rho1_i)
        ratio = m_i * rho1_i * (1.0 - rho2) / (rho2 - rho1_i)
        cost = size / n * a / np.sqrt(size) * (ratio + 1.0)
    return np.where((rho1_i < rho2) & (size > 0), cost, np.inf)


def merge(ordered: np.ndarray, sa_prime: np.ndarray, rho2: float, a: float) -> tuple[float, list[int]]:
    """DP over the ordered groups: (eps(Part), cut points [0, .., t]) minimizing eps(Part)."""
    t = ordered.shape[0]
    n = int(ordered.sum())
    prefix = np.vstack([np.zeros((1, ordered.shape[1]), dtype=np.int64), np.cumsum(ordered, axis=0)])
    best = np.full(t + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(t + 1, dtype=np.int64)
    for j in range(1, t + 1):
        runs = prefix[j][None, :] - prefix[:j]  # run i..j-1 for each start i < j
        total = best[:j] + run_cost(runs, sa_prime, n, rho2, a)
        i = int(np.argmin(total))
        best[j], back[j] = total[i], i
    cuts = [t]
    while cuts[-1] > 0 and np.isfinite(best[t]):
        cuts.append(int(back[cuts[-1]]))
    return float(best[t]), cuts[::-1]
