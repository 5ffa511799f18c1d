"""The two reports of a release: the one inside the package, and the custodian's beside the key.

The report that ships inside the package shows only what the release supports: counts estimated from the
released files themselves (with their 95 % intervals, as ``ppdp estimate`` computes them), the guarantee
and the public re-identification figures; nothing computed from the original records. The custodian's
report, with the original counts, utility and figures, is written outside the package beside the key
(or beside the release when there is no key) as ``NAME.custodian-report.html``.

Each report's per-value table also goes, whole, into a CSV appendix (the report itself shows only the most
frequent and most protected values of a large domain): ``report-values.csv`` inside the package (estimated
counts only, listed in ``SHA256SUMS`` like every file), ``NAME.custodian-report-values.csv`` beside the
custodian's report (with the original counts). Both are written whatever the domain's size, so the package
holds the same files for every data set.
"""
from __future__ import annotations

import codecs
import copy
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError, ReleaseError, setting_ref
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress, subrange

CUSTODIAN_SUFFIX = ".custodian-report.html"
CUSTODIAN_VALUES_SUFFIX = ".custodian-report-values.csv"
VALUES_FILE = "report-values.csv"  # the package report's full per-value table
MARK = "PPDP Desktop"  # every report we write names the app: the mark by which we may replace one


def custodian_report_path(out: Path, key: Path | None) -> Path:
    """``rel.custodian-report.html`` beside the key ``rel.ppdpkey`` (or beside the release ``rel``)."""
    base = key if key is not None else out
    stem = base.name[: -len(base.suffix)] if base.suffix else base.name
    return base.with_name(stem + CUSTODIAN_SUFFIX)


def custodian_values_path(report: Path) -> Path:
    """``rel.custodian-report-values.csv``, the CSV appendix beside the custodian's report ``report``."""
    name = report.name[: -len(CUSTODIAN_SUFFIX)] if report.name.endswith(CUSTODIAN_SUFFIX) else report.stem
    return report.with_name(name + CUSTODIAN_VALUES_SUFFIX)


def check_custodian_report(path: Path, overwrite: bool) -> None:
    """Refuse to replace a file that is not a report of ours, or any file without ``overwrite``: the custodian's
    report ``path`` and its CSV appendix beside it, under the same rules."""
    for target, ours in ((path, _names_the_app), (custodian_values_path(path), _is_values_csv)):
        if not target.exists():
            continue
        if not overwrite:
            raise ReleaseError(f"{target} already exists; choose another {setting_ref('out')}/{setting_ref('key')} or "
                               f"allow replacing it ({setting_ref('overwrite')}).", file=str(target))
        if not target.is_file() or not ours(target):
            raise ReleaseError(f"{target} exists and is not a report written by PPDP Desktop; move it away first.")


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(4096)
    except OSError:
        return b""


def _names_the_app(path: Path) -> bool:
    return MARK.encode() in _head(path)


def _is_values_csv(path: Path) -> bool:
    """Whether ``path`` starts as our CSV appendix does: the byte-order mark, then a header of its columns."""
    from ppdp_desktop.core.report.values import CSV_COLUMNS

    head = _head(path)
    if not head.startswith(codecs.BOM_UTF8):
        return False
    header = head[len(codecs.BOM_UTF8):].split(b"\n", 1)[0].decode("utf-8", "replace")
    cells = [cell.strip('"') for cell in header.split(",")]
    return "Value" in cells and set(cells) <= set(CSV_COLUMNS)


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


def report_columns(result: Anonymization) -> list[str]:
    """The data columns :func:`write_package_report` reads from the read-back release: the one whose counts it
    estimates (:func:`release_estimates`). The read-back holds these beside the columns the checks read; the other
    columns, the pseudonyms' text above all, are counted and named only (as without a report)."""
    sensitive = result.settings.sensitive
    return [sensitive] if sensitive else []


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
    """Write ``report.html``, ``report.pdf`` (release-only) and, where the report has a per-value table, its
    CSV appendix ``report-values.csv`` into ``folder``; return the custodian's reports."""
    from ppdp_desktop.core.report.build import build_report, release_only
    from ppdp_desktop.core.report.files import write_html, write_pdf, write_values_csv

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
    context.values_file = f"{VALUES_FILE} (in the release package)"
    write_values_csv([public], folder / VALUES_FILE)
    write_html([public], context, folder / "report.html", subrange(progress, 0.5, 0.7))
    cancel.check()
    write_pdf([public], context, folder / "report.pdf", subrange(progress, 0.7, 1.0))
    return full


def write_custodian_report(result: Anonymization, reports: list, path: Path, fingerprint: str = "") -> None:
    """The full report (original figures included) as one HTML file outside the package, and beside it the
    full per-value table with the original counts (``NAME.custodian-report-values.csv``). An appendix left by
    an earlier export goes when this report has no per-value table (:func:`check_custodian_report` has made
    sure it may be replaced)."""
    staged = StagedCustodianReport(path)
    try:
        staged.write(result, reports, fingerprint)
        staged.commit()
    finally:
        staged.discard()


class StagedCustodianReport:
    """The custodian's report written under hidden names beside its place (:meth:`write`) before the release is
    published, and renamed into place after it (:meth:`commit`): writing it is what can fail (a full disk), so a
    failure comes while nothing is published yet, and the renames after the publish need no space."""

    def __init__(self, path: Path) -> None:
        from ppdp_desktop.core.release.publish import temp_beside

        self.path, self.values = Path(path), custodian_values_path(Path(path))
        self.tmp_html, self.tmp_values = temp_beside(self.path), temp_beside(self.values)
        self.has_values = False

    def write(self, result: Anonymization, reports: list, fingerprint: str = "") -> None:
        from ppdp_desktop.core.report.files import write_html, write_values_csv

        context = context_of(result, fingerprint)
        context.values_file = f"{self.values.name} (beside this report)"
        self.has_values = write_values_csv(reports, self.tmp_values)
        write_html(reports, context, self.tmp_html)

    def commit(self) -> None:
        """Rename the report (and its appendix) into place; an appendix of an earlier report goes when this one has
        none."""
        import os

        if self.has_values:
            os.replace(self.tmp_values, self.values)
        elif _is_values_csv(self.values):
            self.values.unlink()
        os.replace(self.tmp_html, self.path)

    def discard(self) -> None:
        """Remove what :meth:`write` left under the hidden names (nothing after :meth:`commit`)."""
        for tmp in (self.tmp_html, self.tmp_values):
            tmp.unlink(missing_ok=True)
