"""The optimal full-domain generalization to k-anonymity with record suppression.

A node of the lattice is one level per quasi-identifier. At a node, records are grouped by their
generalized combination; every class smaller than ``k`` is suppressed, and the node is *feasible* if at
most ``floor(suppression * n)`` records are. Among feasible nodes within the custodian's level bounds the
one with the lowest loss under the chosen utility metric wins (:mod:`.metrics`; the default is Sweeney's
precision, ``Prec = 1 - (sum over records and QIs of h / H) / (n * |QI|)``, a suppressed record counting 1 on
every QI); ties go to the metric's second measure (fewer suppressed records, then discernibility), and only
then to the lexicographically smallest level vector.

Lattices beyond :data:`~.search.MAX_NODES` nodes are searched greedily (:mod:`.heuristic`); the result says
whether it is proven optimal.

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
from ppdp_desktop.core.generalization.alternatives import ALTERNATIVES, ranked_alternatives
from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.heuristic import GreedyWalk
from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.judge import Judge, NodeCheck
from ppdp_desktop.core.generalization.metrics import Score, Scorer, Utility
from ppdp_desktop.core.generalization.result import ConstraintCost, Generalization
from ppdp_desktop.core.generalization.search import MAX_NODES, LatticeWalk, lattice_size
from ppdp_desktop.core.generalization.table import ClassTable, aggregate_records, checked_qis, encode_frame
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress

SEARCHES = ("auto", "exhaustive", "heuristic")


def optimal_generalization(
    frame: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    suppression: float = 0.05,
    *,
    utility: Utility | None = None,
    search: str = "auto",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    criteria: Criteria | None = None,
    sensitive: Hierarchy | None = None,
    alternatives: int = ALTERNATIVES,
) -> Generalization:
    """The best k-anonymous full-domain generalization of ``frame``'s quasi-identifiers.

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
    utility : Utility, optional
        The metric, weights and level bounds (default: precision, every level allowed).
    search : {"auto", "exhaustive", "heuristic"}
        ``auto``: the exhaustive walk up to :data:`~.search.MAX_NODES` nodes, the greedy search beyond.
    progress, cancel : optional
        A progress callback and a cancel token, checked every few dozen nodes.
    criteria : Criteria, optional
        Criteria beyond k (:mod:`.criteria`; their ``k`` replaces ``k``): a class that fails them is suppressed.
    sensitive : Hierarchy, optional
        The sensitive column's hierarchy (its ``attribute`` names the column of ``frame``), needed when a criterion
        reads the sensitive values (l-diversity, t-closeness).
    alternatives : int, default :data:`~.alternatives.ALTERNATIVES`
        How many of the best nodes the exhaustive walk keeps (:attr:`~.result.Generalization.alternatives`, the chosen
        one first); the chosen node is the same whatever this number.

    Raises
    ------
    ParameterError
        For a bad ``k``, ``suppression`` or utility, or if no node meets ``k`` and the criteria within the limit.
    InputError, TaxonomyError
        For a missing column, an empty table, or a value missing from its hierarchy.
    """
    k, suppression = check_parameters(k, suppression)
    names = checked_qis(frame, hierarchies)
    carried = carried_column(frame, names, criteria, sensitive)
    base = aggregate_records(frame, {**hierarchies, **({carried.attribute: carried} if carried is not None else {})})
    return search_lattice(base, [hierarchies[a] for a in names], criteria.k if criteria is not None else k,
                          suppression, utility=utility, search=search, progress=progress, cancel=cancel,
                          criteria=criteria, carried=carried, alternatives=alternatives)


def carried_column(frame: pd.DataFrame, names: Sequence[str], criteria: Criteria | None,
                   sensitive: Hierarchy | None) -> Hierarchy | None:
    """The sensitive column's hierarchy when a criterion reads it (checked against ``frame``), else None."""
    if criteria is None or not criteria.needs_sensitive:
        return None
    if sensitive is None or sensitive.attribute in names:
        raise ParameterError("l-diversity and t-closeness need a sensitive column that is not a quasi-identifier.")
    if sensitive.attribute not in frame.columns:
        raise InputError(f"The table has no sensitive column {sensitive.attribute!r}.")
    return sensitive


def search_lattice(
    base: ClassTable,
    hierarchies: list[Hierarchy],
    k: int,
    suppression: float,
    *,
    utility: Utility | None = None,
    search: str = "auto",
    progress: Progress | None = None,
    cancel: CancelToken | None = None,
    criteria: Criteria | None = None,
    carried: Hierarchy | None = None,
    totals: np.ndarray | None = None,
    alternatives: int = ALTERNATIVES,
) -> Generalization:
    """:func:`optimal_generalization` on records already aggregated by :func:`aggregate_records` (with the sensitive
    column ``carried`` last when a criterion reads it); with weights or level bounds, the plain metric's optimum is
    searched too, to say what the constraints cost. ``totals``: the sensitive values' counts that t-closeness compares
    with (default: those of ``base``; local recoding searches a part of the table against the whole one's)."""
    if base.n_records == 0:
        raise InputError("The table has no records; there is nothing to generalize.")
    limit = suppression_count(suppression, base.n_records)
    check, monotone = node_check(base, hierarchies, k, limit, criteria, carried, totals)
    best, checked, proven, ranked = _search(base, check, monotone, suppression, utility or Utility(), search, progress,
                                            cancel, alternatives)
    cost = None
    if utility is not None and utility.constrained:
        plain, more, plain_proven, _ = _search(base, check, monotone, suppression, utility.plain(), search, None, cancel)
        checked += more
        scorer = Scorer(base, hierarchies, utility.plain())
        chosen_table = base.rollup(best.levels + check.tail, check.table_hierarchies)
        chosen = scorer.score(chosen_table, check.verdict(chosen_table))
        cost = ConstraintCost(levels={h.attribute: lv for h, lv in zip(hierarchies, plain.levels)},
                              value=scorer.per_cell(plain.value), chosen_value=scorer.per_cell(chosen.value),
                              suppressed=plain.suppressed, proven_optimal=plain_proven)
    (progress or no_progress)(1.0, "")
    scorer = Scorer(base, hierarchies, utility or Utility())
    result = _result(hierarchies, best, k, suppression, base.n_records, checked, utility or Utility(),
                     scorer.per_cell(best.value), proven, cost)
    result = replace(result, alternatives=ranked_alternatives(ranked, hierarchies, scorer))
    return replace(result, criteria=criteria, sensitive=carried) if criteria is not None else result


def node_check(base: ClassTable, hierarchies: list[Hierarchy], k: int, limit: int, criteria: Criteria | None,
               carried: Hierarchy | None, totals: np.ndarray | None = None) -> tuple[NodeCheck, bool]:
    """What a node of this search suppresses, and whether the lattice may be tagged (the criteria are monotone)."""
    if criteria is None:
        return NodeCheck(hierarchies, k), True
    if carried is not None and totals is None:
        totals = np.bincount(base.codes[-1], weights=base.counts, minlength=len(carried.values))
    return NodeCheck(hierarchies, k, Judge(criteria, carried, totals), carried), criteria.monotone(limit)


def _search(base: ClassTable, check: NodeCheck, monotone: bool, suppression: float, utility: Utility, search: str,
            progress: Progress | None, cancel: CancelToken | None,
            keep: int = 1) -> tuple[Score, int, bool, list[Score]]:
    """The best node's score, the nodes checked, whether it is proven optimal, and the ``keep`` best nodes' scores
    (best first; the exhaustive walk only, the greedy search gives its best alone)."""
    hierarchies, k, n = check.hierarchies, check.k, base.n_records
    if search not in SEARCHES:
        raise ParameterError(f"Unknown search {search!r}; choose one of {', '.join(SEARCHES)}.", setting="search")
    low, high = utility.box(hierarchies)
    limit = suppression_count(suppression, n)
    scorer = Scorer(base, hierarchies, utility)
    top = base.rollup(tuple(high) + check.tail, check.table_hierarchies)
    criteria = check.judge.criteria if check.judge is not None else None
    if check.suppressed(top) > limit and monotone:
        if criteria is None:
            raise infeasible(k, suppression, limit, top, bounded=high != [h.height for h in hierarchies])
        raise unmet(criteria, suppression, limit)
    best: Score | None
    if search == "heuristic" or (search == "auto" and lattice_size(low, high) > MAX_NODES):
        walk = GreedyWalk(base, check, limit, scorer, low, high)
        best, checked, proven = walk.run(progress or no_progress, cancel), walk.checked + 1, False
        ranked = [best] if best is not None else []
    else:
        lattice = LatticeWalk(base, check, limit, scorer, low, high, monotone, keep)
        best, checked, proven = lattice.run(progress or no_progress, cancel), lattice.checked + 1, True
        ranked = lattice.ranked
    if best is None:
        raise unmet(criteria, suppression, limit)
    return best, checked, proven, ranked


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
    table = base.rollup(node, hiers)
    check = NodeCheck(hiers, k)
    if check.suppressed(table) > suppression_count(suppression, base.n_records):
        return None
    utility = Utility()
    scorer = Scorer(base, hiers, utility)
    score = scorer.score(table, check.verdict(table))
    return _result(hiers, score, k, suppression, base.n_records, 1, utility, scorer.per_cell(score.value), True, None)


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
    best = None
    for levels in itertools.product(*(range(h + 1) for h in heights)):
        generalized = [h.generalize(c, lv) for c, h, lv in zip(codes, hiers, levels)]
        sizes = pd.Series(counts).groupby(generalized).sum().to_numpy()
        s = int(sizes[sizes < k].sum())
        if s <= limit:
            loss = (n - s) * sum(Fraction(lv, h or 1) for lv, h in zip(levels, heights)) + s * q
            dm = int(sum(int(c) ** 2 for c in sizes[sizes >= k])) + s * n
            key = (loss, s, dm, levels)
            best = min(best, key) if best is not None else key
    if best is None:
        raise infeasible(k, suppression, limit, aggregate_records(frame, hierarchies).rollup(heights, hiers))
    loss, s, dm, levels = best
    score = Score("precision", loss, s, dm, loss, levels)
    total = math.prod(h + 1 for h in heights)
    return _result(hiers, score, k, suppression, n, total, Utility(), float(loss / (n * q)), True, None)


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


def infeasible(k: int, suppression: float, limit: int, top: ClassTable, bounded: bool = False) -> ParameterError:
    """The error for a ``k`` that even the top of the lattice misses, naming the largest ``k`` possible
    (``bounded``: the top is that of the highest levels the custodian allows)."""
    sizes = np.sort(top.counts)
    largest = int(sizes[np.argmax(np.cumsum(sizes) > limit)])
    if bounded:
        return ParameterError(f"k = {k} is impossible within the highest levels allowed (--max-level) with at most "
                              f"{limit} records suppressed: the largest k possible there is {largest}; raise or drop a "
                              "max-level, lower k or raise the suppression limit.", setting="max-level")
    if len(sizes) == 1:
        return ParameterError(f"k = {k} is impossible: the table has only {top.n_records} records, so the largest k "
                              f"possible is {largest}.")
    return ParameterError(f"k = {k} is impossible with at most {limit} records suppressed (suppression {suppression:g}): "
                          f"the largest k possible at this limit is {largest}; lower k or raise the suppression limit.")


def _result(hierarchies: list[Hierarchy], best: Score, k: int, suppression: float, n: int, checked: int,
            utility: Utility, value: float, proven: bool, cost: ConstraintCost | None) -> Generalization:
    q, s = len(hierarchies), best.suppressed
    loss = (n - s) * sum(Fraction(lv, h.height or 1) for h, lv in zip(hierarchies, best.levels)) + s * q
    return Generalization(
        levels={h.attribute: lv for h, lv in zip(hierarchies, best.levels)},
        heights={h.attribute: h.height for h in hierarchies},
        k=k, suppression_limit=suppression, n_records=n, suppressed=s,
        precision=float(1 - loss / (n * q)), n_nodes_checked=checked,
        hierarchies={h.attribute: h for h in hierarchies},
        utility=utility, metric_value=value, proven_optimal=proven, cost=cost,
    )
