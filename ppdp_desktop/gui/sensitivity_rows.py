"""What a row of step 3's sensitivity table says, checked as a whole on every edit, and the project's pairs kept to
what the table shows.

A person types rho1 and rho2 one cell at a time, so a row may pass through an invalid pair (rho1 above rho2) on its
way to a valid one. The text typed into a row's cells is kept until the row's pair, read from every cell as it now
shows, is valid; only then is it applied. So a row made invalid by rho1 turns valid when rho2 is corrected, and no
pair made of one typed and one earlier value is ever applied (:class:`TypedRows`).

The project keeps a value's own pair only where it differs from what the rule gives that value, and a table whose
every row holds the same pair is "the same requirement for every value" (:func:`tidy_pairs`): a condition such as
perturbation partitioning's "one pair for every value" is read from the table's content, not from whether a cell was
ever edited.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ppdp_desktop.core.data.domain import CategoricalDomain
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement, check_pair
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.settings import SensitivitySettings
from ppdp_desktop.gui.wording import window_name

Pair = tuple[float, float]


@dataclass
class RowCheck:
    """A row's pair from its cells as shown: ``pair`` when valid, else the ``message`` saying what is wrong."""

    pair: Pair | None = None
    message: str = ""


@dataclass
class TypedRows:
    """The rho1/rho2 text typed into each row and not yet applied (its row's pair is not valid), by row and column."""

    rho1: int
    rho2: int
    typed: dict[int, dict[int, str]] = field(default_factory=dict)

    def type(self, row: int, col: int, text: str) -> None:
        self.typed.setdefault(row, {})[col] = text

    def clear(self, row: int | None = None) -> None:
        if row is None:
            self.typed.clear()
        else:
            self.typed.pop(row, None)

    def text(self, row: int, col: int) -> str | None:
        return self.typed.get(row, {}).get(col)

    def check(self, row: int, label: str, shown: Pair | None, theta: float) -> RowCheck:
        """The row's pair from what its cells show: the typed text where there is some, ``shown`` (the pair in force,
        None for a value without one) elsewhere. A value without a pair that gets one number typed gets the other from
        the theta rule (rho2 = theta x rho1), as before."""
        numbers: dict[int, float] = {}
        for col, text in self.typed.get(row, {}).items():
            try:
                numbers[col] = float(text)
            except ValueError:
                return RowCheck(message=f"Enter a number between 0 and 1; got {text!r}.")
        rho1 = numbers.get(self.rho1, shown[0] if shown else None)
        rho2 = numbers.get(self.rho2, shown[1] if shown else None)
        if rho1 is None and rho2 is None:
            return RowCheck(message="Enter rho1 and rho2.")
        if rho2 is None:
            rho2 = min(0.99, theta * rho1)
        if rho1 is None:
            rho1 = rho2 / theta
        try:
            check_pair(rho1, rho2, where=f"{label or '(missing)'!r}")
        except ParameterError as exc:
            return RowCheck(message=exc.phrase(window_name))
        return RowCheck(pair=(float(rho1), float(rho2)))


def rule_requirement(project: Project, domain: CategoricalDomain) -> SensitivityRequirement | None:
    """What the rule alone (one pair, or theta) gives each value, without the values' own pairs; None if unusable."""
    rule = SensitivitySettings(project.rho1, project.rho2, None if project.rho1 is not None else project.theta)
    try:
        return rule.requirement(domain)
    except ParameterError:
        return None


def tidy_pairs(project: Project, domain: CategoricalDomain, labels: list[str]) -> bool:
    """Keep in ``project.pairs`` only the pairs that differ from the rule's for their value; when every value then
    holds one and the same pair, make it the rule ("the same requirement for every value", no value's own pair).
    Returns whether the rule changed (the page shows the new one)."""
    base = rule_requirement(project, domain)
    if base is None:
        return False
    row = {label: i for i, label in enumerate(labels)}
    for label, pair in list(project.pairs.items()):
        i = row.get(label)
        if i is not None and _same(base.rho1[i], pair[0]) and _same(base.rho2[i], pair[1]):
            del project.pairs[label]
    if not project.pairs or len(labels) == 0:
        return False
    rho1, rho2 = base.rho1.copy(), base.rho2.copy()
    for label, pair in project.pairs.items():
        if label in row:
            rho1[row[label]], rho2[row[label]] = pair
    if np.isnan(rho1).any() or not (np.all(rho1 == rho1[0]) and np.all(rho2 == rho2[0])):
        return False
    project.rho1, project.rho2 = float(rho1[0]), float(rho2[0])
    project.pairs.clear()
    return True


def _same(a: float, b: float) -> bool:
    return bool(np.isfinite(a) and abs(float(a) - float(b)) <= 1e-12 * max(1.0, abs(float(b))))
