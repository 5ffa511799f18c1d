"""Optimal fine-grain perturbation (SPEC 2.2): the LP and an exact structured solver.

The LP: maximize ``sum_i w_i p_i`` (record utility up to an affine map) subject to
``(m - 1) p_i + gamma_i p_j <= gamma_i - 1`` for every value ``i`` with a privacy concern and every
``j != i``, and ``0 <= p <= 1``.  Only the largest ``p_j, j != i`` binds, so an optimum is fixed by
its largest retention ``t`` and which value ``k`` holds it:

* **shared top** (``t`` held by a value with ``t <= c_k``): every value takes
  ``p_i = min(t, u_i(t))`` with ``u_i(t) = (gamma_i - 1 - gamma_i t)/(m - 1)``; the objective
  ``A(t)`` is concave piecewise linear with breakpoints at the UP caps
  ``c_i = (gamma_i - 1)/(m - 1 + gamma_i)``.
* **unique top** ``k`` (``t > c_k``): the others are capped by ``s = v_k(t) =
  (gamma_k - 1 - (m - 1) t)/gamma_k`` and by their own ``u_i(t)``; ``H_k(t)`` is again concave
  piecewise linear.

Each concave piece is maximized exactly over its breakpoints with sorted prefix sums,
``O(m log m)``; the unique-top candidates are examined best-bound first and pruned by an upper
bound, so typical instances need only a few.  ``solve_lp`` (scipy's HiGHS) is the reference the
tests compare against.
"""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.errors import ParameterError

_TOL = 1e-12


def _validate(weights: np.ndarray, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(weights, dtype=float)
    g = np.asarray(gamma, dtype=float)
    if w.ndim != 1 or w.shape != g.shape or len(w) < 2:
        raise ParameterError("Fine-grain needs at least two values, each with a weight and a gamma.")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ParameterError("Fine-grain weights must be finite and non-negative.")
    if np.any(np.isnan(g)) or np.any(g <= 1.0):
        raise ParameterError("Every gamma must be greater than 1 (inf for a value with no privacy concern).")
    return w, g


def objective(weights: np.ndarray, p: np.ndarray) -> float:
    """``sum_i w_i p_i``, the quantity both solvers maximize."""
    return float(np.dot(weights, p))


def solve_lp(weights: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Reference solution with scipy's HiGHS LP (``m (m-1)`` sparse constraints)."""
    from scipy import sparse
    from scipy.optimize import linprog

    w, g = _validate(weights, gamma)
    m = len(w)
    concern = np.flatnonzero(np.isfinite(g))
    i_idx = np.repeat(concern, m)
    j_idx = np.tile(np.arange(m), len(concern))
    keep = i_idx != j_idx
    i_idx, j_idx = i_idx[keep], j_idx[keep]
    rows = np.arange(len(i_idx))
    if len(rows) == 0:
        return np.ones(m)
    a_ub = sparse.csr_matrix(
        (np.concatenate([np.full(len(rows), m - 1.0), g[i_idx]]), (np.concatenate([rows, rows]), np.concatenate([i_idx, j_idx]))),
        shape=(len(rows), m),
    )
    b_ub = g[i_idx] - 1.0
    result = linprog(-w, A_ub=a_ub, b_ub=b_ub, bounds=(0.0, 1.0), method="highs")
    if result.status != 0:  # pragma: no cover - p = 0 is always feasible
        raise ParameterError(f"The fine-grain LP failed: {result.message}")
    return np.clip(result.x, 0.0, 1.0)


# --- the exact structured solver ------------------------------------------------------------


def _caps(g: np.ndarray, concern: np.ndarray, m: int) -> np.ndarray:
    """UP caps ``c_i = (gamma_i - 1)/(m - 1 + gamma_i)``; ``inf`` for values with no concern."""
    caps = np.full(m, np.inf)
    caps[concern] = (g[concern] - 1.0) / (m - 1.0 + g[concern])
    return caps


def _a_values(t: np.ndarray, w: np.ndarray, g: np.ndarray, concern: np.ndarray, m: int) -> np.ndarray:
    """``A(t) = sum_i w_i min(t, u_i(t))`` at many points, with sorted prefix sums."""
    caps = _caps(g, concern, m)
    order = np.argsort(caps, kind="stable")
    w_s = w[order]
    g_s = np.where(concern[order], g[order], 0.0)
    c_w = np.concatenate([[0.0], np.cumsum(w_s)])
    c_wg1 = np.concatenate([[0.0], np.cumsum(np.where(concern[order], w_s * (g_s - 1.0), 0.0))])
    c_wg = np.concatenate([[0.0], np.cumsum(w_s * g_s)])
    pos = np.searchsorted(caps[order], t, side="right")  # values past their cap follow u_i(t)
    return t * (w.sum() - c_w[pos]) + (c_wg1[pos] - t * c_wg[pos]) / (m - 1.0)


def _shared_top(w: np.ndarray, g: np.ndarray, concern: np.ndarray, m: int) -> tuple[float, float]:
    """Maximize ``A(t)`` over its domain; return ``(value, t)``."""
    gc = g[concern]
    caps = _caps(g, concern, m)
    t_max = min(1.0, float(np.min((gc - 1.0) / gc)), float(np.max(caps)))  # u_i(t) >= 0
    candidates = np.append(caps[caps <= t_max], t_max)
    values = _a_values(candidates, w, g, concern, m)
    best = int(np.argmax(values))
    return float(values[best]), float(candidates[best])


def _unique_top(k: int, w: np.ndarray, g: np.ndarray, concern: np.ndarray, m: int, lo: float, hi: float) -> tuple[float, float]:
    """Maximize ``H_k(t)`` over ``[lo, hi]``; return ``(value, t)``."""
    gk = g[k]
    others = concern.copy()
    others[k] = False
    go, wo = g[others], w[others]
    # D_i(t) = u_i(t) - v_k(t) = a_i - b_i t; value i follows u_i where D_i < 0, else v_k.
    a = (go - 1.0) / (m - 1.0) - (gk - 1.0) / gk
    b = go / (m - 1.0) - (m - 1.0) / gk
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(b != 0, a / b, np.nan)
    inner = r[(r > lo) & (r < hi)]
    t = np.unique(np.concatenate([[lo, hi], inner]))
    # U(t) membership split by the sign of b.
    coef_u = wo * (go - 1.0) / (m - 1.0)
    coef_g = wo * go / (m - 1.0)

    def sums(mask_rows: np.ndarray, thresholds: np.ndarray, after: bool) -> tuple[np.ndarray, ...]:
        th = thresholds[mask_rows]
        order = np.argsort(th)
        th = th[order]
        cw = np.concatenate([[0.0], np.cumsum(wo[mask_rows][order])])
        cu = np.concatenate([[0.0], np.cumsum(coef_u[mask_rows][order])])
        cg = np.concatenate([[0.0], np.cumsum(coef_g[mask_rows][order])])
        if after:  # member when threshold < t
            pos = np.searchsorted(th, t, side="left")
            return cw[pos], cu[pos], cg[pos]
        pos = np.searchsorted(th, t, side="right")  # member when threshold > t
        return cw[-1] - cw[pos], cu[-1] - cu[pos], cg[-1] - cg[pos]

    w_u1, s_u1, s_g1 = sums(b > 0, r, after=True)
    w_u2, s_u2, s_g2 = sums(b < 0, r, after=False)
    flat = (b == 0) & (a < 0)
    w_u = w_u1 + w_u2 + wo[flat].sum()
    s_u = s_u1 + s_u2 + coef_u[flat].sum()
    s_g = s_g1 + s_g2 + coef_g[flat].sum()
    v = (gk - 1.0 - (m - 1.0) * t) / gk
    rest = w.sum() - w[k]
    values = w[k] * t + v * (rest - w_u) + s_u - t * s_g
    best = int(np.argmax(values))
    return float(values[best]), float(t[best])


def solve_exact(weights: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Exact optimum of the fine-grain LP in ``O(m log m)`` per examined candidate."""
    w, g = _validate(weights, gamma)
    m = len(w)
    concern = np.isfinite(g)
    if not concern.any():
        return np.ones(m)
    best_value, best_t = _shared_top(w, g, concern, m)
    best_k = -1
    zeros = np.full(m, np.inf)
    zeros[concern] = (g[concern] - 1.0) / g[concern]
    order_z = np.argsort(zeros)
    z_min, z_second = zeros[order_z[0]], zeros[order_z[1]]
    ks = np.flatnonzero(concern)
    gk = g[ks]
    lo = (gk - 1.0) / (m - 1.0 + gk)
    z_other = np.where(ks == order_z[0], z_second, z_min)
    hi = np.minimum.reduce([np.ones_like(gk), z_other, (gk - 1.0) / (m - 1.0)])
    valid = hi > lo + _TOL
    ks, gk, lo, hi = ks[valid], gk[valid], lo[valid], hi[valid]
    # Upper bounds: min(v_k, u_i) <= v_k, and H_k(t) <= w_k (t - u_k(t)) + max_t A(t) over [0, 1].
    wk = w[ks]
    rest = w.sum() - wk
    v_lo = (gk - 1.0 - (m - 1.0) * lo) / gk
    v_hi = (gk - 1.0 - (m - 1.0) * hi) / gk
    bound1 = np.maximum(wk * lo + rest * v_lo, wk * hi + rest * v_hi)
    a_max = _loose_a_max(w, g, concern, m)
    bound2 = wk * (hi - (gk - 1.0 - gk * hi) / (m - 1.0)) + a_max
    bound = np.minimum(bound1, bound2)
    for idx in np.argsort(-bound, kind="stable"):
        if bound[idx] <= best_value + _TOL * max(1.0, abs(best_value)):
            break
        value, t = _unique_top(int(ks[idx]), w, g, concern, m, float(lo[idx]), float(hi[idx]))
        if value > best_value + _TOL * max(1.0, abs(best_value)):
            best_value, best_t, best_k = value, t, int(ks[idx])
    return _retentions(w, g, concern, m, best_t, best_k)


def _loose_a_max(w: np.ndarray, g: np.ndarray, concern: np.ndarray, m: int) -> float:
    """``max_{t in [0,1]} A(t)`` with negative ``u_i`` allowed: an upper bound used for pruning."""
    caps = _caps(g, concern, m)
    t = np.append(caps[caps <= 1.0], [0.0, 1.0])
    return float(np.max(_a_values(t, w, g, concern, m)))


def _retentions(w: np.ndarray, g: np.ndarray, concern: np.ndarray, m: int, t: float, k: int) -> np.ndarray:
    """Rebuild ``p`` from the optimal structure ``(t, k)`` (``k = -1``: shared top)."""
    u = np.where(concern, (g - 1.0 - np.where(concern, g, 0.0) * t) / (m - 1.0), 1.0)
    if k < 0:
        p = np.minimum(t, u)
    else:
        s = (g[k] - 1.0 - (m - 1.0) * t) / g[k]
        p = np.minimum(s, u)
        p[k] = t
    return np.clip(p, 0.0, 1.0)
