"""The random draws of dp-microaggregation, keyed by (attribute, cluster) (issue 19, point 1).

Every draw is read from the job's keyed ChaCha20 streams
(:class:`~ppdp_desktop.core.privacy.keyed.KeyedRandomness`), never from a sequential generator:
cluster ``c`` of attribute ``A`` (clusters are numbered in rank order) owns word ``c`` of stream
``(A, "laplace")`` (numeric) or ``(A, "choice")`` (categorical), so its draw does not depend on how
many numbers were drawn before, on the order in which the records arrived or on how they were cut
into chunks. The baselines of the evaluation draw per record: word ``i`` of ``(A, "plain laplace")``
or ``(A, "plain choice")`` belongs to record ``i``.

Two draws, each one small function so that it can be replaced on its own (issue 20 will put a
discrete, snapping mechanism in place of :func:`laplace_noise`):

* :func:`laplace_noise`: Laplace(0, b) by the inverse CDF at the midpoint of the word's 53-bit
  uniform cell, ``u = (m + 1/2) 2**-53`` with ``m = w >> 11``; ``u`` is never 0 or 1 (no infinite
  draw), the law is exactly symmetric, and ``|x| <= 36.74 b``.
* :func:`inverse_cdf_choice`: the exponential mechanism's choice, index ``j`` with probability
  ``weight_j / sum(weights)``, by the inverse CDF at one uniform per cluster. One word per cluster
  whatever the number of candidates (Gumbel-max would need one per candidate, addressed
  ``cluster * C + j``: ``C`` times the keystream for the same law).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.keyed import RecordStream

#: stream draws (the stream's column is the attribute)
LAPLACE_DRAW = "laplace"
CHOICE_DRAW = "choice"
PLAIN_LAPLACE_DRAW = "plain laplace"
PLAIN_CHOICE_DRAW = "plain choice"

_HALF = np.uint64(1 << 52)  # m < 2**52  <=>  u < 1/2
_TWO_POW_54 = np.uint64(1 << 54)
_UNIT = 2.0**-53


def laplace_noise(stream: "RecordStream", start: int, stop: int, scale: float) -> np.ndarray:
    """Laplace(0, ``scale``) draws for indices ``[start, stop)`` of ``stream``, one per index.

    With ``m = w >> 11`` (the 53 top bits of the index's word) and ``u = (m + 1/2) 2**-53``, the draw is
    ``scale * log(2u)`` if ``u < 1/2``, else ``-scale * log(2 - 2u)``. Both ``2u = (2m + 1) 2**-53`` and
    ``2 - 2u = (2**54 - 2m - 1) 2**-53`` are exact in float64, and ``m`` and ``2**53 - 1 - m`` give
    opposite draws.

    Parameters
    ----------
    stream : RecordStream
        The keyed stream, e.g. ``keyed.stream(attribute, LAPLACE_DRAW)``.
    start, stop : int
        The indices (clusters in rank order, or records).
    scale : float
        The Laplace scale ``b``.

    Returns
    -------
    numpy.ndarray
        float64, length ``stop - start``.
    """
    m = stream.words(start, stop) >> np.uint64(11)
    negative = m < _HALF
    odd = np.where(negative, 2 * m + np.uint64(1), _TWO_POW_54 - 2 * m - np.uint64(1))  # in [1, 2**53)
    magnitude = np.log(odd.astype(np.float64) * _UNIT)  # log(2u) or log(2 - 2u), <= 0
    return np.where(negative, scale * magnitude, -scale * magnitude)


def exponential_weights(scores: np.ndarray) -> np.ndarray:
    """``exp(score - max score)`` along the last axis: the best candidate weighs 1, ``-inf`` weighs 0."""
    return np.exp(scores - np.max(scores, axis=-1, keepdims=True))


def inverse_cdf_choice(weights: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Index ``j`` with probability ``weights[.., j] / sum(weights[..])``, by the inverse CDF at ``uniforms``.

    The choice is the first ``j`` whose cumulative weight exceeds ``u * total``; a zero weight is never
    chosen (if rounding puts ``u * total`` at the total, the last positive weight is taken).

    Parameters
    ----------
    weights : numpy.ndarray
        Non-negative, at least one positive per row: ``(rows, C)`` (one row per uniform) or ``(C,)``
        (shared by every uniform).
    uniforms : numpy.ndarray
        Uniforms in [0, 1), one per row (or per draw from the shared row).

    Returns
    -------
    numpy.ndarray
        int64 indices into the last axis, one per uniform.
    """
    cumulative = np.cumsum(weights, axis=-1)
    if weights.ndim == 1:
        chosen = np.searchsorted(cumulative, uniforms * cumulative[-1], side="right")
        last = len(weights) - 1 - int(np.argmax(weights[::-1] > 0))
    else:
        chosen = (cumulative <= (uniforms * cumulative[:, -1])[:, None]).sum(axis=1)
        last = weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
    return np.minimum(chosen, last).astype(np.int64)
