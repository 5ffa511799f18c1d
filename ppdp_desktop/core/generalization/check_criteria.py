"""The verifier's own check of the privacy criteria on a released table (before publishing and in ``ppdp verify``).

Independent of the search on purpose, like :mod:`.verify`: it reads only the released text (the quasi-identifier
columns and the sensitive column as written) and, for hierarchical t-closeness, the sensitive column's label chains
(value -> its labels up to ``"*"``). It groups with pandas and pivots each class's counts; it uses neither the
search's tables nor :mod:`.judge`.

Records whose every quasi-identifier is ``"*"`` count as suppressed: their number must be within the limit, unless
they form a class that meets the criteria by itself (the top of the lattice). The whole table's distribution for
t-closeness is over every released record, suppressed ones included.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.verify import SUPPRESSED

_TOLERANCE = 1e-12


def check_criteria(table: pd.DataFrame, quasi: Sequence[str], sensitive: str | None, criteria: Criteria,
                   suppression_limit: float, chains: Mapping[str, Sequence[str]] | None = None) -> tuple[bool, int, list[str]]:
    """Whether the released ``table`` meets ``criteria`` within the suppression limit.

    Returns
    -------
    ok : bool
    suppressed : int
        Records whose every quasi-identifier is ``"*"``.
    problems : list of str
        What fails, in plain words (empty when ``ok``).
    """
    if criteria.needs_sensitive and (sensitive is None or sensitive not in table.columns):
        return False, 0, [f"The release has no sensitive column {sensitive!r} to check l-diversity or t-closeness on."]
    if criteria.t is not None and criteria.hierarchical_t and not chains:
        return False, 0, ["Hierarchical t-closeness needs the sensitive column's hierarchy, which the release lacks."]
    n = len(table)
    text = table[list(quasi)].astype(str)
    star = text.eq(SUPPRESSED).all(axis=1).to_numpy() if len(quasi) else np.zeros(n, dtype=bool)
    values = table[sensitive].astype(str).where(table[sensitive].notna(), "") if sensitive in table.columns else None
    overall = values.value_counts(normalize=True) if values is not None else None
    problems: list[str] = []
    kept = ~star
    counts = _counts(text[kept], values[kept] if values is not None else None)
    reasons = _reasons(counts, criteria, overall, chains)
    fail = _any(reasons, len(counts))
    if fail.any():
        problems.append(f"{int(fail.sum()):,} of {len(fail):,} released groups fail: {_which(counts, fail, criteria)}; "
                        f"{_example(counts, reasons, list(quasi), sensitive)}.")
    suppressed = int(star.sum())
    if criteria.average_risk is not None and len(counts):
        sizes = counts.sum(axis=1)
        risk = Fraction(len(sizes), int(sizes.sum()))
        if risk > Fraction(repr(float(criteria.average_risk))):
            problems.append(f"The average prosecutor risk is {float(risk):.4f}, above {criteria.average_risk:g}.")
    allowed = math.floor(Fraction(repr(float(suppression_limit))) * n)
    if suppressed > allowed:
        alone = _counts(text[star], values[star] if values is not None else None)
        if not len(alone) or _any(_reasons(alone, criteria, overall, chains), len(alone)).any():
            problems.append(f"{suppressed:,} records are suppressed, more than the {allowed:,} allowed.")
    return not problems, suppressed, problems


def _counts(text: pd.DataFrame, values: pd.Series | None) -> pd.DataFrame:
    """One row per class (released combination), one column per sensitive value: its number of records."""
    if values is None:
        sizes = text.groupby(list(text.columns), sort=False).size() if len(text) else pd.Series([], dtype=int)
        return sizes.to_frame("records")
    frame = text.assign(__value__=values.to_numpy())
    if not len(frame):
        return pd.DataFrame()
    return frame.groupby([*text.columns, "__value__"], sort=False).size().unstack("__value__", fill_value=0)


def _reasons(counts: pd.DataFrame, c: Criteria, overall: pd.Series | None,
             chains: Mapping[str, Sequence[str]] | None) -> dict[str, np.ndarray]:
    """Per criterion asked (in words), which classes fail it."""
    if not len(counts):
        return {}
    matrix = counts.to_numpy(dtype=np.float64)
    sizes = matrix.sum(axis=1)
    out = {f"fewer than {c.min_size} records": sizes < c.min_size}
    shares = pd.DataFrame(matrix / sizes[:, None], columns=counts.columns)
    if c.distinct_l is not None:
        out[f"distinct {c.distinct_l}-diversity"] = (matrix > 0).sum(axis=1) < c.distinct_l
    if c.entropy_l is not None:
        logs = np.log(shares.where(shares > 0, 1.0).to_numpy())
        out[f"entropy {c.entropy_l:g}-diversity"] = -(shares.to_numpy() * logs).sum(axis=1) < math.log(c.entropy_l) - _TOLERANCE
    if c.recursive_l is not None and c.recursive_c is not None:
        bad = np.zeros(len(matrix), dtype=bool)
        for i, row in enumerate(matrix):
            ranked = sorted((x for x in row if x > 0), reverse=True)
            if len(ranked) < c.recursive_l or not ranked[0] < c.recursive_c * sum(ranked[c.recursive_l - 1:]):
                bad[i] = True
        out[f"recursive ({c.recursive_c:g},{c.recursive_l})-diversity"] = bad
    if c.t is not None and overall is not None:
        full = shares.reindex(columns=overall.index, fill_value=0.0)
        distance = _emd(full, overall, chains) if c.hierarchical_t and chains else 0.5 * (full - overall).abs().sum(axis=1)
        out[f"{c.t:g}-closeness"] = np.asarray(distance) > c.t + _TOLERANCE
    return out


def _any(reasons: dict[str, np.ndarray], n: int) -> np.ndarray:
    fail = np.zeros(n, dtype=bool)
    for mask in reasons.values():
        fail |= mask
    return fail


def _example(counts: pd.DataFrame, reasons: dict[str, np.ndarray], quasi: list[str], sensitive: str | None) -> str:
    """The first failing group, by its released labels, its size and the criteria it fails (what verify names)."""
    row = int(np.flatnonzero(_any(reasons, len(counts)))[0])
    labels = counts.index[row] if len(quasi) > 1 else (counts.index[row],)
    group = ", ".join(f"{q} {v}" for q, v in zip(quasi, labels))
    size = int(counts.iloc[row].sum())
    failed = [name for name, mask in reasons.items() if mask[row]]
    distinct = int((counts.iloc[row] > 0).sum()) if sensitive is not None and "records" not in counts.columns else None
    held = f", {distinct} different value{'s' if distinct != 1 else ''} of {sensitive}" if distinct is not None else ""
    return f"e.g. the group {group} ({size:,} records{held}) fails {' and '.join(failed)}"


def _emd(shares: pd.DataFrame, overall: pd.Series, chains: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Li et al.'s hierarchical earth mover's distance: per internal node at height ``h`` of ``H``, ``h / H`` times the
    smaller of the mass its children have too much and too little. ``chains[v]``: ``v``'s labels from level 0 up
    (a missing value ``""`` goes straight to the top)."""
    height = max(len(chain) for chain in chains.values()) - 1

    def label(value: str, h: int) -> str:
        chain = chains.get(value) or [value, SUPPRESSED]
        return chain[min(h, len(chain) - 1)]

    leaf_extra = shares - overall
    values = [str(v) for v in leaf_extra.columns]
    cost = np.zeros(len(leaf_extra))
    for h in range(1, height + 1):
        below = [label(v, h - 1) for v in values]
        parent_of = dict(zip(below, (label(v, h) for v in values)))
        extra = leaf_extra.T.groupby(below).sum().T
        parents = [parent_of[c] for c in extra.columns]
        positive = extra.clip(lower=0).T.groupby(parents).sum().T
        negative = (-extra).clip(lower=0).T.groupby(parents).sum().T
        cost += (h / height) * np.minimum(positive, negative).sum(axis=1).to_numpy()
    return cost


def _which(counts: pd.DataFrame, fail: np.ndarray, c: Criteria) -> str:
    sizes = counts.to_numpy().sum(axis=1)
    small = int((sizes[fail] < c.min_size).sum())
    parts = [f"{small:,} smaller than {c.min_size}"] if small else []
    if len(parts) == 0 or small < int(fail.sum()):
        parts.append("the others not diverse or close enough in their sensitive values")
    return "; ".join(parts)
