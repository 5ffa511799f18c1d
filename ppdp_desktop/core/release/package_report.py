"""The two reports of a release: the one inside the package, and the custodian's beside the key.

The report that ships inside the package shows only what the release supports: counts estimated from the
released files themselves (with their 95 % intervals, as ``ppdp estimate`` computes them), the guarantee
and the public re-identification figures; nothing computed from the original records. The custodian's
report, with the original counts, utility and figures, is written outside the package beside the key
(or beside the release when there is no key) as ``NAME.custodian-report.html``.
"""
from __future__ import annotations

import copy
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError, ReleaseError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress, subrange

CUSTODIAN_SUFFIX = ".custodian-report.html"
MARK = "PPDP Desktop"  # every report we write names the app: the mark by which we may replace one


def custodian_report_path(out: Path, key: Path | None) -> Path:
    """``rel.custodian-report.html`` beside the key ``rel.ppdpkey`` (or beside the release ``rel``)."""
    base = key if key is not None else out
    stem = base.name[: -len(base.suffix)] if base.suffix else base.name
    return base.with_name(stem + CUSTODIAN_SUFFIX)


def check_custodian_report(path: Path, overwrite: bool) -> None:
    """Refuse to replace a file that is not a report of ours, or any file without ``overwrite``."""
    if not path.exists():
        return
    if not overwrite:
        raise ReleaseError(f"{path} already exists; choose another --out/--key (or pass --overwrite).")
    try:
        ours = MARK.encode() in path.read_bytes()[:4096]
    except OSError:
        ours = False
    if not path.is_file() or not ours:
        raise ReleaseError(f"{path} exists and is not a report written by PPDP Desktop; move it away first.")


def release_estimates(release: LoadedRelease, attribute: str) -> dict[str, Any] | None:
    """Counts of ``attribute``'s original values estimated from the release files, with 95 % intervals;
    None for a release that publishes no perturbation matrix for it."""
    from ppdp_desktop.core.release.analysis import estimate_counts

    try:
        table = estimate_counts(release, attribute, {})
    except (PPDPError, KeyError, TypeError, ValueError):
        return None
    return {"estimate": table["estimate"].to_numpy(), "low": table["ci_low"].to_numpy(),
            "high": table["ci_high"].to_numpy()}


def start_report(result: Anonymization, cancel: CancelToken, model_target: str | None = None) -> Future:
    """Build the custodian's report and draw its figures on a worker thread (they need only the job, not the
    files): much of writing and reading back the release leaves the interpreter free for it."""
    from ppdp_desktop.core.report.build import build_report

    def draw():
        report = build_report(result, cancel=cancel, model_target=model_target)
        report.render_images()
        return report

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="report")
    future = pool.submit(draw)
    pool.shutdown(wait=False)  # the thread ends with its one task
    return future


def context_of(result: Anonymization, fingerprint: str = ""):
    """The report's description of the data and of what the release did to each column."""
    from ppdp_desktop.core.report.document import ReportContext

    return ReportContext.from_anonymization(result, fingerprint)


def write_package_report(result: Anonymization, reports: list | None, folder: Path, release: LoadedRelease,
                         progress: Progress, cancel: CancelToken, fingerprint: str = "",
                         model_target: str | None = None) -> list:
    """Write ``report.html`` and ``report.pdf`` (release-only) into ``folder``; return the custodian's reports."""
    from ppdp_desktop.core.report.build import build_report, release_only
    from ppdp_desktop.core.report.files import write_html, write_pdf

    method = get_method(result.plan.method)
    full = reports if reports is not None else [build_report(result, subrange(progress, 0.0, 0.4), cancel,
                                                             model_target=model_target)]
    if method.public_report:  # the method builds its own release-only report (e.g. epsilon-DP)
        public = build_report(result, subrange(progress, 0.4, 0.5), cancel, public=True)
    else:
        public = copy.copy(full[0])
        release_only(public, release_estimates(release, result.settings.sensitive), result.plan.describe())
    signer = (release.metadata.get("signer") or {}).get("fingerprint")
    if signer:  # the recipient compares it with the one the custodian gave them
        public.lines = [*public.lines, f"Signed by the custodian's key with fingerprint {signer} (ppdp verify --signer)."]
    cancel.check()
    context = context_of(result, fingerprint)
    write_html([public], context, folder / "report.html", subrange(progress, 0.5, 0.7))
    cancel.check()
    write_pdf([public], context, folder / "report.pdf", subrange(progress, 0.7, 1.0))
    return full


def write_custodian_report(result: Anonymization, reports: list, path: Path, fingerprint: str = "") -> None:
    """The full report (original figures included) as one HTML file outside the package."""
    from ppdp_desktop.core.report.files import write_html

    write_html(reports, context_of(result, fingerprint), path)
