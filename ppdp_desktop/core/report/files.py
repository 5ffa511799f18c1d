"""Writing the report files: ``report.html`` (one self-contained offline file) and ``report.pdf``, atomically."""
from __future__ import annotations

from pathlib import Path

from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.progress import Progress, no_progress
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.html import render_html
from ppdp_desktop.core.report.pdf import render_pdf


def write_html(reports: list[MethodReport], context: ReportContext, path: str | Path, progress: Progress = no_progress) -> None:
    """Write one self-contained HTML file (inline style, inline PNG figures, no external reference)."""
    text = render_html(reports, context, progress)
    _atomic_write(Path(path), text.encode("utf-8"))
    progress(1.0, "Report written")


def write_pdf(reports: list[MethodReport], context: ReportContext, path: str | Path, progress: Progress = no_progress) -> None:
    """Write the A4 PDF: the plain first page, the technical sections with their tables and figures."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.partial")
    try:
        render_pdf(reports, context, tmp, progress)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    progress(1.0, "Report written")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
