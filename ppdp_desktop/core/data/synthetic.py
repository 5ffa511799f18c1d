"""Synthetic tables in the thesis' experimental settings (chapter 4.4).

One sensitive column ``SA`` with ``m`` values ``v00 .. v{m-1}`` (zero-padded to 3 digits when m > 100)
(``m`` in {50, 75, 100, 150} in the thesis) whose frequencies follow Zipf's law with exponent ``skew`` (lambda in {1, 2, 3}):
``f_i`` proportional to ``1 / i**skew``, ``v00`` the most frequent. The counts are the exact
Zipf shares of ``n`` (largest-remainder rounding), with every value present at least once so the
domain has ``m`` values; the records are then shuffled. ``n_quasi`` non-sensitive categorical
columns ``A1 ..`` (5-20 values each) are mildly correlated with ``SA`` so count queries on them
have something to find. Deterministic for a seed; vectorized.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError

#: share of records whose non-sensitive value follows from their sensitive value
CORRELATION = 0.3


def zipf_counts(n: int, m: int, skew: float) -> np.ndarray:
    """Counts of ``m`` values summing to ``n`` in Zipf proportions (each at least 1), most frequent first."""
    if m < 1 or n < m:
        raise ParameterError(f"A Zipf table needs m >= 1 values and at least m records; got n = {n}, m = {m}.")
    if skew < 0:
        raise ParameterError(f"The Zipf exponent must be non-negative; got {skew}.")
    weights = 1.0 / np.arange(1, m + 1, dtype=float) ** skew
    spare = n - m  # one record per value is reserved so every value occurs
    exact = spare * weights / weights.sum()
    counts = np.floor(exact).astype(np.int64)
    short = spare - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts + 1


def thesis_table(n: int = 300_000, m: int = 50, skew: float = 1.0, n_quasi: int = 3, seed: int = 0) -> pd.DataFrame:
    """A table with Zipf-distributed ``SA`` and ``n_quasi`` categorical attributes ``A1..`` for count queries."""
    if n_quasi < 0:
        raise ParameterError(f"n_quasi must be non-negative; got {n_quasi}.")
    rng = np.random.default_rng(seed)
    counts = zipf_counts(n, m, skew)
    width = max(2, len(str(m - 1)))
    sa_labels = np.array([f"v{i:0{width}d}" for i in range(m)])
    sa = rng.permutation(np.repeat(np.arange(m), counts))
    columns: dict[str, object] = {}
    for j in range(1, n_quasi + 1):
        card = int(rng.integers(5, 21))
        labels = np.array([f"a{j}_{k:02d}" for k in range(card)])
        # a fixed random map SA -> value for the correlated share, the rest uniform
        mapping = rng.integers(card, size=m)
        linked = rng.random(n) < CORRELATION
        codes = np.where(linked, mapping[sa], rng.integers(card, size=n))
        columns[f"A{j}"] = labels[codes]
    columns["SA"] = sa_labels[sa]
    return pd.DataFrame(columns)
