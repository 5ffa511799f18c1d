"""Writing the report files, atomically: ``report.html`` (one self-contained offline file), ``report.pdf``, and
the CSV appendix with the full per-value table (the report's own table is shortened for a large domain)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.progress import Progress, no_progress
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.html import render_html
from ppdp_desktop.core.report.pdf import render_pdf
from ppdp_desktop.core.report.values import has_value_table, values_frame


def write_html(reports: list[MethodReport], context: ReportContext, path: str | Path, progress: Progress = no_progress) -> None:
    """Write one self-contained HTML file (inline style, inline PNG figures, no external reference)."""
    text = render_html(reports, context, progress)
    _atomic_write(Path(path), text.encode("utf-8"))
    progress(1.0, "Report written")


def write_pdf(reports: list[MethodReport], context: ReportContext, path: str | Path, progress: Progress = no_progress) -> None:
    """Write the A4 PDF: the plain first page, the technical sections with their tables and figures."""
    _atomic_write(Path(path), render_pdf(reports, context, progress))
    progress(1.0, "Report written")


def write_values_csv(reports: list[MethodReport], path: str | Path) -> bool:
    """Write the full per-value table of ``reports`` (one row per value, numbers unformatted) as a CSV that a
    spreadsheet opens safely: UTF-8 with the byte-order mark like the release's CSV, and no cell that a
    spreadsheet would run as a formula (a value starting with = + - @ gets the release's guard). With several
    methods a first column names each row's method. Returns False (writing nothing) when no report has a
    per-value table."""
    from ppdp_desktop.core.data.formats import write_csv_atomic

    tables = [r for r in reports if has_value_table(r)]
    if not tables:
        return False
    frames = [values_frame(r) for r in tables]
    if len(frames) > 1:
        frames = [frame.assign(Method=r.title)[["Method", *frame.columns]] for r, frame in zip(tables, frames)]
    frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    write_csv_atomic(frame, Path(path), ",", bom=True)  # guarded there, as every CSV the app writes
    return True


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
