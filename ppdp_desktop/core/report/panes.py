"""The plain sentence that opens the report's Privacy and Utility panes (the window's "Privacy and utility" tab):
what the figures below it mean for the person reading them, before rho1, rho2, gamma, epsilon, KL or the
aggregate utility appear. Computed from the report's own figures (Qt-free; the window shows them).
"""
from __future__ import annotations

import math

import numpy as np

from ppdp_desktop.core.evaluation.report_model import MethodReport, percent
from ppdp_desktop.core.report.summary import good_for
from ppdp_desktop.core.report.values import bounds

PLAIN = "In plain words: "


def privacy_plain(r: MethodReport, sensitive: str = "") -> str:
    """One sentence on what the privacy figures promise about a person's sensitive value (``sensitive``: its
    column), by the kind of guarantee; the figures themselves follow it."""
    what = sensitive or "sensitive"
    g = r.guarantee
    if not r.has_guarantee:
        return (f"{PLAIN}this method does not promise that a person's {what} value stays secret (the line below says "
                "why); the figures after it say whether a person's record can be picked out.")
    if not g.get("verified"):
        return f"{PLAIN}the check of this release's promise failed, so do not publish it."
    kind = r.kind
    if kind.startswith("upward"):
        return PLAIN + _upward(r, what)
    if kind.startswith("attribute disclosure") and g.get("l"):
        l = float(g["l"])
        return (f"{PLAIN}the chance that the attacker described below recovers a person's {what} value is at most "
                f"1/l = {percent(1.0 / l)}; guessing the most common value of a group of people is not limited by it.")
    if kind.startswith("epsilon") and g.get("epsilon") is not None:
        return (f"{PLAIN}epsilon = {float(g['epsilon']):g} limits how much the protected columns' released values can "
                "change when any one person's record is replaced by another's (the smaller, the less they reveal "
                "about anyone); the lines below say what this covers and what it does not.")
    return (f"{PLAIN}the first line says what this release promises about a person's {what} value and whether that was "
            "checked before the release was written; the lines after it give its figures.")


def _upward(r: MethodReport, what: str) -> str:
    """rho1 and rho2 as how sure someone may be before and after reading the release, with this release's bounds."""
    rho1, rho2 = bounds(r)
    protected = np.isfinite(rho1) & np.isfinite(rho2)
    if protected.any():
        out = (f"someone who was at most {_range(rho1[protected])} sure that a given person has a protected {what} "
               f"value cannot become more than {_range(rho2[protected])} sure by reading the release (these limits "
               "are rho1 and rho2 below)")
    else:
        out = (f"rho1 below is how sure someone may be of a person's {what} value before reading the release, and rho2 "
               "the surest they can become after reading it")
    named = [name for name, shown in (("gamma", "gamma" in r.kind), ("epsilon", r.epsilon_ldp is not None)) if shown]
    if named:
        out += (f"; {' and '.join(named)} {'are other measures' if len(named) > 1 else 'is another measure'} of the "
                "same protection: the smaller, the stronger")
    return out + "."


def _range(values: np.ndarray) -> str:
    lo, hi = float(values.min()), float(values.max())
    return _share(lo) if math.isclose(lo, hi) else f"{_share(lo)} to {_share(hi)} (depending on the value)"


def _share(share: float) -> str:
    """:func:`percent`, with two significant digits below 0.1 % ("0.03 %", where "at most < 0.1 %" would not read)."""
    return f"{share * 100:.2g} %" if 0 < share < 0.001 else percent(share)


def utility_plain(r: MethodReport, sensitive: str = "") -> str:
    """One sentence on what the release keeps, from the utility figures that follow it (record utility and the
    reconstruction error where the method has them, else the first thing the release is good for)."""
    what = sensitive or "sensitive"
    u = r.utility
    if u is not None and r.record_utility is not None:
        kept = f"about {percent(float(r.record_utility))} of the records show their true {what} value"
        off = (f", and a value's count estimated from the release is off by {percent(float(u.reconstruction_error))} "
               "on average" if np.isfinite(u.reconstruction_error) else "")
        return (f"{PLAIN}{kept}{off} (the record utility and the reconstruction error below); the aggregate utility "
                "(1 when every estimated count is exact, the lower the further they are off, even below 0) and the "
                "three distances (0 when exact) compare all the estimated counts with the true ones at once.")
    return PLAIN + good_for(r, sensitive)[0]
