"""Perturbation partitioning's part of a release: every sub-table re-verified from its published retention, and
the release's sub-tables read back as one block-diagonal matrix (for ``ppdp estimate`` and the reports)."""
from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import _indexer, label_text
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.methods.partition.blocks import SubtableBlocks
from ppdp_desktop.core.methods.partition.subtables import gamma_of
from ppdp_desktop.core.methods.perturbation.disclosure import check_parameters_statement, partition_statement
from ppdp_desktop.core.methods.perturbation.ldp import check_stated_epsilon
from ppdp_desktop.core.methods.perturbation.plan import MATRIX_FORM
from ppdp_desktop.core.methods.perturbation.release import README_WIDTH, published_column, verify_perturbed
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy.plausibility import check_counts_plausible
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement
from ppdp_desktop.core.privacy.structured import RetentionMatrix
from ppdp_desktop.core.shell_words import shell_option

PARTITIONED = """\
What was done
  The records were split into {tables} (column {column!r} holds each record's sub-table), each
  holding only a few of the values of {attribute!r}. Within its sub-table, each record kept its value with
  the sub-table's probability ("retention" in release.json) and otherwise received one of that sub-table's
  values drawn uniformly. What was done to every other column is listed above.

What it guarantees
  Upward (rho1, rho2)-privacy within every sub-table (rho2 = {rho2:g}): whatever released value you see,
  your belief that a record holds a protected value cannot rise above rho2 if it was at most the sub-table's
  rho1 before.
{epsilon}
  Not covered: downward inferences (belief in a common value falling), and a record's sub-table tells which
  few values it can hold.
{parameters}
How to estimate counts
  Each sub-table s lists its m_s values and its retention p_s; within it,
  Pr[value i released as value j] = P_s[j][i] = p_s [j = i] + (1 - p_s) / m_s.
  For the records matching a condition, count each released value per sub-table (vector o_s), solve
  P_s @ f_s = o_s in each, and add the f_s of the same value: unbiased estimates of the original counts.
  With PPDP Desktop:  ppdp estimate THIS_FOLDER {sensitive_option} --where "col=value"
  (95 % intervals included; non-negative maximum-likelihood estimates by default).
"""


#: what a partitioned column's epsilon-LDP covers, printed after the number wherever it is stated (release.json's
#: ``guarantee.epsilon_ldp_scope``, with two or more sub-tables): the sub-table column is released with the value
EPSILON_SCOPE = ("within each sub-table only (each record's sub-table is published and tells which few values it can "
                 "hold, so for the column as a whole no epsilon-local differential privacy bound holds)")


#: what an earlier version's release.json states as ``guarantee.not_covered`` (downward breaches and the sub-table
#: number): still true, and verified, but it leaves out what the sub-tables' parameters reveal
SUBTABLE_CAVEAT = ("Not covered: downward breaches (belief in a common value falling), and a record's sub-table id "
                   "reveals that its value is one of that sub-table's values.")

#: release.json's ``guarantee.not_covered`` of a partitioned column: the sub-table number, and what the published
#: parameters reveal about the counts (:func:`~ppdp_desktop.core.methods.perturbation.disclosure.partition_statement`)
NOT_COVERED = f"{SUBTABLE_CAVEAT} {partition_statement()}"


def partition_readme(metadata: dict) -> str:
    """The recipient's README section of each partitioned column (a perturbed one keeps the family's)."""
    from ppdp_desktop.core.methods.perturbation.release import readme_text

    text = ""
    for entry in metadata.get("sensitive", []):
        if not entry.get("subtables"):
            text += readme_text({**metadata, "sensitive": [entry]})
            continue
        guarantee = entry.get("guarantee", {})
        count = len(entry["subtables"])
        option = shell_option("--sensitive", str(entry["attribute"]))  # a command line to copy: quoted for a shell
        text += PARTITIONED.format(tables=f"{count:,} sub-table{'' if count == 1 else 's'}", column=entry.get("subtable_column"),
                                   attribute=entry["attribute"], sensitive_option=option,
                                   rho2=float(guarantee.get("rho2", float("nan"))),
                                   epsilon=_wrapped(_epsilon_sentence(guarantee)),
                                   parameters=_wrapped(partition_statement()))  # said for an older release too
    return text


def _wrapped(sentence: str) -> str:
    return textwrap.fill(sentence, README_WIDTH, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)


def _epsilon_sentence(guarantee: dict) -> str:
    """The README's epsilon line: the largest over the sub-tables, or (none finite) the statement saying why."""
    stated = guarantee.get("epsilon_ldp")
    if isinstance(stated, (int, float)) and np.isfinite(stated):
        scope = guarantee.get("epsilon_ldp_scope")
        return (f"Largest epsilon-local differential privacy equivalent: {float(stated):.3f}"
                + (f" {scope}" if isinstance(scope, str) else "") + ".")
    return str(guarantee.get("no_ldp_bound") or "No epsilon-local differential privacy equivalent is stated.")


def subtables_statement(ids: list[str]) -> str:
    """Why no epsilon-LDP bound holds when sub-tables keep every record's value (retention 1, two values or more)."""
    named = ", ".join(ids[:10]) + (f" and {len(ids) - 10:,} more" if len(ids) > 10 else "")
    one = len(ids) == 1
    return ("No epsilon-local differential privacy bound holds (epsilon is not finite): sub-table"
            f"{'' if one else 's'} {named} keep{'s' if one else ''} every record's value (retention 1), so anyone who "
            f"sees the released value of a record in {'it' if one else 'one of them'} knows for certain that it is "
            "the person's true value.")


def verify_partition_release(release: LoadedRelease) -> list[str]:
    """Every perturbed column re-verified, sub-table by sub-table where it was partitioned."""
    entries = release.metadata.get("sensitive") or []
    if not entries:
        raise ReleaseError("release.json lists no perturbed attribute and no guarantee statement.")
    return [verify_subtables(release, e) if e.get("subtables") else verify_perturbed(release, e) for e in entries]


def published_blocks(release: LoadedRelease, entry: dict) -> tuple[SubtableBlocks, np.ndarray]:
    """The sub-tables ``entry`` publishes as :class:`SubtableBlocks`, and each record's sub-table (its index in
    the list). Refuses ids or values listed twice, values outside the domain, a retention that is not a
    probability, and (format 1) a dense matrix other than the one the retention gives."""
    attribute = entry.get("attribute")
    try:
        subtables = list(entry["subtables"])
        full = pd.Index([label_text(v) for v in entry["values"]])
        published = [str(sub["id"]) for sub in subtables]
        retention = np.array([float(sub["retention"]) for sub in subtables], dtype=float)
        listed = [[label_text(v) for v in sub["values"]] for sub in subtables]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the sub-tables of {attribute!r} are malformed ({exc}).") from exc
    if len(set(published)) != len(published):
        raise ReleaseError("release.json lists a sub-table id twice.")
    if not np.all((retention >= 0.0) & (retention <= 1.0)):  # NaN fails
        raise PrivacyError(f"release.json: a sub-table of {attribute!r} has a retention that is not a probability.")
    sizes = np.array([len(values) for values in listed], dtype=np.int64)
    codes = full.get_indexer([label for values in listed for label in values]) if sizes.sum() else np.zeros(0, int)
    block = np.repeat(np.arange(len(listed)), sizes)
    keys = block * max(len(full), 1) + codes
    if (codes < 0).any() or np.any(sizes == 0) or len(np.unique(keys)) != len(keys):
        bad = int(block[codes < 0][0]) if (codes < 0).any() else int(np.flatnonzero(sizes == 0)[0]) if np.any(sizes == 0) else 0
        raise ReleaseError(f"release.json: sub-table {published[bad]} lists a value twice, none, or one outside the domain.")
    order = np.lexsort((codes, block))  # each sub-table's values ascending, as the blocks keep them
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    blocks = SubtableBlocks(codes[order].astype(np.int64), starts, retention, len(full))
    if any("matrix" in sub for sub in subtables):  # format 1: each dense matrix must be the retention's
        for s, sub in enumerate(subtables):
            _check_dense(sub, attribute, retention[s], int(sizes[s]))
    elif entry.get("matrix_form") != MATRIX_FORM:
        raise ReleaseError(f"release.json: {attribute!r} names matrix form {entry.get('matrix_form')!r}; this method "
                           f"publishes {MATRIX_FORM!r} (a retention per sub-table).")
    column = entry.get("subtable_column")
    if column not in release.table.columns:
        raise ReleaseError(f"release.json names sub-table column {column!r}, which is not in the data.")
    ids = _indexer(pd.Index(published), release.table[column])
    if (ids < 0).any():
        raise PrivacyError(f"A record is in sub-table {release.table[column][ids < 0].iloc[0]!r}, which release.json "
                           "does not publish: its value would be checked against no matrix.")
    held = np.bincount(ids, minlength=len(subtables))
    for s, sub in enumerate(subtables):
        stated = sub.get("n_records")
        if stated is not None and stated != held[s]:
            raise ReleaseError(f"release.json says sub-table {sub.get('id')} holds {stated} records; the data has {held[s]}.")
    return blocks, ids.astype(np.int64)


def published_entries(release: LoadedRelease, entry: dict) -> tuple[np.ndarray, RetentionMatrix, np.ndarray | None]:
    """``(entry of each record, block-diagonal matrix, value of each entry)`` of a partitioned column (a column
    without sub-tables as :func:`~ppdp_desktop.core.methods.perturbation.release.published_column` reads it)."""
    if not entry.get("subtables"):
        return published_column(release, entry)
    blocks, ids = published_blocks(release, entry)
    entries = blocks.entries(ids, release.codes(entry))
    if (entries < 0).any():
        raise ReleaseError(f"A released value of {entry['attribute']!r} lies outside its sub-table's domain.")
    return entries, blocks.matrix, blocks.values


def _check_dense(sub: dict, attribute: object, retention: float, size: int) -> None:
    """A format-1 sub-table's dense matrix is 'keep with the published retention, else draw uniformly'."""
    try:
        dense = np.asarray(sub["matrix"], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the matrix of sub-table {sub.get('id')} is malformed ({exc}).") from None
    privacy.check_operator(dense, str(attribute))
    expected = RetentionMatrix(np.full(size, retention)).to_dense()
    if dense.shape != expected.shape or not np.allclose(dense, expected, rtol=0.0, atol=1e-12):
        raise PrivacyError(f"The matrix of sub-table {sub.get('id')} of {attribute!r} is not 'keep with the published "
                           "retention, else draw uniformly': it is not what this method publishes.")


def verify_subtables(release: LoadedRelease, entry: dict) -> str:
    """Each sub-table's matrix within the gamma of its (rho1_i, rho2); each record's value in its sub-domain."""
    guarantee = entry.get("guarantee", {})
    try:
        rho2 = float(guarantee["rho2"])
        subtables = entry["subtables"]
        verified = guarantee.get("verified")
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the sub-tables of {entry.get('attribute')!r} are malformed ({exc}).") from exc
    if not verified:
        raise PrivacyError(f"release.json does not mark the guarantee of {entry['attribute']!r} as verified.")
    blocks, ids = published_blocks(release, entry)
    codes = release.codes(entry)
    entries = blocks.entries(ids, codes)
    if (entries < 0).any():
        raise PrivacyError(f"A record of sub-table {subtables[int(ids[entries < 0][0])]['id']} holds a value outside "
                           "that sub-table's domain.")
    labels = [label_text(v) for v in entry["values"]]
    worst = 0.0
    unbounded: list[str] = []  # sub-tables whose matrix has no finite epsilon (retention 1, two values or more)
    for s, sub in enumerate(subtables):
        rho1 = sub["rho1"]
        if rho1 is not None and not rho1 < rho2:  # NaN fails
            raise PrivacyError(f"Sub-table {sub['id']} has rho1 {rho1:g} >= rho2 {rho2:g}.")
        size = int(blocks.sizes[s])
        concern = np.full(size, np.nan if not rho1 else float(rho1))
        requirement = SensitivityRequirement(concern, np.where(np.isnan(concern), np.nan, rho2), "sub-table")
        matrix = RetentionMatrix(np.full(size, blocks.retention[s]))
        report = privacy.verify(entry["attribute"], [labels[i] for i in blocks.members(s)], matrix, requirement,
                                np.full(size, 1.0 / size))
        worst = max(worst, report.epsilon_ldp)
        if not np.isfinite(report.epsilon_ldp):
            unbounded.append(str(sub["id"]))
        _check_stated_gamma(sub, rho2)
    subtable_of = np.repeat(np.arange(blocks.n_subtables), blocks.sizes)
    places = np.array([f"sub-table {sub['id']}" for sub in subtables], dtype=object)  # one a sub-table, not a value
    check_counts_plausible(blocks.observed(entries), blocks.matrix, np.asarray(labels, dtype=object)[blocks.values],
                           entry["attribute"], places[subtable_of])
    if not any(sub.get("rho1") for sub in subtables):
        raise PrivacyError(f"No sub-table of {entry['attribute']!r} has a protected value (rho1 > 0): the release "
                           "protects nothing, which this method never writes.")
    check_stated_epsilon(guarantee, entry["attribute"], worst, "its matrices give")
    # what the sub-tables' parameters reveal: stated as this app states it (an older release's shorter statement, or
    # none, verifies and gets it said here)
    check_parameters_statement(release.metadata, entry, expected=NOT_COVERED, older=(SUBTABLE_CAVEAT,))
    parameters = partition_statement()
    if unbounded:  # stated as the app states it, or refused
        statement = subtables_statement(unbounded)
        if guarantee.get("no_ldp_bound") not in (None, statement):
            raise PrivacyError(f"release.json's statement on the epsilon-LDP of {entry['attribute']!r} is not what its "
                               "sub-tables give: the release was altered.")
        return (f"{entry['attribute']}: {len(codes):,} records in {len(subtables)} sub-tables, upward (rho1, rho2)-privacy "
                f"holds in each. {statement} {parameters}")
    if guarantee.get("no_ldp_bound") is not None:
        raise PrivacyError(f"release.json says no epsilon-LDP bound holds for {entry['attribute']!r}, but its sub-tables "
                           f"give {worst:.6g}: the release was altered.")
    several = len(subtables) > 1
    if guarantee.get("epsilon_ldp_scope") not in ((None, EPSILON_SCOPE) if several else (None,)):
        raise PrivacyError(f"release.json's statement of what the epsilon-LDP of {entry['attribute']!r} covers is not "
                           "what its sub-tables give: the release was altered.")
    scope = f" {EPSILON_SCOPE}" if several else ""  # said here even where an older release.json does not say it
    return (f"{entry['attribute']}: {len(codes):,} records in {len(subtables)} sub-tables, upward (rho1, rho2)-privacy "
            f"holds in each; largest epsilon-LDP equivalent {worst:.3f}{scope}. {parameters}")


def _check_stated_gamma(sub: dict, rho2: float) -> None:
    """A sub-table's stated gamma is the one its rho1 and the release's rho2 give (Eq. 9)."""
    stated, rho1 = sub.get("gamma"), sub.get("rho1")
    try:
        expected = float(gamma_of(float(rho1), rho2)) if rho1 else float("inf")
    except (TypeError, ValueError):
        raise ReleaseError(f"release.json: the rho1 of sub-table {sub.get('id')} is not a number.") from None
    value = float("inf") if stated is None else stated
    if not isinstance(value, (int, float)) or not (value == expected or abs(value - expected) <= 1e-9 * abs(expected)):
        raise PrivacyError(f"release.json states gamma {stated!r} for sub-table {sub.get('id')}; its rho1 and rho2 "
                           f"give {expected:.6g}: the release was altered.")
