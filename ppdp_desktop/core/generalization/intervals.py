"""Label rows of numeric hierarchies: intervals of growing width, or explicit cut points per level.

Width levels use bins ``[lo, lo + w)`` aligned at 0 (``[20, 25)``, never ``[17, 22)``), so that a user
can predict them and the same widths give the same bins on any data. Each width must be a whole
multiple of the one below, which makes the bins nest; the coarser bin index is computed from the finer
one by integer division, so floating point can never break the nesting.

Labels: ``"20-24"`` when every value and every bound is a whole number >= 0 (the familiar form, both ends
included), else ``"[20.5, 25)"``. Cut levels add open-ended bins ``"<20"`` and ``">=80"`` for values
outside the first and last cut of a level. Empty bins never appear (labels come from the values).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.errors import ParameterError, TaxonomyError
from ppdp_desktop.core.taxonomy.tree import data_labels, list_values

_EPS = 1e-9  # slack on x / w so that 0.3 / 0.1 falls in the bin starting at 0.3


def width_rows(attribute: str, values: Iterable[object], widths: Sequence[float]) -> list[list[str]]:
    """Rows ``[value, bin of widths[0], bin of widths[1], ...]`` of the distinct ``values``, sorted
    numerically (the ``"*"`` level is added on top by the hierarchy).

    Raises
    ------
    ParameterError
        If the widths are not positive, increasing whole multiples of each other (they would not nest).
    TaxonomyError
        Naming the values that are not numbers.
    """
    ws, ratios = _widths(attribute, widths)
    labels, xs = _numbers(attribute, values)
    whole = _whole(xs) and _whole(np.array(ws))
    index = np.floor(xs / ws[0] + _EPS).astype(np.int64)
    levels = []
    for w, ratio in zip(ws, ratios):
        index = index // ratio
        levels.append([_bin(lo, lo + w, whole) for lo in (index * w).tolist()])
    return [[label, *(level[i] for level in levels)] for i, label in enumerate(labels)]


def cut_rows(attribute: str, values: Iterable[object], levels: Sequence[Sequence[float]]) -> list[list[str]]:
    """Rows ``[value, bin at level 1, ...]`` with the bins of each level's increasing cut points
    (``c0 < c1 < ...``: ``<c0``, ``[c0, c1)``, ..., ``>=ck``), finest level first.

    Raises
    ------
    ParameterError
        If a level's cuts are not increasing numbers, or are not a subset of the level below's.
    """
    cut_levels: list[np.ndarray] = []
    for number, cuts in enumerate(_sequence(attribute, levels, "cut levels"), 1):
        try:
            points = np.array([float(c) for c in cuts], dtype=float)
        except (TypeError, ValueError):
            points = np.array([np.nan])
        if points.size == 0 or not np.isfinite(points).all() or (np.diff(points) <= 0).any():
            raise ParameterError(
                f"The cut points of level {number} of {attribute!r} must be increasing numbers. Got {cuts!r} instead."
            )
        if cut_levels and not np.isin(points, cut_levels[-1]).all():
            extra = points[~np.isin(points, cut_levels[-1])][0]
            raise ParameterError(
                f"The cut points of {attribute!r} do not nest: level {number} cuts at {_num(extra)}, which level "
                f"{number - 1} does not; each level's cuts must be a subset of the level below's."
            )
        cut_levels.append(points)
    labels, xs = _numbers(attribute, values)
    whole = _whole(xs) and all(_whole(points) for points in cut_levels)
    columns = []
    for points in cut_levels:
        names = [f"<{_num(points[0])}"] + [_bin(lo, hi, whole) for lo, hi in zip(points, points[1:])]
        names.append(f">={_num(points[-1])}")
        columns.append(np.array(names, dtype=object)[np.searchsorted(points, xs, side="right")])
    return [[label, *(column[i] for column in columns)] for i, label in enumerate(labels)]


def _widths(attribute: str, widths: Sequence[float]) -> tuple[list[float], list[int]]:
    """The widths as floats and the whole factor of each over the previous (1 for the first)."""
    try:
        ws = [float(w) for w in _sequence(attribute, widths, "interval widths")]
    except (TypeError, ValueError):
        ws = [np.nan]
    if not ws or not all(np.isfinite(w) and w > 0 for w in ws):
        raise ParameterError(
            f"The interval widths of {attribute!r} must be positive numbers, finest first. Got {widths!r} instead.")
    ratios = [1]
    for finer, coarser in zip(ws, ws[1:]):
        ratio = coarser / finer
        if ratio < 1.5 or abs(ratio - round(ratio)) > _EPS * ratio:
            raise ParameterError(
                f"The interval widths of {attribute!r} do not nest: {coarser:g} is not a whole multiple (> 1) of "
                f"{finer:g}; each width must be a multiple of the one before (e.g. 5, 10, 20)."
            )
        ratios.append(round(ratio))
    return ws, ratios


def _sequence(attribute: str, items: object, what: str) -> list:
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise ParameterError(f"The {what} of {attribute!r} must be a list, finest level first. Got {items!r} instead.")
    return list(items)


def _numbers(attribute: str, values: Iterable[object]) -> tuple[list[str], np.ndarray]:
    """The distinct non-missing values as text and as numbers, sorted by number."""
    labels = data_labels(values)
    xs = pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce").to_numpy(dtype=float)
    bad = [label for label, x in zip(labels, xs) if not np.isfinite(x)]
    if bad:
        raise TaxonomyError(f"Column {attribute!r} has " + list_values(bad, "values that are not finite numbers")
                            + "; an interval hierarchy needs numbers.")
    if not labels:
        raise TaxonomyError(f"Column {attribute!r} has no numeric values to build intervals from.")
    order = np.argsort(xs, kind="stable")
    return [labels[i] for i in order], xs[order]


def _whole(xs: np.ndarray) -> bool:
    return bool((xs >= 0).all() and (np.abs(xs - np.round(xs)) <= _EPS * np.maximum(1.0, np.abs(xs))).all())


def _bin(lo: float, hi: float, whole: bool) -> str:
    if whole:
        return f"{round(lo)}-{round(hi) - 1}"
    return f"[{_num(lo)}, {_num(hi)})"


def _num(x: float) -> str:
    """A bound as short text: ``20.0`` -> ``"20"``, ``0.30000000000000004`` -> ``"0.3"``."""
    return label_text(float(f"{x:.12g}"))
