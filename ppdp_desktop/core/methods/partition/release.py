"""Perturbation partitioning's part of a release: each sub-table re-verified from its own matrix."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.methods.partition.subtables import gamma_of
from ppdp_desktop.core.methods.perturbation.release import check_stated_epsilon, check_structure, verify_perturbed
from ppdp_desktop.core.privacy.plausibility import check_counts_plausible
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement


def verify_partition_release(release: LoadedRelease) -> list[str]:
    """Every perturbed column re-verified, sub-table by sub-table where it was partitioned."""
    entries = release.metadata.get("sensitive") or []
    if not entries:
        raise ReleaseError("release.json lists no perturbed attribute and no guarantee statement.")
    return [verify_subtables(release, e) if e.get("subtables") else verify_perturbed(release, e) for e in entries]


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
    codes = release.codes(entry)
    ids = _subtable_ids(release, entry, subtables)
    full = [label_text(v) for v in entry["values"]]
    worst = 0.0
    for sub in subtables:
        members = pd.Index(full).get_indexer([label_text(v) for v in sub["values"]])
        if (members < 0).any() or len(set(members)) != len(members):
            raise ReleaseError(f"release.json: sub-table {sub['id']} lists a value twice or outside the domain.")
        rows = codes[ids == str(sub["id"])]
        if not np.isin(rows, members).all():
            raise PrivacyError(f"A record of sub-table {sub['id']} holds a value outside that sub-table's domain.")
        matrix = np.asarray(sub["matrix"], dtype=float)
        rho1 = sub["rho1"]
        if rho1 is not None and not rho1 < rho2:  # NaN fails
            raise PrivacyError(f"Sub-table {sub['id']} has rho1 {rho1:g} >= rho2 {rho2:g}.")
        concern = np.full(len(members), np.nan if not rho1 else float(rho1))
        requirement = SensitivityRequirement(concern, np.where(np.isnan(concern), np.nan, rho2), "sub-table")
        prior = np.full(len(members), 1.0 / len(members))
        report = privacy.verify(entry["attribute"], sub["values"], matrix, requirement, prior)
        worst = max(worst, report.epsilon_ldp)
        check_structure({"attribute": entry["attribute"], "retention": [sub.get("retention")] * len(members)}, matrix,
                        uniform=True)
        observed = np.bincount(pd.Index(members).get_indexer(rows), minlength=len(members))
        check_counts_plausible(observed, matrix, sub["values"], entry["attribute"], f"sub-table {sub['id']}")
        _check_stated_gamma(sub, rho2)
    if not any(sub.get("rho1") for sub in subtables):
        raise PrivacyError(f"No sub-table of {entry['attribute']!r} has a protected value (rho1 > 0): the release "
                           "protects nothing, which this method never writes.")
    check_stated_epsilon(guarantee, entry["attribute"], worst, "its matrices give")
    return (f"{entry['attribute']}: {len(codes):,} records in {len(subtables)} sub-tables, upward (rho1, rho2)-privacy "
            f"holds in each (largest epsilon-LDP equivalent {worst:.3f})")


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


def _subtable_ids(release: LoadedRelease, entry: dict, subtables: list) -> np.ndarray:
    """Each record's sub-table id; every id is a published sub-table, holding the records it says."""
    column = entry.get("subtable_column")
    if column not in release.table.columns:
        raise ReleaseError(f"release.json names sub-table column {column!r}, which is not in the data.")
    ids = release.table[column].to_numpy()
    published = [str(sub.get("id")) for sub in subtables]
    if len(set(published)) != len(published):
        raise ReleaseError("release.json lists a sub-table id twice.")
    unknown = ~np.isin(ids, published)
    if unknown.any():
        raise PrivacyError(f"A record is in sub-table {ids[unknown][0]!r}, which release.json does not publish: "
                           "its value would be checked against no matrix.")
    for sub in subtables:
        stated, held = sub.get("n_records"), int(np.count_nonzero(ids == str(sub.get("id"))))
        if stated is not None and stated != held:
            raise ReleaseError(f"release.json says sub-table {sub.get('id')} holds {stated} records; the data has {held}.")
    return ids
