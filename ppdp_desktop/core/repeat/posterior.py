"""The largest posterior an attacker reaches from several releases of the same record (Qt-free).

A perturbation matrix ``P`` (``P[y, x]``: the probability that true value ``x`` is released as ``y``; every
column sums to 1) and a prior ``pi`` over the true values give, for an attacker who sees ``k`` releases of one
record whose draws were *independent* (fresh randomness in each release) and links them, the posterior

    ``post(x | y_1..y_k) = pi_x prod_i P[y_i, x] / sum_x' pi_x' prod_i P[y_i, x']``.

:func:`posterior_after_repeats` gives, per true value, the largest such posterior over every sequence of ``k``
released values; :func:`posterior_after_persistent` the value when the draws are persistent (the ``k`` releases
show one and the same draw, so the attacker learns exactly what one release teaches).

**Is the worst case ``k`` equal observations?** Not always. Write the posterior of ``x`` as
``1 / sum_x' (pi_x' / pi_x) prod_i r_{y_i}(x')`` with ``r_y(x') = P[y, x'] / P[y, x]``. When one released value
``y*`` minimizes ``r_y(x')`` for *every* ``x'`` at once, each factor of every sequence is at least the
corresponding factor of ``(y*, ..., y*)``, so ``k`` equal observations are the worst case. Otherwise a mixed
sequence can be worse: with three values where ``y1`` rules out ``a`` but not ``b`` and ``y2`` rules out ``b``
but not ``a``, seeing ``y1`` and ``y2`` once each beats seeing either twice (``tests/test_repeat_accounting.py``
enumerates such a matrix). So the function returns, for ``k >= 2``, the bound

    ``pi_x / (pi_x + sum_{x' != x} pi_x' (low[x, x'] / top[x])^k)``,

``top[x] = max_y P[y, x]`` and ``low[x, x'] = min P[y, x']`` over the values ``y`` that ``x`` can be released as.
It is never below the true maximum (``r_y(x') >= low / top`` for every such ``y``), and it *is* the true maximum,
reached by ``k`` releases of one value, whenever one released value is at once the likeliest under ``x`` and the
least likely under every other value -- true of every matrix the app uses: a retention matrix (uniform and
fine-grain perturbation, a partition's blocks; ``y* = x``) and randomized response with ``p >= 1/d``.
For ``k = 1`` the exact maximum over the released values is returned.
"""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.errors import ParameterError

__all__ = ["posterior_after_persistent", "posterior_after_repeats"]


def posterior_after_persistent(matrix: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Per true value, the largest posterior an attacker reaches from any number of persistent releases.

    Persistent draws give a record the same released value in every release, so ``k`` releases show one draw:
    the attacker learns what one release teaches, ``max_y pi_x P[y, x] / sum_x' pi_x' P[y, x']`` (exact).

    Parameters
    ----------
    matrix : numpy.ndarray
        ``P[y, x]``, shape ``(released values, true values)``; each column sums to 1.
    prior : numpy.ndarray
        The attacker's prior over the true values (non-negative; normalized here).

    Returns
    -------
    numpy.ndarray
        One posterior per true value (0 for a value of prior 0).
    """
    p, pi = _checked(matrix, prior)
    joint = p * pi[None, :]
    released = joint.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        posterior = np.where(released > 0, joint / np.where(released > 0, released, 1.0), 0.0)
    return np.asarray(posterior.max(axis=0), dtype=np.float64)


def posterior_after_repeats(matrix: np.ndarray, prior: np.ndarray, k: int) -> np.ndarray:
    """Per true value, the largest posterior an attacker reaches from ``k`` independent releases of one record.

    Exact for ``k = 1``; for ``k >= 2`` the bound of the module docstring: never below the largest posterior over
    all sequences of ``k`` released values, equal to it (``k`` equal observations) for retention and
    randomized-response matrices.

    Parameters
    ----------
    matrix : numpy.ndarray
        ``P[y, x]``, shape ``(released values, true values)``; each column sums to 1.
    prior : numpy.ndarray
        The attacker's prior over the true values (non-negative; normalized here).
    k : int
        The number of releases with independent draws (>= 1).

    Returns
    -------
    numpy.ndarray
        One posterior per true value (0 for a value of prior 0), non-decreasing in ``k``.

    Raises
    ------
    ParameterError
        ``k`` is not a whole number >= 1, or the matrix or prior is not a distribution.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ParameterError(f"The number of releases must be a whole number of at least 1; got {k!r}.")
    if k == 1:
        return posterior_after_persistent(matrix, prior)
    p, pi = _checked(matrix, prior)
    m = p.shape[1]
    top = p.max(axis=0)
    low = np.empty((m, m))
    # low[x, x'] = min of P[y, x'] over the released values y that x can produce: one pass per distinct support
    # (one for a matrix without zeros, one per block for a partition's), never per record
    supports, which = np.unique(p.T > 0, axis=0, return_inverse=True)
    for j, support in enumerate(supports):
        low[np.ravel(which) == j] = p[support].min(axis=0)
    ratio = low / top[:, None]
    np.fill_diagonal(ratio, 1.0)
    denominator = (pi[None, :] * ratio ** int(k)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        posterior = np.where(pi > 0, pi / np.where(denominator > 0, denominator, 1.0), 0.0)
    return np.asarray(np.minimum(posterior, 1.0), dtype=np.float64)


def _checked(matrix: np.ndarray, prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(matrix, dtype=np.float64)
    pi = np.asarray(prior, dtype=np.float64)
    if p.ndim != 2 or not p.size:
        raise ParameterError(f"A perturbation matrix must be a non-empty 2-D array; got shape {p.shape}.")
    if not np.all(p >= 0) or not np.all(np.isfinite(p)):  # NaN fails
        raise ParameterError("A perturbation matrix holds probabilities: every entry must be a number in [0, 1].")
    columns = p.sum(axis=0)
    if not np.allclose(columns, 1.0, rtol=0, atol=1e-9):
        worst = int(np.argmax(np.abs(columns - 1.0)))
        raise ParameterError(f"Each column of a perturbation matrix must sum to 1; column {worst} sums to "
                             f"{columns[worst]:.12g}.")
    if pi.shape != (p.shape[1],):
        raise ParameterError(f"The prior must hold one probability per true value ({p.shape[1]}); got shape {pi.shape}.")
    total = pi.sum()
    if not np.all(pi >= 0) or not np.isfinite(total) or total <= 0:
        raise ParameterError("The prior must be non-negative numbers with a positive sum.")
    return p, pi / total
