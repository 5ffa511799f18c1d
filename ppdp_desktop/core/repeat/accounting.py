"""The cumulative guarantee of a release among its project's releases, and the project's budget (Qt-free).

The attacker is someone who holds every earlier release of the project and links records across them by their
unchanged columns. Against them a patient's local differential privacy composes: an identity's *cumulative*
epsilon is the sum of the epsilons of its distinct draw digests over every release, this one included (a digest
counted once, with the largest epsilon recorded for it).

* An **unchanged** record (its identity released before with this very draw digest: persistent randomness, the
  same true value, the same mechanism) shows the same released values again: it teaches nothing new and costs
  nothing.
* A **changed** record (identity released before, a new digest: a changed value, a changed mechanism, or fresh
  draws) composes with its earlier draws.
* A **new** record (identity never released in the project) has only this release's epsilon.

:func:`check_budget` refuses a release whose largest cumulative epsilon exceeds the project's budget unless a
reason to go past it is given (the ledger keeps it). :func:`posterior_after_repeats` and
:func:`posterior_after_persistent` (from :mod:`.posterior`) give what ``k`` releases let an attacker's posterior
reach.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_ref
from ppdp_desktop.core.repeat.distinct import History, history
from ppdp_desktop.core.repeat.posterior import posterior_after_persistent, posterior_after_repeats
from ppdp_desktop.core.repeat.records import ReleaseRecords

__all__ = ["CumulativeGuarantee", "check_budget", "cumulative_guarantee", "per_record_cumulative",
           "posterior_after_persistent", "posterior_after_repeats"]

#: who the cumulative guarantee holds against, in every sentence that states it
ATTACKER = "someone who holds every earlier release of this project and links the records across them by their unchanged columns"
_EPSILONS = ("epsilon_release", "epsilon_cumulative_max", "epsilon_changed_max")


@dataclass(frozen=True)
class CumulativeGuarantee:
    """This release's records against the project's published releases (see the module docstring)."""

    ordinal: int
    previous_releases: int
    records: int
    matched: int
    unchanged: int
    changed: int
    new: int
    epsilon_release: float
    epsilon_cumulative_max: float
    epsilon_changed_max: float
    budget: float | None
    over_budget: int
    persistent: bool
    project_id: str = ""
    #: unchanged records whose persistent draw a later stage redrew (a kept partition's lowered retention)
    rederived: int = 0
    #: False for a method that draws nothing (generalization only): no epsilon, no draws, fresh or persistent
    randomized: bool = True

    @property
    def unbounded(self) -> bool:
        """Some epsilon is infinite (a method without an epsilon bound)."""
        return any(math.isinf(getattr(self, name)) for name in _EPSILONS)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON numbers; an infinite epsilon is ``null`` with ``"epsilon_unbounded": true``."""
        out: dict[str, Any] = asdict(self)
        for name in _EPSILONS:
            out[name] = None if math.isinf(out[name]) else float(out[name])
        if self.budget is not None:
            out["budget"] = None if math.isinf(self.budget) else float(self.budget)
        out["epsilon_unbounded"] = self.unbounded
        return out

    def sentences(self) -> list[str]:
        """The guarantee in plain words for a clinician; each sentence names whom it holds against."""
        project = f" of project '{self.project_id}'" if self.project_id else ""
        if not self.randomized:
            return self._generalized_sentences(project) + self._budget_sentences()
        if not self.previous_releases:
            return [f"This is release {self.ordinal}{project}; no earlier release of it is in this computer's ledger, "
                    f"so only this release counts: {_cumulative_words(self.epsilon_cumulative_max)}."
                    ] + self._budget_sentences()
        earlier = "one earlier release" if self.previous_releases == 1 else f"{self.previous_releases} earlier releases"
        lines = [f"This is release {self.ordinal}{project}, after {earlier} in this computer's ledger. Of its "
                 f"{_count(self.records, 'record')}, {self.matched:,} are of patients released before in this project "
                 f"({self.unchanged:,} unchanged, {self.changed:,} changed) and {self.new:,} {_be(self.new)} new."]
        same = self.unchanged - self.rederived
        if self.persistent and same:
            lines.append(f"{_count(same, 'record')} {_be(same)} unchanged, drawn as before "
                         f"(persistent randomness): {ATTACKER} sees the same released values again and learns nothing "
                         "more about these patients from this release.")
        if self.persistent and self.rederived:
            lines.append(f"{_count(self.rederived, 'record')} {_be(self.rederived)} unchanged, drawn as before and then "
                         "redrawn from that draw alone, because their sub-table's retention had to be lowered: the "
                         "released value may differ from an earlier release's, but it depends only on the earlier draw, "
                         f"not on the true value, so {ATTACKER} learns nothing more about these patients from this "
                         "release.")
        if not self.persistent and self.matched:
            lines.append("This release's random draws are fresh, not persistent: every record is drawn anew, so for "
                         f"each of the {_count(self.matched, 'record')} of patients released before, the epsilons of "
                         "all their releases add up.")
        if self.changed:
            lines.append(f"For the {_count(self.changed, 'record')} drawn anew since earlier releases, the epsilons of "
                         f"all releases {_sum_words(self.epsilon_changed_max)}{self._budget_note()}: {ATTACKER} "
                         f"learns about each of these patients {_allows(self.epsilon_changed_max)}.")
        lines.append(f"Over all releases of this project, against {ATTACKER}: "
                     f"{_cumulative_words(self.epsilon_cumulative_max)}.")
        return lines + self._budget_sentences()

    def _generalized_sentences(self, project: str) -> list[str]:
        """The same counts for a release that draws nothing: what it adds is its groups, not an epsilon."""
        unbounded = math.isinf(self.epsilon_cumulative_max)
        if not self.previous_releases:
            return [f"This is release {self.ordinal}{project}; no earlier release of it is in this computer's ledger. "
                    "Nothing in it is randomized, so it has no epsilon: what it reveals is each patient's group. If "
                    "the project releases the same patients again generalized, someone holding both releases learns "
                    "the intersection of each patient's two groups, which can be smaller than either; the next release "
                    "flags the records whose combined group is smaller than the group size the releases promise."]
        earlier = "one earlier release" if self.previous_releases == 1 else f"{self.previous_releases} earlier releases"
        lines = [f"This is release {self.ordinal}{project}, after {earlier} in this computer's ledger. Of its "
                 f"{_count(self.records, 'record')}, {self.matched:,} are of patients released before in this project "
                 f"and {self.new:,} {_be(self.new)} new."]
        if self.matched:
            lines.append("Nothing in this release is randomized: each patient is released generalized, not drawn. "
                         f"For the {_count(self.matched, 'record')} of patients released before, {ATTACKER} learns the "
                         "intersection of each patient's groups in the releases, which can be smaller than either "
                         "group; the records whose combined group with the last generalized release is smaller than the group "
                         "size the releases promise are flagged (said below when there is such a size).")
        if unbounded:
            lines.append(f"Over all releases of this project, against {ATTACKER}: no epsilon bounds what they reveal "
                         "together (a generalized release has none; its groups are what it reveals).")
        else:
            lines.append(f"Over all releases of this project, against {ATTACKER}: the randomized releases' epsilons "
                         f"add up to at most {_at_most(self.epsilon_cumulative_max)}; this release adds none, and "
                         "its groups are what it reveals.")
        return lines

    def _budget_note(self) -> str:
        return "" if self.budget is None else f" (budget {_number(self.budget)})"

    def _budget_sentences(self) -> list[str]:
        if self.budget is None:
            return []
        if self.over_budget:
            return [f"{_count(self.over_budget, 'record')} {_be(self.over_budget)} above the project's budget of "
                    f"{_number(self.budget)}."]
        return [f"Every record is within the project's budget of {_number(self.budget)}."]


def cumulative_guarantee(previous: Sequence[ReleaseRecords], current: ReleaseRecords, *, ordinal: int,
                         budget: float | None = None, persistent: bool = True,
                         project_id: str = "", randomized: bool = True) -> CumulativeGuarantee:
    """The cumulative guarantee of ``current`` against the project's earlier releases.

    Parameters
    ----------
    previous : sequence of ReleaseRecords
        The project's published releases (any order).
    current : ReleaseRecords
        The release being made.
    ordinal : int
        Its number in the project (1 for the first).
    budget : float, optional
        The project's budget: the largest cumulative epsilon a record may reach.
    persistent : bool
        ``current``'s draws are persistent (a custodian secret); otherwise every record is a fresh draw and
        composes, whatever its digest.
    project_id : str
        The project's name, for the sentences.
    randomized : bool
        False for a method that draws nothing (generalization only): the sentences speak of groups, not draws.

    Raises
    ------
    ParameterError
        The ordinal or budget is out of range.
    PrivacyError
        A release's epsilons are not numbers >= 0 (a damaged ledger: refuse rather than guess).
    """
    if isinstance(ordinal, bool) or not isinstance(ordinal, int | np.integer) or ordinal < 1:
        raise ParameterError(f"A release's number in its project starts at 1; got {ordinal!r}.")
    if budget is not None and not (float(budget) >= 0):  # NaN fails
        raise ParameterError(f"The project's budget must be an epsilon >= 0; got {budget}. Give "
                             f"{setting_ref('budget', 'EPSILON')}.", setting="budget", value=budget,
                             allowed="a number >= 0")
    past = _history(previous, current, persistent)
    cumulative, changed = past.cumulative, past.matched & ~past.unchanged
    n = len(current)
    matched = int(past.matched.sum())
    return CumulativeGuarantee(
        ordinal=int(ordinal), previous_releases=len(previous), records=n, matched=matched,
        unchanged=int(past.unchanged.sum()), changed=int(changed.sum()), new=n - matched,
        epsilon_release=float(current.epsilon.max()) if n else 0.0,
        epsilon_cumulative_max=float(cumulative.max()) if n else 0.0,
        epsilon_changed_max=float(cumulative[changed].max()) if changed.any() else 0.0,
        budget=None if budget is None else float(budget),
        over_budget=0 if budget is None else int((cumulative > float(budget)).sum()),
        persistent=bool(persistent), project_id=str(project_id), randomized=bool(randomized),
        rederived=0 if current.rederived is None or not persistent else int((past.unchanged & current.rederived).sum()))


def per_record_cumulative(previous: Sequence[ReleaseRecords], current: ReleaseRecords, *,
                          persistent: bool = True) -> np.ndarray:
    """Per record of ``current``, its identity's cumulative epsilon over ``previous`` and ``current``.

    The sum of epsilon over the identity's distinct draw digests across every release (a digest counted once,
    with the largest epsilon recorded for it); with ``persistent=False`` each record of ``current`` counts as a
    draw of its own. Infinite when some draw has no epsilon bound.

    Returns
    -------
    numpy.ndarray
        float64, one entry per record of ``current``.
    """
    return _history(previous, current, persistent).cumulative


def check_budget(cumulative: CumulativeGuarantee, override_reason: str | None) -> None:
    """Refuse a release whose largest cumulative epsilon exceeds the project's budget, unless a reason is given.

    Raises
    ------
    PrivacyError
        Some record's cumulative epsilon exceeds the budget and ``override_reason`` is missing or blank; the
        fields name the setting (``budget``), the largest cumulative epsilon and what is allowed.
    """
    budget = cumulative.budget
    if budget is None or not cumulative.over_budget or (override_reason is not None and override_reason.strip()):
        return
    project = f" of project '{cumulative.project_id}'" if cumulative.project_id else ""
    if not math.isfinite(cumulative.epsilon_cumulative_max):
        why = ("nothing in it is randomized, so it has no epsilon and no budget can hold it" if not cumulative.randomized
               else "a release in its history has no epsilon, so no budget can hold it")
        raise PrivacyError(
            f"Release {cumulative.ordinal}{project} refused: {_count(cumulative.over_budget, 'record')} would go past "
            f"the project's budget of {_number(budget)} ({why}). Publish it without a budget for this project, or give "
            f"a reason to publish past it ({setting_ref('over-budget-reason', 'TEXT')}), which the project's ledger "
            "keeps. Nothing was published.",
            setting="budget", value=cumulative.epsilon_cumulative_max, allowed=f"at most {budget}")
    raise PrivacyError(
        f"Release {cumulative.ordinal}{project} refused: {_count(cumulative.over_budget, 'record')} would reach a "
        f"cumulative epsilon above the project's budget of {_number(budget)} (largest "
        f"{_at_most(cumulative.epsilon_cumulative_max)}). Raise the budget "
        f"({setting_ref('budget', 'EPSILON')}) or give a reason to publish past it "
        f"({setting_ref('over-budget-reason', 'TEXT')}), which the project's ledger keeps. Nothing was published.",
        setting="budget", value=cumulative.epsilon_cumulative_max, allowed=f"at most {budget}")


def _history(previous: Sequence[ReleaseRecords], current: ReleaseRecords, persistent: bool) -> History:
    for number, release in enumerate([*previous, current]):
        epsilon = release.epsilon
        if len(epsilon) and not np.all(epsilon >= 0):  # NaN fails
            which = "the release being made" if number == len(previous) else f"earlier release {number + 1}"
            raise PrivacyError(f"The epsilons recorded for {which} are not all numbers >= 0, so the cumulative "
                               "guarantee cannot be computed; nothing was published.")
    return history(previous, current, fresh=not persistent)


def _be(n: int) -> str:
    return "is" if n == 1 else "are"


def _sum_words(epsilon: float) -> str:
    if math.isinf(epsilon):
        return "have no bound (the method gives none for some draws)"
    return f"add up to at most {_at_most(epsilon)}"


def _cumulative_words(epsilon: float) -> str:
    if math.isinf(epsilon):
        return ("some patients' cumulative epsilon has no bound (the method gives none for some draws), so nothing "
                "limits what the releases together reveal about them")
    return f"no patient of this release has a cumulative epsilon above {_at_most(epsilon)}"


def _allows(epsilon: float) -> str:
    if math.isinf(epsilon):
        return "what their draws reveal, without a bound"
    return "at most what local differential privacy with that epsilon allows"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _number(x: float) -> str:
    return "unbounded" if math.isinf(x) else f"{x:g}"


def _at_most(x: float) -> str:
    """``x`` rounded *up* to three significant digits (an upper bound stays one), or "unbounded"."""
    if math.isinf(x):
        return "unbounded"
    if x <= 0:
        return "0"
    exponent = math.floor(math.log10(x))
    unit = 10.0 ** (exponent - 2)
    scaled = x / unit
    steps = math.ceil(scaled - 1e-12 * scaled)
    decimals = max(0, 2 - exponent)
    text = f"{steps * unit:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
