"""The privacy verifier: checks a perturbation matrix against the guarantee it claims (fail closed).

Checked for every plan before anything is written, and again by ``ppdp verify``:

1. the matrix is a proper perturbation operator (finite, non-negative, columns sum to 1);
2. amplification (SPEC 1.1-1.2): for each value ``x_j`` with a pair and every output ``y``,
   ``P[y][j] <= gamma_j * min_i P[y][i]`` — this bounds the posterior of ``x_j`` by ``rho2_j`` for
   every prior up to ``rho1_j``, so the *upward* guarantee holds whatever the adversary believes;
3. exact posteriors for the data's own prior: the upward bound is confirmed numerically, and
   *downward* breaches (prior >= rho2, some posterior <= rho1) are reported, never claimed away
   (thesis Theorem 7 is wrong on this point; SPEC 1.2).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement
from ppdp_desktop.core.privacy.structured import RetentionMatrix

TOLERANCE = 1e-9


def held_above_rho1(prior: np.ndarray, rho1: np.ndarray) -> np.ndarray:
    """Per value: whether its share of the records (``prior``) is above its rho1, by the verifier's tolerance
    (False where it has no pair: ``rho1`` NaN). The upward bound speaks of a belief up to rho1: for such a value and
    the data's own frequencies it says nothing (no upward breach is possible by definition, and none is prevented).
    The plan, both reports and the window's sensitivity table apply this one rule."""
    rho1 = np.asarray(rho1, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(rho1) & (np.asarray(prior, dtype=float) > rho1 * (1.0 + TOLERANCE))


@dataclass
class GuaranteeReport:
    """What the verifier established about one perturbed attribute."""

    attribute: str
    max_posterior: np.ndarray  # per value, for the data's own prior
    achieved_gamma: np.ndarray  # per value: max_y P[y][j] / min_i P[y][i]
    epsilon_ldp: float  # ln of the matrix's overall amplification
    downward_breaches: list[dict[str, object]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "epsilon_ldp": self.epsilon_ldp,
            "max_posterior": [float(x) for x in self.max_posterior],
            "downward_breaches": self.downward_breaches,
        }


def posteriors(matrix: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``post[y][x] = Pr[X = x | Y = y]`` for the given prior (rows of outputs never seen are 0)."""
    joint = matrix * prior[None, :]
    marginal = joint.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        post = np.where(marginal > 0, joint / marginal, 0.0)
    return post


def amplification(matrix: np.ndarray) -> np.ndarray:
    """Per input value ``j``: ``max_y P[y][j] / min_i P[y][i]`` (``inf`` if a row has a zero)."""
    row_min = matrix.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(matrix > 0, matrix / row_min, 1.0)
    return ratio.max(axis=0)


def check_operator(matrix: np.ndarray, attribute: str) -> None:
    """Refuse anything that is not a column-stochastic square matrix."""
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise PrivacyError(f"The perturbation matrix of {attribute!r} is not square: shape {matrix.shape}.")
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise PrivacyError(f"The perturbation matrix of {attribute!r} has negative or non-finite entries.")
    sums = matrix.sum(axis=0)
    bad = np.flatnonzero(~(np.abs(sums - 1.0) <= 1e-9))  # NaN fails
    if bad.size:
        raise PrivacyError(
            f"Column {bad[0]} of the perturbation matrix of {attribute!r} sums to {sums[bad[0]]:.12g}, not 1."
        )


def _two_smallest(x: np.ndarray) -> tuple[int, float, float]:
    """Index of the smallest entry, the smallest and the second smallest (``inf`` when there is none)."""
    k = int(np.argmin(x))
    rest = np.delete(x, k)
    return k, float(x[k]), float(rest.min()) if rest.size else float("inf")


def _min_but_self(x: np.ndarray) -> np.ndarray:
    """Per index ``j``: the smallest entry of ``x`` other than ``x[j]`` (O(m))."""
    k, first, second = _two_smallest(x)
    out = np.full(len(x), first)
    out[k] = second
    return out


def retention_amplification(retention: np.ndarray) -> np.ndarray:
    """:func:`amplification` of ``P = diag(p) + (1/m) 1 (1-p)^T`` in O(m): off the diagonal column ``j``
    holds ``a_j = (1 - p_j)/m``, on it ``b_j = a_j + p_j``; row ``y``'s minimum is the smaller of ``b_y``
    and the smallest ``a_i``, ``i != y``."""
    p = np.asarray(retention, dtype=float)
    m = len(p)
    a = (1.0 - p) / m
    b = a + p
    row_min = np.minimum(b, _min_but_self(a)) if m > 1 else b
    with np.errstate(invalid="ignore", divide="ignore"):
        diagonal = np.where(b > 0, b / row_min, 1.0)
        if m == 1:
            return diagonal
        off = np.where(a > 0, a / _min_but_self(row_min), 1.0)
    return np.maximum(diagonal, off)


def retention_posterior_extremes(retention: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per value ``x``: the largest posterior over released values and the smallest over released values that
    can occur, for ``P = diag(p) + (1/m) 1 (1-p)^T``, in O(m). The marginal of output ``y`` is
    ``p_y pi_y + s`` with ``s = sum_x a_x pi_x``; the posterior of ``x`` is ``b_x pi_x / (p_x pi_x + s)`` at
    ``y = x`` and ``a_x pi_x / (p_y pi_y + s)`` elsewhere (0 where the marginal is 0)."""
    p = np.asarray(retention, dtype=float)
    prior = np.asarray(prior, dtype=float)
    m = len(p)
    a = (1.0 - p) / m
    s = float(np.dot(a, prior))
    weight = p * prior  # p_y pi_y
    marginal = weight + s
    with np.errstate(invalid="ignore", divide="ignore"):
        diagonal = np.where(marginal > 0, (a + p) * prior / marginal, 0.0)
    seen = p + a.sum() > 0  # rows of the matrix with a positive entry (as the dense check counts them)
    if m == 1:
        return diagonal, np.where(seen, diagonal, np.inf)
    # off the diagonal: largest posterior at the smallest marginal among y != x (marginal > 0), smallest at the
    # largest marginal; a row with marginal 0 gives posterior 0 for every x
    positive = np.where(marginal > 0, marginal, np.inf)
    smallest_other = _min_but_self(positive)
    largest_other = -_min_but_self(-np.where(seen, marginal, -np.inf))
    with np.errstate(invalid="ignore", divide="ignore"):
        off_max = np.where(np.isfinite(smallest_other), a * prior / smallest_other, 0.0)
        off_min = np.where(largest_other > 0, a * prior / largest_other, 0.0)
    # a seen row other than x with marginal 0 gives posterior 0; x's own row counts through ``diagonal``
    own_zero = seen & (marginal <= 0)
    others_zero = own_zero.sum() - own_zero.astype(int) > 0
    off_min_all = np.where(others_zero, 0.0, off_min)
    largest = np.maximum(diagonal, off_max)
    smallest = np.minimum(np.where(seen, diagonal, np.inf), off_min_all)
    return largest, smallest


def verify(
    attribute: str,
    values: Sequence[object],
    matrix: np.ndarray | RetentionMatrix,
    requirement: SensitivityRequirement,
    prior: np.ndarray,
) -> GuaranteeReport:
    """Verify the upward (rho1_i, rho2_i) guarantee of ``matrix``; raise :class:`PrivacyError` if it fails.

    A :class:`~ppdp_desktop.core.privacy.structured.RetentionMatrix` is checked from its parameters in O(m)
    (it is a proper operator by construction); a dense matrix as it is."""
    if not isinstance(matrix, RetentionMatrix):
        matrix = np.asarray(matrix, dtype=float)
        check_operator(matrix, attribute)
    m = matrix.shape[0]
    if len(values) != m or requirement.rho1.shape != (m,) or prior.shape != (m,):
        raise PrivacyError(f"The domain, the pairs and the matrix of {attribute!r} do not have the same size.")
    concern = requirement.concern
    gamma = requirement.gamma
    achieved = retention_amplification(matrix.retention) if isinstance(matrix, RetentionMatrix) else amplification(matrix)
    broken = np.flatnonzero(concern & ~(achieved <= gamma * (1.0 + TOLERANCE)))  # NaN fails
    if broken.size:
        j = broken[0]
        raise PrivacyError(
            f"Value {label_text(values[j])!r} of {attribute!r}: the matrix amplifies it {achieved[j]:.6g}-fold, "
            f"more than gamma={gamma[j]:.6g} allowed by (rho1, rho2)=({requirement.rho1[j]:.6g}, {requirement.rho2[j]:.6g})."
        )
    if isinstance(matrix, RetentionMatrix):
        max_post, min_post = retention_posterior_extremes(matrix.retention, prior)
    else:
        post = posteriors(matrix, prior)
        max_post = post.max(axis=0)
        seen = matrix.sum(axis=1) > 0
        min_post = np.where(seen[:, None], post, np.inf).min(axis=0)
    exposed = concern & (prior <= requirement.rho1 * (1.0 + TOLERANCE))
    over = np.flatnonzero(exposed & ~(max_post <= requirement.rho2 + TOLERANCE))  # NaN fails
    if over.size:
        j = over[0]
        raise PrivacyError(
            f"Value {label_text(values[j])!r} of {attribute!r}: a released value raises its posterior to "
            f"{max_post[j]:.6g}, above rho2={requirement.rho2[j]:.6g}."
        )
    breaches = []
    for j in np.flatnonzero(concern & (prior >= requirement.rho2) & (min_post <= requirement.rho1)):
        breaches.append({"value": label_text(values[int(j)]), "prior": float(prior[j]), "min_posterior": float(min_post[j])})
    overall = float(np.max(achieved))
    epsilon = float(np.log(overall)) if np.isfinite(overall) else float("inf")
    return GuaranteeReport(attribute, max_post, achieved, epsilon, breaches)
