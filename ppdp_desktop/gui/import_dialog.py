"""Import options: how a file is read (sheet, delimiter, encoding, decimal mark, header row, each column's
kind), with a live preview of the first rows as they will be loaded.

Shown when the first look at a file is unsure (:mod:`ppdp_desktop.core.data.inspection`) and always
reachable from the load page. The preview is read by a worker of its own, a moment after the last change,
from the first rows only; the file is loaded in full only after OK.
"""
from __future__ import annotations

import codecs
import html
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QSpinBox,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.encoding_guess import label
from ppdp_desktop.core.data.inspection import FileFacts
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.gui.screen_fit import fit_to_screen
from ppdp_desktop.gui.table_model import DataFrameModel
from ppdp_desktop.gui.worker import Worker

PREVIEW_ROWS = 100
DEBOUNCE_MS = 200
AUTO = ""
DELIMITERS = [("Detect", AUTO), ("Comma  ,", ","), ("Semicolon  ;", ";"), ("Tab", "tab"), ("Pipe  |", "|"),
              ("Space", "space")]
ENCODINGS = [("Detect", AUTO), ("UTF-8", "utf-8"), ("Windows-1252 (Western European)", "cp1252"),
             ("Windows-1250 (Central European)", "cp1250"), ("Latin-1 (ISO 8859-1)", "latin-1"),
             ("Latin-9 (ISO 8859-15)", "iso8859-15"), ("Latin-2 (ISO 8859-2, Central European)", "iso8859-2"),
             ("Windows-1257 (Baltic)", "cp1257"), ("Windows-1251 (Cyrillic)", "cp1251"), ("UTF-16", "utf-16"),
             ("Mac Roman", "mac-roman")]
ASK_STYLE = "QComboBox { border: 2px solid #e65100; background: #fff3e0; }"
DECIMALS = [("Point  1.5", "."), ("Comma  1,5", ",")]
KIND_CHOICES = [Kind.CATEGORICAL, Kind.NUMERIC, Kind.DATE, Kind.TEXT]
KIND_HELP = {
    Kind.CATEGORICAL: "categories, released as the text read",
    Kind.NUMERIC: "numbers (intervals, perturbation of numbers, microaggregation)",
    Kind.DATE: "dates, kept as written; generalized by month, year and decade",
    Kind.TEXT: "codes and identifiers kept exactly as written (leading zeros), e.g. postcodes, record numbers",
}


class ImportDialog(QDialog):
    """The options for one file; :meth:`options` gives them as :func:`load_table` keyword arguments."""

    def __init__(self, facts: FileFacts, options: dict[str, object] | None = None, parent: QWidget | None = None,
                 error: str = "") -> None:
        super().__init__(parent)
        self.facts = facts
        self.path = Path(facts.path)
        self.setWindowTitle(f"Import options — {self.path.name}")
        fit_to_screen(self, 900, 600)  # its Load and Cancel stay on an 800x600 screen
        start = {**facts.options, **(options or {})}
        self._kinds: dict[str, str] = dict(start.get("kinds") or {})  # the user's choices only
        self.preview_dataset: Dataset | None = None

        self.doubts = QLabel()
        self.doubts.setWordWrap(True)
        self.doubts.setStyleSheet("color: #8a4b00;")
        lines = ([f"Please check how {html.escape(self.path.name)} is read:"] + [f"• {html.escape(d)}" for d in facts.doubts]
                 if facts.doubts else [])
        self.doubts.setText("<br>".join(lines))
        self.doubts.setVisible(bool(lines))

        form = QFormLayout()
        self.sheet = QComboBox()
        for sheet in facts.sheets:
            self.sheet.addItem(sheet, sheet)
        self._select(self.sheet, start.get("sheet", facts.sheets[0] if facts.sheets else AUTO))
        self.delimiter = self._combo(DELIMITERS, start.get("sep", AUTO))
        self.encoding = self._combo(ENCODINGS, start.get("encoding", AUTO))
        self.decimal = self._combo(DECIMALS, start.get("decimal", "."))
        self.sheet.setToolTip("The sheet of the workbook that holds the table")
        self.delimiter.setToolTip("The character between two cells of a row (comma, semicolon, tab …); "
                                  "automatic guesses it from the file")
        self.encoding.setToolTip("How the file's letters are stored; choose another one if accented letters "
                                 "look wrong in the preview")
        self.decimal.setToolTip("Whether numbers are written 1.5 or 1,5")
        self.encoding_note = QLabel()
        self.encoding_note.setWordWrap(True)
        self.encoding_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._asking = bool(facts.encodings) and start.get("encoding", AUTO) in (None, AUTO)
        self.encoding_box = encoding_box = QWidget(self)
        encoding_rows = QVBoxLayout(encoding_box)
        encoding_rows.setContentsMargins(0, 0, 0, 0)
        encoding_rows.addWidget(self.encoding)
        encoding_rows.addWidget(self.encoding_note)
        self._offer_candidates()
        self.header_row = QSpinBox()
        self.header_row.setRange(1, 1000)
        self.header_row.setValue(int(start.get("header_row", 1) or 1))
        self.header_row.setToolTip("The row that holds the column names, counting from 1 (blank rows not counted); "
                                   "rows above it, such as a title, are skipped.")
        text_file = facts.format == "csv"
        workbook = facts.format in ("xlsx", "xls")
        if workbook:
            form.addRow("&Sheet:", self.sheet)
        if text_file:
            form.addRow("&Delimiter:", self.delimiter)
            form.addRow("&Encoding:", encoding_box)
            form.labelForField(encoding_box).setBuddy(self.encoding)
        else:
            encoding_box.hide()
        form.addRow("Decimal &mark:", self.decimal)
        if text_file or workbook:
            form.addRow("&Header row:", self.header_row)

        self.preview_model = DataFrameModel()
        self.preview = QTableView()
        self.preview.setModel(self.preview_model)
        self.preview.verticalHeader().setDefaultSectionSize(22)
        self.preview.setToolTip("The first rows as they will be loaded with these options")
        self.kind_table = QTableWidget(0, 3)
        self.kind_table.setHorizontalHeaderLabels(["Column", "Kind", "First values"])
        self.kind_table.verticalHeader().setVisible(False)
        self.kind_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.kind_table.horizontalHeader().setStretchLastSection(True)
        self.kind_table.setToolTip("Each column's kind (how it is read) and its first values; change a kind if the "
                                   "guess is wrong")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.preview)
        split.addWidget(self.kind_table)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Load")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setToolTip("Load the file with these options")
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setToolTip("Close without loading anything")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.doubts)
        layout.addLayout(form)
        layout.addWidget(QLabel(f"Preview of the first {PREVIEW_ROWS} rows as they will be loaded; the kind of each "
                                "column can be changed below."))
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)

        self.worker = Worker(self)
        self.worker.finished.connect(self._on_preview)
        self.worker.errored.connect(self._on_preview_error)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self._read_preview)
        for combo in (self.sheet, self.delimiter, self.encoding, self.decimal):
            combo.currentIndexChanged.connect(self._on_option_changed)
        self.encoding.currentIndexChanged.connect(self._on_encoding_changed)
        self.header_row.valueChanged.connect(self._on_option_changed)
        if error:
            self._show_error(error)
        self._read_preview()

    # --- options ------------------------------------------------------------------------------------
    @staticmethod
    def _combo(choices: list[tuple[str, str]], current: object) -> QComboBox:
        combo = QComboBox()
        for text, value in choices:
            combo.addItem(text, value)
        ImportDialog._select(combo, current)
        return combo

    @staticmethod
    def _select(combo: QComboBox, value: object) -> None:
        index = combo.findData(value if value is not None else AUTO)
        if index < 0 and value not in (None, AUTO):
            combo.addItem(str(value), value)  # an option saved in a project that the list does not have
            index = combo.count() - 1
        combo.setCurrentIndex(max(index, 0))

    # --- encoding -------------------------------------------------------------------------------------
    def _offer_candidates(self) -> None:
        """When the encoding cannot be told, the candidates come first in the list, the list is highlighted and a
        line of the file is shown as the chosen one reads it; Load waits for a choice."""
        if not self._asking:
            self._show_encoding()
            return
        for index, candidate in enumerate(self.facts.encodings):
            found = self.encoding.findData(candidate.codec)
            if found < 0:
                found = next((i for i in range(self.encoding.count())
                              if self.encoding.itemData(i) and _same_codec(self.encoding.itemData(i), candidate.codec)),
                             -1)
            text = f"{candidate.label} — reads \u201c{candidate.word}\u201d"
            if found >= 0:
                self.encoding.removeItem(found)
            self.encoding.insertItem(1 + index, text, candidate.codec)
        self._show_encoding()

    def _on_encoding_changed(self) -> None:
        if self.encoding.currentData():
            self._asking = False
        self._show_encoding()

    def _show_encoding(self, detected: str = "") -> None:
        chosen = self.encoding.currentData()
        if self._asking:
            self.encoding.setStyleSheet(ASK_STYLE)
            readings = "; ".join(f"{html.escape(c.label)} reads \u201c{html.escape(c.word)}\u201d"
                                 for c in self.facts.encodings)
            self.encoding_note.setText(f"<b>The encoding cannot be told for sure</b>: {readings}. Choose the one in "
                                       "which the letters are right; the file is loaded only after you choose.")
            self.encoding_note.setStyleSheet("color: #8a4b00;")
            return
        self.encoding.setStyleSheet("")
        self.encoding_note.setStyleSheet("")
        line = next((c.line for c in self.facts.encodings if _same_codec(c.codec, chosen)), "") if chosen else ""
        if line:
            self.encoding_note.setText(f"A line of the file as {html.escape(label(chosen))} reads it: "
                                       f"<i>{html.escape(line)}</i>")
        elif not chosen and detected:
            self.encoding_note.setText(f"Encoding: {html.escape(label(detected))}, detected")
        else:
            self.encoding_note.setText("")

    def options(self) -> dict[str, object]:
        """The chosen options as :func:`load_table` keyword arguments (defaults left out)."""
        options: dict[str, object] = {}
        if self.facts.format in ("xlsx", "xls") and self.sheet.currentData():
            options["sheet"] = self.sheet.currentData()
        if self.facts.format == "csv":
            if self.delimiter.currentData():
                options["sep"] = self.delimiter.currentData()
            if self.encoding.currentData():
                options["encoding"] = self.encoding.currentData()
        if self.decimal.currentData() == ",":
            options["decimal"] = ","
        if self.header_row.value() != 1:
            options["header_row"] = self.header_row.value()
        if self._kinds:
            options["kinds"] = dict(self._kinds)
        return options

    def _on_option_changed(self) -> None:
        self.status.setText("Reading the preview…")
        self.status.setStyleSheet("")
        self.timer.start()

    # --- preview --------------------------------------------------------------------------------------
    def _read_preview(self) -> None:
        path, options = self.path, self.options()
        if self._asking:  # the preview as the best candidate reads it, until the user chooses
            options["encoding"] = self.facts.encodings[0].codec
        self.worker.start("preview", lambda progress, cancel: load_table(path, rows=PREVIEW_ROWS, **options))

    def _on_preview(self, _name: str, dataset: Dataset) -> None:
        self.preview_dataset = dataset
        self.preview_model.set_frame(dataset.frame)
        self._kinds = {c: k for c, k in self._kinds.items() if c in dataset.schema.attributes}
        self._fill_kinds(dataset)
        self.status.setStyleSheet("color: #1b5e20;")
        columns = dataset.frame.shape[1]
        self.status.setText(f"{columns} column{'s' * (columns != 1)} read. Load reads the whole file with these options.")
        self._show_encoding(dataset.details.get("encoding", ""))
        if self._asking:
            self.status.setStyleSheet("color: #8a4b00;")
            self.status.setText(f"The preview reads the file as {self.facts.encodings[0].label}, the first candidate; "
                                "choose the encoding above to load it.")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not self._asking)

    def _on_preview_error(self, _name: str, message: str, _details: str) -> None:
        self._show_error(message)

    def _show_error(self, message: str) -> None:
        self.status.setStyleSheet("color: #b71c1c;")
        self.status.setText(f"{message} Change the options above.")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(False)

    def _fill_kinds(self, dataset: Dataset) -> None:
        self.kind_table.setRowCount(0)
        self.kind_table.setRowCount(len(dataset.frame.columns))
        for row, name in enumerate(dataset.frame.columns):
            item = QTableWidgetItem(name)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.kind_table.setItem(row, 0, item)
            combo = kind_combo(dataset.schema.attributes[name].kind)
            if name not in self._kinds:
                combo.setToolTip("Guessed from the values; choose another kind if it is wrong.")
            combo.currentIndexChanged.connect(lambda _i, n=name, c=combo: self._on_kind_changed(n, c))
            self.kind_table.setCellWidget(row, 1, combo)
            sample = ", ".join(str(v) for v in dataset.frame[name].dropna().astype(str).unique()[:5])
            values = QTableWidgetItem(sample)
            values.setFlags(values.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.kind_table.setItem(row, 2, values)

    def _on_kind_changed(self, column: str, combo: QComboBox) -> None:
        self._kinds[column] = combo.currentData()
        self._on_option_changed()

    def set_kind(self, column: str, kind: Kind) -> None:
        """Choose a column's kind with its combo box (as a user would)."""
        row = list(self.preview_dataset.frame.columns).index(column)
        combo = self.kind_table.cellWidget(row, 1)
        combo.setCurrentIndex(combo.findData(kind.value))

    def done(self, result: int) -> None:  # noqa: D401 - Qt API
        self.timer.stop()
        self.worker.shutdown()
        super().done(result)


def _same_codec(first: str, second: str) -> bool:
    try:
        return codecs.lookup(first).name == codecs.lookup(second).name
    except LookupError:
        return first == second


def kind_combo(current: Kind) -> QComboBox:
    """A combo box of the four kinds, each with a tooltip saying what it means."""
    combo = QComboBox()
    for kind in KIND_CHOICES:
        combo.addItem(kind.label, kind.value)
        combo.setItemData(combo.count() - 1, KIND_HELP[kind], Qt.ItemDataRole.ToolTipRole)
    combo.setCurrentIndex(combo.findData(current.value))
    return combo
