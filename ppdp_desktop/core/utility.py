"""How much a release keeps: the utility figures shown after a job (and, later, in the report)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppdp_desktop.core import metrics, reconstruction
from ppdp_desktop.core.anonymize import Anonymization
from ppdp_desktop.core.workload import WorkloadResult, condition_columns, count_query_error


@dataclass(frozen=True)
class UtilitySummary:
    record_utility: float
    reconstruction_error: float
    aggregate_utility: float
    kl: float
    chi_square: float
    jensen_shannon: float
    workload: WorkloadResult | None

    def lines(self) -> list[str]:
        out = [
            f"record utility {self.record_utility:.4f}; aggregate utility {self.aggregate_utility:.4f}",
            f"reconstruction error {self.reconstruction_error:.4f}; distances of the MLE estimate: "
            f"KL {self.kl:.5f}, chi-square {self.chi_square:.5f}, JSD {self.jensen_shannon:.5f}",
        ]
        if self.workload is not None:
            parts = [
                f"{s:.1%}: {'n/a' if np.isnan(e) else f'{e:.3f}'} ({q} queries)"
                for s, e, q in zip(self.workload.selectivity, self.workload.mean_error, self.workload.n_queries)
            ]
            out.append("count-query relative error by selectivity: " + "; ".join(parts))
        return out


def utility_summary(
    record_utility: float, actual: np.ndarray, estimate: np.ndarray, distribution: np.ndarray,
    workload: WorkloadResult | None,
) -> UtilitySummary:
    """Error measures on the unbiased ``estimate``; distances on ``distribution`` (an estimate in the simplex)."""
    return UtilitySummary(
        record_utility,
        metrics.reconstruction_error(actual, estimate),
        metrics.aggregate_utility(actual, estimate),
        metrics.kl_divergence(actual, distribution),
        metrics.chi_square(actual, distribution),
        metrics.jensen_shannon(actual, distribution),
        workload,
    )


def summarize(result: Anonymization, workload_seed: int = 0) -> UtilitySummary:
    """Compare the original sensitive counts with those reconstructed from the release."""
    plan = result.plan
    actual = plan.domain.counts.astype(float)
    true_codes, released_codes = result.applied.codes[plan.attribute]
    observed = np.bincount(released_codes, minlength=plan.domain.m)
    estimate = reconstruction.inverse(observed, plan.matrix)  # unbiased: for the error measures
    in_simplex = reconstruction.iterative_bayesian(observed, plan.matrix)  # a distribution: for distances
    frame = result.dataset.frame
    exclude = [plan.attribute, *result.dataset.schema.identifiers]
    columns = condition_columns(frame, exclude)
    workload = (
        count_query_error(frame[columns], true_codes, released_codes, plan.matrix, seed=workload_seed)
        if columns
        else None
    )
    return utility_summary(plan.record_utility, actual, estimate, in_simplex, workload)
