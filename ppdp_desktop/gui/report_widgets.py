"""The report page's widgets and table filling: read-only tables, the per-value table's rows, a label that
scrolls instead of being cut, and a figure that follows its tab's width (:mod:`ppdp_desktop.gui.pages.report_page`
lays them out)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QAbstractItemView, QFrame, QLabel, QScrollArea, QTableWidget, QTableWidgetItem, QWidget

from ppdp_desktop.core.report.build import MethodReport
from ppdp_desktop.core.report.values import bounds, shown_values

VALUE_COLUMNS = ("Value", "Records", "Share", "Estimated", "Retention p", "Max posterior", "rho2")


def format_number(value: object, digits: int = 4) -> str:
    """A table cell: ``None``/NaN as an en dash, floats with ``digits`` decimals, ints with separators."""
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}f}"
    return str(value)


def read_only_table(columns: tuple[str, ...] | list[str], tip: str) -> QTableWidget:
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(True)
    table.setToolTip(tip)
    return table


def scrolled(content: QWidget) -> QScrollArea:
    """``content`` (a label, or a widget of labels) in a frameless scroll area that keeps its width and scrolls
    its height: a long summary is read to its last line in a small window instead of being cut."""
    if isinstance(content, QLabel):
        content.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setWidget(content)
    area.viewport().setAutoFillBackground(False)  # the box's colour (amber, red) shows through
    content.setAutoFillBackground(False)
    return area


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return text == "–"
    return True


def _cell(values, i: int) -> str:
    """Entry ``i`` of a per-value array that a method may not have (``None``) or not have for a value (NaN)."""
    if values is None or values[i] is None or not np.isfinite(float(values[i])):
        return "-"
    return format_number(float(values[i]))


def fill(table: QTableWidget, rows: list[list[str]]) -> None:
    """Put ``rows`` of text in ``table``; numbers are right-aligned."""
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            if _is_number(text):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            else:
                item.setToolTip(text)  # long text (a guarantee's kind) may be elided in the cell
            table.setItem(r, c, item)
    table.resizeColumnsToContents()
    table.resizeRowsToContents()


def _value_row(report: MethodReport, i: int, n: float, rho2: np.ndarray) -> list[str]:
    """Value ``i`` of ``report`` as the cells of :data:`VALUE_COLUMNS` (``n``: the records, for the share;
    ``rho2``: each value's bound as the report's table states it)."""
    return [
        report.values[i],
        format_number(int(report.original[i])),
        f"{report.original[i] / n:.2%}",
        format_number(None if report.reconstructed is None else float(report.reconstructed[i]), 1),
        _cell(report.retention, i),  # partition has a retention per sub-table, not per value
        _cell(report.max_posterior, i),
        _cell(rho2, i),
    ]


def value_table_rows(report: MethodReport) -> tuple[list[list[str]], list[tuple[int, str]]]:
    """The per-value table's rows, and the rows that hold one sentence across the table. A large domain
    (thousands of diagnosis codes) gets the report's shortened table: its most frequent and most protected
    values, each group under a title row, and a last row saying how many values are left out."""
    shown = shown_values(report)
    n = max(float(report.original.sum()), 1.0)
    rho2 = bounds(report)[1]  # one pair for all (partitioning) included, as the HTML and PDF show it
    rows: list[list[str]] = []
    notes: list[tuple[int, str]] = []
    for group in shown.groups:
        if group.title:
            notes.append((len(rows), group.title))
            rows.append([""] * len(VALUE_COLUMNS))
        rows += [_value_row(report, i, n, rho2) for i in group.indices]
    if shown.hidden:
        notes.append((len(rows), f"{shown.hidden:,} of the {shown.total:,} values are not shown here; exporting the "
                                 "release writes the full table, one row per value, to a CSV file beside your report."))
        rows.append([""] * len(VALUE_COLUMNS))
    return rows, notes


def note_row(table: QTableWidget, row: int, text: str) -> None:
    """Row ``row`` of ``table`` as one bold sentence across every column (a group's title, or what is left out)."""
    table.setSpan(row, 0, 1, table.columnCount())
    item = QTableWidgetItem(text)
    font = item.font()
    font.setBold(True)
    item.setFont(font)
    item.setToolTip(text)
    table.setItem(row, 0, item)


class FigureImage(QLabel):
    """A figure's image at the width of its tab (never wider than drawn), rescaled when the tab is resized."""

    def __init__(self, pixmap: QPixmap) -> None:
        super().__init__()
        self._full = pixmap
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.setMinimumWidth(200)
        self.setPixmap(pixmap)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        width = min(self.width() - 4, self._full.width())
        if width > 0 and (self.pixmap().isNull() or self.pixmap().width() != width):
            self.setPixmap(self._full.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation))
