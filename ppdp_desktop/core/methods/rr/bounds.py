"""How small can the attribute-disclosure risk of a randomized-response release be, given only the release?

The recipient does not hold the original QI x S table, only the released one and the published matrices.
This module builds simultaneous confidence bounds on the original table from the released counts and
returns the smallest largest-risk (SPEC 1.3) that any table within them can have. A recipient's check that
refuses a release only when even that smallest value exceeds ``1/l`` refuses a genuine release with
probability at most :data:`FALSE_REFUSAL`, by construction:

* The model is the mechanism itself: each record with original cell ``mu`` is released in cell ``nu`` with
  probability ``P[nu|mu]`` (the Kronecker product of the published matrices), independently of the other
  records; the original table is fixed, the randomness is the release's.
* ``M`` statements are made about the original table (listed in :func:`risk_lower_bound`), each from a tail
  bound for a sum of independent bounded variables that holds for any original table: Chernoff's
  (Hoeffding 1963, Theorem 1) for the chance of each released cell, Bernstein's for unbiased estimates
  (the published inverse matrices applied to the released counts), each at level ``FALSE_REFUSAL / M``.
  By the union bound, all of them hold at once with probability at least ``1 - FALSE_REFUSAL``.
* When they all hold, the true table lies in the region they describe, so the smallest risk over the region
  (computed here by interval arithmetic, each factor of the risk formula bounded by its monotonicity) is at
  most the true one. A genuine release's true largest risk is at most ``1/l`` (the custodian checked it
  exactly), so it is refused only if some statement fails: probability at most ``FALSE_REFUSAL``.

The bound is conservative: on adult (30,162 records) the smallest risk the release allows is about a third of
the true risk at l = 3, so a release that breaks the bound is caught only when it breaks it plainly (the true
table put back under identity matrices: exact, always caught; data randomized much less than the published
matrices say: the released counts fit no original table). ``benchmarks/bench_rr_refusals.py`` measures both.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ppdp_desktop.core.methods.rr.estimate import inverse_rr_matrix
from ppdp_desktop.core.methods.rr.risk import apply_axes, max_risk, rr_matrix

#: the largest chance that the recipient's check refuses a genuine release (one in ten thousand)
FALSE_REFUSAL = 1e-4
#: the shares g = 0, 1/32, ..., 1 at which "the share of u in group alpha is above / below g" is tested
GRID = np.linspace(0.0, 1.0, 33)
_BISECTIONS = 64


@dataclass(frozen=True)
class RiskBound:
    """What the released counts say about the original table's largest disclosure risk.

    Attributes
    ----------
    lower
        No original table allowed by the release has a smaller largest risk (with probability at least
        ``1 - FALSE_REFUSAL`` over the randomization); exact when nothing was randomized.
    consistent
        False when no original table is consistent with the released counts under the published matrices.
    exact
        True when nothing was randomized: ``lower`` is the released table's own largest risk.
    statements
        How many simultaneous statements the bound rests on (each at level ``FALSE_REFUSAL / statements``).
    """

    lower: float
    consistent: bool
    exact: bool
    statements: int


def _kl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kullback-Leibler divergence of Bernoulli(a) from Bernoulli(b), elementwise."""
    from scipy.special import xlogy  # imported on first use: a job of another method does not pay for scipy

    return xlogy(a, a) - xlogy(a, b) + xlogy(1.0 - a, 1.0 - a) - xlogy(1.0 - a, 1.0 - b)


def chernoff_upper(counts: np.ndarray, n: float, level: float) -> np.ndarray:
    """Largest chance ``lam`` of each released cell with ``n KL(count/n || lam) <= level``.

    A released count is a sum of ``n`` independent draws whose chances average ``lam``; Chernoff's bound gives
    ``Pr[count <= y] <= exp(-n KL(y/n || lam))`` for ``y <= n lam``, so ``lam`` exceeds the value returned
    with probability at most ``exp(-level)``.
    """
    share = np.clip(np.asarray(counts, dtype=float) / n, 0.0, 1.0)
    low, high = share.copy(), np.ones_like(share)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(_BISECTIONS):
            middle = (low + high) / 2.0
            outside = n * _kl(share, middle) > level
            high = np.where(outside, middle, high)
            low = np.where(outside, low, middle)
    return high


def bernstein_half_width(variance: np.ndarray, spread: float, level: float) -> np.ndarray:
    """The ``t`` with ``exp(-t^2 / (2 (V + spread t / 3))) = exp(-level)``: a sum of independent variables, each
    within ``spread`` of its mean and with variances summing to at most ``V``, exceeds its mean by more than
    ``t`` with probability at most ``exp(-level)`` (Bernstein's inequality); the same below."""
    c = spread * level / 3.0
    return c + np.sqrt(c * c + 2.0 * np.maximum(variance, 0.0) * level)


def risk_lower_bound(released: np.ndarray, ps: Sequence[float], alpha: float = FALSE_REFUSAL) -> RiskBound:
    """The smallest largest-risk of any original table allowed by the released counts ``released``.

    Parameters
    ----------
    released
        Released counts, one axis per quasi-identifier and the sensitive attribute last.
    ps
        The published retention ``p`` of each axis (1 = released unchanged).
    alpha
        The chance, over the randomization, that the original table lies outside the region used.

    Returns
    -------
    RiskBound

    Notes
    -----
    The statements (``K`` cells, ``Kq`` quasi-identifier groups, ``G`` grid shares), each at ``alpha / M``:
    every released cell's and group's chance is below its Chernoff bound (``K + Kq``); every cell's and group's
    original count is within Bernstein's half-width of its unbiased estimate (``2K + 2Kq``); for every cell and
    grid share ``g``, ``N(alpha, u) - g N(alpha)`` (estimated without bias by the inverse matrices, its
    variance bounded with the first statements) is not far above or below its estimate (``2 K G``).
    """
    y = np.asarray(released, dtype=float)
    dims, n = y.shape, float(y.sum())
    ps = [1.0 if d <= 1 else float(p) for d, p in zip(dims, ps)]
    if n <= 0:
        return RiskBound(0.0, True, True, 0)
    if all(p >= 1.0 for p in ps):  # nothing randomized: the released table is the original
        return RiskBound(max_risk(y, None, None), True, True, 0)
    cells, groups = y.size, y.size // dims[-1]
    statements = 3 * cells + 3 * groups + 2 * cells * len(GRID)
    level = float(np.log(statements / alpha))
    qi_randomized = any(p < 1.0 for p in ps[:-1])
    inverses = [inverse_rr_matrix(d, p) if p < 1.0 else np.eye(d) for d, p in zip(dims, ps)]
    squares = [a * a for a in inverses]
    largest = [float(np.abs(a).max()) for a in inverses]
    qi_largest = float(np.prod(largest[:-1]))

    y_groups = y.sum(axis=-1)
    lam_high = chernoff_upper(y, n, level)
    lam_groups_high = chernoff_upper(y_groups, n, level)
    # original counts: the unbiased estimate +- Bernstein
    estimate = apply_axes(y, inverses)
    half = bernstein_half_width(n * apply_axes(lam_high, squares), qi_largest * largest[-1] + 1.0, level)
    pi_low, pi_high = (estimate - half) / n, (estimate + half) / n
    if qi_randomized:
        group_estimate = apply_axes(y_groups, inverses[:-1])
        group_half = bernstein_half_width(n * apply_axes(lam_groups_high, squares[:-1]), qi_largest + 1.0, level)
    else:  # the groups are released as they are: their counts are exact
        group_estimate, group_half = y_groups, np.zeros_like(y_groups)
    group_low, group_high = (group_estimate - group_half) / n, (group_estimate + group_half) / n
    consistent = not ((pi_high < 0).any() or (group_high < 0).any())
    pi_low, pi_high = np.clip(pi_low, 0.0, 1.0), np.clip(pi_high, 0.0, 1.0)
    group_low = np.clip(np.maximum(group_low, pi_low.sum(axis=-1)), 0.0, 1.0)
    group_high = np.clip(np.minimum(group_high, pi_high.sum(axis=-1)), 0.0, 1.0)
    share_low, share_high = _share_bounds(pi_low, pi_high, group_low, group_high)
    grid_low, grid_high = _grid_share_bounds(y, n, estimate, group_estimate, lam_high, inverses, largest, level)
    share_low, share_high = np.maximum(share_low, grid_low), np.minimum(share_high, grid_high)
    held = group_low > 0  # groups that hold records: their shares sum to 1
    others_high = share_high.sum(axis=-1, keepdims=True) - share_high
    others_low = share_low.sum(axis=-1, keepdims=True) - share_low
    share_low = np.where(held[..., None], np.maximum(share_low, 1.0 - others_high), share_low)
    share_high = np.where(held[..., None], np.minimum(share_high, 1.0 - others_low), share_high)
    if (share_low > share_high + 1e-12).any() or (share_low.sum(axis=-1) > 1.0 + 1e-9).any():
        consistent = False

    if qi_randomized:  # R_QI(alpha) = pi_alpha sum_beta P[beta|alpha]^2 / lambda_beta
        matrices = [rr_matrix(d, p) for d, p in zip(dims[:-1], ps[:-1])]
        r_qi = group_low * apply_axes(1.0 / lam_groups_high, [(m * m).T for m in matrices])
    else:
        r_qi = np.ones(dims[:-1])
    if ps[-1] < 1.0:  # R_S(u|alpha) = c_u sum_v P_S[v|u]^2 / (q + (p - q) c_v)
        d, p = dims[-1], ps[-1]
        q = (1.0 - p) / (d - 1)
        r_s = share_low * ((1.0 / (q + (p - q) * share_high)) @ (rr_matrix(d, p) ** 2))
    else:
        r_s = np.ones(dims)
    risk = np.where((share_low > 0) | (pi_low > 0), r_qi[..., None] * share_low * r_s, 0.0)
    return RiskBound(float(risk.max()), consistent, False, statements)


def _share_bounds(pi_low: np.ndarray, pi_high: np.ndarray, group_low: np.ndarray,
                  group_high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on each cell's share of its group, ``c_u = pi(alpha, u) / pi(alpha)``, from the bounds on the
    counts: ``c_u`` grows with ``pi(alpha, u)`` and falls with the rest of the group."""
    rest_high = pi_high.sum(axis=-1, keepdims=True) - pi_high
    rest_low = pi_low.sum(axis=-1, keepdims=True) - pi_low
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.maximum(np.where(group_high[..., None] > 0, pi_low / group_high[..., None], 0.0),
                         np.where(pi_low + rest_high > 0, pi_low / (pi_low + rest_high), 0.0))
        high = np.minimum(np.where(group_low[..., None] > 0, pi_high / group_low[..., None], 1.0),
                          np.where(pi_high + rest_low > 0, pi_high / (pi_high + rest_low), 1.0))
    return np.clip(np.nan_to_num(low), 0.0, 1.0), np.clip(np.nan_to_num(high, nan=1.0), 0.0, 1.0)


def _grid_share_bounds(y: np.ndarray, n: float, estimate: np.ndarray, group_estimate: np.ndarray,
                       lam_high: np.ndarray, inverses: list[np.ndarray], largest: list[float],
                       level: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on each share ``c_u`` from the grid tests: ``Z(g) = estimate(alpha, u) - g estimate(alpha)`` is the
    sum over records of ``Kqi[alpha, beta_r] (A_S[u, v_r] - g)``, with mean ``N(alpha) (c_u - g)``; ``Z(g)`` far
    above 0 shows ``c_u > g``, far below shows ``c_u < g``. Testing the share directly cancels the noise that
    the cell and its group share, which bounding them apart would count twice."""
    weights = apply_axes(n * lam_high, [a * a for a in inverses[:-1]])  # sum_beta Kqi^2 n lam, per (alpha, v)
    a_s = inverses[-1]
    t2, t1 = weights @ (a_s * a_s).T, weights @ a_s.T
    t0 = weights.sum(axis=-1, keepdims=True)
    spread = float(np.prod(largest[:-1])) * (largest[-1] + 1.0) + 1.0
    low, high = np.zeros(y.shape), np.ones(y.shape)
    for g in GRID:
        half = bernstein_half_width(t2 - 2.0 * g * t1 + g * g * t0, spread, level)
        z = estimate - g * group_estimate[..., None]
        low = np.where(z > half, np.maximum(low, g), low)
        high = np.where(-z > half, np.minimum(high, g), high)
    return low, high
