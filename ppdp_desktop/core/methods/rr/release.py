"""Randomized response's part of a release: each randomized column's matrix re-checked, the bound
restated, and the recipient's README section."""
from __future__ import annotations

from typing import Any

import numpy as np

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy.plausibility import check_counts_plausible


def verify_rr_release(release: LoadedRelease) -> list[str]:
    """Each randomized column's matrix is the published RR matrix; the bound is marked verified."""
    meta = release.metadata
    if "randomized" not in meta:
        raise ReleaseError("release.json lists no randomized attribute for a randomized-response release.")
    lines = [verify_randomized(release, entry) for entry in meta.get("randomized", [])]
    guarantee = meta.get("guarantee", {})
    if not guarantee.get("verified"):
        raise PrivacyError("release.json does not mark the attribute-disclosure bound as verified.")
    from ppdp_desktop.core.methods.rr.recheck import recheck_risk

    lines.append(recheck_risk(release))  # recomputed here, never taken from the stated figure
    return lines


def readme_text(metadata: dict[str, Any]) -> str:
    guarantee = metadata.get("guarantee", {})
    entries = metadata.get("randomized", [])
    changed = [e["attribute"] for e in entries if float(e.get("p", 1.0)) < 1.0]
    unchanged = [name for name, a in (metadata.get("attributes") or {}).items()
                 if (a or {}).get("role") != "identifier" and name not in changed]
    if changed:
        what = (f"Randomized response: {', '.join(repr(c) for c in changed)} "
                f"{'was' if len(changed) == 1 else 'were'} randomized; each keeps its value with probability p\n"
                "  (listed in release.json) and otherwise takes another of its values uniformly.")
    else:
        what = "Nothing was randomized: the table was already within the bound."
    kept = f"\n  Released unchanged: {', '.join(repr(c) for c in unchanged)}." if unchanged else ""
    return (
        f"What was done\n  {what}{kept}\n\n"
        f"What it guarantees\n  Someone who knows a person's quasi-identifiers guesses their sensitive value with\n"
        f"  probability at most 1/l = {1 / guarantee.get('l', 1):.4f} (largest risk in this release "
        f"{guarantee.get('max_risk', float('nan')):.4f}).\n\n"
        "How to estimate counts\n  Apply the inverse of each randomized attribute's matrix along its own axis of the\n"
        "  observed contingency table (counts over the randomized columns).\n"
    )


def verify_randomized(release: LoadedRelease, entry: dict) -> str:
    """A randomized attribute's matrix is the published RR matrix and its values are in the domain."""
    try:
        values, p, matrix = entry["values"], float(entry["p"]), np.asarray(entry["matrix"], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the randomized attribute {entry.get('attribute')!r} is malformed ({exc}).") from exc
    d = len(values)
    expected = np.full((d, d), (1.0 - p) / (d - 1)) if d > 1 else np.ones((1, 1))
    np.fill_diagonal(expected, p)
    privacy.check_operator(matrix, entry["attribute"])
    if matrix.shape != (d, d) or not np.allclose(matrix, expected, atol=1e-12) or not (1.0 / d <= p <= 1.0):
        raise PrivacyError(f"The matrix of {entry['attribute']!r} is not the randomized-response matrix of p = {p:g}.")
    codes = release.codes(entry)  # every released value is in the published domain
    check_counts_plausible(np.bincount(codes, minlength=d), matrix, values, entry["attribute"])
    return f"{entry['attribute']}: randomized with p = {p:.4f} over {d} values"


