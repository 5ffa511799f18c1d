"""``ppdp verify``'s re-check of the privacy criteria a release states beyond k (issue 33), on the released text.

release.json's generalization entry records the criteria (``criteria``), the sensitive column they read
(``sensitive``), where they were checked (``criteria_checked_on``: ``released`` when the sensitive column is written
unchanged, ``original`` when a randomization method replaced it) and, for hierarchical t-closeness, the sensitive
column's label chains. Every criterion is re-checked with the independent
:func:`~ppdp_desktop.core.generalization.check_criteria`: all of them on a release whose sensitive column is the
original one; on a randomized one, those that do not read it (group size, prosecutor risks), and verify says the
others were checked on the true values before writing, which the release cannot show.
"""
from __future__ import annotations

from dataclasses import replace

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError, PrivacyError, ReleaseError
from ppdp_desktop.core.generalization import Criteria, check_criteria


def verify_criteria(release: LoadedRelease) -> list[str]:
    """One line per check passed; a :class:`PrivacyError` naming a failing group and criterion otherwise."""
    risk = release.metadata.get("reidentification")
    if not isinstance(risk, dict):
        return []
    generalization = risk.get("generalization")
    if not isinstance(generalization, dict) or not generalization.get("criteria"):
        return []
    try:
        criteria = Criteria.from_json(dict(generalization["criteria"]))
        quasi = [str(c) for c in risk["quasi_identifiers"]]
        limit = float(generalization["suppression_limit"])
        sensitive = generalization.get("sensitive")
        on_released = generalization.get("criteria_checked_on", "released") == "released"
        chains = generalization.get("sensitive_chains")
    except (KeyError, TypeError, ValueError, PPDPError) as exc:
        raise ReleaseError(f"release.json: the criteria of the generalization are malformed ({exc}).") from None
    missing = [c for c in [*quasi, *([sensitive] if sensitive and on_released else [])] if c not in release.table.columns]
    if missing:
        raise ReleaseError(f"release.json names column {missing[0]!r} in the criteria, which is not in the data.")
    words = criteria.lines(sensitive if isinstance(sensitive, str) else None)
    checked = criteria
    if criteria.needs_sensitive and not on_released:
        checked = replace(criteria, distinct_l=None, entropy_l=None, recursive_c=None, recursive_l=None, t=None)
    column = sensitive if checked.needs_sensitive else None
    table = release.table[[*quasi, *([column] if column else [])]]
    ok, _, problems = check_criteria(table, quasi, column, checked, limit, chains if isinstance(chains, dict) else None)
    if not ok:
        raise PrivacyError(f"The release does not meet the criteria release.json states: {' '.join(problems)}")
    shown = checked.lines(column)
    out = [f"criteria: {line}" for line in shown[1:]]
    if checked is not criteria:
        others = " ".join(line for line in words[1:] if line not in shown)
        out.append(f"criteria on {sensitive!r} ({others}) were checked on the original values before writing; the "
                   "released values are randomized, so the release cannot show them")
    return out
