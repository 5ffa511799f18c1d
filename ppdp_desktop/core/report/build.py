"""The report of one anonymization: what it guarantees, what it keeps, and its figures (Qt-free).

:func:`build_report` turns an :class:`~ppdp_desktop.core.outcome.Anonymization` into a
:class:`~ppdp_desktop.core.evaluation.report_model.MethodReport`; the method that made the release
adds its own part (reconstruction, bands, baselines, choices ...) through the registry. The GUI shows
the report and report files embed the same figures (each drawn once as PNG).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.evaluation.figures import MAX_BARS, class_size_figure, distribution_figure, warm_up  # noqa: F401
from ppdp_desktop.core.evaluation.report_model import MISSING_LABEL, MethodReport  # noqa: F401
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.report.groups import for_anonymization

#: ``(key, heading)`` of the columns of :func:`comparison_rows`.
COMPARISON_COLUMNS = (
    ("method", "Method"),
    ("record_utility", "Record utility"),
    ("query_error_1pct", "Count-query error (1 %)"),
    ("jensen_shannon", "JSD"),
    ("epsilon_ldp", "epsilon-LDP"),
    ("guarantee", "Guarantee"),
)


def build_report(result: Anonymization, progress: Progress = no_progress, cancel: CancelToken | None = None,
                 public: bool = False, estimates: dict[str, Any] | None = None,
                 model_target: str | None = None) -> MethodReport:
    """The report of ``result``: guarantee, utility, per-value figures and their plots.

    Parameters
    ----------
    result : Anonymization
        A finished (verified and applied) job.
    progress, cancel
        Progress callback and cancellation token (checked between steps).
    public : bool
        The copy that ships inside a release: nothing computed from the original records. A method with
        ``Method.public_report`` builds it itself; for the others the figures from the originals are
        left out here and the counts shown are ``estimates`` made from the released data.
    estimates : dict, optional
        With ``public``: ``{"estimate", "low", "high"}`` arrays over the report's values, computed from the
        release files by the caller (the release package).
    model_target : str, optional
        Add "does my analysis survive?": models predicting this column trained on the original and on the
        release (:func:`~ppdp_desktop.core.evaluation.model_utility.compare_models`). Never with ``public``
        (the models are tested on original records).

    Returns
    -------
    MethodReport
    """
    cancel = cancel or CancelToken()
    warm_up()  # or wait for the warm-up a caller started in the background
    plan = result.plan
    method = get_method(plan.method)
    reid = result.reidentification
    title = method.title
    if reid is not None and reid.protected:
        if reid.generalization is None:  # only a written release's k is claimed instead (report.from_release)
            raise PrivacyError("The anonymization is marked k-anonymous but holds no generalization, so no k.")
        g = reid.generalization
        asked = g.criteria.short() if g.criteria is not None else f"k = {g.k}"
        behind = "k-anonymous" if g.criteria is None or g.k > 1 else "generalized"
        if method.generalizes_only:  # its title lists what it can ask; the report says what was asked
            title = f"{title.partition(' (')[0]} ({asked})"
        else:
            title += f" behind {behind} quasi-identifiers ({asked})"
        if method.generalized_title:
            title += f": {method.generalized_title}"
    report = MethodReport(
        method=plan.method,
        title=title,
        n_records=len(result.dataset.frame),
        guarantee=dict(result.guarantee),
        lines=list(plan.describe()),
        reidentification=_reidentification(result, public),
    )
    method.report_part(report, result, progress, cancel, public=public)
    cancel.check()
    progress(0.85, "What the release reveals about a group")
    report.group_disclosure = for_anonymization(result, public=public, cancel=cancel)
    if public and not method.public_report:
        release_only(report, estimates, plan.describe())
    reid = report.reidentification
    if reid is not None and reid.quasi:
        k = reid.generalization.k if reid.generalization is not None else None
        report.figures["class sizes"] = class_size_figure(
            None if reid.before is None else reid.before.class_size_histogram, reid.after.class_size_histogram, k)
    if model_target and not public:
        from ppdp_desktop.core.evaluation.model_utility import compare_models

        progress(0.9, "Training the models on the original and on the release")
        report.analysis = compare_models(result, model_target)
    progress(1.0, "Report ready")
    return report


RELEASE_ONLY = ("This report ships inside the release, so it shows only what the release supports: counts "
                "estimated from the released data with their 95 % intervals. The custodian's report with the "
                "original figures is kept beside the key, outside the release.")


def release_only(report: MethodReport, estimates: dict[str, Any] | None, lines: list[str]) -> None:
    """Remove from ``report`` (in place; lists and dicts are replaced, never mutated, so a shallow copy of a
    full report can be made release-only) everything computed from the original records — counts, utility
    against them, posteriors under the original prior, Monte-Carlo bands, their figures, the method's
    measures — and show ``estimates`` (made from the release files) instead. ``lines``: the plan's own
    description, which release.json states anyway."""
    report.original = None
    report.record_utility = None
    report.utility = None
    report.max_posterior = None
    report.downward_breaches = []
    report.band_low = report.band_high = None
    report.reconstructed = None
    report.choice_counts = {}
    report.analysis = None  # tested on original records
    if report.group_disclosure is not None:  # computed from the release; the check on the original records goes
        report.group_disclosure = report.group_disclosure.public()
    report.marginals = []
    report.findings = []  # method sentences may rest on the original records
    report.figures = {name: fig for name, fig in report.figures.items() if name == "class sizes"}
    report.images = {name: png for name, png in report.images.items() if name in report.figures}
    report.lines = list(lines)
    if estimates is not None and report.values:
        report.reconstructed = np.asarray(estimates["estimate"], dtype=float)
        report.band_low = np.asarray(estimates["low"], dtype=float)
        report.band_high = np.asarray(estimates["high"], dtype=float)
        report.figures["distribution"] = distribution_figure(report.values, None, report.reconstructed,
                                                             report.band_low, report.band_high)
    report.lines.append(RELEASE_ONLY)


def _reidentification(result: Anonymization, public: bool):
    reid = result.reidentification
    return reid.public() if public and reid is not None else reid


def comparison_rows(reports: list[MethodReport]) -> list[dict[str, Any]]:
    """One row per report for the side-by-side table (keys: :data:`COMPARISON_COLUMNS`).

    Numbers stay numbers (``None`` where a measure does not apply); the GUI formats them. The epsilon-LDP is
    qualified where the guarantee qualifies it (:func:`epsilon_cell`): text, not a bare number.
    """
    rows = []
    for r in reports:
        error = None
        if r.utility is not None and r.utility.workload is not None:
            work = r.utility.workload
            at = [i for i, s in enumerate(work.selectivity) if np.isclose(s, 0.01)]
            if at and not np.isnan(work.mean_error[at[0]]):
                error = float(work.mean_error[at[0]])
        rows.append({
            "method": r.title,
            "record_utility": r.record_utility,
            "query_error_1pct": error,
            "jensen_shannon": None if r.utility is None else float(r.utility.jensen_shannon),
            "epsilon_ldp": epsilon_cell(r),
            "guarantee": "none (no formal guarantee)" if not r.has_guarantee else r.kind,
        })
    return rows


#: the comparison's epsilon-LDP cell where no finite epsilon holds (a value never replaced, or a sub-table that
#: keeps every record's value: the guarantee's ``no_ldp_bound`` says which)
NO_EPSILON = "none (not finite)"


def epsilon_cell(r: MethodReport) -> float | str | None:
    """The comparison's epsilon-LDP of ``r``, qualified as the guarantee qualifies it: a number where it holds for
    the column, "X within each sub-table" where it holds only there (the guarantee's ``epsilon_ldp_scope``:
    perturbation partitioning), :data:`NO_EPSILON` where none is finite, None where the method states none."""
    epsilon = r.epsilon_ldp
    if epsilon is None or not np.isfinite(epsilon):
        return NO_EPSILON if epsilon is not None or r.guarantee.get("no_ldp_bound") else None
    if isinstance(r.guarantee.get("epsilon_ldp_scope"), str):
        return f"{float(epsilon):.4f} within each sub-table"
    return float(epsilon)


