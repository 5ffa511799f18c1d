"""The report of one anonymization: what it guarantees, what it keeps, and its figures (Qt-free).

:func:`build_report` turns an :class:`~ppdp_desktop.core.anonymize.Anonymization` into a
:class:`MethodReport`; the GUI shows it (figures wrapped in ``FigureCanvasQTAgg``) and a report file
can save the same figures with ``Figure.savefig``. For perturbation plans the sensitive counts are
reconstructed from the release with the published matrix (unbiased inverse estimate), and a
Monte-Carlo band shows where that estimate lands over repeated perturbations of the true values.
Personalized recoding has no distribution to reconstruct: its report says plainly that it gives no
formal guarantee and shows how many records were published as value / alias1 / alias2.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ppdp_desktop.core import reconstruction
from ppdp_desktop.core.anonymize import Anonymization
from ppdp_desktop.core.domain import label_text
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.perturbation import perturb_codes
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.utility import UtilitySummary, summarize

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MISSING_LABEL = "(missing)"
CHOICE_LABELS = ("value", "alias1", "alias2")
BAND_REPETITIONS = 30
BAND_SEED = 20_240_601  # fixed: the same release always gets the same band
MAX_BARS = 40  # larger domains show their 40 most frequent values

#: ``(key, heading)`` of the columns of :func:`comparison_rows`.
COMPARISON_COLUMNS = (
    ("method", "Method"),
    ("record_utility", "Record utility"),
    ("query_error_1pct", "Count-query error (1 %)"),
    ("jensen_shannon", "JSD"),
    ("epsilon_ldp", "epsilon-LDP"),
    ("guarantee", "Guarantee"),
)


@dataclass
class MethodReport:
    """Everything the report page and a report file show about one anonymization.

    Per-value arrays (``original``, ``reconstructed``, ``band_low``, ``band_high``, ``retention``,
    ``max_posterior``) follow ``values`` (the domain order); they are ``None`` for methods that do
    not perturb (personalized recoding).
    """

    method: str
    title: str
    n_records: int
    guarantee: dict[str, Any]
    lines: list[str]
    record_utility: float | None = None
    utility: UtilitySummary | None = None
    values: list[str] = field(default_factory=list)
    original: np.ndarray | None = None
    reconstructed: np.ndarray | None = None
    band_low: np.ndarray | None = None
    band_high: np.ndarray | None = None
    retention: np.ndarray | None = None
    max_posterior: np.ndarray | None = None
    rho2: np.ndarray | None = None
    epsilon_ldp: float | None = None
    downward_breaches: list[str] = field(default_factory=list)
    choice_counts: dict[str, int] = field(default_factory=dict)
    figures: dict[str, Figure] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The guarantee's kind as the plan stated it (``"none"`` for personalized recoding)."""
        return str(self.guarantee.get("kind", "none"))

    @property
    def has_guarantee(self) -> bool:
        return self.kind != "none"

    def privacy_lines(self) -> list[str]:
        """The privacy summary in plain words (first line: verified or not, and what)."""
        if not self.has_guarantee:
            return [str(self.guarantee.get("statement", "This method gives no formal privacy guarantee."))]
        verified = "verified" if self.guarantee.get("verified") else "NOT verified"
        out = [f"Guarantee {verified}: {self.kind}."]
        if self.max_posterior is not None and self.rho2 is not None:
            protected = ~np.isnan(self.rho2)
            out.append(
                f"{int(protected.sum())} of {len(self.values)} values are protected: whatever released value an adversary "
                "sees, a protected value's posterior stays at or below its rho2 (for any prior up to its rho1)."
            )
            if protected.any():
                j = int(np.argmax(np.where(protected, self.max_posterior / self.rho2, -np.inf)))
                out.append(
                    f"Closest to its bound: {self.values[j]!r}, max posterior {self.max_posterior[j]:.4f} "
                    f"(rho2 {self.rho2[j]:.4f})."
                )
        if self.epsilon_ldp is not None:
            out.append(f"Equivalent to epsilon-local differential privacy with epsilon = {self.epsilon_ldp:.3f}.")
        if self.downward_breaches:
            out.append(
                "Downward breaches (not covered by the guarantee; a frequent value's posterior can fall to rho1 or "
                f"below): {', '.join(self.downward_breaches)}."
            )
        elif "not_covered" not in self.guarantee:
            out.append("No downward breach for the data's own frequencies.")
        not_covered = self.guarantee.get("not_covered")
        if not_covered:
            out += [str(n) for n in not_covered] if isinstance(not_covered, list) else [str(not_covered)]
        return out

    def utility_lines(self) -> list[str]:
        """The utility summary in plain words."""
        out = [f"{self.n_records:,} records."]
        if self.utility is not None:
            out += self.utility.lines()
        elif self.record_utility is not None:
            out.append(f"record utility {self.record_utility:.4f}")
        if self.choice_counts:
            parts = [f"{name}: {count:,}" for name, count in self.choice_counts.items()]
            out.append("records published as " + "; ".join(parts))
        return out


def _label(value: object) -> str:
    text = label_text(value)
    return text if text else MISSING_LABEL


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
    :func:`~ppdp_desktop.core.methods.perturbation.perturb_codes` (the release's own sampler) and one
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


def build_report(result: Anonymization, progress: Progress = no_progress, cancel: CancelToken | None = None,
                 public: bool = False) -> MethodReport:
    """The report of ``result``: guarantee, utility, per-value figures and their plots.

    Parameters
    ----------
    result : Anonymization
        A finished (verified and applied) job.
    progress, cancel
        Progress callback and cancellation token (checked between steps).
    public : bool
        The copy that ships inside a differentially private release: nothing computed from the
        original records (see :func:`ppdp_desktop.core.dp_report.dp_report_part`).

    Returns
    -------
    MethodReport
    """
    cancel = cancel or CancelToken()
    plan = result.plan
    report = MethodReport(
        method=plan.method,
        title=get_method(plan.method).title,
        n_records=len(result.dataset.frame),
        guarantee=dict(result.guarantee),
        lines=list(plan.describe()),
    )
    if hasattr(plan, "matrix"):
        _perturbation_part(report, result, progress, cancel)
    elif hasattr(plan, "estimator"):
        _partition_part(report, result, progress, cancel)
    elif plan.method == "rr":
        from ppdp_desktop.core.rr_evaluation import evaluate_job

        report.lines.append(
            f"Largest attribute-disclosure risk {result.guarantee['max_risk']:.4f} (bound 1/l = {1 / result.guarantee['l']:.4f})."
        )
        for row in evaluate_job(result):
            report.lines.append(
                f"{row.method}: {row.note}" if row.note else
                f"{row.method}: KL {row.kl:.4f}, chi-square {row.chi_square:.4f}, group-by error {row.groupby_error:.4f}, "
                f"CUBE error {row.cube_error:.4f}, uncertainty-coefficient gap {row.uncertainty_gap:.4f}"
            )
    elif plan.method == "dp-microagg":
        from ppdp_desktop.core.dp_report import dp_report_part

        dp_report_part(report, result, progress, cancel, public=public)
    else:
        _personalized_part(report, result, progress, cancel)
    progress(1.0, "Report ready")
    return report


def _perturbation_part(report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken) -> None:
    plan = result.plan
    domain = plan.domain
    matrix = plan.matrix
    report.values = [_label(v) for v in domain.values]
    report.original = domain.counts.astype(float)
    report.retention = np.asarray(plan.retention, dtype=float)
    report.record_utility = float(plan.record_utility)
    report.rho2 = np.asarray(plan.requirement.rho2, dtype=float)
    progress(0.05, "Checking the posteriors")
    check = plan.guarantee()
    report.max_posterior = np.asarray(check.max_posterior, dtype=float)
    report.epsilon_ldp = float(check.epsilon_ldp)
    report.downward_breaches = [str(b["value"]) or MISSING_LABEL for b in check.downward_breaches]
    cancel.check()
    true_codes, released_codes = result.applied.codes[plan.attribute]
    try:
        progress(0.15, "Reconstructing the counts")
        observed = np.bincount(released_codes, minlength=domain.m)
        report.reconstructed = reconstruction.inverse(observed, matrix)
        cancel.check()
        progress(0.3, "Repeating the perturbation")
        report.band_low, report.band_high = monte_carlo_band(np.asarray(true_codes), report.retention, matrix)
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
    report.figures["retention"] = retention_figure(report.values, report.original, report.retention, matrix)
    report.figures["posterior"] = posterior_figure(
        report.values, report.max_posterior, report.rho2, np.asarray(domain.prior, dtype=float)
    )


def _partition_part(report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken) -> None:
    """Perturbation partitioning: reconstruction and workload through the per-sub-table estimator."""
    from ppdp_desktop.core.utility import utility_summary
    from ppdp_desktop.core.workload import condition_columns, run_workload

    plan = result.plan
    true_codes, released = result.applied.codes[plan.attribute]
    sub = result.applied.columns["subtable"]
    estimate = plan.estimator(released, sub)
    original = plan.domain.counts.astype(float)
    reconstructed = estimate(np.ones(len(true_codes), dtype=bool))
    report.values = [_label(v) for v in plan.domain.values]
    report.original, report.reconstructed = original, reconstructed
    report.epsilon_ldp = result.guarantee.get("epsilon_ldp")
    progress(0.3, "Running the count-query workload")
    frame = result.dataset.frame
    columns = condition_columns(frame, [plan.attribute, *result.dataset.schema.identifiers])
    workload = run_workload(frame[columns], true_codes, plan.domain.m, estimate) if columns else None
    cancel.check()
    report.utility = utility_summary(plan.record_utility, original, reconstructed, reconstructed, workload)
    report.record_utility = report.utility.record_utility
    if workload is not None:
        report.lines.extend(_baselines(result, frame[columns], true_codes, cancel))
    progress(0.7, "Drawing the figures")
    report.figures["distribution"] = distribution_figure(report.values, original, reconstructed, None, None)


def _baselines(result: Anonymization, conditions, true_codes: np.ndarray, cancel: CancelToken) -> list[str]:
    """Count-query error (1 % selectivity) of uniform perturbation and Anatomy at matched privacy."""
    from ppdp_desktop.core.anatomy import anatomize, count_query_error_anatomy
    from ppdp_desktop.core.errors import PPDPError
    from ppdp_desktop.core.methods.perturbation import perturb_codes, retention_matrix
    from ppdp_desktop.core.methods.uniform import uniform_retention
    from ppdp_desktop.core.partition import gamma_of
    from ppdp_desktop.core.workload import count_query_error

    plan = result.plan
    rng = np.random.default_rng(BAND_SEED)
    m = plan.domain.m
    gamma = float(gamma_of(plan.rho1, plan.rho2))
    retention = np.full(m, uniform_retention(gamma, m))
    released = perturb_codes(true_codes.astype(np.int32), retention, rng)
    parts = [f"uniform {count_query_error(conditions, true_codes, released, retention_matrix(retention)).mean_error[-1]:.4f}"]
    cancel.check()
    l = max(2, int(round(1.0 / plan.rho2)))
    try:
        anatomy = anatomize(true_codes, l, rng, labels=[_label(v) for v in plan.domain.values])
        parts.append(f"Anatomy (l = {l}) {count_query_error_anatomy(conditions, true_codes, anatomy).mean_error[-1]:.4f}")
    except PPDPError as exc:
        parts.append(f"Anatomy (l = {l}) not possible: {exc}")
    return ["Baselines at the same privacy, mean count-query error at 1 % selectivity: " + "; ".join(parts)]


def _personalized_part(report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken) -> None:
    plan = result.plan
    frame = result.dataset.frame
    if plan.attribute is not None:
        progress(0.2, "Counting the privacy choices")
        missing = frame[plan.attribute].isna().to_numpy()
        choices = np.asarray(plan.rule.choices(frame, plan.attribute, plan.source))[~missing]
        counts = np.bincount(choices.astype(np.intp) - 1, minlength=3)
        report.choice_counts = {name: int(c) for name, c in zip(CHOICE_LABELS, counts)}
        if missing.any():
            report.choice_counts["left blank (missing)"] = int(missing.sum())
        report.figures["choices"] = choice_figure(plan.attribute, report.choice_counts)
    cancel.check()
    for grading in plan.gradings:
        progress(0.6, f"Grades of {grading.attribute}")
        grades = np.asarray(result.applied.columns[grading.attribute], dtype=float)
        report.figures[f"grades: {grading.attribute}"] = grade_figure(grading.attribute, grades, grading.k)


def _figure(**kwargs: Any) -> Figure:
    """A new matplotlib Figure; matplotlib is imported on first use, so opening the window does not
    pay for it (the window warms it up right after it is shown)."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


# --- figures (plain matplotlib Figures: no pyplot, no Qt) -----------------------------------------

def _bar_figure(n_bars: int) -> tuple[Figure, Any]:
    """A constrained-layout figure tall enough for ``n_bars`` horizontal bars with readable labels."""
    fig = _figure(figsize=(7.5, max(3.0, 0.6 + 0.24 * n_bars)), layout="constrained")
    return fig, fig.add_subplot()


def _shown(weight: np.ndarray, what: str) -> tuple[np.ndarray, str]:
    """Indices of at most :data:`MAX_BARS` values by decreasing ``weight`` and a title suffix."""
    order = np.argsort(-np.nan_to_num(weight, nan=-np.inf), kind="stable")
    if len(order) <= MAX_BARS:
        return order, ""
    return order[:MAX_BARS], f"\n({MAX_BARS} {what} of {len(order)})"


def _value_axis(ax: Any, values: list[str], idx: np.ndarray) -> np.ndarray:
    y = np.arange(len(idx))
    ax.set_yticks(y, [values[i] for i in idx], fontsize=8)
    ax.invert_yaxis()  # the first (most frequent) value on top
    return y


def distribution_figure(
    values: list[str], original: np.ndarray, reconstructed: np.ndarray,
    low: np.ndarray | None, high: np.ndarray | None,
) -> Figure:
    """Original vs reconstructed count per value; the Monte-Carlo 95 % band as error bars."""
    idx, suffix = _shown(original, "most frequent values")
    fig, ax = _bar_figure(len(idx))
    y = _value_axis(ax, values, idx)
    ax.barh(y - 0.2, original[idx], height=0.4, label="original", color="#4c72b0")
    ax.barh(y + 0.2, reconstructed[idx], height=0.4, label="reconstructed (inverse estimate)", color="#dd8452")
    if low is not None and high is not None:
        mid, half = (low[idx] + high[idx]) / 2.0, (high[idx] - low[idx]) / 2.0
        ax.errorbar(mid, y + 0.2, xerr=half, fmt="none", ecolor="black", capsize=2, lw=0.8,
                    label="95 % band over repeated perturbations")
    ax.set_xlabel("records")
    ax.set_title("Original and reconstructed counts" + suffix)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def retention_figure(values: list[str], original: np.ndarray, retention: np.ndarray, matrix: np.ndarray) -> Figure:
    """Per value: the retention probability ``p_i`` and the chance ``P[i][i]`` it is released unchanged."""
    idx, suffix = _shown(original, "most frequent values")
    fig, ax = _bar_figure(len(idx))
    y = _value_axis(ax, values, idx)
    ax.barh(y, retention[idx], height=0.6, label="retention p", color="#55a868")
    ax.plot(np.diag(matrix)[idx], y, "k|", markersize=9, label="released unchanged P[i][i]")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("probability")
    ax.set_title("Retention per value" + suffix)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def posterior_figure(values: list[str], max_posterior: np.ndarray, rho2: np.ndarray, prior: np.ndarray) -> Figure:
    """Per protected value: the adversary's largest posterior against its bound ``rho2``."""
    protected = np.flatnonzero(~np.isnan(rho2))
    ratio = max_posterior[protected] / rho2[protected]
    order, suffix = _shown(ratio, "closest to the bound")
    idx = protected[order]
    fig, ax = _bar_figure(len(idx))
    if not len(idx):
        ax.text(0.5, 0.5, "No value carries a privacy requirement.", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    y = _value_axis(ax, values, idx)
    ax.barh(y, max_posterior[idx], height=0.6, label="max posterior", color="#8172b3")
    ax.plot(rho2[idx], y, "r|", markersize=11, mew=2, label="rho2 (bound)")
    ax.plot(prior[idx], y, "k.", label="prior (frequency)")
    ax.set_xlabel("probability")
    ax.set_title("Max posterior vs rho2 per protected value" + suffix)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def choice_figure(attribute: str, counts: dict[str, int]) -> Figure:
    """How many records of ``attribute`` were published as value / alias1 / alias2."""
    fig = _figure(figsize=(6.0, 3.2), layout="constrained")
    ax = fig.add_subplot()
    bars = ax.bar(list(counts), list(counts.values()), color=["#c44e52", "#dd8452", "#4c72b0", "#8c8c8c"][: len(counts)])
    ax.bar_label(bars, fmt="{:,.0f}", fontsize=8)
    ax.set_ylabel("records")
    ax.set_title(f"{attribute}: records published as")
    return fig


def grade_figure(attribute: str, grades: np.ndarray, k: int) -> Figure:
    """Histogram of the published grades (category number + position within the category)."""
    fig = _figure(figsize=(6.5, 3.2), layout="constrained")
    ax = fig.add_subplot()
    finite = grades[np.isfinite(grades)]
    ax.hist(finite, bins=np.linspace(1.0, k + 1.0, 10 * k + 1), color="#4c72b0")
    for c in range(2, k + 1):
        ax.axvline(c, color="black", lw=0.8, ls="--")
    ax.set_xlabel("published grade (category boundaries dashed)")
    ax.set_ylabel("records")
    ax.set_title(f"{attribute}: grades in {k} secret categories")
    return fig


def comparison_rows(reports: list[MethodReport]) -> list[dict[str, Any]]:
    """One row per report for the side-by-side table (keys: :data:`COMPARISON_COLUMNS`).

    Numbers stay numbers (``None`` where a measure does not apply); the GUI formats them.
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
            "epsilon_ldp": r.epsilon_ldp,
            "guarantee": "none (no formal guarantee)" if not r.has_guarantee else r.kind,
        })
    return rows


_warmed = False


def warm_up() -> None:
    """Import matplotlib and lay out one small figure with text so it loads its fonts now (C code that
    holds the interpreter for ~0.1 s the first time) rather than in the middle of a background run.
    Only the first call does anything."""
    global _warmed
    if _warmed:
        return
    _warmed = True
    fig = _figure(figsize=(2, 1), layout="constrained")
    ax = fig.subplots()
    ax.barh([0, 1], [1, 2], label="warm")
    ax.set_title("Warm up")
    ax.legend()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
