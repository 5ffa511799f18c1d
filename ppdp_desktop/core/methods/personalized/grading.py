"""Graded grouping of a numeric sensitive attribute (seed 004, SPEC 4).

``k`` non-overlapping categories ``[lo_c, hi_c]``; a value ``x`` of category ``c`` (1-based) is
published as ``c + m(x)`` with ``m(x) = (x - lo_c)/(hi_c - lo_c)`` (``0.999`` at a closed top).
Order and rank are kept; the bounds are the secret that reverses it and go only into the key.
This is an order-preserving keyed recoding: it gives no formal privacy guarantee.

Categories come from the user (closed intervals, as in the seed's example ``[10, 40]``) or from
the data by equal-width or quantile cut points (half-open ``[e_c, e_{c+1})``; the last category's
top is placed so that the maximum maps to exactly ``0.999``). The published precision is the
smallest number of decimals that keeps every distinct value's grade distinct, ordered and exactly
reversible — checked before anything is written.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import InputError, ParameterError

TOP = 0.999
GRADINGS = ("equal-width", "quantile")


@dataclass(frozen=True)
class Grading:
    """The secret categories of one attribute and how grades are written."""

    attribute: str
    lower: np.ndarray
    upper: np.ndarray
    closed_top: bool
    integer: bool
    data_decimals: int
    decimals: int

    @property
    def k(self) -> int:
        return len(self.lower)

    def category(self, x: np.ndarray) -> np.ndarray:
        """0-based category of each value; values outside every category are an error naming them."""
        c = np.searchsorted(self.lower, x, side="right") - 1
        inside = (c >= 0) & (x <= self.upper[np.clip(c, 0, None)])
        if not self.closed_top:
            inside &= (x < self.upper[np.clip(c, 0, None)]) | (c == self.k - 1)
        if not inside.all():
            bad = np.unique(x[~inside])
            raise ParameterError(
                f"{len(bad)} value(s) of {self.attribute!r} fall outside every category, e.g. {bad[:5].tolist()}; "
                "give categories that cover them."
            )
        return c

    def grade(self, x: np.ndarray, decimals: int | None = None) -> np.ndarray:
        """``c + m(x)`` rounded to the published decimals."""
        x = np.asarray(x, dtype=float)
        c = self.category(x)
        lo, hi = self.lower[c], self.upper[c]
        width = hi - lo
        with np.errstate(invalid="ignore", divide="ignore"):
            member = np.where(width > 0, (x - lo) / width, 0.0)
        member = np.where((x == hi) & (width > 0), TOP, member)
        return np.round(c + 1 + member, self.decimals if decimals is None else decimals)

    def ungrade(self, grades: np.ndarray) -> np.ndarray:
        """The original values back from published grades (authorized reverse lookup)."""
        grades = np.asarray(grades, dtype=float)
        if not np.isfinite(grades).all():  # nan or inf names no category (and would not cast to one quietly)
            raise ParameterError(f"A grade of {self.attribute!r} must be a finite number.")
        c = np.floor(grades).astype(int) - 1
        if np.any((c < 0) | (c >= self.k)):
            raise ParameterError(f"A grade of {self.attribute!r} names a category that does not exist.")
        member = grades - (c + 1)
        lo, hi = self.lower[c], self.upper[c]
        at_top = np.isclose(member, TOP, rtol=0, atol=0.5 * 10.0**-self.decimals) & self.closed_top
        x = np.where(at_top, hi, lo + member * (hi - lo))
        return np.round(x) if self.integer else np.round(x, self.data_decimals)

    def key_json(self) -> dict[str, Any]:
        return {
            "bounds": [[float(a), float(b)] for a, b in zip(self.lower, self.upper)],
            "closed_top": self.closed_top,
            "integer": self.integer,
            "data_decimals": self.data_decimals,
            "decimals": self.decimals,
        }

    @classmethod
    def from_key_json(cls, attribute: str, data: dict[str, Any]) -> Grading:
        bounds = np.asarray(data["bounds"], dtype=float)
        return cls(attribute, bounds[:, 0], bounds[:, 1], bool(data["closed_top"]), bool(data["integer"]),
                   int(data["data_decimals"]), int(data["decimals"]))


def _numeric(column: pd.Series, attribute: str, source: str) -> np.ndarray:
    values = pd.to_numeric(column, errors="coerce")
    bad = values.isna()
    if bad.any():
        rows = np.flatnonzero(bad.to_numpy())[:5] + 1
        raise InputError(
            f"Column {attribute!r} of {source} must be numeric to be graded; data rows {rows.tolist()} hold "
            f"{column[bad].head(5).tolist()} (blank or text). Fill or remove them first."
        )
    return values.to_numpy(dtype=float)


def _data_decimals(distinct: np.ndarray) -> int:
    for d in range(0, 11):
        if np.all(np.round(distinct, d) == distinct):
            return d
    return 10


def plan_grading(
    column: pd.Series,
    attribute: str,
    categories: int = 3,
    grading: str = "equal-width",
    bounds: list[tuple[float, float]] | None = None,
    source: str = "the data",
) -> Grading:
    """Categories for ``column`` and the published precision; verified to reverse exactly."""
    x = _numeric(column, attribute, source)
    distinct = np.unique(x)
    integer = bool(np.all(distinct == np.round(distinct)))
    data_decimals = 0 if integer else _data_decimals(distinct)
    if bounds:
        b = np.asarray(bounds, dtype=float)
        if b.ndim != 2 or b.shape[1] != 2 or np.any(b[:, 0] > b[:, 1]) or np.any(b[1:, 0] <= b[:-1, 1]):
            raise ParameterError(f"Categories of {attribute!r} must be sorted, non-overlapping intervals lo-hi; got {bounds}.")
        lower, upper, closed = b[:, 0], b[:, 1], True
    else:
        if grading not in GRADINGS:
            raise ParameterError(f"Grading must be one of {', '.join(GRADINGS)}; got {grading!r}.")
        if categories < 1:
            raise ParameterError(f"The number of categories must be at least 1; got {categories}.")
        if grading == "equal-width":
            edges = np.linspace(distinct[0], distinct[-1], categories + 1)
        else:
            edges = np.quantile(x, np.linspace(0, 1, categories + 1))
        edges = np.unique(edges)
        if len(edges) < 2:
            edges = np.array([distinct[0], distinct[0] + 1.0])
        lower = edges[:-1]
        upper = edges[1:].copy()
        span = distinct[-1] - lower[-1]
        upper[-1] = lower[-1] + span / TOP if span > 0 else lower[-1] + 1.0
        closed = False
    draft = Grading(attribute, lower, upper, closed, integer, data_decimals, 12)
    draft.category(distinct)  # every value covered
    for decimals in range(3, 13):
        candidate = Grading(attribute, lower, upper, closed, integer, data_decimals, decimals)
        grades = candidate.grade(distinct)
        if np.all(np.diff(grades) > 0) and np.array_equal(candidate.ungrade(grades), distinct):
            return candidate
    raise ParameterError(
        f"Grading cannot keep the order of every value of {attribute!r} (values too close to a category's top); "
        "use other categories or round the values."
    )
