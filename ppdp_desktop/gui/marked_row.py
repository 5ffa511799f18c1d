"""A looked-up record in a table: each value beside what it is, the release's values in a warning colour.

A reverse lookup shows the patient beside the released row; a randomized, noised or generalized value is the
release's, not the patient's (:mod:`ppdp_desktop.core.release.lookup_marks`). :func:`fill_marked_table` never
lets such a value look like the others: a warning colour, its mark in bold words (colour is never alone), its
description as tooltip; :func:`note_text` names them again for a note below the table.
"""
from __future__ import annotations

import html

from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from ppdp_desktop.core.release.lookup import LookedUp
from ppdp_desktop.core.visible import visible

#: a value that is the release's, not the patient's
NOT_ORIGINAL_BACKGROUND, NOT_ORIGINAL_TEXT = QColor("#fff4e0"), QColor("#7a4a00")
WARNING_STYLE = "QLabel { color: #7a4a00; background: #fff4e0; border: 1px solid #c77800; padding: 4px; }"
COLUMNS = ["Column", "Value", "What this is"]


def fill_marked_table(table: QTableWidget, row: LookedUp) -> None:
    """One table row per column of ``row``: its name, its value and its mark (``table`` has :data:`COLUMNS`)."""
    table.setRowCount(len(row))
    bold = QFont()
    bold.setBold(True)
    for i, (name, value) in enumerate(row.items()):
        mark = row.marks.get(name)
        texts = [str(name), "" if value is None else str(value), "" if mark is None else mark.label]
        for j, text in enumerate(texts):
            item = QTableWidgetItem(visible(text))  # the release's and the key's text, every hidden character spelt
            if mark is not None:  # a tooltip reads text that looks like HTML as HTML: escaped, shown as it is
                item.setToolTip(f"<qt>{html.escape(visible(f'{name}: {mark.what}'), quote=False)}</qt>")
                if not mark.is_original and mark.status != "pseudonym":
                    item.setBackground(QBrush(NOT_ORIGINAL_BACKGROUND))
                    item.setForeground(QBrush(NOT_ORIGINAL_TEXT))
                    if j == 2:
                        item.setFont(bold)
            table.setItem(i, j, item)
    table.resizeColumnToContents(0)


def note_text(row: LookedUp) -> str:
    """The values of ``row`` that are not the patient's, in a sentence ("" if there is none)."""
    released = row.not_original()
    if not released:
        return ""
    return ("Not the patient's values — " + "; ".join(visible(f"{name}: {row.marks[name].what}") for name in released)
            + ". Check the patient's file before acting on them.")
