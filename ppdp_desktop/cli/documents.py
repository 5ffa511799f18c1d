"""The ``--json`` documents of the commands that print figures: stable keys, numbers as numbers.

Each builder returns plain dictionaries (see :func:`~ppdp_desktop.cli.output.to_plain` for the conversion);
docs/cli.md lists the keys. A key is never renamed or removed without a note there: scripts read them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def released_document(command: str, result, folder, key: str | None, seconds: float, *, utility: bool = False,
                      signer=None, n_records: int | None = None, streamed: bool = False,
                      custodian_report: Path | None = None) -> dict[str, Any]:
    """``anonymize`` / ``demo`` / ``run``: what was released, the verified guarantee and the risk figures."""
    from ppdp_desktop.core.methods import get_method

    released = getattr(result, "n_released", None)
    count = n_records if n_records is not None else released if released is not None else len(result.table)
    summary = get_method(result.plan.method).utility_summary(result) if utility else None
    reidentification = getattr(result, "reidentification", None)
    repeat = getattr(result, "repeat", None)
    return {
        "command": command,
        "release": str(folder),
        "key": key,
        "n_records": int(count),
        "seconds": round(seconds, 3),
        "streamed": bool(streamed or released is not None),
        "method": result.plan.method,
        "plan": list(result.plan.describe()),
        # no guarantee (kind "none"): the plan's own checks passed, but no claim is "verified" to a script reader
        "guarantee": {k: v for k, v in result.guarantee.items()
                      if k != "verified" or result.guarantee.get("kind") != "none"},
        "reidentification": None if reidentification is None else reidentification.to_json(),
        "signer": None if signer is None else signer.fingerprint,
        "custodian_report": None if custodian_report is None or not custodian_report.is_file() else str(custodian_report),
        "utility": None if summary is None else summary,
        "warnings": [*getattr(result.plan, "warnings", []), *(repeat.warnings if repeat is not None else [])],
        "notes": [*result.notes, *(repeat.custodian_notes if repeat is not None else [])],
        # this release among its project's releases (release.json's block; null for a job without a project)
        "repeated_release": None if repeat is None else repeat.to_json(),
    }


def verify_document(release: str, checks: list[str], metadata: dict | None, error: str | None) -> dict[str, Any]:
    """``verify``: whether the release passed, each check that passed, and what the release says of itself."""
    from ppdp_desktop.core.errors import phrase
    from ppdp_desktop.core.release.analysis import UNSIGNED_WARNING, is_signed

    meta = metadata or {}
    signer = meta.get("signer")
    return {
        "release": release,
        "verified": error is None,
        "error": error,
        "signed": is_signed(meta) if error is None else None,
        "warning": phrase(UNSIGNED_WARNING) if error is None and not is_signed(meta) else None,
        "checks": list(checks),
        "n_records": meta.get("n_records"),
        "method": meta.get("method"),
        "signer": signer.get("fingerprint") if isinstance(signer, dict) else None,
    }


def report_document(data_label: str, release: str, files: dict[str, str | None], reports: list) -> dict[str, Any]:
    """``report``: the files written and, per protected attribute, the report's headline figures (the full
    per-value table is the values CSV, not the document)."""
    return {
        "data": data_label,
        "release": release,
        "files": files,
        "reports": [{
            "method": r.method,
            "title": r.title,
            "n_records": r.n_records,
            "guarantee": r.guarantee,
            "record_utility": r.record_utility,
            "epsilon_ldp": r.epsilon_ldp,
            "downward_breaches": list(r.downward_breaches),
            "choice_counts": dict(r.choice_counts),
            "utility": r.utility,
            "reidentification": r.reidentification,
            "findings": list(r.findings),
            "n_values": len(r.values),
        } for r in reports],
    }
