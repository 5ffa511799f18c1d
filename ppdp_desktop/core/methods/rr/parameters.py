"""Randomized response under attribute disclosure (SPEC 1.3, 2.4; seed 001 RR-S, RR-QI, RR-Both).

Public API (statistics only, on the QI x S contingency tensor, S last):

* :func:`rr_matrix`, :func:`contingency`, :func:`apply_axes`, :func:`reconstruction_probability`,
  :func:`disclosure_risk`, :func:`max_risk` (in :mod:`rr_risk`);
* :func:`optimal_parameters` -> :class:`RRParameters` (here);
* :func:`randomize_codes`, :func:`estimate_tensor`, :func:`project_to_simplex`, :func:`marginal`
  (in :mod:`rr_estimate`).

The optimizer works in ``t_i in [0, 1]`` with ``p_i = 1/d_i + t_i (1 - 1/d_i)``; then ``p_i - q_i = t_i``
and ``q_i = (1 - t_i)/d_i``, so ``||column of P_i^{-1}||^2 = ((1-q_i)^2 + (d_i-1) q_i^2) / t_i^2``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeGuard

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.rr import pace
from ppdp_desktop.core.methods.rr.estimate import (
    estimate_tensor,
    inverse_rr_matrix,
    marginal,
    project_to_simplex,
    randomize_codes,
)
from ppdp_desktop.core.methods.rr.pace import Pace
from ppdp_desktop.core.methods.rr.risk import (
    _conditional_s_reconstruction,
    apply_axes,
    contingency,
    disclosure_risk,
    max_risk,
    reconstruction_probability,
    rr_matrix,
)
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress

__all__ = ["RRParameters", "apply_axes", "contingency", "disclosure_risk", "estimate_tensor",
           "inverse_rr_matrix", "marginal", "max_risk", "optimal_parameters", "p_from_t",
           "project_to_simplex", "randomize_codes", "reconstruction_probability", "rr_matrix",
           "utility_objective"]

Randomize = Literal["qi", "s", "both"]
_T_MIN = 1e-6


def is_randomize(value: str) -> TypeGuard[Randomize]:
    """Whether ``value`` says what to randomize: ``'qi'``, ``'s'`` or ``'both'``."""
    return value in ("qi", "s", "both")


@dataclass(frozen=True)
class RRParameters:
    """Chosen retention probabilities (``None`` = that part is released as is) and their quality."""

    randomize: str
    l: float
    p_qi: tuple[float, ...] | None
    p_s: float | None
    max_risk: float            # from the optimizer's own evaluation
    objective: float           # prod_i ||column of P_i^{-1}||^2 over the randomized attributes
    verified_max_risk: float   # recomputed with :func:`disclosure_risk`


SNAP = 1e-9  # a retention this close to 1 is 1


def p_from_t(d: int, t: float) -> float:
    return 1.0 if d <= 1 else 1.0 / d + float(t) * (1.0 - 1.0 / d)


def _t_from_p(d: int, p: float) -> float:
    return 1.0 if d <= 1 else (p - 1.0 / d) / (1.0 - 1.0 / d)


def utility_objective(dims: Sequence[int], ps: Sequence[float]) -> float:
    """``prod_i ||column of P_i^{-1}||^2`` (``inf`` at full randomization of any attribute)."""
    out = 1.0
    for d, p in zip(dims, ps):
        if d <= 1:
            continue
        t = _t_from_p(d, p)
        if t <= 0:
            return float("inf")
        q = (1.0 - t) / d
        out *= ((1 - q) ** 2 + (d - 1) * q ** 2) / t ** 2
    return out


def _log_obj(x: np.ndarray, ds: np.ndarray) -> tuple[float, np.ndarray]:
    q = (1.0 - x) / ds
    g = (1 - q) ** 2 + (ds - 1) * q ** 2
    f = float(np.sum(np.log(g) - 2 * np.log(x)))
    dg_dq = -2 * (1 - q) + 2 * (ds - 1) * q
    return f, dg_dq * (-1.0 / ds) / g - 2.0 / x


class _Problem:
    """Fast risk evaluation on the occupied cells, for a vector of free ``t``'s; ``search`` is told of each one
    (it checks the cancel token and reports progress)."""

    def __init__(self, counts: np.ndarray, randomize: str, search: Pace | None = None) -> None:
        self.search = search or Pace()
        self.counts = np.asarray(counts, dtype=float)
        self.dims = self.counts.shape
        m = len(self.dims) - 1
        self.rand_qi = randomize in ("qi", "both")
        self.rand_s = randomize in ("s", "both")
        self.qi_free = [i for i in range(m) if self.rand_qi and self.dims[i] > 1]
        self.s_free = self.rand_s and self.dims[-1] > 1
        self.ds = np.array([self.dims[i] for i in self.qi_free]
                           + ([self.dims[-1]] if self.s_free else []), dtype=float)
        self.qi_counts = self.counts.sum(axis=-1)
        cond = np.zeros_like(self.counts)
        np.divide(self.counts, self.qi_counts[..., None], out=cond,
                  where=self.qi_counts[..., None] > 0)
        self.occ = np.flatnonzero(self.counts.ravel() > 0)
        self.qi_of_occ = self.occ // self.dims[-1]
        self.cond_occ = cond.ravel()[self.occ]

    def params(self, x: np.ndarray) -> tuple[list[float] | None, float | None]:
        m = len(self.dims) - 1
        p_qi = None
        if self.rand_qi:
            p_qi = [1.0] * m
            for k, i in enumerate(self.qi_free):
                p_qi[i] = p_from_t(self.dims[i], x[k])
        p_s = None
        if self.rand_s:
            p_s = p_from_t(self.dims[-1], x[-1]) if self.s_free else 1.0
        return p_qi, p_s

    def risks(self, x: np.ndarray) -> np.ndarray:
        self.search.tick()
        p_qi, p_s = self.params(x)
        r = self.cond_occ.copy()
        if p_qi is not None:
            mats = [rr_matrix(d, p) for d, p in zip(self.dims[:-1], p_qi)]
            r *= reconstruction_probability(self.qi_counts, mats).ravel()[self.qi_of_occ]
        if p_s is not None:
            r *= _conditional_s_reconstruction(self.counts, rr_matrix(self.dims[-1], p_s)).ravel()[self.occ]
        return r

    def max_risk(self, x: np.ndarray) -> float:
        r = self.risks(x)
        return float(r.max()) if r.size else 0.0


_BISECTIONS = 50


def _shrink_to_feasible(prob: _Problem, x: np.ndarray, tau: float, iters: int = _BISECTIONS) -> tuple[float, float]:
    """Largest ``c in [0, 1]`` with ``max risk(c x) <= tau`` (risk grows with every t); returns ``(c, risk)``."""
    r = prob.max_risk(x)
    if r <= tau:
        return 1.0, r
    lo, hi = 0.0, 1.0
    r_lo = prob.max_risk(np.full_like(x, _T_MIN) if x.size else x)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        rm = prob.max_risk(np.maximum(mid * x, _T_MIN))
        if rm <= tau:
            lo, r_lo = mid, rm
        else:
            hi = mid
    return lo, r_lo


def optimal_parameters(counts: np.ndarray, l: float, randomize: Randomize, progress: Progress = no_progress,
                       cancel: CancelToken | None = None) -> RRParameters:
    """Minimize ``prod_i ||col P_i^{-1}||^2`` subject to ``max risk <= 1/l``, ``1/d_i <= p_i <= 1``.

    ``progress`` hears of each evaluation of the risk (a few hundred; :mod:`~ppdp_desktop.core.methods.rr.pace`)
    and ``cancel`` is checked before each, so a cancelled search stops within one evaluation (``Cancelled``).
    """
    if randomize not in ("qi", "s", "both"):
        raise ParameterError(f"randomize must be 'qi', 's' or 'both'; got {randomize!r}.")
    if not l or l < 1:
        raise ParameterError(f"l must be at least 1; got {l}.")
    counts = np.asarray(counts, dtype=float)
    if counts.ndim < 2 and randomize != "s":
        raise ParameterError("Randomizing the QI needs at least one QI axis before the sensitive axis.")
    tau = 1.0 / float(l)
    search = Pace(progress, cancel)
    prob = _Problem(counts, randomize, search)
    k = prob.ds.size

    def result(x: np.ndarray, r: float) -> RRParameters:
        p_qi, p_s = prob.params(x)
        # the optimizer's "keep every value" comes out as 1 - 1e-15: it is 1 (released unchanged, and said so);
        # the risk below is recomputed with the snapped values, so the bound still holds as verified
        p_qi = None if p_qi is None else [1.0 if p > 1.0 - SNAP else float(p) for p in p_qi]
        p_s = None if p_s is None else (1.0 if p_s > 1.0 - SNAP else float(p_s))
        free_ds = list(prob.ds)
        obj = float(utility_objective(free_ds, [p_from_t(int(d), t) for d, t in zip(free_ds, x)]))
        search.cancel.check()
        verified = max_risk(counts, p_qi, p_s)
        search.progress(1.0, pace.LAST_WORDS)
        return RRParameters(randomize, float(l), None if p_qi is None else tuple(p_qi), p_s,
                            r, obj, verified)

    ones = np.ones(k)
    search.phase(pace.FIRST, pace.SEARCH, 4 + _BISECTIONS, True, pace.FIRST_WORDS)
    r_none = prob.max_risk(ones)
    if r_none <= tau:
        return result(ones, r_none)
    full = np.zeros(k)
    r_full = prob.max_risk(full)
    if r_full > tau * (1 + 1e-12) or k == 0:
        raise ParameterError(
            f"Even full randomization (p = 1/d) of {'the QI and S' if randomize == 'both' else randomize.upper()} "
            f"leaves a maximum disclosure risk of {r_full:.4g} > 1/l = {tau:.4g}; choose a smaller l "
            "or randomize more attributes.")
    # Feasible start: the largest common t on the boundary (risk increases in every t).
    c, r_start = _shrink_to_feasible(prob, ones, tau)
    x_best = np.full(k, max(c, _T_MIN))
    r_best = prob.max_risk(x_best)
    f_best = _log_obj(x_best, prob.ds)[0]

    if k > 1:
        # typically 5-50 iterations of about 2 + k evaluations each (benchmarks/README.md, bench_rr_cancel.py)
        search.phase(pace.SEARCH, pace.LAST, 20 * (k + 2), False, pace.SEARCH_WORDS)
        # Active-set SLSQP: constrain the riskiest cells, add violators, repeat.
        n_act = min(30, prob.occ.size)
        active = np.argsort(prob.risks(x_best))[-n_act:]
        x0 = x_best.copy()
        for _ in range(8):
            act = active

            def cons(x: np.ndarray, act=act) -> np.ndarray:
                return tau - prob.risks(x)[act]

            def cons_jac(x: np.ndarray, act=act) -> np.ndarray:
                base = prob.risks(x)[act]
                jac = np.empty((act.size, k))
                for j in range(k):
                    h = 1e-7 if x[j] + 1e-7 <= 1 else -1e-7
                    xh = x.copy()
                    xh[j] += h
                    jac[:, j] = -(prob.risks(xh)[act] - base) / h
                return jac

            from scipy.optimize import minimize  # imported when first needed (start-up time)

            res = minimize(lambda x: _log_obj(x, prob.ds), x0, jac=True, method="SLSQP",
                           bounds=[(_T_MIN, 1.0)] * k,
                           constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                           options={"maxiter": 200, "ftol": 1e-12})
            x = np.clip(res.x, _T_MIN, 1.0)
            r_all = prob.risks(x)
            viol = np.flatnonzero(r_all > tau * (1 + 1e-9))
            if viol.size == 0 or np.isin(viol, active).all():
                break
            active = np.union1d(active, viol[np.argsort(r_all[viol])[-30:]])
            x0 = x
        search.phase(pace.LAST, 1.0, 3 + _BISECTIONS, True, pace.LAST_WORDS)
        c, _ = _shrink_to_feasible(prob, x, tau)
        x = np.maximum(c * x, _T_MIN)
        r = prob.max_risk(x)
        f = _log_obj(x, prob.ds)[0]
        if r <= tau and f < f_best:
            x_best, r_best = x, r
    return result(x_best, r_best)
