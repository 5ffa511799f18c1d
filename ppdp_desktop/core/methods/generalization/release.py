"""The generalization-only release's own parts of ``ppdp verify`` and README.txt.

The k-anonymity and the criteria are re-checked for every method by the release's common checks
(:mod:`ppdp_desktop.core.release.criteria_verify`); this part checks what the method itself states: nothing
randomized, and a generalization to check.
"""
from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.errors import ReleaseError

#: README's line width (as the common sections')
WIDTH = 100

if TYPE_CHECKING:
    from ppdp_desktop.core.data.released import LoadedRelease


def verify_generalized(release: LoadedRelease) -> list[str]:
    """A generalization-only release states its sensitive column (or none) and a generalization whose criteria the
    common checks re-check on the released text; anything else is a :class:`ReleaseError`."""
    meta = release.metadata
    entry = meta.get("generalization_only")
    if not isinstance(entry, dict) or entry.get("sensitive_released_as_is") is not True:
        raise ReleaseError("release.json of a generalization-only release has no valid 'generalization_only' entry.")
    risk = meta.get("reidentification")
    generalization = risk.get("generalization") if isinstance(risk, dict) else None
    if not isinstance(generalization, dict):
        raise ReleaseError("release.json of a generalization-only release states no generalization to check.")
    if generalization.get("criteria") and generalization.get("criteria_checked_on") != "released":
        raise ReleaseError("release.json of a generalization-only release must state its criteria as checked on the "
                           "released values.")
    sensitive = entry.get("sensitive")
    if sensitive is not None and sensitive not in release.table.columns:
        raise ReleaseError(f"release.json names the sensitive column {sensitive!r}, which is not in the data.")
    kept = f"{sensitive!r} released unchanged" if sensitive else "no sensitive column"
    return [f"generalization only: nothing randomized; {kept}"]


def readme_text(metadata: dict[str, Any]) -> str:
    """What the recipient should know of a generalization-only release."""
    entry = metadata.get("generalization_only") or {}
    sensitive = entry.get("sensitive") if isinstance(entry, dict) else None
    kept = (f"The sensitive column {sensitive!r} is released unchanged: a group's values of it are the true values "
            "of its records, limited only by the criteria listed above." if sensitive else "")
    said = ("Nothing was randomized: every value in the data is an original value or its generalization (or '*' for a "
            f"suppressed record). {kept}")
    use = "Analyse the generalized columns at the level released; the counts are exact."
    return "Generalization only\n" + textwrap.fill(said, WIDTH, initial_indent="  ", subsequent_indent="  ") + "\n" + \
        textwrap.fill(use, WIDTH, initial_indent="  ", subsequent_indent="  ") + "\n\n"
