"""The reports' "Repeated releases" section (issue 30): this release among its project's releases.

A release made for a project (``Anonymization.repeat``) is counted with the project's earlier releases in the
release ledger: which of its records were released before, unchanged or changed, what their epsilons add up to
against the project's budget, and what combining it with the last generalized release reveals. The section shows
the key figures as a table and the statement's sentences (:meth:`~ppdp_desktop.core.repeat.outcome.RepeatOutcome.sentences`,
the same as release.json's ``repeated_release`` and README.txt), each of which names the attacker it holds against.
The figures are public (counts and epsilons, no digest), so the package report shows them too.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ppdp_desktop.core.repeat.outcome import RepeatOutcome

TITLE = "Repeated releases"
MEANING = ("This release among the earlier releases of its project on this computer: which patients were released "
           "before, whether their released values changed, and what all the releases together allow someone who "
           "holds them to learn (epsilon adds up for the values drawn anew).")
#: the same for a method that draws nothing (generalization only)
MEANING_GENERALIZED = ("This release among the earlier releases of its project on this computer: which patients were "
                       "released before, and what the releases together allow someone who holds them to learn (nothing "
                       "here is randomized: two generalized releases of a patient reveal the intersection of their "
                       "groups).")
HEADER = ("Figure", "Value")


def meaning(repeat: RepeatOutcome) -> str:
    """The section's one-line meaning: of draws and epsilons, or of groups for a release that draws nothing."""
    return MEANING if repeat.cumulative.randomized else MEANING_GENERALIZED


def figure_rows(repeat: RepeatOutcome) -> list[tuple[str, str]]:
    """The section's table: ``(figure, value)`` rows of the cumulative guarantee and the intersection, as text."""
    c = repeat.cumulative
    rows = [
        ("Project", repeat.project_id),
        ("Release in the project", f"{c.ordinal:,}"),
        ("Earlier releases counted", f"{c.previous_releases:,}"),
        ("Records in this release", f"{c.records:,}"),
        ("Patients released before (matched)", f"{c.matched:,}"),
        ("of them unchanged (drawn as before)", f"{c.unchanged:,}"),
        ("of them changed (drawn anew)", f"{c.changed:,}"),
        ("New patients", f"{c.new:,}"),
        ("Epsilon of this release (largest)", epsilon_text(c.epsilon_release)),
        ("Cumulative epsilon (largest, all releases)", epsilon_text(c.epsilon_cumulative_max)),
        ("Budget of the project", "none set" if c.budget is None else epsilon_text(c.budget)),
        ("Records above the budget", f"{c.over_budget:,}"),
        ("Persistent randomness", "yes" if repeat.persistent else "no (fresh draws)"),
        ("Stable pseudonyms", "yes" if repeat.stable_pseudonyms else "no (fresh in each release)"),
    ]
    if not c.randomized:  # nothing drawn: no draws to keep or renew, and this release spends no epsilon
        drop = {"of them unchanged (drawn as before)", "of them changed (drawn anew)", "Persistent randomness"}
        rows = [r for r in rows if r[0] not in drop]
        rows = [(f, "none (nothing randomized)" if f == "Epsilon of this release (largest)" else v) for f, v in rows]
        rows.insert(rows.index(("New patients", f"{c.new:,}")), ("Randomized", "no (generalization only)"))
    if repeat.override_reason:
        rows.append(("Reason given to publish anyway", repeat.override_reason))
    if repeat.intersection is not None:
        i = repeat.intersection
        rows += [("Records also in the last generalized release", f"{i.common:,}"),
                 (f"of them in a combined group smaller than k = {i.k}", f"{i.shrunk:,}")]
    return rows


def epsilon_text(x: float) -> str:
    """An epsilon for the table: rounded up at the fourth decimal (a bound stays a bound), "unbounded" if infinite."""
    if math.isinf(x):
        return "unbounded"
    up = math.ceil(float(x) * 10_000 - 1e-9) / 10_000
    return f"{up:.4f}".rstrip("0").rstrip(".") if up else "0"


def level(repeat: RepeatOutcome) -> str:
    """The section's colour: ``danger`` past the budget or with records in a combined group smaller than k (published
    only with a reason), ``warning`` when some epsilon has no bound, else ``ok``."""
    c = repeat.cumulative
    if c.over_budget or (repeat.intersection is not None and repeat.intersection.shrunk):
        return "danger"
    return "warning" if c.unbounded else "ok"
