"""Can a released column have been drawn with its published matrix? An exact check a recipient can make.

Each record with original value ``x`` is released as ``y`` with probability ``P[y][x]``, independently.
Whatever the original table, the count of released ``y`` among ``n`` records is therefore a sum of ``n``
independent draws whose chances all lie between ``lo_y = min_x P[y][x]`` and ``hi_y = max_x P[y][x]``:
it is stochastically at least Binomial(n, lo_y) and at most Binomial(n, hi_y) (coupling, draw by draw).
A count far outside that range cannot come from the published matrix: the column was not randomized as
claimed (for instance, the true column was put back). The test is exact — no asymptotics, no estimate
of the original table — and conservative: a genuine release is refused with probability below
:data:`FALSE_REFUSAL` per column (Bonferroni over both tails of every value).

A tail is computed only where it can be small: a binomial's median lies between ``floor(n p)`` and ``ceil(n p)``
(Kaas and Buhrman, 1980), so ``Pr[count <= c]`` is at least 1/2 once ``c >= n lo + 1`` and ``Pr[count >= c]`` is
at least 1/2 once ``c <= n hi - 1`` (the 1 covers rounding of ``n p``) -- far above any refusal level. A genuine
release's counts almost always lie between the two, and then scipy (a fifth of a second to import) is not needed.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.privacy.structured import RetentionMatrix

#: the largest chance that a genuine column is refused (one in a billion)
FALSE_REFUSAL = 1e-9


def binomial_tails(observed: np.ndarray, n: np.ndarray, lo: np.ndarray,
                   hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Pr[Binomial(n, lo) <= observed]`` and ``Pr[Binomial(n, hi) >= observed]`` per value, exact where either
    can be below 1/2; 1.0 where the median bound (module docstring) shows it is at least 1/2."""
    low = np.ones(len(observed))
    high = np.ones(len(observed))
    low_needed = observed < n * lo + 1  # not above every median: the lower tail may be small
    high_needed = (observed > n * hi - 1) & (observed > 0)  # not below every median
    if low_needed.any() or high_needed.any():
        from scipy.special import bdtr, bdtrc  # binomial tails (scipy.stats costs a second to import)

        low[low_needed] = bdtr(observed[low_needed], n[low_needed], lo[low_needed])
        high[high_needed] = bdtrc(observed[high_needed] - 1, n[high_needed], hi[high_needed])
    return low, high


def check_counts_plausible(observed: np.ndarray, matrix: np.ndarray | RetentionMatrix, values: Sequence[object],
                           attribute: str, where: str | Sequence[str] | np.ndarray = "") -> None:
    """Refuse released counts that the published ``matrix`` (``matrix[y][x] = Pr[x -> y]``) cannot produce.

    Raises
    ------
    PrivacyError
        A released value is much rarer (or commoner) than the matrix allows for any original table.
    """
    observed = np.asarray(observed, dtype=np.int64)
    m = len(observed)
    if int(observed.sum()) == 0 or m == 0:
        return
    if isinstance(matrix, RetentionMatrix):  # structured: O(m); a block's values are released from its records only
        lo, hi = matrix.row_extremes()
        n = np.repeat(matrix.block_sum(observed), matrix.sizes).astype(np.int64)
    else:
        matrix = np.asarray(matrix, dtype=float)
        lo, hi = matrix.min(axis=1), matrix.max(axis=1)
        n = np.full(m, int(observed.sum()))
    alpha = FALSE_REFUSAL / (2 * m)
    low_tail, high_tail = binomial_tails(observed, n, np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0))
    def suffix(y: int) -> str:  # ``where`` per value (a partition's sub-table of each entry) or for all
        place = where if isinstance(where, str) else where[y]
        return f" ({place})" if place else ""

    for y in np.flatnonzero(low_tail < alpha).tolist():
        raise PrivacyError(
            f"{attribute!r}{suffix(y)}: value {label_text(values[y])!r} is released {observed[y]:,} times among "
            f"{n[y]:,} records, but the published matrix releases any record as it with probability at least "
            f"{lo[y]:.4g} (about {n[y] * lo[y]:,.0f} expected): the column was not randomized with this matrix.")
    for y in np.flatnonzero(high_tail < alpha).tolist():
        raise PrivacyError(
            f"{attribute!r}{suffix(y)}: value {label_text(values[y])!r} is released {observed[y]:,} times among "
            f"{n[y]:,} records, but the published matrix releases any record as it with probability at most "
            f"{hi[y]:.4g} (about {n[y] * hi[y]:,.0f} expected): the column was not randomized with this matrix.")
