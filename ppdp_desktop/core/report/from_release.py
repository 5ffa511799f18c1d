"""Rebuilding the report of a written release from the original table (Qt-free).

A custodian who keeps the original data can re-create the report of a release folder without the
in-memory job: the method that made the release rebuilds its part (through the registry) from the
original table and the released data.
"""
from __future__ import annotations

import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError, ReleaseError
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.progress import Progress, no_progress


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
    progress(1.0, "Report ready")
    return reports
