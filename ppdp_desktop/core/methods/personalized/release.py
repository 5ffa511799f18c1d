"""Personalized recoding's part of a release: the recipient's README section and the structure check
(no formal guarantee is claimed)."""
from __future__ import annotations

from typing import Any

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import ReleaseError

PERSONALIZED = """\
What was done
  Personalized recoding: each record of {attribute!r} shows its actual value, a generalized value or
  a meaningless code, as chosen for that record.{graded} What was done to every other column is
  listed above.

What it guarantees
  No formal privacy guarantee. It protects only as far as the meaning of the codes and the category
  bounds stay secret; they are kept by the data custodian in a separate sealed key file.

How to use it
  Analyse the table as it is. To have codes, graded values or pseudonyms in your results decoded,
  send the results file to the data custodian (ppdp lookup).
"""



def readme_text(metadata: dict[str, Any]) -> str:
    text = ""
    for entry in metadata.get("recoded", []):
        graded = metadata.get("graded", [])
        extra = (" Numeric columns " + ", ".join(repr(g["attribute"]) for g in graded)
                 + " are shown as category + position within secret bounds (order kept).") if graded else ""
        text += PERSONALIZED.format(attribute=entry["attribute"], graded=extra)
    return text


def verify_personalized_release(release: LoadedRelease) -> list[str]:
    """A release without a formal guarantee must say so (and claim no perturbed attribute)."""
    meta = release.metadata
    if meta.get("sensitive") or meta.get("guarantee", {}).get("kind") != "none":
        raise ReleaseError("release.json lists no perturbed attribute and no guarantee statement.")
    recoded = [str(e.get("attribute")) for e in meta.get("recoded") or []]
    graded = [str(g.get("attribute")) for g in meta.get("graded") or [] if isinstance(g, dict)]
    if not recoded:
        raise ReleaseError("release.json names no recoded attribute for a personalized-recoding release.")
    missing = [c for c in recoded + graded if c not in release.table.columns]
    if missing:
        raise ReleaseError(f"release.json says {missing[0]!r} was recoded, but the data has no such column.")
    return ["no formal guarantee is claimed (personalized recoding); structure checked"]
