"""Personalized recoding's part of the report: it has no distribution to reconstruct, so it shows how
many records were published as value / alias1 / alias2 and the grades of graded columns."""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.evaluation.figures import choice_figure, grade_figure
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress

CHOICE_LABELS = ("value", "alias1", "alias2")


def personalized_part(report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken) -> None:
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
        total = max(sum(report.choice_counts.values()), 1)
        shown = report.choice_counts.get("value", 0)
        report.findings.append(
            f"{shown / total:.0%} of the records show their {plan.attribute} as it is: counts of those values are exact "
            f"for them. {report.choice_counts.get('alias1', 0) / total:.0%} show a more general value (alias1) and "
            f"{report.choice_counts.get('alias2', 0) / total:.0%} an opaque code (alias2); only the sealed key "
            "turns those back.")
    cancel.check()
    for grading in plan.gradings:
        progress(0.6, f"Grades of {grading.attribute}")
        grades = np.asarray(result.applied.columns[grading.attribute], dtype=float)
        report.figures[f"grades: {grading.attribute}"] = grade_figure(grading.attribute, grades, grading.k)
