"""The random draws of dp-microaggregation, keyed by (attribute, cluster) (issues 19 and 20).

Every draw is read from the job's keyed ChaCha20 streams
(:class:`~ppdp_desktop.core.privacy.keyed.KeyedRandomness`), never from a sequential generator:
cluster ``c`` of attribute ``A`` (clusters are numbered in rank order) owns word ``c`` of its stream,
so its draw does not depend on how many numbers were drawn before, on the order in which the records
arrived or on how they were cut into chunks. The baselines of the evaluation draw per record: word ``i``
of ``(A, "plain laplace")`` or ``(A, "plain choice")`` belongs to record ``i``.

The draws, each one small function:

* :func:`discrete_laplace`: the released noise of a numeric attribute (issue 20). An integer ``Z`` with
  ``P(Z = z) = exp(-|z|/t) (1 - e^(-1/t)) / (1 + e^(-1/t))`` for an integer ``t``, by the exact sampler of
  Canonne, Kamath and Steinke (2020, Algorithm 2 with ``s = 1``; Bernoulli(exp(-gamma)) by their
  Algorithm 1), on integers only: no floating-point number enters a released value, so Mironov's
  attack on floating-point Laplace (2012: the low bits of ``x + Laplace`` reveal ``x``) has nothing to
  read. A rejection sampler needs a variable number of words (8 on average, more than 16 for 5 % of the
  draws): cluster ``c`` reads its ``j``-th word from word ``16 c + j`` of ``(A, "discrete laplace")`` for
  ``j < 16`` (one contiguous read for a range of clusters), then from word ``c`` of
  ``(A, "discrete laplace", "step", j)``; each cluster's result is a function of its own words.
* :func:`laplace_noise`: floating-point Laplace(0, b) by the inverse CDF, kept for the *plain Laplace
  baseline* of the evaluation only (seed 003's comparison, a simulation under a public key that is never
  released): it is the textbook mechanism the method is compared with, not a released draw.
* :func:`inverse_cdf_choice`: the exponential mechanism's choice, index ``j`` with probability
  ``weight_j / sum(weights)``, by the inverse CDF at one uniform per cluster. One word per cluster
  whatever the number of candidates (Gumbel-max would need one per candidate, addressed
  ``cluster * C + j``: ``C`` times the keystream for the same law).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.errors import ParameterError

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.keyed import RecordStream

#: stream draws (the stream's column is the attribute)
LAPLACE_DRAW = "laplace"  # issue 19's floating-point draw of released noise; no longer used for a release
DISCRETE_LAPLACE_DRAW = "discrete laplace"
CHOICE_DRAW = "choice"
PLAIN_LAPLACE_DRAW = "plain laplace"
PLAIN_CHOICE_DRAW = "plain choice"
UNLINK_DRAW = "unlinked order"  # an unlinked release's own shuffle of each protected column (claim.unlink)

_HALF = np.uint64(1 << 52)  # m < 2**52  <=>  u < 1/2
_TWO_POW_54 = np.uint64(1 << 54)
_UNIT = 2.0**-53
#: the largest discrete Laplace parameter t: t * K (K the Bernoulli(exp(-u/t)) counter, below 2**11 short of a
#: (2**-11)! event) stays below 2**64
MAX_T = 1 << 52
_MAX_K = 1 << 11
_ZERO, _ONE = np.uint64(0), np.uint64(1)
#: words of the main stream each cluster owns (c * 16 ... c * 16 + 15): 95 % of the draws need no more
WORDS_AHEAD = 16
CHUNK_CLUSTERS = 1 << 16


def discrete_laplace(stream: RecordStream, start: int, stop: int, t: int) -> np.ndarray:
    """Exact discrete Laplace draws ``P(Z = z) ∝ exp(-|z| / t)`` for indices ``[start, stop)`` of ``stream``.

    Canonne-Kamath-Steinke's sampler, vectorized as a state machine over the indices still running: in
    round ``j`` each running index ``i`` reads one word (word ``16 i + j`` of ``stream`` for ``j < 16``, else
    word ``i`` of ``stream.substream("step", j)``) and takes one step:

    0. ``U`` uniform in ``[0, t)``;
    1. ``D ~ Bernoulli(exp(-U/t))`` by Algorithm 1: ``K = 1``; while ``Bernoulli(U / (t K))``: ``K += 1``;
       ``D = K odd``. ``D = 0`` restarts at 0;
    2. ``V``: the number of successes of ``Bernoulli(exp(-1))`` (Algorithm 1 with ``gamma = 1``) before the
       first failure, so ``P(V = v) = e^(-v) (1 - e^(-1))`` and ``X = U + t V`` is geometric,
       ``P(X = x) ∝ exp(-x/t)``;
    3. a sign bit ``B`` (the word's lowest bit); ``B = 1`` with ``X = 0`` restarts at 0 (else 0 would count
       twice); ``Z = (1 - 2B) X``.

    Each ``Bernoulli(a / b)`` (integers ``a <= b``) is ``r < a`` for ``r`` uniform in ``[0, b)``: ``r = w mod b``,
    accepted when ``w < 2**64 - (2**64 mod b)`` (exactly uniform; a rejected word repeats the step with the
    next round's word). Everything is integer arithmetic: the law is exact.

    Parameters
    ----------
    stream : RecordStream
        The keyed stream, e.g. ``keyed.stream(attribute, DISCRETE_LAPLACE_DRAW)``.
    start, stop : int
        The indices (clusters in rank order).
    t : int
        The parameter, ``1 <= t <= 2**52``.

    Returns
    -------
    numpy.ndarray
        int64, length ``stop - start``.
    """
    if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 1 <= t <= MAX_T:
        raise ParameterError(f"The discrete Laplace parameter t must be a whole number in [1, 2**52]; got {t!r}.")
    start, stop = int(start), int(stop)
    out = np.zeros(max(stop - start, 0), dtype=np.int64)
    for a in range(start, stop, CHUNK_CLUSTERS):  # bounded memory: WORDS_AHEAD words per cluster of a chunk
        b = min(a + CHUNK_CLUSTERS, stop)
        out[a - start:b - start] = _discrete_laplace_chunk(stream, a, b, np.uint64(t))
    return out


def _discrete_laplace_chunk(stream: RecordStream, start: int, stop: int, tu: np.uint64) -> np.ndarray:
    n = stop - start
    out = np.zeros(n, dtype=np.int64)
    ahead = stream.words(start * WORDS_AHEAD, stop * WORDS_AHEAD).reshape(n, WORDS_AHEAD)
    # the state of the indices still running, aligned with ``running`` (compacted every round)
    running = np.arange(n, dtype=np.int64)
    phase = np.zeros(n, dtype=np.int8)  # 0: U, 1: Bernoulli(exp(-U/t)), 2: V, 3: sign
    u = np.zeros(n, dtype=np.uint64)
    kk = np.ones(n, dtype=np.uint64)  # Algorithm 1's K
    v = np.zeros(n, dtype=np.uint64)
    step = 0
    while len(running):
        if step and int(kk.max()) >= _MAX_K:
            raise ParameterError("The discrete Laplace sampler met an impossible run (K >= 2**11).")
        if step < WORDS_AHEAD:
            w = ahead[running, step]
        else:
            w = stream.substream("step", step).words_at(start + running)
        step += 1
        at0, at1, at2, at3 = phase == 0, phase == 1, phase == 2, phase == 3
        # one uniform per index below b: t (U), t K (Bernoulli(U / (t K))) or K (Bernoulli(1 / K))
        r, ok = _uniform_below(w, np.where(at0, tu, np.where(at1, tu * kk, kk)))
        took_u = at0 & ok
        step1, step2 = at1 & ok, at2 & ok
        success = (step1 & (r < u)) | (step2 & (r == _ZERO))
        ended1, ended2 = step1 & ~success, step2 & ~success
        odd = (kk & _ONE) == _ONE  # Algorithm 1's result when it ends: K odd
        negative = (w & _ONE) == _ONE
        x = (u + tu * v).astype(np.int64)
        again = at3 & negative & (x == 0)
        finished = at3 & ~again
        out[running[finished]] = np.where(negative, -x, x)[finished]
        # the next state: U drawn -> 1; in 1 or 2 a success counts K up; 1 ends with D = 1 -> 2 (V = 0), D = 0 ->
        # restart; 2 ends with 1 -> V + 1 (another Bernoulli(exp(-1))), with 0 -> the sign
        v = np.where(ended1, _ZERO, np.where(ended2 & odd, v + _ONE, v))
        kk = np.where(took_u, _ONE, np.where(success, kk + _ONE, np.where((ended1 | ended2) & odd, np.uint64(2), kk)))
        u = np.where(took_u, r, u)
        phase = np.where(took_u, 1, np.where(ended1, np.where(odd, 2, 0),
                         np.where(ended2 & ~odd, 3, np.where(again, 0, phase)))).astype(np.int8)
        keep = ~finished
        running, phase, u, kk, v = running[keep], phase[keep], u[keep], kk[keep], v[keep]
    return out


def _uniform_below(w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``w mod b`` (uniform in ``[0, b)``) and whether it is accepted: ``w < 2**64 - (2**64 mod b)``."""
    limit = _ZERO - b  # 2**64 - b (uint64 wraps); 2**64 mod b = limit mod b < b, so w < limit is accepted
    ok = w < limit
    edge = np.flatnonzero(~ok)  # rare (probability b / 2**64): the exact test w < 2**64 - (limit mod b)
    if len(edge):
        base = limit[edge] - limit[edge] % b[edge]  # 2**64 - b - rest; accepted iff w - base < b
        ok[edge] = (w[edge] - base) < b[edge]
    return w % b, ok


def discrete_laplace_pmf(z: np.ndarray, t: float) -> np.ndarray:
    """``P(Z = z) = exp(-|z|/t) (1 - e^(-1/t)) / (1 + e^(-1/t))``, the law :func:`discrete_laplace` samples."""
    q = np.exp(-1.0 / t)
    return np.exp(-np.abs(np.asarray(z, dtype=np.float64)) / t) * (1 - q) / (1 + q)


def laplace_noise(stream: RecordStream, start: int, stop: int, scale: float) -> np.ndarray:
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
