"""``README.txt`` for the recipient of a release: what was done, what it guarantees, how to use it."""
from __future__ import annotations

import math
import textwrap
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

DP_MICROAGG = """\
What was done
  Differential privacy by individual-ranking microaggregation (epsilon = {epsilon:g}, k = {k}).
  Each of the columns {names} was handled on its own: the records were sorted by it and cut
  into clusters of {k} neighbouring records (the last cluster up to {k2}); every record of a cluster
  got the cluster's centre plus ONE random shift shared by the whole cluster (numbers: Laplace noise,
  then kept inside the published range and rounded for whole-number columns) or ONE randomly chosen
  label of the column's taxonomy (categories). The other columns are unchanged, identifier columns
  were removed and rows are in random order.
{details}
What it guarantees
  epsilon-differential privacy with epsilon = {epsilon:g} for the protected columns: adding, removing
  or changing any one person's record changes the chance of seeing this release by at most a factor
  e^epsilon = {factor:.3g}. The budget is split evenly ({share:g} per column; sequential composition).
  Columns that were not protected are published as they are and are not covered.
{not_covered}
How to use it
  Analyse the values as they are: they are noisy cluster centres, so means and distributions hold
  approximately over many records, while single records are unreliable by design. Check the
  release (checksums, scales, ranges) with:  ppdp verify THIS_FOLDER
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
    if metadata.get("method") == "dp-microagg":
        text += _dp_text(metadata)
    for entry in metadata.get("recoded", []):
        graded = metadata.get("graded", [])
        extra = (" Numeric columns " + ", ".join(repr(g["attribute"]) for g in graded)
                 + " are shown as category + position within secret bounds (order kept).") if graded else ""
        text += PERSONALIZED.format(attribute=entry["attribute"], graded=extra)
    return text


def _dp_text(metadata: dict[str, Any]) -> str:
    """The dp-microagg part: what was done, per-column scales, the guarantee and what it leaves out."""
    params = metadata.get("parameters", {})
    epsilon, k = float(params.get("epsilon", float("nan"))), int(params.get("k", 0))
    protected = metadata.get("protected", [])
    details = []
    for e in protected:
        d = e.get("domain")
        if d:
            details.append(f"  {e.get('attribute')}: range {d.get('lo')} to {d.get('hi')}, Laplace scale "
                           f"{e.get('laplace_scale', float('nan')):.4g} per cluster (M*Delta/(k*epsilon)).")
        else:
            details.append(f"  {e.get('attribute')}: a label of the taxonomy in release.json, drawn once per cluster.")
    caveats = metadata.get("guarantee", {}).get("not_covered") or []
    not_covered = "".join(textwrap.fill(str(c), 100, initial_indent="  Not covered / warning: ",
                                        subsequent_indent="    ") + "\n" for c in caveats)

    return DP_MICROAGG.format(
        epsilon=epsilon, k=k, k2=2 * k - 1, names=", ".join(repr(e.get("attribute")) for e in protected),
        details="\n".join(details) + "\n" if details else "", factor=math.exp(epsilon) if epsilon < 700 else float("inf"),
        share=epsilon / max(len(protected), 1), not_covered=not_covered,
    )
