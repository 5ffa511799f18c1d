"""The report page's "What a group reveals" tab: the largest share of one sensitive value among records that
share their quasi-identifiers, as the release's statistics show it (a
:class:`~ppdp_desktop.core.evaluation.group_disclosure.GroupDisclosure` the run job computed; the words are the
report's own, from :mod:`ppdp_desktop.core.report.groups`)."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLabel, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from ppdp_desktop.core.evaluation.group_disclosure import GroupDisclosure
from ppdp_desktop.core.report import groups
from ppdp_desktop.gui.report_widgets import scrolled

COLORS = {"warning": "#8a4b00", "normal": "#222222"}
EMPTY = "Not measured for this report."


def brief_html(d: GroupDisclosure | None) -> str:
    """The part of the "In brief" tab: the title, the headline and the clinician's example."""
    if d is None:
        return ""
    color = COLORS[groups.level(d)]
    example = groups.example(d)
    return (f"<b>{html.escape(groups.TITLE)}</b><p style='color:{color}'>{html.escape(groups.headline(d))}</p>"
            + (f"<p>{html.escape(example)}</p>" if example else ""))


class GroupPanel(QWidget):
    """The headline, the sentences behind it and the groups above the bound, most records first."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.meaning = QLabel(groups.MEANING)
        self.meaning.setStyleSheet("color: #555; font-style: italic;")
        self.text = QLabel(EMPTY)
        for label in (self.meaning, self.text):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(groups.TABLE_HEADER))
        self.table.setHorizontalHeaderLabels(list(groups.TABLE_HEADER))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setToolTip("The groups above the bound, most records first (else the largest shares): anyone "
                              "known to be in such a group can be guessed to have its most frequent value")
        words = QWidget()  # the sentences scroll in a small window; the table has its own scroll bars below them
        words_layout = QVBoxLayout(words)
        words_layout.setContentsMargins(0, 0, 0, 0)
        words_layout.addWidget(self.meaning)
        words_layout.addWidget(self.text)
        words_layout.addStretch(1)
        self.words = scrolled(words)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.setChildrenCollapsible(False)
        self.split.addWidget(self.words)
        self.split.addWidget(self.table)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setSizes([600, 400])
        layout = QVBoxLayout(self)
        layout.addWidget(self.split)

    def show_disclosure(self, d: GroupDisclosure | None) -> None:
        """Lay out ``d`` (None: a report without the measure)."""
        if d is None:
            self.text.setText(EMPTY)
            self.table.setRowCount(0)
            self.table.setVisible(False)
            return
        head = f"<b style='color:{COLORS[groups.level(d)]}'>{html.escape(groups.headline(d))}</b>"
        items = "".join(f"<li>{html.escape(line)}</li>" for line in groups.lines(d))
        self.text.setText(head + (f"<ul>{items}</ul>" if items else ""))
        rows = groups.table(d)
        self.table.setVisible(bool(rows))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                item = QTableWidgetItem(cell)
                if c in (1, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(cell)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
