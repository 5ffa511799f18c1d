"""Rebuilding the report of a written release from the original table (Qt-free).

A custodian who keeps the original data can re-create the report of a release folder without the
in-memory job: the method that made the release rebuilds its part (through the registry) from the
original table and the released data.
"""
from __future__ import annotations

import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError, ReleaseError
from ppdp_desktop.core.evaluation.reidentification import SUPPRESSED, Reidentification
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.privacy.risk import analyse_risk
from ppdp_desktop.core.progress import Progress, no_progress
from ppdp_desktop.core.report.groups import for_release


def reports_from_release(
    original: pd.DataFrame, release: LoadedRelease, progress: Progress = no_progress, workload_seed: int = 0
) -> list[MethodReport]:
    """One :class:`MethodReport` per protected attribute of ``release`` (one for a release without them)."""
    name = str(release.metadata.get("method", ""))
    try:
        method = get_method(name)
    except PPDPError:
        raise ReleaseError(f"release.json names method {name!r}, which this app does not know.") from None
    reports = method.reports_from_release(original, release, method.title, progress, workload_seed)
    reidentification = _reidentification(original, release)
    progress(0.95, "What the release reveals about a group")
    groups = for_release(release, original)
    for report in reports:
        report.reidentification = reidentification
        report.group_disclosure = groups
    progress(1.0, "Report ready")
    return reports


def _reidentification(original: pd.DataFrame, release: LoadedRelease) -> Reidentification | None:
    """The risk on the original and on the released quasi-identifiers, measured again from both tables; a
    generalization the release claims is stated as claimed (``ppdp verify`` re-checks it)."""
    entry = release.metadata.get("reidentification")
    if not entry or not entry.get("quasi_identifiers"):
        return None
    quasi = [str(c) for c in entry["quasi_identifiers"]]
    missing = [c for c in quasi if c not in original.columns or c not in release.table.columns]
    if missing:
        raise ReleaseError(f"Quasi-identifier {missing[0]!r} of the release is not in both tables.")
    threshold = float((entry.get("release") or {}).get("threshold", 0.2))
    claimed = entry.get("generalization")
    k = None if not claimed else int(claimed["k"])
    released = release.table[quasi]
    kept = ~released.eq(SUPPRESSED).all(axis=1) if claimed else slice(None)
    return Reidentification(quasi, analyse_risk(original, quasi, threshold, k),
                            analyse_risk(released.loc[kept], quasi, threshold, k), claimed=claimed)
