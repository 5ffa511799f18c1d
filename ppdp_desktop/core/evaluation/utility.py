"""How much a release keeps: the utility figures shown after a job (and, later, in the report)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppdp_desktop.core.evaluation import metrics
from ppdp_desktop.core.evaluation.workload import WorkloadResult


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
        metrics.pearson_chi_square(actual, distribution),
        metrics.jensen_shannon(actual, distribution),
        workload,
    )
