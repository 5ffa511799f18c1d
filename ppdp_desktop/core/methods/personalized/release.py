"""Personalized recoding's part of a release: the recipient's README section and the structure check
(no formal guarantee is claimed)."""
from __future__ import annotations

import textwrap
from typing import Any

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import ReleaseError

PERSONALIZED = """\
What was done
{done}

What it guarantees
  No formal privacy guarantee. It protects only as far as the meaning of the codes and the category
  bounds stay secret; they are kept by the data custodian in a separate sealed key file. They can be
  worked out without it: a code is as frequent as its value among the records shown as codes, so
  someone who knows roughly how common each value is can often match codes to values, and graded
  positions keep the spacing of the values, so someone who knows a few actual values can work out
  the bounds.

How to use it
  Analyse the table as it is. To have codes, graded values or pseudonyms in your results decoded,
  send the results file to the data custodian (ppdp lookup).
"""



def readme_text(metadata: dict[str, Any]) -> str:
    """The section of each recoded column (one section when only numeric columns were graded)."""
    graded = metadata.get("graded", [])
    extra = (" Numeric columns " + ", ".join(repr(g["attribute"]) for g in graded)
             + " are shown as category + position within secret bounds (order kept).") if graded else ""
    done = [f"Personalized recoding: each record of {e['attribute']!r} shows its actual value, a generalized value "
            "or a meaningless code, as chosen for that record." for e in metadata.get("recoded", [])]
    text = ""
    for d in done or ([""] if graded else []):
        said = f"{d}{extra} What was done to every other column is listed above.".strip()
        text += PERSONALIZED.format(done=textwrap.fill(said, 100, initial_indent="  ", subsequent_indent="  "))
    return text


def verify_personalized_release(release: LoadedRelease) -> list[str]:
    """A release without a formal guarantee must say so (and claim no perturbed attribute)."""
    meta = release.metadata
    if meta.get("sensitive") or meta.get("guarantee", {}).get("kind") != "none":
        raise ReleaseError("release.json lists no perturbed attribute and no guarantee statement.")
    recoded = [str(e.get("attribute")) for e in meta.get("recoded") or []]
    graded = [str(g.get("attribute")) for g in meta.get("graded") or [] if isinstance(g, dict)]
    if not recoded and not graded:  # a numeric sensitive column may be graded alone
        raise ReleaseError("release.json names no recoded or graded attribute for a personalized-recoding release.")
    missing = [c for c in recoded + graded if c not in release.table.columns]
    if missing:
        raise ReleaseError(f"release.json says {missing[0]!r} was recoded, but the data has no such column.")
    return ["no formal guarantee is claimed (personalized recoding); structure checked"]
