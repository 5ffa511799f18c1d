"""The PDF report: a summary page, table pages, then every figure as vector graphics (PdfPages)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from ppdp_desktop.core.progress import Progress
from ppdp_desktop.core.report.build import MethodReport
from ppdp_desktop.core.report.document import (
    VALUE_HEADER, ReportContext, comparison_table, figure_count, guarantee_headline, utility_rows, value_rows,
)

PAGE = (8.27, 11.69)  # A4 portrait, inches
RISK_COLORS = {"ok": "#2e7d32", "warning": "#a15c00", "danger": "#c62828"}
ROWS_PER_PAGE = 45
WRAP = 95


class _TextPage:
    """Lines of text flowing down A4 pages of ``pdf``; a new page starts when one is full."""

    def __init__(self, pdf: PdfPages) -> None:
        self.pdf = pdf
        self.fig: Figure | None = None
        self.y = 0.0

    def _new(self) -> None:
        self.flush()
        self.fig = Figure(figsize=PAGE)
        self.y = 0.95

    def line(self, text: str, size: float = 9, bold: bool = False, color: str = "black", indent: float = 0.0) -> None:
        for i, part in enumerate(textwrap.wrap(text, int(WRAP * 9 / size) - int(indent * 100)) or [""]):
            if self.fig is None or self.y < 0.05:
                self._new()
            self.fig.text(0.07 + indent + (0.02 if i else 0.0), self.y, part, fontsize=size,
                          weight="bold" if bold else "normal", color=color, va="top")
            self.y -= size / 72.0 * 1.45 / PAGE[1]

    def gap(self, amount: float = 0.01) -> None:
        self.y -= amount

    def flush(self) -> None:
        if self.fig is not None:
            self.pdf.savefig(self.fig)
            self.fig = None


def _table_pages(pdf: PdfPages, title: str, header: list[str] | tuple[str, ...], rows: list[list[str]]) -> None:
    """``rows`` as ``ax.table`` pages of at most :data:`ROWS_PER_PAGE` rows."""
    for start in range(0, len(rows), ROWS_PER_PAGE):
        chunk = rows[start:start + ROWS_PER_PAGE]
        fig = Figure(figsize=PAGE)
        ax = fig.add_axes((0.04, 0.04, 0.92, 0.88))
        ax.set_axis_off()
        suffix = f" (rows {start + 1} to {start + len(chunk)} of {len(rows)})" if len(rows) > ROWS_PER_PAGE else ""
        fig.text(0.05, 0.96, title + suffix, fontsize=12, weight="bold", va="top")
        table = ax.table(cellText=chunk, colLabels=list(header), loc="upper center", cellLoc="left")
        table.auto_set_font_size(False)
        table.set_fontsize(6.5 if len(header) > 4 else 8)
        table.auto_set_column_width(list(range(len(header))))
        for (row, _), cell in table.get_celld().items():
            cell.set_height(0.018)
            if row == 0:
                cell.set_facecolor("#e8e8e8")
        pdf.savefig(fig)


def render_pdf(reports: list[MethodReport], context: ReportContext, path: Path, progress: Progress) -> None:
    total = max(figure_count(reports), 1)
    done = 0
    with matplotlib.rc_context({"pdf.fonttype": 42}), PdfPages(path) as pdf:  # TrueType: text stays searchable
        info = pdf.infodict()
        info["Title"] = f"Privacy report: {context.data_label}"
        info["Creator"] = context.app_version
        page = _TextPage(pdf)
        page.line(f"Privacy report: {context.data_label}", size=16, bold=True)
        page.gap()
        for line in context.summary_lines():
            page.line(line)
        page.line("Methods: " + ", ".join(f"{r.title} ({r.method})" for r in reports) + ".")
        for r in reports:
            page.gap(0.015)
            page.line(f"{r.title} ({r.method})", size=12, bold=True)
            page.line("Sensitive values: " + guarantee_headline(r), size=10, bold=True,
                      color="#2e7d32" if r.has_guarantee else "#c62828")
            verdict = r.reidentification_lines()
            page.line(verdict[0], size=10, bold=True, color=RISK_COLORS[r.risk_level])
            page.line("Method", bold=True)
            for line in r.lines:
                page.line(line, indent=0.02)
            page.line("Privacy", bold=True)
            for line in r.privacy_lines():
                page.line(line, indent=0.02)
            if len(verdict) > 1:
                page.line("Re-identification", bold=True)
                for line in verdict[1:]:
                    page.line(line, indent=0.02)
            page.line("Utility", bold=True)
            for line in r.utility_lines():
                page.line(line, indent=0.02)
        page.flush()
        if len(reports) > 1:
            header, body = comparison_table(reports)
            _table_pages(pdf, "Comparison of the methods", header, body)
        for r in reports:
            rows = utility_rows(r)
            if rows:
                _table_pages(pdf, f"{r.title}: utility", ("Measure", "Value"), rows)
            rows = value_rows(r)
            if rows:
                _table_pages(pdf, f"{r.title}: per value", VALUE_HEADER, rows)
            for name, fig in r.figures.items():
                progress(done / total, f"Figure {done + 1} of {total}: {name}")
                pdf.savefig(fig)  # the figure as it is (vector); its own title says what it shows
                done += 1
