"""Interval hierarchies for a numeric attribute: values grouped into ``[lo, hi)`` intervals.

The leaves are the distinct values (as ``label_text``: ``20.0`` becomes ``"20"``); above them one
level of intervals per width (finest first, each coarser width a whole multiple of the one below, so
that intervals nest), or one level from given cut points. Intervals are half-open ``"[20, 30)"`` except
the last of each level, which is closed (``"[90, 100]"``) so that the maximum is covered. Intervals
without any value are left out. Width grids start at 0 (``[20, 30)``, not ``[17, 27)``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.errors import ParameterError, TaxonomyError
from ppdp_desktop.core.taxonomy.tree import Taxonomy, data_labels, list_values

_EPS = 1e-9  # relative slack so that 0.3 / 0.1 falls in the bin starting at 0.3


def numeric_intervals(
    attribute: str,
    values: Iterable[object],
    width: float | Sequence[float] | None = None,
    cuts: Sequence[float] | None = None,
    levels: int = 1,
    root_label: str = "*",
) -> Taxonomy:
    """Build an interval taxonomy of the numeric ``values`` of ``attribute``.

    Parameters
    ----------
    attribute : str
        The column the taxonomy describes.
    values : iterable
        The data values (numbers or numeric text; missing values are skipped).
    width : float or sequence of float, optional
        Interval width; with ``levels > 1`` each level above doubles it. A sequence gives the widths
        of the levels explicitly, finest first (e.g. ``[5, 10, 50]``).
    cuts : sequence of float, optional
        Increasing cut points ``c0 < c1 < ... < ck``: intervals ``[c0, c1)``, ..., ``[c(k-1), ck]``.
        Exactly one of ``width`` and ``cuts`` must be given.
    levels : int, default 1
        Number of interval levels when ``width`` is a single number.
    root_label : str, default "*"

    Raises
    ------
    TaxonomyError
        Naming values that are not numbers or lie outside the cut points.
    ParameterError
        If the widths or cut points are not usable.
    """
    numbers = _parse(attribute, values)
    if (width is None) == (cuts is None):
        raise ParameterError("numeric_intervals: give exactly one of 'width' and 'cuts'.")
    if cuts is not None:
        keys = [_cut_keys(attribute, numbers, cuts)]
    else:
        keys = [_width_keys(numbers, w) for w in _widths(width, levels)]
    taxonomy = Taxonomy(attribute, root_label)
    parents = [taxonomy.root] * len(numbers)
    for level in reversed(keys):  # coarsest first
        made: dict[tuple[float, float, bool], object] = {}
        for i in sorted(range(len(numbers)), key=lambda i: (level[i], i)):
            key = level[i]
            if key not in made:
                made[key] = taxonomy.add(parents[i], _interval_label(*key))
            parents[i] = made[key]
    for i in sorted(range(len(numbers)), key=lambda i: numbers[i][1]):
        taxonomy.add(parents[i], numbers[i][0])
    return taxonomy


def _parse(attribute: str, values: Iterable[object]) -> list[tuple[str, float]]:
    """Distinct non-missing ``(label, number)`` pairs; raises naming the values that are not numbers."""
    found: list[tuple[str, float]] = []
    bad: list[str] = []
    for label in data_labels(values):
        try:
            number = float(label)
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            found.append((label, number))
        else:
            bad.append(label)
    if bad:
        raise TaxonomyError(f"Interval hierarchy of {attribute!r}: " + list_values(bad, "values that are not finite numbers"))
    if not found:
        raise TaxonomyError(f"Interval hierarchy of {attribute!r}: there are no numeric values.")
    return found


def _widths(width: float | Sequence[float], levels: int) -> list[float]:
    if isinstance(width, (int, float, np.number)):
        if isinstance(levels, bool) or not isinstance(levels, int) or levels < 1:
            raise ParameterError(f"numeric_intervals: levels must be a whole number >= 1, got {levels!r}.")
        widths = [float(width) * 2**i for i in range(levels)]
    else:
        widths = [float(w) for w in width]
    if not widths or not all(math.isfinite(w) and w > 0 for w in widths):
        raise ParameterError(f"numeric_intervals: widths must be positive numbers, got {width!r}.")
    for finer, coarser in zip(widths, widths[1:]):
        ratio = coarser / finer
        if ratio < 1.5 or abs(ratio - round(ratio)) > _EPS * ratio:
            raise ParameterError(
                f"numeric_intervals: width {coarser:g} is not a whole multiple (> 1) of {finer:g}; "
                "the widths must grow by whole factors so that the intervals nest."
            )
    return widths


def _width_keys(numbers: list[tuple[str, float]], width: float) -> list[tuple[float, float, bool]]:
    xs = np.array([x for _, x in numbers])
    index = np.floor(xs / width + _EPS)
    last = max(math.ceil(xs.max() / width - _EPS) - 1, math.floor(xs.min() / width + _EPS))
    index = np.minimum(index, last)
    return [(k * width, (k + 1) * width, k == last) for k in index.tolist()]


def _cut_keys(attribute: str, numbers: list[tuple[str, float]], cuts: Sequence[float]) -> list[tuple[float, float, bool]]:
    try:
        points = np.array([float(c) for c in cuts])
    except (TypeError, ValueError):
        raise ParameterError(f"numeric_intervals: cut points must be numbers, got {cuts!r}.") from None
    if len(points) < 2 or not np.isfinite(points).all() or (np.diff(points) <= 0).any():
        raise ParameterError(f"numeric_intervals: cut points must be at least 2 increasing numbers, got {cuts!r}.")
    outside = [label for label, x in numbers if x < points[0] or x > points[-1]]
    if outside:
        raise TaxonomyError(
            f"Interval hierarchy of {attribute!r}: "
            + list_values(outside, f"values outside the cut points [{_num(points[0])}, {_num(points[-1])}]")
            + "; widen the first or last cut point."
        )
    xs = np.array([x for _, x in numbers])
    index = np.minimum(np.searchsorted(points, xs, side="right") - 1, len(points) - 2)
    last = len(points) - 2
    return [(points[k], points[k + 1], k == last) for k in index.tolist()]


def _num(x: float) -> str:
    """A bound as short text: ``20.0`` -> ``"20"``, ``0.30000000000000004`` -> ``"0.3"``."""
    return label_text(float(f"{x:.12g}"))


def _interval_label(lo: float, hi: float, closed: bool) -> str:
    return f"[{_num(lo)}, {_num(hi)}{']' if closed else ')'}"
