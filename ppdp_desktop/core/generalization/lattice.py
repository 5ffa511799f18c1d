"""The optimal full-domain generalization to k-anonymity with record suppression.

A node of the lattice is one level per quasi-identifier. At a node, records are grouped by their
generalized combination; every class smaller than ``k`` is suppressed, and the node is *feasible* if at
most ``floor(suppression * n)`` records are. Among feasible nodes the one with the highest precision
(Sweeney's Prec)::

    Prec = 1 - (sum over records and QIs of h / H) / (n * |QI|)

wins, a suppressed record counting 1 on every QI (a QI of height 0 contributes 0 otherwise); ties go to
fewer suppressed records, then to the lexicographically smallest level vector. Precision is computed as
an exact fraction, so ties are real ties.

Speed: the records are first aggregated to their distinct level-0 combinations with counts
(:func:`~ppdp_desktop.core.generalization.table.aggregate_records`); the walk over the lattice
(:mod:`~ppdp_desktop.core.generalization.search`) prunes with a lower bound on the loss and with
monotonicity. :func:`exhaustive_generalization` evaluates every node by plain pandas grouping: the
reference for tests.
"""
from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import InputError, ParameterError
from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.judge import Judge
from ppdp_desktop.core.generalization.result import Generalization
from ppdp_desktop.core.generalization.search import LatticeWalk
from ppdp_desktop.core.generalization.table import ClassTable, aggregate_records, checked_qis, encode_frame
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress


def optimal_generalization(
    frame: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    suppression: float = 0.05,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    criteria: Criteria | None = None,
    sensitive: Hierarchy | None = None,
) -> Generalization:
    """The most precise k-anonymous full-domain generalization of ``frame``'s quasi-identifiers.

    Parameters
    ----------
    frame : pandas.DataFrame
        The records; the quasi-identifiers are the keys of ``hierarchies``.
    hierarchies : mapping of str to Hierarchy
        One hierarchy per quasi-identifier column.
    k : int
        Every released combination of quasi-identifier values is shared by at least ``k`` records.
    suppression : float, default 0.05
        The largest share of records that may be suppressed (``0 <= suppression < 1``).
    progress, cancel : optional
        A progress callback and a cancel token, checked every few dozen nodes.
    criteria : Criteria, optional
        Criteria beyond k (:mod:`.criteria`; their ``k`` replaces ``k``): a class that fails them is suppressed.
    sensitive : Hierarchy, optional
        The sensitive column's hierarchy (its ``attribute`` names the column of ``frame``), needed when a criterion
        reads the sensitive values (l-diversity, t-closeness).

    Raises
    ------
    ParameterError
        For a bad ``k`` or ``suppression``, or if no node reaches ``k`` within the limit.
    InputError, TaxonomyError
        For a missing column, an empty table, or a value missing from its hierarchy.
    """
    k, suppression = check_parameters(k, suppression)
    names = checked_qis(frame, hierarchies)
    if criteria is None:
        base = aggregate_records(frame, hierarchies)
        return search_lattice(base, [hierarchies[a] for a in names], k, suppression, progress=progress, cancel=cancel)
    carried = sensitive if criteria.needs_sensitive else None
    if criteria.needs_sensitive and (sensitive is None or sensitive.attribute in names):
        raise ParameterError("l-diversity and t-closeness need a sensitive column that is not a quasi-identifier.")
    if carried is not None and carried.attribute not in frame.columns:
        raise InputError(f"The table has no sensitive column {carried.attribute!r}.")
    base = aggregate_records(frame, {**hierarchies, **({carried.attribute: carried} if carried is not None else {})})
    return search_lattice(base, [hierarchies[a] for a in names], criteria.k, suppression, progress=progress,
                          cancel=cancel, criteria=criteria, carried=carried)


def search_lattice(
    base: ClassTable,
    hierarchies: list[Hierarchy],
    k: int,
    suppression: float,
    *,
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    criteria: Criteria | None = None,
    carried: Hierarchy | None = None,
) -> Generalization:
    """:func:`optimal_generalization` on records already aggregated by :func:`aggregate_records` (with the sensitive
    column ``carried`` last when a criterion reads it)."""
    n = base.n_records
    if n == 0:
        raise InputError("The table has no records; there is nothing to generalize.")
    limit = suppression_count(suppression, n)
    scale, weights = _weights([h.height for h in hierarchies])
    judge, monotone = None, True
    if criteria is not None:
        totals = None
        if carried is not None:
            totals = np.bincount(base.codes[-1], weights=base.counts, minlength=len(carried.values))
        judge, monotone = Judge(criteria, carried, totals), criteria.monotone(limit)
    walk = LatticeWalk(base, hierarchies, k, limit, weights, scale, judge, carried, monotone)
    top = len(walk.grid) - 1
    if walk.evaluate(top) > limit and (judge is None or monotone):
        if judge is None:
            raise infeasible(k, suppression, limit, walk.cache[walk.levels(top)])
        raise unmet(criteria, suppression, limit)
    best = walk.run(progress or no_progress, cancel)
    if best is None:
        raise unmet(criteria, suppression, limit)
    (progress or no_progress)(1.0, "")
    result = _result(hierarchies, best, k, suppression, n, scale, walk.checked)
    if criteria is None:
        return result
    return replace(result, criteria=criteria, sensitive=carried)


def unmet(criteria: Criteria | None, suppression: float, limit: int) -> ParameterError:
    """The error when no node meets the criteria within the suppression limit."""
    asked = " ".join(criteria.lines()) if criteria is not None else ""
    return ParameterError(f"No generalization meets the criteria with at most {limit:,} records suppressed (suppression "
                          f"{suppression:g}): {asked} Relax a criterion, raise the suppression limit, or give coarser "
                          "hierarchies.")


def node_generalization(frame: pd.DataFrame, hierarchies: Mapping[str, Hierarchy], k: int, suppression: float,
                        levels: Sequence[int]) -> Generalization | None:
    """The generalization of ``frame``'s quasi-identifiers to one given node, if it is k-anonymous within the
    suppression limit on these records (None otherwise, and when a level is beyond its hierarchy's height).

    What a project's next release uses to keep its previous release's node (issue 30): the same levels over
    changed records, checked on the records as they are now. The figures are those :func:`optimal_generalization`
    gives a node (precision, suppressed records); one node is checked.

    Parameters
    ----------
    frame, hierarchies, k, suppression
        As for :func:`optimal_generalization`.
    levels : sequence of int
        One level per quasi-identifier, in the order of ``hierarchies``.
    """
    k, suppression = check_parameters(k, suppression)
    names = checked_qis(frame, hierarchies)
    hiers = [hierarchies[a] for a in names]
    node = tuple(int(level) for level in levels)
    if len(node) != len(hiers) or any(not 0 <= level <= h.height for level, h in zip(node, hiers)):
        return None
    if len(frame) == 0:
        raise InputError("The table has no records; there is nothing to generalize.")
    base = aggregate_records(frame, hierarchies)
    n = base.n_records
    suppressed = base.rollup(node, hiers).suppressed(k)
    if suppressed > suppression_count(suppression, n):
        return None
    scale, weights = _weights([h.height for h in hiers])
    loss = (n - suppressed) * sum(w * level for w, level in zip(weights, node)) + suppressed * len(hiers) * scale
    return _result(hiers, (loss, suppressed, node), k, suppression, n, scale, 1)


def exhaustive_generalization(frame: pd.DataFrame, hierarchies: Mapping[str, Hierarchy], k: int,
                              suppression: float = 0.05) -> Generalization:
    """The same answer as :func:`optimal_generalization` by brute force: every node, grouped with pandas."""
    k, suppression = check_parameters(k, suppression)
    names = checked_qis(frame, hierarchies)
    hiers = [hierarchies[a] for a in names]
    if len(frame) == 0:
        raise InputError("The table has no records; there is nothing to generalize.")
    combos = pd.DataFrame(dict(enumerate(encode_frame(frame, hierarchies)))).value_counts(sort=False)
    codes = [combos.index.get_level_values(i).to_numpy() for i in range(len(names))]
    counts = combos.to_numpy()
    n, q, heights = len(frame), len(names), [h.height for h in hiers]
    limit = suppression_count(suppression, n)
    scale, weights = _weights(heights)
    best = None
    for levels in itertools.product(*(range(h + 1) for h in heights)):
        generalized = [h.generalize(c, lv) for c, h, lv in zip(codes, hiers, levels)]
        sizes = pd.Series(counts).groupby(generalized).transform("sum").to_numpy()
        s = int(counts[sizes < k].sum())
        if s <= limit:
            loss = (n - s) * sum(w * lv for w, lv in zip(weights, levels)) + s * q * scale
            best = min(best, (loss, s, levels)) if best is not None else (loss, s, levels)
    if best is None:
        raise infeasible(k, suppression, limit, aggregate_records(frame, hierarchies).rollup(heights, hiers))
    total = math.prod(h + 1 for h in heights)
    return _result(hiers, best, k, suppression, n, scale, total)


def check_parameters(k: object, suppression: object) -> tuple[int, float]:
    """``k`` as a whole number >= 1 and ``suppression`` in ``[0, 1)``; else :class:`ParameterError`."""
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not _whole(k) or k < 1:
        raise ParameterError(f"The 'k' parameter must be a whole number >= 1. Got {k!r} instead.")
    if (not isinstance(suppression, numbers.Real) or isinstance(suppression, bool)
            or not 0 <= suppression < 1):  # type: ignore[operator]  # typeshed: numbers.Real has no __ge__ (NaN fails it)
        raise ParameterError(
            f"The 'suppression' parameter must be a share of records from 0 (none) up to but not including 1. "
            f"Got {suppression!r} instead."
        )
    return int(k), float(suppression)  # type: ignore[call-overload]  # typeshed: Real.__trunc__ is not typed as int


def _whole(x: numbers.Real) -> bool:
    """Whether ``x`` is a whole number (an integer type, or a finite real with no fraction)."""
    return isinstance(x, numbers.Integral) or (math.isfinite(x) and float(x).is_integer())


def suppression_count(suppression: float, n: int) -> int:
    """``floor(suppression * n)`` computed on the decimal the user typed (0.29 * 100 is 29, not 28)."""
    return math.floor(Fraction(repr(float(suppression))) * n)


def infeasible(k: int, suppression: float, limit: int, top: ClassTable) -> ParameterError:
    """The error for a ``k`` that even the top of the lattice misses, naming the largest ``k`` possible."""
    sizes = np.sort(top.counts)
    largest = int(sizes[np.argmax(np.cumsum(sizes) > limit)])
    if len(sizes) == 1:
        return ParameterError(f"k = {k} is impossible: the table has only {top.n_records} records, so the largest k "
                              f"possible is {largest}.")
    return ParameterError(f"k = {k} is impossible with at most {limit} records suppressed (suppression {suppression:g}): "
                          f"the largest k possible at this limit is {largest}; lower k or raise the suppression limit.")


def _weights(heights: list[int]) -> tuple[int, list[int]]:
    """A common denominator of ``h / H`` over the QIs and each QI's weight ``scale / H`` (0 for H = 0)."""
    scale = math.lcm(*(h for h in heights if h > 0)) if any(heights) else 1
    return scale, [scale // h if h else 0 for h in heights]


def _result(hierarchies: list[Hierarchy], best: tuple[int, int, tuple[int, ...]], k: int, suppression: float,
            n: int, scale: int, checked: int) -> Generalization:
    loss, s, levels = best
    q = len(hierarchies)
    return Generalization(
        levels={h.attribute: lv for h, lv in zip(hierarchies, levels)},
        heights={h.attribute: h.height for h in hierarchies},
        k=k, suppression_limit=suppression, n_records=n, suppressed=s,
        precision=float(1 - Fraction(loss, n * q * scale)), n_nodes_checked=checked,
        hierarchies={h.attribute: h for h in hierarchies},
    )
