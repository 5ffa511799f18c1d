"""The perturbation family's part of the report: the sensitive counts estimated with the published
matrix (the non-negative maximum-likelihood estimate, with a seeded parametric-bootstrap interval for that
estimator), the posteriors against their bounds, and the count-query workload. :func:`monte_carlo_band`
(where the unbiased inverse lands over repeated perturbations of the true values) stays for the
benchmarks and the release-side reports."""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation.figures import distribution_figure, posterior_figure, retention_figure
from ppdp_desktop.core.evaluation.report_model import MISSING_LABEL, MethodReport, value_label
from ppdp_desktop.core.evaluation.utility import UtilitySummary, utility_summary
from ppdp_desktop.core.evaluation.workload import count_query_error, encoded_condition_columns
from ppdp_desktop.core.methods.perturbation.ldp import epsilon_json
from ppdp_desktop.core.methods.perturbation.plan import perturb_codes, perturbation_plan
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.progress import CancelToken, Progress

BAND_REPETITIONS = 30
BAND_SEED = 20_240_601  # fixed: the same release always gets the same band


def monte_carlo_band(
    codes: np.ndarray,
    retention: np.ndarray,
    matrix: np.ndarray,
    repetitions: int = BAND_REPETITIONS,
    seed: int = BAND_SEED,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Where the inverse estimate lands over repeated perturbations of the true ``codes``.

    Each repetition perturbs every record with the plan's ``retention`` (keep ``x_i`` with ``p_i``,
    else a uniform draw), counts the released values and estimates ``P^{-1} o``; the band is the
    central ``level`` interval of those estimates per value. Each repetition is one vectorized
    :func:`~ppdp_desktop.core.methods.perturbation.plan.perturb_codes` (the release's own sampler) and one
    ``bincount``, so memory stays ``O(n)``; all repetitions are estimated with a single solve.
    """
    m = len(retention)
    rng = np.random.default_rng(seed)
    observed = np.empty((repetitions, m))
    for r in range(repetitions):
        observed[r] = np.bincount(perturb_codes(codes, retention, rng), minlength=m)
    estimates = reconstruction.inverse(observed.T, matrix).T  # one solve, every repetition
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(estimates, [tail, 100.0 - tail], axis=0)
    return low, high


def perturbation_part(report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken) -> None:
    plan = perturbation_plan(result)
    domain = plan.domain
    matrix = plan.matrix
    report.values = [value_label(v) for v in domain.values]
    report.original = original = domain.counts.astype(float)
    report.retention = retention = np.asarray(plan.retention, dtype=float)
    report.record_utility = float(plan.record_utility)
    report.rho2 = rho2 = np.asarray(plan.requirement.rho2, dtype=float)
    progress(0.05, "Checking the posteriors")
    check = plan.guarantee()
    report.max_posterior = max_posterior = np.asarray(check.max_posterior, dtype=float)
    report.epsilon_ldp = epsilon_json(check.epsilon_ldp)  # None where none is finite: the guarantee says why
    report.downward_breaches = [str(b["value"]) or MISSING_LABEL for b in check.downward_breaches]
    cancel.check()
    true_codes, released_codes = result.applied.codes[plan.attribute]
    try:
        progress(0.15, "Reconstructing the counts")
        observed = np.bincount(released_codes, minlength=domain.m)
        cancel.check()
        progress(0.3, "Bootstrapping the intervals")
        # the non-negative maximum-likelihood counts, with an interval made for that estimator
        report.reconstructed, report.band_low, report.band_high = reconstruction.estimate_with_interval(observed, matrix)
        cancel.check()
        progress(0.5, "Running the count-query workload")
        report.utility = summarize(result)
    except ParameterError as exc:  # a singular matrix: nothing can be reconstructed, say so
        report.lines.append(str(exc))
    cancel.check()
    progress(0.85, "Drawing the figures")
    if report.reconstructed is not None:
        report.figures["distribution"] = distribution_figure(
            report.values, report.original, report.reconstructed, report.band_low, report.band_high
        )
    if np.ptp(retention) > 1e-12:  # one p for every value (uniform): a sentence says it, not 40 equal bars
        report.figures["retention"] = retention_figure(report.values, original, retention, matrix)
    else:
        report.lines.append(f"Every value is kept with the same probability p = {retention[0]:.4f}; otherwise "
                            "it is replaced by a value drawn uniformly from the domain.")
    report.figures["posterior"] = posterior_figure(
        report.values, max_posterior, rho2, np.asarray(domain.prior, dtype=float)
    )


def summarize(result: Anonymization, workload_seed: int = 0) -> UtilitySummary:
    """Compare the original sensitive counts with those reconstructed from the release."""
    plan = perturbation_plan(result)
    actual = plan.domain.counts.astype(float)
    true_codes, released_codes = result.applied.codes[plan.attribute]
    observed = np.bincount(released_codes, minlength=plan.domain.m)
    estimate = reconstruction.inverse(observed, plan.matrix)  # unbiased: for the error measures
    in_simplex = reconstruction.iterative_bayesian(observed, plan.matrix)  # a distribution: for distances
    frame = result.dataset.frame
    exclude = [plan.attribute, *result.dataset.schema.identifiers]
    columns, encoded = encoded_condition_columns(frame, exclude)
    workload = (
        count_query_error(frame[columns], true_codes, released_codes, plan.matrix, seed=workload_seed, encoded=encoded)
        if columns
        else None
    )
    return utility_summary(plan.record_utility, actual, estimate, in_simplex, workload)
