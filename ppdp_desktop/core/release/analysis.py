"""What a recipient can do with a release alone: re-verify its guarantee and estimate counts.

The checks every release shares (checksums, record count, identifiers, pseudonyms) are made here;
the method that made the release re-checks its own guarantee through the registry.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.checksums import CHECKSUMS_FILE, check_checksums, release_fingerprint
from ppdp_desktop.core.data.released import LoadedRelease, read_release
from ppdp_desktop.core.errors import ParameterError, PPDPError, PrivacyError, ReleaseError, setting_ref
from ppdp_desktop.core.generalization import check_k_anonymity
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.release.criteria_verify import verify_criteria
from ppdp_desktop.core.release.provenance import check_provenance
from ppdp_desktop.core.release.signing import SIGNATURE_FILE, check_signature
from ppdp_desktop.core.release.structure import check_columns, recheck_reidentification
from ppdp_desktop.core.report.group_check import recheck_group_disclosure

#: what ``ppdp verify`` says first of a verified release without a signature: its checks show that it is consistent
#: with itself, and an unsigned release's checksums can be rewritten with the files (docs/release-format.md)
UNSIGNED_WARNING = ("NOT SIGNED: anyone could have altered this release together with its checksums; the checks "
                    "below show only that it is consistent with itself, not who made it. Ask the custodian for a "
                    f"signed release and check it with {setting_ref('signer', 'FINGERPRINT')}.")


def is_signed(metadata: dict) -> bool:
    """Whether a release that passed :func:`verify_release` is signed (it then names the signer whose
    ``SIGNATURE`` was checked; an unsigned one names none)."""
    signer = metadata.get("signer")
    return isinstance(signer, dict) and bool(signer.get("fingerprint"))


def fingerprint_line(folder: Path) -> str:
    """The release fingerprint, and whether the package's HTML report carries it (a printed report shows it
    on every page, so a reader can tie the paper to these files)."""
    fingerprint = release_fingerprint(folder)
    page = folder / "report.html"
    if not page.is_file():
        return f"fingerprint: {fingerprint}"
    with page.open("rb") as handle:
        carried = fingerprint.encode() in handle.read(64 * 1024)
    return (f"fingerprint: {fingerprint} (" + ("the reports print it on every page" if carried
                                              else "not in report.html: a report written before fingerprints") + ")")


def verify_release(release: LoadedRelease, signer: str | None = None, plan: object = None) -> list[str]:
    """Re-check checksums, the signature, structure and every claimed guarantee; raise on any failure.

    ``signer`` (a fingerprint) requires the release to be signed by that key. ``plan``: the custodian's own plan,
    before publishing; a method with a ``verify_written(release, plan)`` then checks its guarantee exactly
    against the plan instead of re-estimating it from the release as a recipient must. Returns one line per
    check that passed, for the CLI and the report.
    """
    meta, table = release.metadata, release.table
    check_checksums(release.folder)
    lines = [f"checksums: every file matches {CHECKSUMS_FILE}", fingerprint_line(release.folder)]
    found = check_signature(release.folder, signer)
    named = (meta.get("signer") or {}).get("fingerprint") if isinstance(meta.get("signer"), dict) else None
    if named and found is None:
        raise ReleaseError(f"release.json names the signer {named}, but the release has no {SIGNATURE_FILE}.")
    if found is not None and named != found:
        raise ReleaseError(f"release.json names the signer {named!r}, but {SIGNATURE_FILE} is by {found}.")
    lines.append(f"signature: the manifest is signed by {found}" if found else "signature: the release is not signed")
    lines.append(check_provenance(meta))  # present and well formed, or none (an older release)
    lines.append(check_columns(release))
    if meta.get("n_records") != release.n_rows:
        raise ReleaseError(f"release.json says {meta.get('n_records')} records but the data file has {release.n_rows}.")
    removed = [n for n, a in meta.get("attributes", {}).items() if a.get("role") == "identifier"]
    leaked = [n for n in removed if n in release.column_names]
    if leaked:
        raise PrivacyError(f"Identifier column {leaked[0]!r} is present in the released data.")
    pseudonyms = meta.get("pseudonym_column")
    if pseudonyms:
        distinct = (release.distinct_pseudonyms if release.distinct_pseudonyms is not None
                    else pseudonyms in table.columns and not table[pseudonyms].duplicated().any())
        if pseudonyms not in release.column_names or not distinct:
            raise ReleaseError(f"The pseudonym column {pseudonyms!r} is missing, or has duplicate ids or ids that are not "
                               "this release's.")
        lines.append(f"pseudonyms: {release.n_rows:,} distinct ids; identifiers removed")
    try:
        method = get_method(str(meta.get("method", "")))
    except PPDPError:
        raise ReleaseError(f"release.json names method {meta.get('method')!r}, which this app does not know.") from None
    exact = getattr(method, "verify_written", None) if plan is not None else None
    own = exact(release, plan) if exact is not None else method.verify_release(release)
    return (lines + own + _verify_k_anonymity(release) + verify_criteria(release) + recheck_reidentification(release)
            + recheck_group_disclosure(release))


def read_verified(path: str | Path, signer: str | None = None) -> LoadedRelease:
    """The release at ``path`` (a folder or a ``.zip``), read only once it passes every check of ``ppdp verify``
    (:func:`verify_release`): a command that reads a release states nothing from one that ``verify`` refuses. A
    folder's checksums and layout are checked before its files are read (altered, not "damaged"); a refusal removes
    a zip's unpacked copy at once. Close the release when done (it is a context manager)."""
    if Path(path).is_dir():
        check_checksums(Path(path))
    release = read_release(path)
    try:
        verify_release(release, signer=signer)
    except BaseException:
        release.close()
        raise
    return release


def _verify_k_anonymity(release: LoadedRelease) -> list[str]:
    """A release that claims k-anonymity is re-checked on its own quasi-identifier columns."""
    risk = release.metadata.get("reidentification") or {}
    generalization = risk.get("generalization")
    if not generalization:
        return []
    try:
        quasi = [str(c) for c in risk["quasi_identifiers"]]
        k, limit = int(generalization["k"]), float(generalization["suppression_limit"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the re-identification entry is malformed ({exc}).") from exc
    missing = [c for c in quasi if c not in release.table.columns]
    if missing:
        raise ReleaseError(f"release.json names quasi-identifier {missing[0]!r}, which is not in the data.")
    ok, suppressed = check_k_anonymity(release.table[quasi], k, limit)
    if not ok:
        raise PrivacyError(f"The release claims {k}-anonymity of {', '.join(quasi)} but a group has fewer than {k} "
                           f"records or more than {limit:.1%} of the records are suppressed.")
    if k == 1:  # no group size asked: only the suppression limit is checked here, the criteria next
        return [f"suppression: {suppressed:,} records suppressed, at most {limit:.1%} allowed (no k was asked: k = 1)"]
    return [f"k-anonymity: every combination of {', '.join(quasi)} is shared by at least {k} records "
            f"({suppressed:,} suppressed, at most {limit:.1%} allowed)"]


def parse_where(text: str | None, columns: list[str]) -> dict[str, str]:
    """Parse ``"col=value,col=value"`` into a dict; unknown columns are an error naming them."""
    conditions: dict[str, str] = {}
    if not text:
        return conditions
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ParameterError(f"Condition {part.strip()!r} must look like column=value.")
        column, value = (s.strip() for s in part.split("=", 1))
        if column not in columns:
            raise ParameterError(f"Column {column!r} is not in the release; its columns are: {', '.join(columns)}.")
        conditions[column] = value
    return conditions


ESTIMATORS = ("mle", "unbiased")


def estimate_counts(release: LoadedRelease, attribute: str, where: dict[str, str], mle: bool = True,
                    estimator: str | None = None) -> pd.DataFrame:
    """Estimated count of each original value among the released records matching ``where``.

    Columns: value, observed (released counts), estimate — the non-negative maximum-likelihood estimate
    (iterative Bayes) by default, or the unbiased inverse ``P^{-1} o`` with ``estimator="unbiased"`` — its
    95 % interval from a seeded parametric bootstrap of *that* estimator (so the estimate lies inside its own
    interval), and ``unbiased`` (the inverse, for statisticians, which can be negative for rare values).
    """
    estimator = estimator or ("mle" if mle else "unbiased")
    if estimator not in ESTIMATORS:
        raise ParameterError(f"{setting_ref('estimator')} {estimator!r} is not one of {', '.join(ESTIMATORS)}.",
                             setting="estimator", value=estimator, allowed="one of " + ", ".join(ESTIMATORS))
    entry = release.sensitive_entry(attribute)
    if attribute in where:
        raise ParameterError(f"Condition on the perturbed column {attribute!r} itself is not supported; "
                             "condition on other columns.")
    mask = np.ones(len(release.table), dtype=bool)
    for column, value in where.items():
        mask &= (release.table[column] == value).to_numpy()
    name = str(release.metadata.get("method", ""))
    try:
        method = get_method(name)
    except PPDPError:
        raise ReleaseError(f"release.json names method {name!r}, which this app does not know.") from None
    # the method reads its column: a column of sub-tables (partitioning) gives each record's (sub-table, value) entry
    entries, matrix, groups = method.published_entries(release, entry)
    m = len(entry["values"])
    seen = np.bincount(entries[mask], minlength=matrix.shape[0]).astype(float)
    # A method with sub-tables (perturbation partitioning) publishes one block per sub-table over its own
    # sub-domain: each block is estimated on its own, then the entries of a value are added up (the blocks are
    # independent, and so are their bootstrap replicates).
    estimate, low, high = reconstruction.estimate_with_interval(seen, matrix, estimator, groups=groups, n_groups=m)
    unbiased = reconstruction.inverse(seen, matrix)
    observed = seen
    if groups is not None:
        unbiased = reconstruction.sum_by_group(unbiased, groups, m)
        observed = reconstruction.sum_by_group(seen, groups, m)
    return pd.DataFrame(
        {
            "value": ["" if v is None else v for v in entry["values"]],
            "observed": observed.astype(np.int64),
            "estimate": estimate,
            "ci_low": low,
            "ci_high": high,
            "unbiased": unbiased,
        }
    )
