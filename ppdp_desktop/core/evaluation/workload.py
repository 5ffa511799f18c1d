"""The count-query workload of the thesis (4.4.1, SPEC 3), seeded so a report is repeatable.

200 random conditions, each on ``d`` in {1, 2, 3} non-sensitive attributes with a random value of
each, crossed with every sensitive value; a query is kept when its selectivity (the share of
records matching the whole query) reaches ``s``. Each kept query's count is estimated from the
perturbed column of the matching records with the published matrix; the workload's figure is the
mean relative error ``|act - est| / act``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation.workload_cells import ColumnMarginals, cell_counts
from ppdp_desktop.core.evaluation.workload_codes import factorized
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.privacy.structured import RetentionMatrix

SELECTIVITIES = (0.001, 0.005, 0.01)


@dataclass(frozen=True)
class WorkloadResult:
    """Mean relative error and number of kept queries per selectivity threshold."""

    selectivity: tuple[float, ...]
    mean_error: tuple[float, ...]
    n_queries: tuple[int, ...]

    def to_json(self) -> list[dict[str, float | int | None]]:
        return [
            {"selectivity": s, "mean_relative_error": None if np.isnan(e) else float(e), "queries": q}
            for s, e, q in zip(self.selectivity, self.mean_error, self.n_queries)
        ]


#: :func:`condition_columns` first counts the values of this many leading records: more than ``max_values`` there
#: rules a column out without counting the whole column (a prefix never has more distinct values than the column)
PREFIX_ROWS = 4096


def condition_columns(frame: pd.DataFrame, exclude: list[str], max_values: int = 100) -> list[str]:
    """Columns fit for equality conditions: not excluded and with at most ``max_values`` distinct values (a missing
    value counted as one). See :func:`encoded_condition_columns`."""
    return encoded_condition_columns(frame, exclude, max_values)[0]


def encoded_condition_columns(frame: pd.DataFrame, exclude: list[str],
                              max_values: int = 100) -> tuple[list[str], list[tuple[np.ndarray, Any]]]:
    """:func:`condition_columns` and each chosen column's ``pd.factorize`` (codes in order of first appearance, a
    missing value a code of its own), which :func:`count_query_error` takes as ``encoded``: each column is
    hashed once, for its count of values and its codes. A column whose first :data:`PREFIX_ROWS` records already
    hold more than ``max_values`` values is ruled out from them (identifiers, postcodes, measurements: most
    columns of a large table)."""
    chosen: list[str] = []
    encoded: list[tuple[np.ndarray, Any]] = []
    for c in frame.columns:
        if c in exclude:
            continue
        column = frame[c]
        if len(column) > PREFIX_ROWS and column.iloc[:PREFIX_ROWS].nunique(dropna=False) > max_values:
            continue
        if column.dtype == object and not 1 < column.nunique(dropna=False) <= max_values:
            continue  # Python objects: counted as pandas counts them (pd.NA and NaN apart)
        codes, uniques = factorized(column)
        if column.dtype == object or 1 < len(uniques) <= max_values:
            chosen.append(c)
            encoded.append((codes, uniques))
    return chosen, encoded


def count_query_error(
    conditions: pd.DataFrame,
    true_codes: np.ndarray,
    released_codes: np.ndarray,
    matrix: np.ndarray | RetentionMatrix,
    seed: int = 0,
    n_conditions: int = 200,
    selectivities: tuple[float, ...] = SELECTIVITIES,
    encoded: list[tuple[np.ndarray, Any]] | None = None,
) -> WorkloadResult:
    """Run the workload; ``conditions`` holds the non-sensitive columns aligned with both code arrays (``encoded``:
    their ``pd.factorize``, from :func:`encoded_condition_columns`, not computed again).

    The estimator is linear (``P^{-1}`` times the released counts), so the rows are first aggregated into
    cells (one per combination of condition values, with the counts of true and released codes in each):
    every query then sums cells instead of scanning the records. Same queries, same figures as scanning
    (:func:`run_workload`), in a fraction of the time on a large table.
    """
    if conditions.shape[1] == 0:
        raise ParameterError("The count-query workload needs at least one non-sensitive column with few values.")
    m = matrix.shape[0]
    if encoded is None:
        encoded = [factorized(conditions[c]) for c in conditions.columns]
    cells = cell_counts([codes for codes, _ in encoded], true_codes, released_codes, m)
    if cells is None:  # about one cell per record: aggregating would not save anything
        return run_workload(
            conditions, true_codes, m,
            lambda mask: reconstruction.inverse(np.bincount(released_codes[mask], minlength=m), matrix),
            seed, n_conditions, selectivities,
        )
    rng = np.random.default_rng(seed)
    errors = QueryErrors(len(true_codes), selectivities, matrix)
    marginals = ColumnMarginals([codes for codes, _ in encoded], true_codes, released_codes, m)
    for condition in draw_conditions([len(uniques) for _, uniques in encoded], rng, n_conditions):
        if len(condition) == 1:  # one column: its marginal table (the heaviest queries, a large share of the cells)
            errors.add(*marginals.counts(*condition[0]))
            continue
        selected = np.ones(cells.n_cells, dtype=bool)
        for col, value in condition:
            selected &= cells.codes[col] == value
        errors.add(*cells.counts_of(np.flatnonzero(selected)))
    return errors.result()


class QueryErrors:
    """The workload's figures, gathered query by query: each condition's true counts and either its estimated
    counts or (with ``matrix``) its released counts, estimated here a batch of conditions at a time with the
    structured inverse — never an m x m inverse, never all conditions' m counts at once."""

    def __init__(self, n: int, selectivities: tuple[float, ...], matrix=None, groups: np.ndarray | None = None,
                 m: int | None = None) -> None:
        self.n, self.selectivities, self.matrix = n, tuple(selectivities), matrix
        self.groups, self.m = groups, m  # entries of a block matrix (sub-tables) summed by value
        self.total = np.zeros(len(self.selectivities))
        self.kept = np.zeros(len(self.selectivities), dtype=np.int64)
        self._actual: list[np.ndarray] = []
        self._pending: list[np.ndarray] = []

    def add(self, actual: np.ndarray, counts: np.ndarray) -> None:
        """One condition: true counts and released counts (estimated counts when there is no matrix)."""
        if self.matrix is None:
            self._score(np.asarray(actual, dtype=float)[None, :], np.asarray(counts, dtype=float)[None, :])
            return
        self._actual.append(np.asarray(actual, dtype=float))
        self._pending.append(np.asarray(counts, dtype=float))
        if len(self._pending) * len(counts) >= reconstruction.CHUNK_CELLS:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            estimates = reconstruction.inverse(np.stack(self._pending, axis=1), self.matrix).T
            if self.groups is not None:
                if self.m is None:
                    raise ValueError("Entries summed by value (groups) need the number of values (m).")
                estimates = reconstruction.sum_by_group(estimates, self.groups, self.m)
            self._score(np.stack(self._actual), estimates)
            self._actual, self._pending = [], []

    def _score(self, actual: np.ndarray, estimate: np.ndarray) -> None:
        for k, s in enumerate(self.selectivities):
            kept = actual >= max(s * self.n, 1.0)
            self.total[k] += float(np.sum(np.abs(actual[kept] - estimate[kept]) / actual[kept]))
            self.kept[k] += int(kept.sum())

    def result(self) -> WorkloadResult:
        self._flush()
        errors = tuple(float(t / k) if k else float("nan") for t, k in zip(self.total, self.kept))
        return WorkloadResult(self.selectivities, errors, tuple(int(k) for k in self.kept))


def run_workload(
    conditions: pd.DataFrame,
    true_codes: np.ndarray,
    m: int,
    estimate: Callable[[np.ndarray], np.ndarray],
    seed: int = 0,
    n_conditions: int = 200,
    selectivities: tuple[float, ...] = SELECTIVITIES,
) -> WorkloadResult:
    """The workload with any estimator: ``estimate(mask)`` gives the m estimated counts of the
    records selected by ``mask`` (so perturbation, partitioning and Anatomy share the same queries)."""
    if conditions.shape[1] == 0:
        raise ParameterError("The count-query workload needs at least one non-sensitive column with few values.")
    n = len(true_codes)
    rng = np.random.default_rng(seed)
    encoded = [pd.factorize(conditions[c], use_na_sentinel=False) for c in conditions.columns]
    errors = QueryErrors(n, selectivities)
    for condition in draw_conditions([len(uniques) for _, uniques in encoded], rng, n_conditions):
        mask = np.ones(n, dtype=bool)
        for col, value in condition:
            mask &= encoded[col][0] == value
        errors.add(np.bincount(true_codes[mask], minlength=m), estimate(mask))
    return errors.result()


def draw_conditions(sizes: list[int], rng: np.random.Generator, n_conditions: int) -> list[list[tuple[int, int]]]:
    """The seeded conditions: each a list of ``(column, value code)`` on 1 to 3 distinct columns, where
    column ``i`` has ``sizes[i]`` values. Every workload draws them here, so one seed means one query set."""
    out = []
    for _ in range(n_conditions):
        d = int(rng.integers(1, min(3, len(sizes)) + 1))
        chosen = rng.choice(len(sizes), size=d, replace=False)
        out.append([(int(col), int(rng.integers(sizes[col]))) for col in chosen])
    return out
