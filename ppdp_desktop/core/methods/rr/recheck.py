"""The recipient's own check of a randomized-response release: the attribute-disclosure risk recomputed from the
release itself, never taken from the figure it states.

The risk depends on the original QI x S table, which the release does not hold. The check is a statistical test
with a stated false-refusal rate (:mod:`ppdp_desktop.core.methods.rr.bounds`): from the released counts and the
published matrices it bounds the original table simultaneously at level ``1 - 10^-4`` and refuses the release
only if **every** table within the bounds has a largest risk above ``1/l`` (or above the stated ``max_risk``),
or if no table at all fits the released counts. A genuine release is therefore refused with probability at most
1 in 10,000 (its true table lies within the bounds with probability at least ``1 - 10^-4``, and its true risk is
within ``1/l``). With identity matrices (nothing randomized) the released table is the original and the check is
exact: the true table put back under identity matrices is always refused. The custodian's own check before
publishing does not use this test: it holds the original table and checks the plan exactly
(:func:`ppdp_desktop.core.methods.rr.release.verify_against_plan`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.methods.rr.bounds import FALSE_REFUSAL, RiskBound, risk_lower_bound
from ppdp_desktop.core.methods.rr.risk import contingency
from ppdp_desktop.core.privacy import plausibility

TOLERANCE = 1e-9
#: how the false-refusal rate is written in messages
RATE = "1 in 10,000"


def released_counts(release: LoadedRelease) -> tuple[np.ndarray, list[float], float]:
    """``(counts, ps, bound)``: the released QI x S table (QI axes in release.json's order, S last), the published
    retention of each axis (1 = released unchanged) and ``1/l``."""
    meta = release.metadata
    roles = {name: (a or {}).get("role") for name, a in (meta.get("attributes") or {}).items()}
    quasi = [n for n, r in roles.items() if r == "quasi-identifier"]
    sensitive = [n for n, r in roles.items() if r == "sensitive"]
    try:
        bound = 1.0 / float(meta["guarantee"]["l"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        raise ReleaseError(f"release.json states no usable bound l ({exc}).") from None
    if not quasi or len(sensitive) != 1:
        raise ReleaseError("release.json does not name the quasi-identifiers and the one sensitive column of this "
                           "randomized-response release.")
    entries = {e.get("attribute"): e for e in meta.get("randomized", []) if isinstance(e, dict)}
    codes, dims, ps = [], [], []
    for name in [*quasi, sensitive[0]]:
        if name not in release.table.columns:
            raise ReleaseError(f"release.json names {name!r}, which is not in the released data.")
        if name in entries:
            codes.append(release.codes(entries[name]))
            dims.append(len(entries[name]["values"]))
            ps.append(float(entries[name]["p"]))
        else:  # released unchanged: its own values are the domain
            column_codes, uniques = pd.factorize(release.table[name], use_na_sentinel=False)
            codes.append(np.asarray(column_codes, dtype=np.int64))
            dims.append(max(len(uniques), 1))
            ps.append(1.0)
    return contingency(codes, dims), ps, bound


def recheck_risk(release: LoadedRelease) -> str:
    """Refuse the release if no original table it allows keeps the largest risk within ``1/l`` (or within the
    stated ``max_risk``), or if none fits its counts; else say what was recomputed.

    A genuine release is refused with probability at most :data:`~ppdp_desktop.core.methods.rr.bounds.FALSE_REFUSAL`
    (1 in 10,000) over its randomization.
    """
    counts, ps, bound = released_counts(release)
    found = risk_lower_bound(counts, ps, test_level(release))
    value = _value(found)
    if not found.consistent:
        raise PrivacyError(
            "No original table fits the released data under the published matrices (their counts are too far from "
            f"any table randomized with them; a genuine release is refused with probability below {RATE}): the "
            "release does not randomize what it claims.")
    if not found.lower <= bound + TOLERANCE:  # NaN fails
        raise PrivacyError(
            f"The attribute-disclosure risk recomputed from the released data and matrices is {value}, "
            f"above 1/l = {bound:.4f}: the release does not randomize what it claims"
            + ("." if found.exact else f" (a genuine release is refused with probability below {RATE})."))
    stated = (release.metadata.get("guarantee") or {}).get("max_risk")
    if stated is not None:
        ok = isinstance(stated, (int, float)) and not isinstance(stated, bool)
        if not (ok and stated <= bound + TOLERANCE and found.lower <= stated + TOLERANCE):  # NaN fails
            raise PrivacyError(
                f"release.json states a largest attribute-disclosure risk of {stated!r}, but the release itself gives "
                f"{value} (bound 1/l = {bound:.4f}): the stated figure was altered.")
    if found.exact:
        return (f"attribute-disclosure risk recomputed from the release (nothing randomized, exact): "
                f"{found.lower:.4f} <= 1/l = {bound:.4f}")
    return (f"attribute-disclosure risk recomputed from the release: every original table consistent with it at "
            f"the 1 - {FALSE_REFUSAL:g} level has a largest risk of at least {found.lower:.4f}, which does not "
            f"exceed 1/l = {bound:.4f} (a test that refuses a genuine release with probability below {RATE})")


def test_level(release: LoadedRelease) -> float:
    """This test's share of the false-refusal budget: 1 in 10,000 less what the range check of each randomized
    column's counts spends (``plausibility.FALSE_REFUSAL`` each), so that the whole of ``verify`` refuses a
    genuine release with probability at most 1 in 10,000 (union bound)."""
    columns = len(release.metadata.get("randomized") or [])
    return FALSE_REFUSAL - columns * plausibility.FALSE_REFUSAL


def _value(found: RiskBound) -> str:
    """The recomputed risk in words: exact, or the least any original table the release allows can have."""
    if found.exact:
        return f"{found.lower:.4f}"
    return f"at least {found.lower:.4f} for every original table the released data allow"
