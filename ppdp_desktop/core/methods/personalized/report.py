"""Personalized recoding's part of the report: it has no distribution to reconstruct, so it shows how
many records were published as value / alias1 / alias2, the grades of graded columns, and in plain
sentences what a recipient can and cannot count from the release."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.evaluation.figures import choice_figure, grade_figure
from ppdp_desktop.core.evaluation.report_model import MethodReport, percent
from ppdp_desktop.core.methods.personalized.grading import Grading
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    from ppdp_desktop.core.methods.personalized.method import PersonalizedPlan

CHOICE_LABELS = ("value", "alias1", "alias2")


def personalized_part(report: MethodReport, result: Anonymization, plan: PersonalizedPlan, progress: Progress,
                      cancel: CancelToken) -> None:
    """Fill ``report`` for the job ``result``, whose plan is ``plan`` (checked by the method's ``own_plan``; the
    custodian's report: the copy inside a release drops the counts and findings)."""
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
        leaves = pd.Index([leaf.label for leaf in plan.recoding_taxonomy().leaves()])
        codes = leaves.get_indexer(text_column(frame[plan.attribute]))[~missing]
        known = codes >= 0  # every value has its leaf once the job ran; kept safe anyway
        report.findings += choice_findings(plan.attribute, codes[known], choices[known], len(leaves))
    cancel.check()
    for grading in plan.gradings:
        progress(0.6, f"Grades of {grading.attribute}")
        grades = np.asarray(result.applied.columns[grading.attribute], dtype=float)
        report.figures[f"grades: {grading.attribute}"] = grade_figure(grading.attribute, grades, grading.k)
        report.findings.append(grade_finding(grading))


def choice_findings(attribute: str, codes: np.ndarray, choices: np.ndarray, m: int) -> list[str]:
    """What a recipient can and cannot count, from each non-blank record's value code (``0..m-1``) and choice
    (1 value, 2 alias1, 3 alias2)."""
    n = len(codes)
    if n == 0:
        return []
    per_choice = np.bincount(choices.astype(np.intp) - 1, minlength=3)
    share = per_choice / n
    out = [f"{percent(share[0])} of the records ({per_choice[0]:,}) show their {attribute} as it is, "
           f"{percent(share[1])} ({per_choice[1]:,}) only a more general value (alias1) and {percent(share[2])} "
           f"({per_choice[2]:,}) an opaque code (alias2); the sealed key turns the last two back."]
    total = np.bincount(codes, minlength=m)
    as_is = np.bincount(codes[choices == 1], minlength=m)
    present = total > 0
    exact = present & (as_is == total)
    if exact.sum() == present.sum():
        out.append(f"A recipient can count every {attribute} value exactly: every record shows it as it is.")
        return out
    hidden = float((total[~exact] - as_is[~exact]).sum() / total[~exact].sum())
    if exact.any():
        out.append(f"A recipient can count {int(exact.sum())} of the {int(present.sum())} {attribute} values exactly "
                   f"(together {percent(total[exact].sum() / n)} of the records): every record holding them shows them "
                   "as they are. " + _others(hidden))
    else:
        out.append(f"No {attribute} value can be counted exactly from the release: each has records that show a more "
                   f"general value or a code ({percent(hidden)} of the records in all).")
    if per_choice[1]:
        out.append("A count per more general value (alias1) holds only the records that chose it, not the records of "
                   "the same group shown as they are or as a code.")
    if per_choice[2]:
        n_codes = int(np.count_nonzero(np.bincount(codes[choices == 3], minlength=m)))
        out.append(f"Records can be counted per opaque code ({n_codes:,} codes in use, one per {attribute} value). The "
                   "code itself says nothing, but it is as frequent as its value among the records shown as codes: "
                   f"anyone who knows roughly how common each {attribute} value is can often match the codes to the "
                   "values by their counts.")
    return out


def _others(hidden: float) -> str:
    """What happens to the counts of the values that are not all shown as they are."""
    if hidden >= 1.0:
        return "The other values never appear as they are: their records show a more general value or a code."
    return (f"The other values' counts in the release are too low: {percent(hidden)} of their records show a more "
            "general value or a code instead.")


def grade_finding(grading: Grading) -> str:
    """What a graded column is good for."""
    return (f"{grading.attribute} is released as {grading.k} numbered categories with secret bounds, plus each "
            "record's position inside its category: a recipient can rank records and count them per category. The "
            f"positions keep the spacing of the values, so anyone who knows a few records' {grading.attribute} (or its "
            "smallest value, with categories of equal width) can work out the bounds and read every amount.")


