"""Comparing perturbation methods at matched privacy on the count-query workload (thesis 4.4.1; SPEC 3 and 6).

Randomization methods get the same (rho1, rho2); Anatomy gets ``l = round(1/rho2)`` (an l-diverse
group bounds the posterior by 1/l). Every method answers the same seeded queries.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.domain import CategoricalDomain, encode_column, label_text
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation.workload import WorkloadResult, condition_columns, count_query_error, run_workload
from ppdp_desktop.core.methods.base import Runner
from ppdp_desktop.core.methods.baselines.anatomy import anatomize, count_query_error_anatomy
from ppdp_desktop.core.methods.perturbation.plan import perturbation_plan
from ppdp_desktop.core.privacy.randomness import simulation_generator
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

COMPARABLE = ("uniform", "finegrain", "partition", "anatomy")
DEFAULT_METHODS = ("uniform", "partition", "anatomy")
MODEL_METHODS = ("uniform", "finegrain", "partition")  # the jobs ``ppdp compare --target`` runs by default


@runtime_checkable
class SubtablePlan(Protocol):
    """A plan with sub-tables and their own estimator (perturbation partitioning's ``PartitionPlan``), told at run time
    by what it holds: this module cannot import the method, which imports it (``comparisons``)."""

    domain: CategoricalDomain
    subtable_column: str

    def estimator(self, released: np.ndarray, sub: np.ndarray) -> Callable[[np.ndarray], np.ndarray]: ...


@dataclass(frozen=True)
class Comparison:
    method: str
    privacy: str
    workload: WorkloadResult


def compare_methods(
    dataset: Dataset, sensitive: str, methods: list[str], rho1: float, rho2: float,
    identifiers: Sequence[str] = (), seed: int | None = None, workload_seed: int = 0, *, run: Runner,
) -> list[Comparison]:
    """Each method's mean relative count-query error at selectivities 0.1 %, 0.5 % and 1 %.

    ``run`` is the job (``ppdp_desktop.core.anonymize.anonymize``), passed in so that a method never
    imports the job that runs it.
    """
    unknown = [m for m in methods if m not in COMPARABLE]
    if unknown:
        raise ParameterError(f"Cannot compare {unknown[0]!r}; choose among: {', '.join(COMPARABLE)}.")
    frame = dataset.frame
    if sensitive not in frame.columns:
        raise ParameterError(f"Sensitive column {sensitive!r} is not in {dataset.label}.")
    columns = condition_columns(frame, [sensitive, *identifiers])
    conditions = frame[columns]
    out = []
    for name in methods:
        if name == "anatomy":
            domain, codes = encode_column(frame[sensitive], sensitive, dataset.label)
            l = max(2, int(round(1.0 / rho2)))
            release = anatomize(codes, l, simulation_generator(seed), labels=[label_text(v) for v in domain.values])
            result = count_query_error_anatomy(conditions, codes, release, seed=workload_seed)
            out.append(Comparison(name, f"l = {l}", result))
            continue
        settings = AnonymizationSettings(sensitive, name, list(identifiers), [], SensitivitySettings(rho1=rho1, rho2=rho2),
                                         seed=seed)
        job = run(dataset, settings)
        true_codes, released = job.applied.codes[sensitive]
        plan = job.plan
        if isinstance(plan, SubtablePlan):
            estimate = plan.estimator(released, job.applied.columns[plan.subtable_column])
            result = run_workload(conditions, true_codes, plan.domain.m, estimate, seed=workload_seed)
        else:
            result = count_query_error(conditions, true_codes, released, perturbation_plan(plan).matrix, seed=workload_seed)
        # partitioning's pair holds within each record's sub-table (its published number narrows the values)
        scope = " within each sub-table" if isinstance(plan, SubtablePlan) else ""
        out.append(Comparison(name, f"rho = ({rho1:g}, {rho2:g}){scope}", result))
    return out


def format_table(rows: list[Comparison]) -> str:
    """A plain-text table: one row per method, one column per selectivity."""
    header = ["method", "privacy"] + [f"err@{s:.1%}" for s in rows[0].workload.selectivity] if rows else []
    lines = [header]
    for row in rows:
        cells = [row.method, row.privacy]
        for e, q in zip(row.workload.mean_error, row.workload.n_queries):
            cells.append("n/a" if np.isnan(e) else f"{e:.4f} ({q})")
        lines.append(cells)
    widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in lines)
