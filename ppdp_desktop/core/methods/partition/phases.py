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
# Build B = A A^T only while sum over values of (groups holding it)^2, a bound on its entries, is at most this.
GRAPH_LIMIT = 2_000_000


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
    ecc: float = -1
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

    ``B = A A^T`` is built only while it is small (:data:`GRAPH_LIMIT`); a value held by many groups
    makes it dense (a value above rho1 is handed to every group), and then the same orders come from
    breadth-first searches over groups -> values -> groups (:class:`SharedValues`), never from ``B``.
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    g = as_groups(groups)
    t = g.shape[0]
    if t == 0:
        return []
    occ = np.bincount(g.indices, minlength=g.shape[1])
    if int(np.sum(occ.astype(np.int64) ** 2)) > GRAPH_LIMIT:
        graph = SharedValues(g)
        deg = graph.deg
        orders = [graph.scipy_rcm()]
        comps = graph.components()
        pseudo_peripheral = graph.pseudo_peripheral
        cm_component = graph.cm_component
    else:
        b = _adjacency(g)
        deg = np.diff(b.indptr)
        orders = [reverse_cuthill_mckee(b, symmetric_mode=True).astype(int).tolist()]
        comps = _components(b, deg)

        def pseudo_peripheral(comp: list[int]) -> int:
            return _pseudo_peripheral(b, deg, comp)

        def cm_component(start: int, seen: np.ndarray) -> list[int]:
            return _cm_component(b, deg, start, seen)

    if t <= ALL_STARTS_LIMIT:
        starts = list(range(t))
    else:
        starts = sorted({s for c in comps if len(c) > 1 for s in (c[0], pseudo_peripheral(c))})
    for s in starts:
        seen = np.zeros(t, dtype=bool)
        own = cm_component(s, seen)
        others = [node for c in comps for node in c if not seen[node]]
        for seq in (own + others, others + own):
            orders.append(seq)
            orders.append(seq[::-1])
    orders.append(list(range(t)))  # creation order last: RCM orders win ties
    unique: dict[tuple[int, ...], None] = {}
    for o in orders:
        unique.setdefault(tuple(o), None)
    return [list(o) for o in unique]


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[k] .. starts[k] + lengths[k] - 1`` of every k, concatenated."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total)


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each row of a uint64 array."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).sum(axis=-1, dtype=np.int64)
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)
    return table[words.view(np.uint8)].sum(axis=-1)


class SharedValues:
    """The graph ``B = A A^T`` (groups joined when they share a value) without building it.

    A breadth-first level is expanded as groups -> their values -> the values' groups; a value is
    expanded once per search (all its groups are reached then), so one search costs O(nnz) however
    dense ``B`` is. Degrees are counted with bit sets (O(nnz t / 64), in slices of bounded memory).
    The searches reproduce the orders of the functions above on ``B`` exactly: scipy's
    ``reverse_cuthill_mckee`` (seeds by ``np.argsort`` of the int32 degrees, each node's new neighbours
    in the order of its row of ``A @ A.T`` -- the reverse of their discovery, values ascending then
    groups ascending -- then stably by degree), :func:`_cm_component` (new neighbours by degree, then
    index) and the distances :func:`_pseudo_peripheral` takes from ``shortest_path``.
    """

    def __init__(self, groups: sparse.csr_array) -> None:
        g = as_groups(groups)
        self.t, m = g.shape
        rows = np.repeat(np.arange(self.t), np.diff(g.indptr))
        occ = np.bincount(g.indices, minlength=m)
        shared = occ[g.indices] >= 2  # a value of one group joins nothing
        rows, cols = rows[shared], g.indices[shared].astype(np.int64)
        self.g_ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=self.t))])
        self.g_val = cols  # per group, values ascending
        by_value = np.lexsort((rows, cols))
        self.v_grp = rows[by_value]  # per value, groups ascending
        self.v_ptr = np.concatenate([[0], np.cumsum(np.where(occ >= 2, occ, 0))])
        self.m = m
        self.deg = self._degrees(rows, cols)

    def _degrees(self, rows: np.ndarray, cols: np.ndarray, budget: int = 1 << 22) -> np.ndarray:
        t = self.t
        deg = np.zeros(t, dtype=np.int64)
        if cols.size == 0:
            return deg
        values, vidx = np.unique(cols, return_inverse=True)
        has = np.flatnonzero(np.diff(self.g_ptr) > 0)
        words = (t + 63) // 64
        step = max(1, min(words, budget // max(cols.size, values.size)))
        bit = np.left_shift(np.uint64(1), (self.v_grp % 64).astype(np.uint64))
        word = self.v_grp // 64
        v_of = np.repeat(np.arange(values.size), np.diff(self.v_ptr)[values])  # value index of v_grp
        count = np.zeros(has.size, dtype=np.int64)
        for w0 in range(0, words, step):
            w1 = min(words, w0 + step)
            bits = np.zeros((values.size, w1 - w0), dtype=np.uint64)
            inside = (word >= w0) & (word < w1)
            np.bitwise_or.at(bits, (v_of[inside], word[inside] - w0), bit[inside])
            union = np.bitwise_or.reduceat(bits[vidx], self.g_ptr[has], axis=0)
            count += _popcount(union)
        deg[has] = count - 1  # the group itself is in its union
        return deg

    def _level(self, level: np.ndarray, visited: np.ndarray, expanded: np.ndarray):
        """New nodes reached from ``level`` (in order): (nodes, position of their source in the level,
        rank of their discovery), each new node credited to the first node of the level that reaches it."""
        src = np.repeat(np.arange(level.size), self.g_ptr[level + 1] - self.g_ptr[level])
        vals = self.g_val[_ranges(self.g_ptr[level], self.g_ptr[level + 1] - self.g_ptr[level])]
        keep = ~expanded[vals]
        src, vals = src[keep], vals[keep]
        _, first = np.unique(vals, return_index=True)
        first.sort()
        src, vals = src[first], vals[first]
        expanded[vals] = True
        lengths = self.v_ptr[vals + 1] - self.v_ptr[vals]
        src = np.repeat(src, lengths)
        cand = self.v_grp[_ranges(self.v_ptr[vals], lengths)]
        keep = ~visited[cand]
        src, cand = src[keep], cand[keep]
        _, first = np.unique(cand, return_index=True)
        first.sort()
        new = cand[first]
        visited[new] = True
        return new, src[first], first

    def _search(self, start: int, visited: np.ndarray, expanded: np.ndarray, scipy_order: bool) -> list[np.ndarray]:
        """Levels of a Cuthill-McKee search from ``start``."""
        visited[start] = True
        levels = [np.array([start], dtype=np.int64)]
        while True:
            new, src, rank = self._level(levels[-1], visited, expanded)
            if new.size == 0:
                return levels
            tie = -rank if scipy_order else new
            levels.append(new[np.lexsort((tie, self.deg[new], src))])

    def scipy_rcm(self) -> list[int]:
        visited = np.zeros(self.t, dtype=bool)
        expanded = np.zeros(self.m, dtype=bool)
        out: list[np.ndarray] = []
        for seed in np.argsort(self.deg.astype(np.int32)).tolist():
            if not visited[seed]:
                out.extend(self._search(seed, visited, expanded, True))
        return np.concatenate(out)[::-1].astype(int).tolist()

    def cm_component(self, start: int, seen: np.ndarray) -> list[int]:
        """Like :func:`_cm_component` with a fresh ``seen``."""
        return np.concatenate(self._search(start, seen, np.zeros(self.m, dtype=bool), False)).tolist()

    def components(self) -> list[list[int]]:
        seen = np.zeros(self.t, dtype=bool)
        expanded = np.zeros(self.m, dtype=bool)
        comps = []
        for node in np.lexsort((np.arange(self.t), self.deg)).tolist():
            if not seen[node]:
                comps.append(np.concatenate(self._search(node, seen, expanded, False)).tolist())
        return comps

    def pseudo_peripheral(self, comp: list[int]) -> int:
        deg = self.deg
        node = min(comp, key=lambda x: (deg[x], x))
        ecc = -1
        while True:
            levels = self._search(node, np.zeros(self.t, dtype=bool), np.zeros(self.m, dtype=bool), False)
            far = len(levels) - 1
            if far <= ecc:
                return node
            ecc = far
            cands = levels[-1]
            node = int(cands[np.lexsort((cands, deg[cands]))][0])


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

    ``best[j] = min_i best[i] + cost(run i..j-1)``, the first ``i`` on ties. The statistics of the runs
    ending at ``j`` are kept for every start ``i`` as ``j`` grows: sizes from prefix sums; numbers of
    values from a histogram of each value's last group before ``j``, summed from the right; the largest
    SA' count ``M(i, j) = max_v Q_v(j) - Q_v(i)`` (``Q_v(i)``: records of ``v`` in groups before ``i``)
    is non-increasing in ``i``, and group ``j - 1`` raises it only for the starts where it is below
    ``Q_v(j)`` for one of its values ``v`` -- a suffix of the starts, found by bisection. Work: O(t^2)
    for the costs plus the raised entries, never t x m.
    """
    g = as_groups(ordered)
    t, m = g.shape
    if t == 0:
        return 0.0, [0]
    indptr, val, cnt = g.indptr.astype(np.int64), g.indices.astype(np.int64), g.data
    prefix = np.concatenate([[0], np.cumsum(cnt)])[indptr]  # records in groups before i
    n = int(prefix[-1])
    grp = np.repeat(np.arange(t), np.diff(indptr))
    by_value = np.lexsort((grp, val))  # entries by (value, group)
    v_s, c_s, g_s = val[by_value], cnt[by_value], grp[by_value]
    first = np.ones(v_s.size, dtype=bool)
    first[1:] = v_s[1:] != v_s[:-1]
    before = np.cumsum(c_s) - c_s
    q_at = before - np.maximum.accumulate(np.where(first, before, 0))  # Q_v(g) of each entry (v, g)
    key = v_s * (t + 1) + g_s  # sorted: finds the first group >= i holding v
    prev_s = np.concatenate([[-1], g_s[:-1]])
    prev = np.empty_like(grp)  # the value's previous group, -1 if none
    prev[by_value] = np.where(first, -1, prev_s)
    q_after = np.empty_like(before)  # Q_v(g + 1) of each entry, in group order
    q_after[by_value] = q_at + c_s
    protected = np.asarray(sa_prime, dtype=bool)[val]

    neg_top = np.zeros(t, dtype=np.int64)  # -M(i, j): non-decreasing in i
    last = np.zeros(t, dtype=np.int64)  # values whose last group before j is i
    best = np.full(t + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(t + 1, dtype=np.int64)
    for j in range(1, t + 1):
        lo, hi = indptr[j - 1], indptr[j]
        p = prev[lo:hi]
        np.subtract.at(last, p[p >= 0], 1)
        last[j - 1] = hi - lo
        sel = np.flatnonzero(protected[lo:hi]) + lo
        if sel.size:
            q_new = q_after[sel]
            start = np.searchsorted(neg_top[:j], -q_new, side="right")  # first i with M(i, j-1) < Q_v(j)
            raise_ = start < j
            if raise_.any():
                sel, q_new, start = sel[raise_], q_new[raise_], start[raise_]
                span = j - start
                which = np.repeat(np.arange(sel.size), span)
                i_all = _ranges(start, span)
                at = np.searchsorted(key, val[sel][which] * (t + 1) + i_all)
                np.minimum.at(neg_top, i_all, q_at[at] - q_new[which])
        distinct = np.cumsum(last[j - 1::-1])[::-1]
        total = best[:j] + _cost(prefix[j] - prefix[:j], -neg_top[:j], distinct, n, rho2, a)
        k = int(np.argmin(total))
        best[j], back[j] = total[k], k
    cuts = [t]
    while cuts[-1] > 0 and np.isfinite(best[t]):
        cuts.append(int(back[cuts[-1]]))
    return float(best[t]), cuts[::-1]
