"""The grid step ``h`` of each numeric column on differential privacy's page: the field a step is typed into,
and the step the job will use, checked as the job checks it.

A numeric column of dp-microagg is released on a grid: every released value is a multiple of ``h``, and the
noise is discrete Laplace, a random whole number of grid steps. The method decides and checks the step
(``grid_step`` of the registered method whose ``window_editor`` is "dp"). An empty field means its automatic step
(shown greyed in the field); a typed step is stored in the method's settings as ``grids`` (what ``--grid COL=STEP``
sets), so a project saved from the window runs the same release from the command line.

The field is a line edit rather than a spin box: a step spans many orders of magnitude (0.001 to 10,000) and has
no natural "one click up", and a line edit never changes under a mouse wheel.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from PySide6.QtWidgets import QAbstractButton, QLineEdit

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.gui.wording import window_name

GRID_TIP = ("Grid step h of {name}: released values are rounded to multiples of h (h = 1: whole numbers, "
            "h = 0.1: one decimal, h = 5: multiples of five). The noise added to each cluster is a random whole "
            "number of such steps (discrete Laplace). Leave it empty for the automatic step shown in grey, which "
            "moves a value by far less than the noise; a coarser step is less precise, a finer one only adds "
            "digits. Must be above 0, and a whole number for a column of whole numbers.")
BAD_STEP = ("The grid step of {name} must be a number above 0 (e.g. 0.1 or 5), or empty for the automatic step; "
            "now {text!r}.")


class GridPlanner(Protocol):
    """What this page asks the method (the registered method whose window editor this is)."""

    def grid_step(self, name: str, step: str | None, lo: float, hi: float, integer: bool, m: int, k: int,
                  epsilon: float) -> Fraction:
        """The step typed (None: the automatic one), checked as the job checks it; ParameterError if unusable."""
        ...


@dataclass(frozen=True)
class PlannedStep:
    """The step a column will be released with: ``step`` (None when the typed one cannot be used, then
    ``problem`` says why) and whether it is the automatic one."""

    step: Fraction | None
    automatic: bool
    problem: str | None = None


def step_text(step: Fraction | float) -> str:
    """A step as people write it: 1, 0.1, 250, 1e-05."""
    value = float(step)
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def planned_step(method: GridPlanner, name: str, typed: str, lo: float, hi: float, integer: bool, m: int, k: int,
                 epsilon: float) -> PlannedStep:
    """The grid step of column ``name`` for the domain ``[lo, hi]`` (``lo < hi``) and the plan ``M = m``, ``k``,
    ``epsilon``: the typed one, or the method's default when ``typed`` is empty; checked with the method's own grid
    checks (a whole-number step for whole numbers, at least two grid points, at most 2**32 units, exact sums)."""
    text = typed.strip()
    automatic = not text
    if not automatic:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            return PlannedStep(None, False, BAD_STEP.format(name=name, text=text))
    try:
        step = method.grid_step(name, None if automatic else text, lo, hi, integer, m, k, epsilon)
    except ParameterError as exc:
        where = "The automatic grid step" if automatic else "The grid step"
        said = exc.phrase(lambda key, metavar: "this step" if key == "grid" else window_name(key, metavar))
        return PlannedStep(None, automatic, f"{where} of {name}: {said}")
    return PlannedStep(step, automatic)


class GridStepField(QLineEdit):
    """One numeric column's grid step: empty for the automatic step (shown greyed), or the step typed."""

    def __init__(self, name: str, text: str = "") -> None:
        super().__init__(text)
        self.name = name
        self.setObjectName(f"grid-step-{name}")
        self.setToolTip(GRID_TIP.format(name=name))
        self.setClearButtonEnabled(True)  # emptied: back to the automatic step
        for button in self.findChildren(QAbstractButton):
            button.setToolTip(f"Empty the field: {name} goes back to the automatic grid step")

    def show_automatic(self, step: Fraction | None) -> None:
        """Show the automatic step in grey while the field is empty."""
        self.setPlaceholderText(f"{step_text(step)} (automatic)" if step is not None else "automatic")
