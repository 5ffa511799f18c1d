"""The verifier's own check of k-anonymity on a generalized table about to be written.

Independent of the search on purpose: it reads only the released text (no hierarchy, no codes, no lattice
code) and groups it with pandas, so a bug in the search cannot hide itself here.

A record whose every quasi-identifier is ``"*"`` reveals nothing and counts as suppressed. Every other
combination must be shared by at least ``k`` records, and the suppressed records must stay within the
limit. One case is let through: if at least ``k`` records are all ``"*"`` they form a k-anonymous class
by themselves (as at the top of the lattice, where every value is ``"*"``), and the table alone cannot
tell suppressed records from fully generalized ones, so the limit is then not held against them.
"""
from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError

SUPPRESSED = "*"


def check_k_anonymity(table: pd.DataFrame, k: int, suppression_limit: float) -> tuple[bool, int]:
    """Whether ``table`` (the released quasi-identifier columns, as text) is k-anonymous within the limit.

    Parameters
    ----------
    table : pandas.DataFrame
        Only the quasi-identifier columns of the release.
    k : int
        The smallest class size allowed.
    suppression_limit : float
        The largest share of records that may be suppressed, ``0 <= limit < 1``.

    Returns
    -------
    ok : bool
        True if every class of records not all ``"*"`` has at least ``k`` records and the all-``"*"``
        records are within ``floor(limit * n)`` (or number at least ``k``; see the module docstring).
    suppressed : int
        The number of records whose every quasi-identifier is ``"*"``.
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ParameterError(f"The 'k' parameter must be a whole number >= 1. Got {k!r} instead.")
    if isinstance(suppression_limit, bool) or not isinstance(suppression_limit, numbers.Real) or not 0 <= suppression_limit < 1:
        raise ParameterError(f"The 'suppression_limit' parameter must be from 0 up to but not including 1. "
                             f"Got {suppression_limit!r} instead.")
    n = len(table)
    if n == 0 or table.shape[1] == 0:
        return n == 0 or n >= k, 0
    # Each column's released text as codes of its distinct cells (missing as a cell of its own); "*" found
    # among the distinct cells, so no string is built per record.
    codes, star = {}, np.ones(n, dtype=bool)
    for name in table.columns:
        column_codes, cells = pd.factorize(table[name], use_na_sentinel=False)
        texts = ["" if pd.isna(c) else str(c) for c in cells]
        codes[name] = column_codes
        star &= np.isin(column_codes, [i for i, c in enumerate(texts) if c == SUPPRESSED])
    all_star = star
    suppressed = int(all_star.sum())
    rest = pd.DataFrame(codes)[~all_star]
    sizes = rest.groupby(list(rest.columns), sort=False).size() if len(rest) else pd.Series([], dtype=int)
    classes_ok = bool((sizes.to_numpy() >= k).all())
    allowed = math.floor(Fraction(repr(float(suppression_limit))) * n)
    return classes_ok and (suppressed <= allowed or suppressed >= k), suppressed
