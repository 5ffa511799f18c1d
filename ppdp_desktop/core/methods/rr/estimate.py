"""Randomized response: perturbing codes and estimating the contingency tensor axis by axis (SPEC 2.4)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.errors import ParameterError

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness


def randomize_codes(codes: np.ndarray, d: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Keep each code with probability ``p``, else move it to one of the other ``d-1`` values uniformly, from a
    sequential generator (simulations; a release draws with :func:`randomize_records`)."""
    codes = np.asarray(codes, dtype=np.int64)
    if d <= 1 or p >= 1.0:
        return codes.copy()
    move = rng.random(codes.shape) >= p
    shift = rng.integers(1, d, size=codes.shape)
    return np.where(move, (codes + shift) % d, codes)


def randomize_records(codes: np.ndarray, d: int, p: float, keyed: KeyedRandomness, attribute: str,
                      start: int = 0, mechanism: np.ndarray | None = None) -> np.ndarray:
    """:func:`randomize_codes` with every draw keyed by the record's index (``start``: the first record's): a
    "keep" stream and a "shift" stream, so the result does not depend on how the records are split.
    ``mechanism``: per value, its mechanism digest (persistent draws when the records are bound, see
    :meth:`~ppdp_desktop.core.privacy.keyed.KeyedRandomness.keep_or_draw`)."""
    codes = np.asarray(codes, dtype=np.int64)
    if d <= 1 or p >= 1.0:
        return codes.copy()
    per_record = None if mechanism is None else mechanism[codes]
    keep, shift = keyed.keep_or_draw(attribute, start, start + len(codes), p, d - 1, draw="shift",
                                     mechanism=per_record)
    return np.where(keep, codes, (codes + shift + 1) % d)


def inverse_rr_matrix(d: int, p: float) -> np.ndarray:
    """Closed form ``P^{-1} = (I - q 11^T)/(p - q)`` with ``q = (1-p)/(d-1)`` (needs ``p > 1/d``)."""
    if d == 1:
        return np.ones((1, 1))
    q = (1.0 - p) / (d - 1)
    if p - q <= 0:
        raise ParameterError(f"p = {p} is full randomization for a domain of {d}: nothing to estimate.")
    return (np.eye(d) - q) / (p - q)


def estimate_tensor(released: np.ndarray, matrices: Sequence[np.ndarray | None]) -> np.ndarray:
    """Unbiased estimate ``pi_hat = P^{-1} lambda`` applied axis by axis (``None`` = not randomized)."""
    from ppdp_desktop.core.methods.rr.risk import apply_axes

    invs: list[np.ndarray | None] = []
    for i, m in enumerate(matrices):
        if m is None:
            invs.append(None)
            continue
        try:
            invs.append(np.linalg.inv(np.asarray(m, dtype=float)))
        except np.linalg.LinAlgError as exc:
            raise ParameterError(f"The matrix of attribute {i} is singular (full randomization); "
                                 "its distribution cannot be estimated.") from exc
    return apply_axes(released, invs)


def project_to_simplex(tensor: np.ndarray) -> np.ndarray:
    """Clip negative estimates to 0 and rescale so the total is unchanged."""
    t = np.asarray(tensor, dtype=float)
    total = t.sum()
    c = np.clip(t, 0.0, None)
    s = c.sum()
    return c * (total / s) if s > 0 and total > 0 else c


def marginal(tensor: np.ndarray, axes_kept: Sequence[int]) -> np.ndarray:
    """Sum out every axis not in ``axes_kept`` (kept axes stay in their original order)."""
    t = np.asarray(tensor)
    kept = {a % t.ndim for a in axes_kept}
    drop = tuple(a for a in range(t.ndim) if a not in kept)
    return t.sum(axis=drop)
