"""The interval of one released group's share of a sensitive value, from the release alone (the report's example
group: "an estimated 85 % (likely between 80 % and 90 %) of the ... records").

The share is estimated without bias by inverting the published matrices: ``a / b`` with ``a`` the group's
estimated count of the value and ``b`` its estimated number of records (known exactly where the quasi-identifiers
were not randomized). Both are linear in the released counts ``o``, ``a = <A, o>`` and ``b = <B, o>``, so the
interval is Fieller's for a ratio: every share ``s`` with ``(a - s b)^2 <= z^2 Var(a - s b)``. The variance is the
multinomial one of the released counts, estimated from them, within each stratum whose number of records is
published (a sub-table; a combination of columns that were not randomized). Each record is randomized on its own,
so the released counts are a sum of multinomials, whose variance is at most that of one multinomial: up to its
estimation error, the variance used is at least the true one.

The group and the value shown are chosen by the estimates themselves (the value is the group's most frequent
estimated one, the group the largest above the bound): an interval made for one fixed value at 95 % misses
more often for the value picked as the largest, whose estimate is inflated by the noise that made it the
largest (3 quasi-identifiers and 14 occupations under uniform perturbation: 85 % of 200 seeds). The interval is
therefore simultaneous: each of the ``comparisons`` (group, value) cells gets level ``1 - (1 - level) /
comparisons`` (Bonferroni), so with probability at least ``level`` every cell's interval holds, whichever is
shown. ``benchmarks/bench_group_disclosure.py --coverage`` measures how often the shown interval holds the true
share (benchmarks/README.md). The interval is widened to include the share shown (a maximum-likelihood or
clipped estimate, which can lie outside it), and clipped to [0, 1].
"""
from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.evaluation.group_disclosure import text_codes

#: the level the words "likely between" claim for the shown interval, every (group, value) cell at once
LEVEL = 0.95
#: a dense matrix is inverted only up to this many values (larger domains use the matrix's structure)
DENSE_VALUES = 4000


def share_interval(release: LoadedRelease, quasi: list[str], sensitive: str, labels: tuple[str, ...],
                   value: str, estimate: float | None = None, comparisons: int = 1,
                   level: float = LEVEL) -> tuple[float, float] | None:
    """The interval of the share of ``value`` among the records whose quasi-identifiers are ``labels`` (Fieller's,
    at ``1 - (1 - level) / comparisons``: ``comparisons`` is the number of (group, value) cells the shown one was
    chosen from), widened to include ``estimate`` (the share shown). None where the shares are counted, not
    estimated, or cannot be estimated (a singular matrix, a value outside the published domain)."""
    meta = release.metadata
    level = 1.0 - (1.0 - level) / max(int(comparisons), 1)
    try:
        if "randomized" in meta and {e.get("attribute") for e in meta["randomized"]} & {*quasi, sensitive}:
            found = _randomized(release, quasi, sensitive, labels, value, level)
        else:
            entry = next((e for e in meta.get("sensitive") or [] if e.get("attribute") == sensitive), None)
            found = None if entry is None else _perturbed(release, quasi, entry, labels, value, level)
    except (PPDPError, np.linalg.LinAlgError, KeyError, TypeError, ValueError):  # verify says what is malformed
        return None
    if found is None or not np.all(np.isfinite(found)):
        return None
    low, high = max(found[0], 0.0), min(found[1], 1.0)
    if estimate is not None:
        low, high = min(low, estimate), max(high, estimate)
    return float(low), float(high)


def fieller(a: float, b: float, vaa: float, vab: float, vbb: float, level: float) -> tuple[float, float]:
    """Every ``s`` with ``(a - s b)^2 <= z^2 (vaa - 2 s vab + s^2 vbb)``: Fieller's interval for ``a / b``; all
    of [0, 1] when ``b`` is not clearly away from 0 (the set is then unbounded)."""
    z2 = NormalDist().inv_cdf(0.5 + level / 2.0) ** 2
    alpha = b * b - z2 * vbb
    beta = -2.0 * a * b + 2.0 * z2 * vab
    gamma = a * a - z2 * vaa
    if alpha <= 0.0:
        return 0.0, 1.0
    root = np.sqrt(max(beta * beta - 4.0 * alpha * gamma, 0.0))
    return (-beta - root) / (2.0 * alpha), (-beta + root) / (2.0 * alpha)


def _moments(first: np.ndarray, second: np.ndarray, counts: np.ndarray, strata: np.ndarray) -> float:
    """The estimated covariance of ``<first, o>`` and ``<second, o>`` for released counts ``o`` (flat arrays) that
    are multinomial within each stratum (``strata``: each count's stratum), whose totals are fixed."""
    size = int(strata.max()) + 1 if len(strata) else 0
    n = np.bincount(strata, weights=counts, minlength=size)
    x = np.bincount(strata, weights=first * counts, minlength=size)
    y = np.bincount(strata, weights=second * counts, minlength=size)
    between = np.divide(x * y, n, out=np.zeros(size), where=n > 0)
    return float((first * second * counts).sum() - between.sum())


def _interval(a_weights: np.ndarray, b_weights: np.ndarray, counts: np.ndarray, strata: np.ndarray,
              level: float) -> tuple[float, float]:
    a, b = float(a_weights @ counts), float(b_weights @ counts)
    vaa = _moments(a_weights, a_weights, counts, strata)
    vab = _moments(a_weights, b_weights, counts, strata)
    vbb = _moments(b_weights, b_weights, counts, strata)
    return fieller(a, b, vaa, vab, vbb, level)


def _randomized(release: LoadedRelease, quasi: list[str], sensitive: str, labels: tuple[str, ...], value: str,
                level: float) -> tuple[float, float] | None:
    """Randomized response: the released table of ``quasi`` x ``sensitive``, un-mixed axis by axis
    (``A = (M_1^-T (x) ... ) e_target``); strata are the combinations of the columns that were not randomized."""
    from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table
    from ppdp_desktop.core.methods.rr.risk import apply_axes

    attributes = [*quasi, sensitive]
    grid = estimate_release_table(release, attributes)
    axes = [pd.Index(pd.unique(grid[c])) for c in attributes]  # the grid is every combination, in order
    dims = [len(a) for a in axes]
    target = [a.get_indexer([label])[0] for a, label in zip(axes, [*labels, value])]
    if min(target) < 0:
        return None
    published = {e["attribute"]: np.asarray(e["matrix"], dtype=float) for e in release.metadata["randomized"]}
    inverse_t = [np.linalg.inv(published[c]).T if c in published else None for c in attributes]
    one = np.zeros(dims)
    one[tuple(target)] = 1.0
    group = np.zeros(dims)
    group[tuple(target[:-1])] = 1.0
    a_weights, b_weights = (apply_axes(x, inverse_t).ravel() for x in (one, group))
    counts = grid["observed"].to_numpy(dtype=float)
    fixed = [i for i, c in enumerate(attributes) if c not in published]
    index = np.indices(dims).reshape(len(dims), -1)
    strata = (np.ravel_multi_index(tuple(index[i] for i in fixed), tuple(dims[i] for i in fixed)) if fixed
              else np.zeros(len(counts), dtype=np.int64))
    return _interval(a_weights, b_weights, counts, np.asarray(strata, dtype=np.int64), level)


def _perturbed(release: LoadedRelease, quasi: list[str], entry: dict, labels: tuple[str, ...], value: str,
               level: float) -> tuple[float, float] | None:
    """A perturbed column: the group's released entries, un-mixed with the published (block-diagonal) matrix;
    strata are the sub-tables (each group's records per sub-table are published), the group's size is exact."""
    from ppdp_desktop.core.methods.partition.release import published_entries

    values = [label_text(v) for v in entry["values"]]
    if value not in values:
        return None
    entries, matrix, entry_values = published_entries(release, entry)
    counts = np.bincount(np.asarray(entries)[_in_group(release.table, quasi, labels)], minlength=matrix.m)
    value_of = np.arange(matrix.m) if entry_values is None else np.asarray(entry_values)
    a_weights = _transpose_solve(matrix, (value_of == values.index(value)).astype(float))
    strata = np.repeat(np.arange(matrix.n_blocks), matrix.sizes)
    return _interval(a_weights, np.ones(matrix.m), counts.astype(float), strata, level)


def _transpose_solve(matrix, x: np.ndarray) -> np.ndarray:
    """``P^-T x`` for a :class:`~ppdp_desktop.core.privacy.structured.RetentionMatrix` ``P``: per block
    ``P^T = D + v u^T`` (``D = diag(p)``, ``v = 1 - p``, ``u = 1/m_b``), by Sherman-Morrison; densely where a
    value is never kept (a small domain only)."""
    p = np.asarray(matrix.retention, dtype=float)
    if np.any(p <= 0.0):
        if matrix.m > DENSE_VALUES:
            return np.full(matrix.m, np.nan)
        return np.linalg.solve(matrix.to_dense().T, x)
    size = np.repeat(matrix.sizes, matrix.sizes).astype(float)
    scaled = x / p
    correction = matrix.block_sum(scaled / size) / (1.0 + matrix.block_sum((1.0 - p) / (size * p)))
    return scaled - (1.0 - p) / p * np.repeat(correction, matrix.sizes)


def _in_group(table: pd.DataFrame, quasi: list[str], labels: tuple[str, ...]) -> np.ndarray:
    mask = np.ones(len(table), dtype=bool)
    for column, label in zip(quasi, labels):
        codes, texts = text_codes(table[column])
        mask &= (texts == label)[codes]
    return mask
