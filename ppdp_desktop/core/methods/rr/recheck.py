"""The recipient's own check of a randomized-response release: the attribute-disclosure risk recomputed
from the release itself, never taken from the figure it states.

The risk depends on the original QI x S table, which the release does not hold; it holds the released
table and the published matrices, from which the original table is estimated (each matrix inverted along
its own axis, projected to non-negative counts). The estimate is noisy, so the check allows for that
noise: it redraws the released table from the estimate with the published matrices (a seeded
parametric bootstrap), and refuses the release when the recomputed risk exceeds ``1/l`` by more than the
largest excess seen over the redraws. A release whose matrices do not randomize what they claim (an
identity matrix put in their place) shows the original table's risk, far above the bound, and fails.
"""
from __future__ import annotations

import numpy as np

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.methods.rr.estimate import estimate_tensor, project_to_simplex
from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table
from ppdp_desktop.core.methods.rr.risk import apply_axes, max_risk, rr_matrix

REDRAWS = 40
SEED = 20_261_123  # fixed: the same release always gets the same verdict
TOLERANCE = 1e-9


def recomputed_risk(release: LoadedRelease) -> tuple[float, float, float]:
    """``(risk, margin, bound)``: the risk recomputed from the release, the noise allowance, and ``1/l``."""
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
    columns = [*quasi, sensitive[0]]
    grid = estimate_release_table(release, columns, project=True)
    dims = [grid[c].nunique() for c in columns]
    estimate = grid["estimate"].to_numpy(dtype=float).reshape(dims)
    p = {e["attribute"]: float(e["p"]) for e in meta.get("randomized", [])}
    p_qi, p_s = [p.get(q, 1.0) for q in quasi], p.get(sensitive[0], 1.0)
    risk = max_risk(estimate, p_qi, p_s)
    matrices = [rr_matrix(d, p.get(c, 1.0)) if c in p else None for c, d in zip(columns, dims)]
    n = int(round(estimate.sum()))
    probabilities = apply_axes(estimate / max(estimate.sum(), 1.0), matrices).ravel()
    probabilities = np.clip(probabilities, 0.0, None)
    probabilities /= probabilities.sum() if probabilities.sum() > 0 else 1.0
    rng = np.random.default_rng(SEED)
    excess = 0.0
    for _ in range(REDRAWS):
        observed = rng.multinomial(n, probabilities).reshape(dims).astype(float)
        redrawn = project_to_simplex(estimate_tensor(observed, matrices))
        excess = max(excess, max_risk(redrawn, p_qi, p_s) - risk)
    return risk, excess, bound


def recheck_risk(release: LoadedRelease) -> str:
    """Refuse the release if its recomputed risk exceeds ``1/l`` beyond the estimate's noise; else say so."""
    risk, margin, bound = recomputed_risk(release)
    if not risk - margin <= bound + TOLERANCE:  # NaN fails
        raise PrivacyError(
            f"The attribute-disclosure risk recomputed from the released data and matrices is {risk:.4f}, above "
            f"1/l = {bound:.4f} by more than the estimate's noise ({margin:.4f}): the release does not randomize "
            "what it claims.")
    stated = (release.metadata.get("guarantee") or {}).get("max_risk")
    if stated is not None:
        ok = isinstance(stated, (int, float)) and not isinstance(stated, bool)
        if not (ok and stated <= bound + TOLERANCE and risk - margin <= stated + TOLERANCE):  # NaN fails
            raise PrivacyError(
                f"release.json states a largest attribute-disclosure risk of {stated!r}, but the release itself gives "
                f"{risk:.4f} (noise allowance {margin:.4f}, bound 1/l = {bound:.4f}): the stated figure was altered.")
    return (f"attribute-disclosure risk recomputed from the release: {risk:.4f} (noise allowance {margin:.4f}) "
            f"against 1/l = {bound:.4f}")
