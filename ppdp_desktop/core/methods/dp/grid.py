"""The grid a numeric attribute of dp-microaggregation is released on (issue 20, point 4).

A grid of step ``h`` is the set of numbers ``i * h`` for whole ``i``; an attribute with domain ``[lo, hi]``
uses the points ``first * h ... (first + units) * h`` with ``first = ceil(lo / h)`` and
``units = floor(hi / h) - first`` (exact rational arithmetic: ``h`` is kept as a fraction ``p / q``, and ``lo``,
``hi`` are read as the decimals they print as).

Why a grid: the released value of a cluster is a function of integers only (its grid-unit sum plus a discrete
Laplace draw, see :mod:`~ppdp_desktop.core.methods.dp.numeric`), written as ``(i * p) / q`` - one correctly rounded
division of two exact integers - so its low bits say nothing but ``i``. Floating-point Laplace noise added to a
float mean leaks the mean through the low bits (Mironov 2012).

The step: declared per attribute (``--grid COL=STEP``), or by default the largest power of ten at most ``b / 100``
(``b = M Delta / (k epsilon)``, the noise scale on a cluster mean), and at least 1 for a whole-number attribute:
rounding to it moves a value by at most ``h / 2 <= b / 200``, a small fraction of the noise. A grid of more than
``2**32`` units is made coarser (powers of ten again).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ppdp_desktop.core.errors import ParameterError

MAX_UNITS = 1 << 32  # grid points per domain: sums of (2k - 1) units stay exact in float64 and int64
STEP_DENOMINATOR_MAX = 10**15


def as_fraction(step: float | str | Fraction) -> Fraction:
    """A step as the fraction its decimal spelling says (``0.1`` is ``1/10``, not the binary float's value)."""
    try:
        value = step if isinstance(step, Fraction) else Fraction(repr(step) if isinstance(step, float) else str(step))
    except (ValueError, ZeroDivisionError) as exc:
        raise ParameterError(f"The grid step must be a positive number; got {step!r}.") from exc
    if value <= 0 or value.denominator > STEP_DENOMINATOR_MAX:
        raise ParameterError(f"The grid step must be a positive number with at most 15 decimals; got {step!r}.")
    return value


def default_step(scale: float, delta: float, integer: bool) -> Fraction:
    """The largest power of ten ``<= scale / 100`` (``>= 1`` for a whole-number attribute), coarsened until the
    domain holds at most ``2**32`` grid units."""
    exponent = math.floor(math.log10(scale / 100.0)) if scale > 0 and math.isfinite(scale) else 0
    if integer:
        exponent = max(exponent, 0)
    while Fraction(delta) / Fraction(10) ** exponent > MAX_UNITS:
        exponent += 1
    return Fraction(10) ** exponent


@dataclass(frozen=True)
class Grid:
    """The grid points ``(first + j) * step`` for ``j = 0 .. units`` (all inside the domain)."""

    step: Fraction
    first: int
    units: int

    @classmethod
    def for_domain(cls, lo: float, hi: float, step: Fraction, integer: bool, attribute: str) -> Grid:
        """The grid of ``step`` inside ``[lo, hi]``; a whole-number attribute needs a whole-number step."""
        if integer and step.denominator != 1:
            raise ParameterError(f"{attribute!r} holds whole numbers: its grid step must be a whole number; got {float(step):g}.")
        # the bounds as their decimals say (0.1 is 1/10): a grid point >= that decimal rounds to a float >= lo
        first = math.ceil(Fraction(repr(float(lo))) / step)
        units = math.floor(Fraction(repr(float(hi))) / step) - first
        if units < 1:
            raise ParameterError(f"The grid step {float(step):g} of {attribute!r} leaves fewer than two grid points in "
                                 f"its domain {lo:g}:{hi:g}; choose a smaller step.")
        if units > MAX_UNITS:
            raise ParameterError(f"The grid step {float(step):g} of {attribute!r} cuts its domain into {units:,} units "
                                 f"(at most 2**32); choose a larger step.")
        if abs(first + units) * step.numerator >= 1 << 53:
            raise ParameterError(f"The grid of {attribute!r} ({float(step):g} over {lo:g}:{hi:g}) is beyond exact "
                                 "float64 arithmetic; choose a larger step.")
        return cls(step, first, units)

    @property
    def h(self) -> float:
        return float(self.step)

    def snap(self, values: np.ndarray) -> np.ndarray:
        """Each value's nearest grid point, as grid units ``0 .. units`` (float64 holding whole numbers)."""
        x = np.asarray(values, dtype=np.float64)
        nearest = np.rint(x * float(self.step.denominator) / float(self.step.numerator))
        return np.clip(nearest - self.first, 0, self.units)

    def values(self, units: np.ndarray) -> np.ndarray:
        """The numbers of grid units ``j``: ``((first + j) p) / q``, exact integers divided once."""
        i = np.asarray(units, dtype=np.int64) + self.first
        return (i * self.step.numerator).astype(np.float64) / float(self.step.denominator)

    def on_grid(self, values: np.ndarray) -> np.ndarray:
        """Whether each value is one of this grid's points as :meth:`values` writes them (after a text round trip)."""
        x = np.asarray(values, dtype=np.float64)
        units = np.rint(x * float(self.step.denominator) / float(self.step.numerator)) - self.first
        inside = (units >= 0) & (units <= self.units)
        return inside & (self.values(np.clip(units, 0, self.units)) == x)

    def to_json(self) -> dict[str, object]:
        return {"step": _plain(self.step), "step_exact": str(self.step), "first": self.first, "units": self.units}


def _plain(x: Fraction) -> float | int:
    return int(x) if x.denominator == 1 else float(x)


def discrete_t(units: int, n_attributes: int, epsilon: float) -> int:
    """``t = ceil(M * units / epsilon)``, exactly: the smallest whole ``t`` with ``units / t <= epsilon / M``, so the
    discrete Laplace on the cluster sums (L1 sensitivity ``units``) spends at most ``epsilon / M``."""
    return max(1, math.ceil(Fraction(n_attributes * units) / Fraction(epsilon)))
