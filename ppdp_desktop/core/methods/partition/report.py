"""Perturbation partitioning's part of the report: reconstruction and workload through the
per-sub-table estimator, and the baselines (uniform perturbation and Anatomy) at matched privacy."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.evaluation.figures import distribution_figure
from ppdp_desktop.core.evaluation.report_model import MethodReport, value_label
from ppdp_desktop.core.methods.perturbation.report import BAND_SEED
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    import pandas as pd

    from ppdp_desktop.core.evaluation.utility import UtilitySummary
    from ppdp_desktop.core.methods.partition.method import PartitionPlan


def partition_part(report: MethodReport, result: Anonymization, plan: PartitionPlan, progress: Progress,
                   cancel: CancelToken) -> None:
    """Perturbation partitioning: reconstruction and workload through the per-sub-table estimator (``plan`` is
    ``result``'s, checked by the method)."""
    true_codes, released = result.applied.codes[plan.attribute]
    sub = result.applied.columns[plan.subtable_column]
    original = plan.domain.counts.astype(float)
    report.values = [value_label(v) for v in plan.domain.values]
    report.original = original
    report.reconstructed, report.band_low, report.band_high = _mle_with_interval(plan, released, sub)
    report.epsilon_ldp = result.guarantee.get("epsilon_ldp")
    progress(0.3, "Running the count-query workload")
    conditions = _conditions(result, plan)
    report.utility = _utility(result, plan, conditions)
    cancel.check()
    report.record_utility = report.utility.record_utility
    if conditions is not None:  # the workload ran
        report.lines.extend(_baselines(plan, conditions, true_codes, cancel))
    report.findings += subtable_findings(plan)
    progress(0.7, "Drawing the figures")
    report.figures["distribution"] = distribution_figure(report.values, original, report.reconstructed,
                                                         report.band_low, report.band_high)


def partition_utility(result: Anonymization, plan: PartitionPlan) -> UtilitySummary:
    """The sensitive column's utility figures (``plan`` is ``result``'s, checked by the method): the report's, and
    what ``ppdp anonymize --utility`` prints."""
    return _utility(result, plan, _conditions(result, plan))


def _conditions(result: Anonymization, plan: PartitionPlan) -> pd.DataFrame | None:
    """The non-sensitive columns the count-query workload conditions on (None: no column is fit for it)."""
    from ppdp_desktop.core.evaluation.workload import condition_columns

    frame = result.dataset.frame
    columns = condition_columns(frame, [plan.attribute, *result.dataset.schema.identifiers])
    return frame[columns] if columns else None


def _utility(result: Anonymization, plan: PartitionPlan, conditions: pd.DataFrame | None) -> UtilitySummary:
    """Record utility, the counts estimated through the sub-tables' matrices (each sub-table's unbiased inverse,
    summed by value) against the original counts, and the count-query workload on ``conditions``."""
    from ppdp_desktop.core.evaluation.utility import utility_summary
    from ppdp_desktop.core.evaluation.workload import run_workload

    true_codes, released = result.applied.codes[plan.attribute]
    estimate = plan.estimator(released, result.applied.columns[plan.subtable_column])
    reconstructed = estimate(np.ones(len(true_codes), dtype=bool))  # unbiased: for the error measures
    workload = run_workload(conditions, true_codes, plan.domain.m, estimate) if conditions is not None else None
    return utility_summary(plan.record_utility, plan.domain.counts.astype(float), reconstructed, reconstructed,
                           workload)


def subtable_findings(plan: PartitionPlan) -> list[str]:
    """Beyond the counts per value: what the released sub-table numbers tell exactly (when no value's records are
    spread over several sub-tables, the counts over each sub-table's group of values)."""
    sizes = plan.blocks.sizes.tolist()
    if len(sizes) < 2:
        return []
    if len(sizes) <= 12:
        listed = ", ".join(str(s) for s in sizes[:-1]) + f" and {sizes[-1]}"
    else:  # thousands of sub-tables on a diagnosis column: their range, not each
        listed = f"from {min(sizes)} to {max(sizes)}, {int(np.median(sizes))} in the middle"
    within = (f"Within a sub-table a record's {plan.attribute} was randomized only among that sub-table's values.")
    split = int(np.count_nonzero(np.bincount(plan.blocks.values, minlength=plan.domain.m) > 1))
    if not split:
        return [f"Counts over groups of {plan.attribute} values are exact: each record carries the number of its "
                f"sub-table, and the number of records in each of the {len(sizes)} sub-tables ({listed} values; "
                f"release.json lists them) is the true number of records holding one of its values. {within}"]
    return [f"Each record carries the number of its sub-table, and release.json gives the true number of records in "
            f"each of the {len(sizes)} sub-tables ({listed} values); every one of them holds one of its sub-table's "
            f"values. The records of {split} {plan.attribute} value{'s are' if split > 1 else ' are'} spread over "
            "several sub-tables, so a sub-table's count is a lower bound on the records holding its values, not their "
            f"number. {within}"]


def _mle_with_interval(plan: PartitionPlan, released: np.ndarray, sub: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-negative MLE of every sub-table at once (one block-diagonal matrix), with its bootstrap interval,
    summed by value over the sub-tables a value is split across (they are independent)."""
    from ppdp_desktop.core.privacy import reconstruction

    blocks = plan.blocks
    observed = blocks.observed(blocks.entries(sub, released))
    return reconstruction.estimate_with_interval(observed, blocks.matrix, groups=blocks.values, n_groups=blocks.m)


def _baselines(plan: PartitionPlan, conditions: pd.DataFrame, true_codes: np.ndarray, cancel: CancelToken) -> list[str]:
    """Count-query error (1 % selectivity) of uniform perturbation and Anatomy at matched privacy."""
    from ppdp_desktop.core.errors import PPDPError
    from ppdp_desktop.core.evaluation.workload import count_query_error
    from ppdp_desktop.core.methods.baselines.anatomy import anatomize, count_query_error_anatomy
    from ppdp_desktop.core.methods.partition.subtables import gamma_of
    from ppdp_desktop.core.methods.perturbation.plan import perturb_codes
    from ppdp_desktop.core.methods.perturbation.uniform import uniform_retention
    from ppdp_desktop.core.privacy.structured import RetentionMatrix

    rng = np.random.default_rng(BAND_SEED)
    m = plan.domain.m
    gamma = float(gamma_of(plan.rho1, plan.rho2))
    retention = np.full(m, uniform_retention(gamma, m))
    released = perturb_codes(true_codes.astype(np.int32), retention, rng)
    uniform = count_query_error(conditions, true_codes, released, RetentionMatrix(retention)).mean_error[-1]
    parts = [f"{_share(uniform)} with uniform perturbation"]
    cancel.check()
    l = max(2, int(round(1.0 / plan.rho2)))
    try:
        anatomy = anatomize(true_codes, l, rng, labels=[value_label(v) for v in plan.domain.values])
        error = count_query_error_anatomy(conditions, true_codes, anatomy).mean_error[-1]
        parts.append(f"{_share(error)} with Anatomy (l = {l})")
    except PPDPError as exc:
        note = f" Anatomy (l = {l}) is not possible here: {exc}"
    else:
        note = ""
    return ["Baselines at the same privacy: a count of records with one value and one to three conditions on other "
            "columns that covers at least 1 % of the records is off on average by " + "; by ".join(parts) + "."
            + note]


def _share(error: float) -> str:
    """A mean relative error as a percentage (``n/a`` when no query was kept)."""
    return "n/a" if np.isnan(error) else f"{error * 100:.1f} %"
