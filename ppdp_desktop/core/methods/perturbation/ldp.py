"""What a retention matrix says in epsilon-local-differential-privacy terms, and what it does not; and the
recipient's check that release.json states exactly that.

A matrix that keeps value ``x`` with probability ``p_x`` and otherwise draws one of the ``m`` values uniformly
is epsilon-LDP with ``epsilon = ln max_y max_{x, x'} P[y][x] / P[y][x']``. When some value is never replaced
(``p_x = 1``, so ``P[y][x] = 0`` for every ``y != x``) that ratio has no finite bound: a released value other than
``x`` proves the person does not hold ``x``. release.json then states ``epsilon_ldp: null`` and, in
``no_ldp_bound``, the sentence of :func:`no_bound_statement`; every face (README, CLI, reports, ``ppdp verify``)
prints that sentence instead of an epsilon.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.errors import PrivacyError

#: how many never-replaced values the sentence names before "and N more"
NAMED = 10


def never_replaced(retention: np.ndarray) -> np.ndarray:
    """Indices of the values kept in every record that holds them (retention 1): with two values or more,
    exactly what makes the matrix's epsilon-LDP unbounded."""
    p = np.asarray(retention, dtype=float)
    return np.flatnonzero(p >= 1.0) if len(p) > 1 else np.zeros(0, dtype=np.int64)


def _names(labels: list[str]) -> str:
    quoted = [repr(v) for v in labels[:NAMED]]
    if len(labels) > NAMED:
        return ", ".join(quoted) + f" and {len(labels) - NAMED:,} more values"
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


def no_bound_statement(values: Sequence[object], retention: np.ndarray) -> str | None:
    """The plain-words statement that no epsilon-LDP bound holds, naming the never-replaced values and what
    anyone who reads a released value learns for certain; ``None`` when the matrix has a finite epsilon."""
    kept = never_replaced(retention)
    if not kept.size:
        return None
    labels = [label_text(values[i]) for i in kept]
    m = len(values)
    if len(kept) == 1:
        what = (f"{_names(labels)} is never replaced (its retention is 1), so anyone who sees a person's released "
                f"value knows for certain that the person does not hold {labels[0]!r} unless {labels[0]!r} is the "
                "value shown")
    else:
        what = (f"{_names(labels)} are never replaced (their retention is 1), so anyone who sees a person's released "
                "value knows for certain that the person holds none of these values other than the one shown")
    if len(kept) == m:
        certain = "; every released value is the person's true value"
    elif len(kept) == m - 1:  # the one value left: whoever shows it cannot hold any other
        other = label_text(values[int(np.setdiff1d(np.arange(m), kept)[0])])
        certain = f"; a released {other!r} is certainly the person's true value"
    else:
        certain = ""
    return ("No epsilon-local differential privacy bound holds (epsilon is not finite): " + what + certain
            + ". The (rho1, rho2) bound of each protected value still holds.")


def epsilon_json(epsilon: float) -> float | None:
    """The epsilon release.json stores: the number, or ``null`` where none is finite (JSON has no infinity)."""
    return float(epsilon) if math.isfinite(epsilon) else None


def epsilon_sentence(guarantee: dict, fallback: str = "") -> str:
    """The guarantee's epsilon-LDP line as README and reports print it: the equivalent epsilon, or the
    ``no_ldp_bound`` statement; ``fallback`` when it states neither."""
    stated = guarantee.get("epsilon_ldp")
    if isinstance(stated, (int, float)) and math.isfinite(stated):
        return f"Equivalent to epsilon-local differential privacy with epsilon = {float(stated):.3f}."
    return str(guarantee.get("no_ldp_bound") or fallback)


def check_stated_epsilon(guarantee: dict, attribute: str, epsilon: float, source: str) -> None:
    """The epsilon-LDP release.json states (if any) must be the one its matrices give; else it was altered."""
    stated = guarantee.get("epsilon_ldp")
    if stated is None:  # not stated (older releases), or null where no finite epsilon holds (checked by its caller)
        if "epsilon_ldp" in guarantee and np.isfinite(epsilon):
            raise PrivacyError(f"release.json states no epsilon-LDP for {attribute!r}, but {source} {epsilon:.6g}: "
                               "the release was altered.")
        return
    if not (isinstance(stated, (int, float)) and np.isfinite(epsilon)
            and abs(float(stated) - epsilon) <= 1e-9 * max(epsilon, 1.0)):  # NaN and a finite claim on none fail
        shown = f"{epsilon:.6g}" if np.isfinite(epsilon) else "no finite epsilon"
        raise PrivacyError(f"release.json states epsilon-LDP {stated!r} for {attribute!r}, but {source} "
                           f"{shown}: the release was altered.")


def check_no_bound(entry: dict, values: list, retention: np.ndarray, epsilon: float) -> str | None:
    """Where the matrix has no finite epsilon, release.json must state ``epsilon_ldp: null`` and the statement
    the app writes for these retentions (README and reports print it); where it has one, no such statement.
    Returns the statement (``None`` for a finite epsilon); anything else is refused as altered."""
    guarantee = entry["guarantee"]
    expected = no_bound_statement(values, retention)
    if (expected is None) != bool(np.isfinite(epsilon)):
        raise PrivacyError(f"The matrix of {entry['attribute']!r} and its retentions disagree on whether a value is "
                           "never replaced.")
    stated = guarantee.get("no_ldp_bound")
    if expected is None:
        if stated is not None:
            raise PrivacyError(f"release.json says no epsilon-LDP bound holds for {entry['attribute']!r}, but its "
                               f"matrix gives {epsilon:.6g}: the release was altered.")
        return None
    if "epsilon_ldp" in guarantee and guarantee["epsilon_ldp"] is not None or stated not in (None, expected):
        raise PrivacyError(f"release.json states an epsilon-LDP bound for {entry['attribute']!r} that its matrix does "
                           "not have (a value is never replaced): the release was altered.")
    return expected
