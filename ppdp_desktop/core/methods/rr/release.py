"""Randomized response's part of a release: the recipient's check (each randomized column's matrix, then the
risk recomputed from the release as a test, rr/recheck.py), the custodian's exact check against the plan before
publishing, and the recipient's README section."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.methods.rr import claims
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy.plausibility import check_counts_plausible

if TYPE_CHECKING:
    from ppdp_desktop.core.methods.rr.method import RRPlan


def verify_rr_release(release: LoadedRelease) -> list[str]:
    """The recipient's check: each randomized column's matrix is the published RR matrix and its counts are
    possible under it, the bound is marked verified, and the risk recomputed from the release does not show the
    bound broken (a test that refuses a genuine release with probability at most 1 in 10,000, rr/recheck.py)."""
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


def verify_against_plan(release: LoadedRelease, plan: RRPlan) -> list[str]:
    """The custodian's check of the release about to be published, exact: it holds the original table.

    The written release must randomize exactly what the plan randomizes (the same attributes, values, ``p``'s and
    matrices), state the plan's parameters and bound, name the plan's quasi-identifiers and sensitive column, and
    hold only published values; the largest risk is recomputed from the original QI x S table under those
    matrices. Nothing here is estimated, so a genuine release is never refused (the recipient's check,
    :func:`verify_rr_release`, is a test with a false-refusal rate of 1 in 10,000 instead).
    """
    meta = release.metadata
    expected = plan.release_json()  # recomputes the risk from the original table (plan.verify, fail closed)
    written = meta.get("randomized")
    if not isinstance(written, list) or len(written) != len(expected["randomized"]):
        raise PrivacyError("release.json does not list the randomized attributes of the plan.")
    lines = []
    for entry, want in zip(written, expected["randomized"]):
        same = (isinstance(entry, dict) and entry.get("attribute") == want["attribute"]
                and entry.get("role") == want["role"] and entry.get("values") == want["values"]
                and entry.get("p") == want["p"]
                and np.array_equal(np.asarray(entry.get("matrix"), dtype=float), np.asarray(want["matrix"])))
        if not same:
            raise PrivacyError(f"release.json's entry for {want['attribute']!r} is not the plan's (p = {want['p']:g}).")
        release.codes(entry)  # every released value is in the published domain
        lines.append(f"{want['attribute']}: randomized with p = {want['p']:.4f} over {len(want['values'])} values, "
                     "as planned")
    roles = {name: (a or {}).get("role") for name, a in (meta.get("attributes") or {}).items()}
    quasi = [n for n, r in roles.items() if r == "quasi-identifier"]
    sensitive = [n for n, r in roles.items() if r == "sensitive"]
    if sorted(quasi) != sorted(d.attribute for d in plan.qi) or sensitive != [plan.sensitive.attribute]:
        raise PrivacyError("release.json's quasi-identifiers or sensitive column are not the plan's.")
    if meta.get("parameters") != expected["parameters"]:
        raise PrivacyError("release.json's parameters are not the plan's.")
    stated, guarantee = meta.get("guarantee") or {}, expected["guarantee"]
    if any(stated.get(k) != guarantee[k] for k in ("kind", "l", "max_risk", "verified")):
        raise PrivacyError("release.json's guarantee is not the one computed from the original table.")
    lines.append(f"attribute-disclosure risk of the original table under these matrices (exact, the custodian's "
                 f"check): {guarantee['max_risk']:.4f} <= 1/l = {1.0 / guarantee['l']:.4f}")
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
    sensitive = next((name for name, a in (metadata.get("attributes") or {}).items()
                      if (a or {}).get("role") == "sensitive"), "sensitive value")
    promise = claims.statement(float(guarantee.get("l", 1) or 1), float(guarantee.get("max_risk", float("nan"))),
                               sensitive)
    return (
        f"What was done\n  {what}{kept}\n\n"
        f"What it guarantees, and against whom\n{_wrap(promise)}\n\n"
        "How to estimate counts\n  Apply the inverse of each randomized attribute's matrix along its own axis of the\n"
        "  observed contingency table (counts over the randomized columns).\n"
    )


def _wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, width=110, initial_indent="  ", subsequent_indent="  ")


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


