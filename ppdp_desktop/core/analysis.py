"""What a recipient can do with a release alone: re-verify its guarantee and estimate counts."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core import privacy, reconstruction
from ppdp_desktop.core.errors import ParameterError, PrivacyError, ReleaseError
from ppdp_desktop.core.release import CHECKSUMS_FILE, LoadedRelease, check_checksums
from ppdp_desktop.core.domain import label_text
from ppdp_desktop.core.sensitivity import SensitivityRequirement, check_pair


def _requirement(entry: dict) -> SensitivityRequirement:
    pairs = entry["guarantee"]["pairs"]
    rho1 = np.array([np.nan if p["rho1"] is None else p["rho1"] for p in pairs], dtype=float)
    rho2 = np.array([np.nan if p["rho2"] is None else p["rho2"] for p in pairs], dtype=float)
    for p in pairs:
        if p["rho1"] is not None:
            check_pair(p["rho1"], p["rho2"], where=f"value {p['value']!r}")
    return SensitivityRequirement(rho1, rho2, "as published")


def verify_release(release: LoadedRelease) -> list[str]:
    """Re-check checksums, structure and every claimed guarantee; raise on any failure.

    Returns one line per check that passed, for the CLI and the report.
    """
    meta, table = release.metadata, release.table
    check_checksums(release.folder)
    lines = [f"checksums: every file matches {CHECKSUMS_FILE}"]
    if meta.get("n_records") != len(table):
        raise ReleaseError(f"release.json says {meta.get('n_records')} records but the data file has {len(table)}.")
    removed = [n for n, a in meta.get("attributes", {}).items() if a.get("role") == "identifier"]
    leaked = [n for n in removed if n in table.columns]
    if leaked:
        raise PrivacyError(f"Identifier column {leaked[0]!r} is present in the released data.")
    pseudonyms = meta.get("pseudonym_column")
    if pseudonyms:
        if pseudonyms not in table.columns or table[pseudonyms].duplicated().any():
            raise ReleaseError(f"The pseudonym column {pseudonyms!r} is missing or has duplicate ids.")
        lines.append(f"pseudonyms: {len(table):,} distinct ids; identifiers removed")
    if meta.get("method") == "dp-microagg":
        from ppdp_desktop.core.dp_release import verify_dp_release

        return lines + verify_dp_release(release)
    for entry in meta.get("sensitive", []):
        lines.append(_verify_perturbed(release, entry))
    for entry in meta.get("randomized", []):
        lines.append(_verify_randomized(release, entry))
    if "randomized" in meta:
        guarantee = meta.get("guarantee", {})
        if not guarantee.get("verified"):
            raise PrivacyError("release.json does not mark the attribute-disclosure bound as verified.")
        lines.append(f"attribute-disclosure risk {guarantee.get('max_risk'):.4f} <= 1/l = {1 / guarantee.get('l'):.4f} "
                     "(verified on the original data at release time)")
    elif not meta.get("sensitive"):
        guarantee = meta.get("guarantee", {})
        if guarantee.get("kind") != "none":
            raise ReleaseError("release.json lists no perturbed attribute and no guarantee statement.")
        lines.append("no formal guarantee is claimed (personalized recoding); structure checked")
    return lines


def _verify_randomized(release: LoadedRelease, entry: dict) -> str:
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
    release.codes(entry)  # every released value is in the published domain
    return f"{entry['attribute']}: randomized with p = {p:.4f} over {d} values"


def _verify_subtables(release: LoadedRelease, entry: dict) -> str:
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
    codes = release.codes(entry)
    ids = release.table[entry["subtable_column"]].to_numpy()
    full = [label_text(v) for v in entry["values"]]
    worst = 0.0
    for sub in subtables:
        members = pd.Index(full).get_indexer([label_text(v) for v in sub["values"]])
        rows = codes[ids == str(sub["id"])]
        if not np.isin(rows, members).all():
            raise PrivacyError(f"A record of sub-table {sub['id']} holds a value outside that sub-table's domain.")
        matrix = np.asarray(sub["matrix"], dtype=float)
        rho1 = sub["rho1"]
        if rho1 is not None and rho1 >= rho2:
            raise PrivacyError(f"Sub-table {sub['id']} has rho1 {rho1:g} >= rho2 {rho2:g}.")
        concern = np.full(len(members), np.nan if not rho1 else float(rho1))
        requirement = SensitivityRequirement(concern, np.where(np.isnan(concern), np.nan, rho2), "sub-table")
        prior = np.full(len(members), 1.0 / len(members))
        report = privacy.verify(entry["attribute"], sub["values"], matrix, requirement, prior)
        worst = max(worst, report.epsilon_ldp)
    return (f"{entry['attribute']}: {len(codes):,} records in {len(subtables)} sub-tables, upward (rho1, rho2)-privacy "
            f"holds in each (largest epsilon-LDP equivalent {worst:.3f})")


def _verify_perturbed(release: LoadedRelease, entry: dict) -> str:
    if entry.get("subtables"):
        return _verify_subtables(release, entry)
    try:
        values, matrix = entry["values"], np.asarray(entry["matrix"], dtype=float)
        requirement = _requirement(entry)
        verified = entry["guarantee"].get("verified")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReleaseError(f"release.json: the entry of {entry.get('attribute')!r} is malformed ({exc}).") from exc
    if not verified:
        raise PrivacyError(f"release.json does not mark the guarantee of {entry['attribute']!r} as verified.")
    codes = release.codes(entry)
    # The data's own prior is unknown to a recipient: the amplification check is prior-free;
    # the posterior check uses the iterative-Bayesian estimate of the prior.
    observed = np.bincount(codes, minlength=len(values)).astype(float)
    prior = reconstruction.iterative_bayesian(observed, matrix, tol=1e-8) / max(len(codes), 1)
    report = privacy.verify(entry["attribute"], values, matrix, requirement, prior)
    return (
        f"{entry['attribute']}: {len(codes):,} records, {int(requirement.concern.sum())} protected values, "
        f"upward (rho1, rho2)-privacy holds (epsilon-LDP equivalent {report.epsilon_ldp:.3f})"
    )


def _parts(release: LoadedRelease, entry: dict, mask: np.ndarray):
    """``(row mask, values, matrix)`` for the whole table, or for each published sub-table."""
    subtables = entry.get("subtables")
    if not subtables:
        yield mask, entry["values"], np.asarray(entry["matrix"], dtype=float)
        return
    column = entry.get("subtable_column")
    if column not in release.table.columns:
        raise ReleaseError(f"release.json names sub-table column {column!r}, which is not in the data.")
    ids = release.table[column].to_numpy()
    for sub in subtables:
        yield mask & (ids == str(sub["id"])), sub["values"], np.asarray(sub["matrix"], dtype=float)


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


def estimate_counts(release: LoadedRelease, attribute: str, where: dict[str, str], mle: bool = False) -> pd.DataFrame:
    """Estimated count of each original value among the released records matching ``where``.

    Columns: value, observed (released counts), estimate (unbiased ``P^{-1} o``, or the iterative
    Bayesian MLE with ``mle``), and a 95 % interval from the estimator's covariance.
    """
    entry = release.sensitive_entry(attribute)
    if attribute in where:
        raise ParameterError(f"Condition on the perturbed column {attribute!r} itself is not supported; condition on other columns.")
    mask = np.ones(len(release.table), dtype=bool)
    for column, value in where.items():
        mask &= (release.table[column] == value).to_numpy()
    codes = release.codes(entry)
    full = [label_text(v) for v in entry["values"]]
    observed = np.zeros(len(full))
    estimate = np.zeros(len(full))
    variance = np.zeros(len(full))
    # A method with sub-tables (perturbation partitioning) publishes one matrix per sub-table over its
    # own sub-domain: estimate each sub-table on its own, then add up (the parts are independent).
    for rows, values, matrix in _parts(release, entry, mask):
        index = pd.Index(full).get_indexer([label_text(v) for v in values])
        position = pd.Index(index).get_indexer(codes[rows])
        if (position < 0).any():
            raise ReleaseError(f"A released value of {attribute!r} lies outside its sub-table's domain.")
        seen = np.bincount(position, minlength=len(values)).astype(float)
        part = reconstruction.iterative_bayesian(seen, matrix) if mle else reconstruction.inverse(seen, matrix)
        observed[index] += seen
        estimate[index] += part
        variance[index] += np.clip(np.diag(reconstruction.inverse_covariance(seen, matrix)), 0.0, None)
    half = 1.96 * np.sqrt(variance)
    return pd.DataFrame(
        {
            "value": ["" if v is None else v for v in entry["values"]],
            "observed": observed.astype(np.int64),
            "estimate": estimate,
            "ci_low": estimate - half,
            "ci_high": estimate + half,
        }
    )
