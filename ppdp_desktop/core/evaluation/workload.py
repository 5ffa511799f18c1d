"""The count-query workload of the thesis (4.4.1, SPEC 3), seeded so a report is repeatable.

200 random conditions, each on ``d`` in {1, 2, 3} non-sensitive attributes with a random value of
each, crossed with every sensitive value; a query is kept when its selectivity (the share of
records matching the whole query) reaches ``s``. Each kept query's count is estimated from the
perturbed column of the matching records with the published matrix; the workload's figure is the
mean relative error ``|act - est| / act``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError

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


def condition_columns(frame: pd.DataFrame, exclude: list[str], max_values: int = 100) -> list[str]:
    """Columns fit for equality conditions: not excluded and with at most ``max_values`` distinct values."""
    return [c for c in frame.columns if c not in exclude and 1 < frame[c].nunique(dropna=False) <= max_values]


def count_query_error(
    conditions: pd.DataFrame,
    true_codes: np.ndarray,
    released_codes: np.ndarray,
    matrix: np.ndarray,
    seed: int = 0,
    n_conditions: int = 200,
    selectivities: tuple[float, ...] = SELECTIVITIES,
) -> WorkloadResult:
    """Run the workload; ``conditions`` holds the non-sensitive columns aligned with both code arrays."""
    inverse = np.linalg.inv(matrix)
    m = matrix.shape[0]
    return run_workload(
        conditions, true_codes, m, lambda mask: inverse @ np.bincount(released_codes[mask], minlength=m),
        seed, n_conditions, selectivities,
    )


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
    actual_rows, estimate_rows = [], []
    for condition in draw_conditions([len(uniques) for _, uniques in encoded], rng, n_conditions):
        mask = np.ones(n, dtype=bool)
        for col, value in condition:
            mask &= encoded[col][0] == value
        actual_rows.append(np.bincount(true_codes[mask], minlength=m))
        estimate_rows.append(estimate(mask))
    return workload_errors(actual_rows, estimate_rows, n, selectivities)


def draw_conditions(sizes: list[int], rng: np.random.Generator, n_conditions: int) -> list[list[tuple[int, int]]]:
    """The seeded conditions: each a list of ``(column, value code)`` on 1 to 3 distinct columns, where
    column ``i`` has ``sizes[i]`` values. Every workload draws them here, so one seed means one query set."""
    out = []
    for _ in range(n_conditions):
        d = int(rng.integers(1, min(3, len(sizes)) + 1))
        chosen = rng.choice(len(sizes), size=d, replace=False)
        out.append([(int(col), int(rng.integers(sizes[col]))) for col in chosen])
    return out


def workload_errors(actual_rows: list, estimate_rows: list, n: int, selectivities: tuple[float, ...]) -> WorkloadResult:
    """Mean relative error of the queries (condition x sensitive value) whose selectivity reaches each threshold."""
    actual = np.array(actual_rows, dtype=float).ravel()
    estimate = np.array(estimate_rows).ravel()
    errors, counts = [], []
    for s in selectivities:
        kept = actual >= max(s * n, 1.0)
        counts.append(int(kept.sum()))
        errors.append(float(np.mean(np.abs(actual[kept] - estimate[kept]) / actual[kept])) if kept.any() else float("nan"))
    return WorkloadResult(tuple(selectivities), tuple(errors), tuple(counts))
