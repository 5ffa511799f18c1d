"""Perturbation partitioning's part of a release: each sub-table re-verified from its own matrix."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.methods.perturbation.release import verify_perturbed
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
        if rho1 is not None and not rho1 < rho2:  # NaN fails
            raise PrivacyError(f"Sub-table {sub['id']} has rho1 {rho1:g} >= rho2 {rho2:g}.")
        concern = np.full(len(members), np.nan if not rho1 else float(rho1))
        requirement = SensitivityRequirement(concern, np.where(np.isnan(concern), np.nan, rho2), "sub-table")
        prior = np.full(len(members), 1.0 / len(members))
        report = privacy.verify(entry["attribute"], sub["values"], matrix, requirement, prior)
        worst = max(worst, report.epsilon_ldp)
    return (f"{entry['attribute']}: {len(codes):,} records in {len(subtables)} sub-tables, upward (rho1, rho2)-privacy "
            f"holds in each (largest epsilon-LDP equivalent {worst:.3f})")


