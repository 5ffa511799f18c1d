"""The three phases of Perturbation Partitioning (SPEC 2.3; thesis ch. 4, Figs. 10, 13, 14).

Pure statistics on value counts: balancing builds the initial groups, rearranging orders them by
Reverse Cuthill-McKee on ``B = A A^T``, merging cuts the ordered groups into sub-tables by dynamic
programming. No records, no Qt.
"""
from __future__ import annotations

import heapq
from collections import deque
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy is imported when a plan is made, not when the window opens
    from scipy import sparse

# Try RCM from every start node when there are at most this many groups; else a few good starts.
ALL_STARTS_LIMIT = 32


# --------------------------------------------------------------------------- phase 1: balancing
def as_groups(groups: np.ndarray | sparse.csr_array) -> sparse.csr_array:
    """Groups (rows) x values counts as a canonical int64 CSR array (sorted indices, no stored zeros)."""
    from scipy import sparse

    out = sparse.csr_array(groups, dtype=np.int64, copy=True)
    out.eliminate_zeros()
    out.sum_duplicates()  # also sorts the indices
    return out


def balance(counts: np.ndarray, theta: int) -> sparse.csr_array:
    """Initial groups of a theta-balanced count vector (Fig. 10, Eq. 22); rows = groups in order.

    The values still holding records are kept in a heap by (count descending, index ascending): each
    group takes ``h`` records of the ``theta`` first, which keeps their order among themselves, so a
    group costs O(theta log m) and the whole phase O(nnz log m).
    """
    from scipy import sparse

    rem = np.asarray(counts, dtype=np.int64)
    m = rem.size
    heap = [(-int(rem[v]), int(v)) for v in np.flatnonzero(rem).tolist()]
    heapq.heapify(heap)
    total = int(rem.sum())
    rows: list[int] = []
    cols: list[int] = []
    vals: list[int] = []
    g = 0
    while total > 0:
        top = [heapq.heappop(heap) for _ in range(min(theta + 1, len(heap)))]
        mu_0 = -top[0][0]
        mu_theta = -top[theta - 1][0] if theta <= len(top) else 0
        mu_next = -top[theta][0] if theta < len(top) else 0
        # sigma(mu_theta) >= mu_theta, in exact integer arithmetic (times theta)
        if total - theta * max(mu_0 - mu_theta, mu_next) >= theta * mu_theta:
            h = mu_theta
        else:
            h = (total - theta * mu_next) // theta
        h = min(max(h, 0), mu_theta)
        if h == 0:  # the group is all that is left
            for neg, v in top + heap:
                rows.append(g)
                cols.append(v)
                vals.append(-neg)
            total = 0
        else:
            for neg, v in top[:theta]:
                rows.append(g)
                cols.append(v)
                vals.append(h)
                if -neg > h:
                    heapq.heappush(heap, (neg + h, v))
            if len(top) > theta:
                heapq.heappush(heap, top[theta])
            total -= theta * h
        g += 1
    coo = sparse.coo_array((np.array(vals, dtype=np.int64), (np.array(rows, dtype=np.int64),
                            np.array(cols, dtype=np.int64))), shape=(g, m))
    return as_groups(coo)


def distribute_rest(groups: np.ndarray | sparse.csr_array, rest: np.ndarray) -> sparse.csr_array:
    """Hand out the records of the non-SA' values ``rest`` proportionally to the group sizes.

    Group ``j`` receives ``floor(|g_j|/|T'| * |T''|)`` records, the remainder goes to the last group;
    records are handed out value by value, most frequent value first (ties: listed first). Both the
    groups' quotas and the values' records are consecutive intervals of ``[0, |T''|)``; each piece
    between two interval ends goes from one value to one group (O(t + m log m), never t x m).
    """
    from scipy import sparse

    groups = as_groups(groups)
    rest = np.asarray(rest, dtype=np.int64)
    n_rest = int(rest.sum())
    if n_rest == 0 or groups.shape[0] == 0:
        return groups
    sizes = np.asarray(groups.sum(axis=1)).ravel()
    quota = (sizes * n_rest) // int(sizes.sum())
    quota[-1] += n_rest - quota.sum()
    q_hi = np.cumsum(quota)
    vorder = np.argsort(-rest, kind="stable")
    v_hi = np.cumsum(rest[vorder])
    cuts = np.union1d(q_hi, v_hi)  # ends of the pieces, the last is n_rest
    lo = np.concatenate([[0], cuts[:-1]])
    keep = cuts > lo
    lo, length = lo[keep], (cuts - lo)[keep]
    g = np.searchsorted(q_hi, lo, side="right")
    v = vorder[np.searchsorted(v_hi, lo, side="right")]
    extra = sparse.coo_array((length, (g, v)), shape=groups.shape)
    return as_groups(groups + extra.tocsr())


# ------------------------------------------------------------------------ phase 2: rearranging
def _adjacency(groups: np.ndarray | sparse.csr_array) -> sparse.csr_matrix:
    from scipy import sparse

    g = as_groups(groups)
    a = sparse.csr_matrix((np.ones(g.nnz, dtype=np.int64), g.indices, g.indptr), shape=g.shape)
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


def candidate_orders(groups: np.ndarray | sparse.csr_array) -> list[list[int]]:
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
def _cost(size: np.ndarray, top: np.ndarray, distinct: np.ndarray, n: int, rho2: float, a: float) -> np.ndarray:
    """|T_i|/|T| * eps_i of runs given their sizes, largest SA' counts and numbers of values (inf when
    rho1_i >= rho2). Non-decreasing in ``top`` and ``distinct`` (each rounding is monotone), so bounds on
    them give bounds on the cost."""
    size = size.astype(float)
    rho1_i = top / np.maximum(size, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # m_i / (gamma_i - 1) = m_i rho1_i (1 - rho2) / (rho2 - rho1_i)
        ratio = distinct * rho1_i * (1.0 - rho2) / (rho2 - rho1_i)
        cost = size / n * a / np.sqrt(size) * (ratio + 1.0)
    return np.where((rho1_i < rho2) & (size > 0), cost, np.inf)


def merge(ordered: np.ndarray | sparse.csr_array, sa_prime: np.ndarray, rho2: float,
          a: float) -> tuple[float, list[int]]:
    """DP over the ordered groups: (eps(Part), cut points [0, .., t]) minimizing eps(Part).

    ``best[j] = min_i best[i] + cost(run i..j-1)``, the first ``i`` on ties. For one end ``j`` the runs'
    sizes come from prefix sums, their numbers of values from each value's last group before ``j``
    (a histogram over groups, summed from the right), their largest SA' count as a running maximum
    from the right of the per-entry counts ``Q_v(j) - Q_v(g)``. That maximum is exact only on a window
    of starts ``[lo, j)``; for starts before ``lo`` it is at least the one at ``lo``, which bounds their
    cost from below: the window grows until no start outside it can reach the window's best.
    """
    g = as_groups(ordered)
    t, m = g.shape
    if t == 0:
        return 0.0, [0]
    indptr, val, cnt = g.indptr.astype(np.int64), g.indices.astype(np.int64), g.data
    sizes = np.diff(np.concatenate([[0], np.cumsum(cnt)])[indptr])
    prefix = np.concatenate([[0], np.cumsum(sizes)])
    n = int(prefix[-1])
    grp = np.repeat(np.arange(t), np.diff(indptr))
    # per entry: the value's records in earlier groups (pre) and the value's previous group (prev)
    by_value = np.lexsort((grp, val))
    v_s, c_s = val[by_value], cnt[by_value]
    first = np.ones(v_s.size, dtype=bool)
    first[1:] = v_s[1:] != v_s[:-1]
    before = np.cumsum(c_s) - c_s
    pre = np.empty_like(before)
    pre[by_value] = before - np.maximum.accumulate(np.where(first, before, 0))
    prev = np.empty_like(grp)
    prev_s = np.empty_like(grp)
    prev_s[0] = -1
    prev_s[1:] = grp[by_value][:-1]
    prev[by_value] = np.where(first, -1, prev_s)
    protected = np.asarray(sa_prime, dtype=bool)[val]

    q = np.zeros(m, dtype=np.int64)  # Q_v(j): records of v in groups before j
    last = np.zeros(t, dtype=np.int64)  # how many values have their last group before j at each group
    best = np.full(t + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(t + 1, dtype=np.int64)
    window = 1
    for j in range(1, t + 1):
        lo_e, hi_e = indptr[j - 1], indptr[j]
        q[val[lo_e:hi_e]] += cnt[lo_e:hi_e]
        p = prev[lo_e:hi_e]
        np.subtract.at(last, p[p >= 0], 1)
        last[j - 1] = hi_e - lo_e
        distinct = np.cumsum(last[j - 1::-1])[::-1]  # D(i, j) for i < j
        size = prefix[j] - prefix[:j]
        lo = max(0, j - window)
        while True:
            e0 = indptr[lo]
            counts_e = np.where(protected[e0:hi_e], q[val[e0:hi_e]] - pre[e0:hi_e], 0)
            top = np.maximum.accumulate(np.maximum.reduceat(counts_e, indptr[lo:j] - e0)[::-1])[::-1]
            total = best[lo:j] + _cost(size[lo:], top, distinct[lo:], n, rho2, a)
            k = int(np.argmin(total))
            if lo == 0:
                break
            bound = best[:lo] + _cost(size[:lo], np.full(lo, top[0]), distinct[:lo], n, rho2, a)
            reach = np.flatnonzero(bound <= total[k])
            if reach.size == 0:
                break
            lo = min(int(reach[-1]), max(0, j - 2 * (j - lo)))
        best[j], back[j] = total[k], lo + k
        window = max(1, (j - lo))
    cuts = [t]
    while cuts[-1] > 0 and np.isfinite(best[t]):
        cuts.append(int(back[cuts[-1]]))
    return float(best[t]), cuts[::-1]
