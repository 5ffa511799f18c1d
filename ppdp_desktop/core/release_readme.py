"""``README.txt`` for the recipient of a release: what was done, what it guarantees, how to use it."""
from __future__ import annotations

from typing import Any

PERTURBATION = """\
What was done
  The column {attribute!r} was randomized: each record kept its value with a probability set per
  value (listed as "retention" in release.json) and otherwise received a value drawn uniformly from
  the column's values. Every other column is unchanged, except that identifier columns were removed
  and rows are in random order.

What it guarantees
  Upward (rho1, rho2)-privacy for each value listed with a pair in release.json: whatever released
  value you see, your belief that a record really holds such a value cannot rise above its rho2 if it
  was at most rho1 before. Equivalent to epsilon-local differential privacy with epsilon = {epsilon:.3f}.
  It does not rule out "downward" inferences (belief in a common value falling).
{breaches}
How to estimate counts
  For the records matching any condition on the unchanged columns, count each released value of
  {attribute!r} (vector o) and solve  matrix @ f = o  with the matrix of release.json
  (matrix[j][i] = Pr[value i released as value j]); f estimates the original counts without bias.
  With PPDP Desktop:  ppdp estimate THIS_FOLDER --sensitive {attribute} --where "col=value"
  (95 % intervals included; --mle for estimates that stay non-negative).
"""

PERSONALIZED = """\
What was done
  Personalized recoding: each record of {attribute!r} shows its actual value, a generalized value or
  a meaningless code, as chosen for that record.{graded} Identifier columns were replaced by random
  pseudonyms and rows are in random order.

What it guarantees
  No formal privacy guarantee. It protects only as far as the meaning of the codes and the category
  bounds stay secret; they are kept by the data custodian in a separate sealed key file.

How to use it
  Analyse the table as it is. To have codes, graded values or pseudonyms in your results decoded,
  send the results file to the data custodian (ppdp lookup).
"""

COMMON = """\
PPDP Desktop release
====================
Created {created} by {app}; {n_records:,} records; method: {method}.

Files
  {data_file}   the released data ({format})
  release.json  how it was made: roles, parameters, matrices, the verified guarantee
  report.html / report.pdf   the utility and privacy report
  SHA256SUMS    checksums of every file; check with:  ppdp verify THIS_FOLDER
                (or: sha256sum -c SHA256SUMS)

"""


def recipient_readme(metadata: dict[str, Any]) -> str:
    """The README text for ``metadata`` (the content of release.json)."""
    text = COMMON.format(
        created=metadata.get("created", ""), app=metadata.get("app", "PPDP Desktop"),
        n_records=metadata.get("n_records", 0), method=metadata.get("method", ""),
        data_file=metadata.get("data_file", ""), format=metadata.get("format", "csv"),
    )
    for entry in metadata.get("sensitive", []):
        guarantee = entry.get("guarantee", {})
        breaches = guarantee.get("downward_breaches") or []
        note = f"  Downward breaches were reported for: {', '.join(map(str, breaches))}.\n" if breaches else ""
        text += PERTURBATION.format(attribute=entry["attribute"], epsilon=guarantee.get("epsilon_ldp", float("nan")),
                                    breaches=note)
    if "randomized" in metadata:
        guarantee = metadata.get("guarantee", {})
        names = ", ".join(repr(e["attribute"]) for e in metadata["randomized"]) or "no column (already within the bound)"
        text += (
            f"What was done\n  Randomized response: {names} were randomized; each keeps its value with probability p\n"
            "  (listed in release.json) and otherwise takes another of its values uniformly.\n\n"
            f"What it guarantees\n  Someone who knows a person's quasi-identifiers guesses their sensitive value with\n"
            f"  probability at most 1/l = {1 / guarantee.get('l', 1):.4f} (largest risk in this release "
            f"{guarantee.get('max_risk', float('nan')):.4f}).\n\n"
            "How to estimate counts\n  Apply the inverse of each randomized attribute's matrix along its own axis of the\n"
            "  observed contingency table (counts over the randomized columns).\n"
        )
    for entry in metadata.get("recoded", []):
        graded = metadata.get("graded", [])
        extra = (" Numeric columns " + ", ".join(repr(g["attribute"]) for g in graded)
                 + " are shown as category + position within secret bounds (order kept).") if graded else ""
        text += PERSONALIZED.format(attribute=entry["attribute"], graded=extra)
    return text
