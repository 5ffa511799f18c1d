"""Tools → Reverse lookup: open a release with its sealed key and decode values, pseudonyms, files."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.progress import CancelToken, no_progress
from ppdp_desktop.core.release.decoded import write_decoded
from ppdp_desktop.core.release.lookup import KeyRing, LookedUp
from ppdp_desktop.core.release.lookup_marks import Decoded
from ppdp_desktop.core.visible import visible, visible_lines
from ppdp_desktop.gui.marked_row import COLUMNS as PSEUDONYM_COLUMNS
from ppdp_desktop.gui.marked_row import WARNING_STYLE, fill_marked_table, note_text
from ppdp_desktop.gui.screen_fit import name_tab_scroll_buttons
from ppdp_desktop.gui.wording import window_name
from ppdp_desktop.gui.worker import Worker, describe_error

OPEN_JOB, FILE_JOB = "lookup-open", "lookup-file"
ERROR_STYLE = "color: #c0392b;"
KEY_FILTER = "PPDP key files (*.ppdpkey);;All files (*)"
TABLE_FILTER = "Tables (*.csv *.tsv *.txt *.xlsx);;All files (*)"


def _path_row(parent: QWidget, edit: QLineEdit, title: str, mode: str, filters: str = "") -> QHBoxLayout:
    """``edit`` and a Browse… button; ``mode`` is "folder", "open" or "save"."""

    def browse() -> None:
        start = edit.text()
        if mode == "folder":
            path = QFileDialog.getExistingDirectory(parent, title, start)
        elif mode == "open":
            path = QFileDialog.getOpenFileName(parent, title, start, filters)[0]
        else:
            path = QFileDialog.getSaveFileName(parent, title, start, filters)[0]
        if path:
            edit.setText(path)

    button = QPushButton("Browse…")
    button.clicked.connect(browse)
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    row.addWidget(button)
    return row


def decode_file(ring: KeyRing, source: str | Path, out: str | Path, key: str | Path | None = None,
                overwrite: bool = False) -> Decoded:
    """Decode a results table (any format :func:`load_table` reads) into the CSV ``out`` (0600, never inside a
    release or over a key), each column's header followed by what it is; the decoded table with its marks."""
    frame = load_table(source).frame.astype("string").fillna("").astype(object)
    decoded = ring.decode_marked(frame)
    write_decoded(decoded.headed(), out, overwrite=overwrite, sources=[source, key, ring.release.folder])
    return decoded


class LookupDialog(QDialog):
    """Release folder, key file and passphrase, then Value / Pseudonym / File tabs.

    Parameters
    ----------
    worker : Worker, optional
        Runs the slow steps (scrypt when opening, decoding a file) off the GUI thread when it is
        idle; without it, or while it runs another job, they run directly.
    release_folder, key_path : str, optional
        Initial paths (e.g. those of the last export).

    Every error (wrong passphrase, another release's key, unknown value) is shown in red in
    :attr:`message`; the dialog stays usable.
    """

    def __init__(
        self, worker: Worker | None = None, release_folder: str | None = None, key_path: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reverse lookup")
        self.worker = worker
        self.ring: KeyRing | None = None
        self._pending: dict[str, Callable[[Any], None]] = {}  # job name -> what to do with its result

        self.folder_edit = QLineEdit(release_folder or "")
        self.key_edit = QLineEdit(key_path or "")
        self.passphrase_edit = QLineEdit()
        self.passphrase_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase_edit.returnPressed.connect(self.open_key)
        self.open_button = QPushButton("Open")
        self.open_button.clicked.connect(self.open_key)
        self.opened_label = QLabel("Open the release with its key to decode.")
        form = QFormLayout()
        form.addRow("Release folder", _path_row(self, self.folder_edit, "Release folder", "folder"))
        form.addRow("Key file", _path_row(self, self.key_edit, "Key file", "open", KEY_FILTER))
        form.addRow("Passphrase", self.passphrase_edit)
        form.addRow("", self.open_button)

        self.tabs = QTabWidget()
        name_tab_scroll_buttons(self.tabs)
        self.tabs.addTab(self._value_tab(), "Value")
        self.tabs.addTab(self._pseudonym_tab(), "Pseudonym")
        self.tabs.addTab(self._file_tab(), "File")
        self.tabs.setEnabled(False)
        self.message = QLabel()
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.opened_label)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        # Enter in a field runs that field's action only: no button of the dialog is a default button
        # (Qt makes every push button of a dialog "auto default", so Enter also clicked Browse…).
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
            button.setDefault(False)
        for label in (self.opened_label, self.message, self.value_result, self.pseudonym_note, self.file_result):
            label.setTextFormat(Qt.TextFormat.PlainText)  # they quote the release: never read as HTML
        if worker is not None:
            worker.finished.connect(self._on_finished)
            worker.errored.connect(self._on_errored)
            worker.cancelled.connect(self._on_cancelled)
        self.resize(640, 520)

    # --- tabs ---------------------------------------------------------------------------------
    def _value_tab(self) -> QWidget:
        tab = QWidget()
        self.attribute_combo = QComboBox()
        self.value_edit = QLineEdit()
        self.value_edit.setPlaceholderText("a published value, alias or grade")
        self.value_edit.returnPressed.connect(self.decode_value)
        button = QPushButton("Decode")
        button.clicked.connect(self.decode_value)
        self.value_result = QLabel()
        self.value_result.setWordWrap(True)
        form = QFormLayout(tab)
        form.addRow("Attribute", self.attribute_combo)
        form.addRow("Value", self.value_edit)
        form.addRow("", button)
        form.addRow("Stands for", self.value_result)
        return tab

    def _pseudonym_tab(self) -> QWidget:
        tab = QWidget()
        self.pseudonym_edit = QLineEdit()
        self.pseudonym_edit.returnPressed.connect(self.decode_pseudonym)
        button = QPushButton("Decode")
        button.clicked.connect(self.decode_pseudonym)
        self.pseudonym_table = QTableWidget(0, len(PSEUDONYM_COLUMNS))
        self.pseudonym_table.setHorizontalHeaderLabels(PSEUDONYM_COLUMNS)
        self.pseudonym_table.horizontalHeader().setStretchLastSection(True)
        self.pseudonym_table.verticalHeader().setVisible(False)
        self.pseudonym_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        row = QHBoxLayout()
        row.addWidget(QLabel("Pseudonym"))
        row.addWidget(self.pseudonym_edit, 1)
        row.addWidget(button)
        self.pseudonym_note = QLabel()
        self.pseudonym_note.setWordWrap(True)
        self.pseudonym_note.setStyleSheet(WARNING_STYLE)
        self.pseudonym_note.setVisible(False)
        layout = QVBoxLayout(tab)
        layout.addLayout(row)
        layout.addWidget(self.pseudonym_table, 1)
        layout.addWidget(self.pseudonym_note)
        return tab

    def _file_tab(self) -> QWidget:
        tab = QWidget()
        self.file_edit = QLineEdit()
        self.file_edit.setPlaceholderText("a results table with released values or pseudonyms")
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText("the decoded CSV to write")
        self.file_overwrite = QCheckBox("Overwrite an existing output file")
        self.file_button = QPushButton("Decode")
        self.file_button.clicked.connect(self.decode_file)
        self.file_result = QLabel()
        self.file_result.setWordWrap(True)
        form = QFormLayout(tab)
        form.addRow("Results file", _path_row(self, self.file_edit, "Results file", "open", TABLE_FILTER))
        form.addRow("Output CSV", _path_row(self, self.out_edit, "Decoded CSV", "save", "CSV (*.csv)"))
        form.addRow("", self.file_overwrite)
        form.addRow("", self.file_button)
        form.addRow("", self.file_result)
        return tab

    # --- actions ------------------------------------------------------------------------------
    def open_key(self) -> None:
        """Open the key (scrypt, ~0.3 s) for the release; fill the attribute list."""
        folder, key, passphrase = self.folder_edit.text().strip(), self.key_edit.text().strip(), self.passphrase_edit.text()
        missing = [n for n, v in (("the release folder", folder), ("the key file", key), ("the passphrase", passphrase)) if not v]
        if missing:
            self._show_error(f"Enter {', '.join(missing[:-1]) + ' and ' if len(missing) > 1 else ''}{missing[-1]}.")
            return
        self.open_button.setEnabled(False)
        self._show_info("Opening the key…")
        self._run(OPEN_JOB, lambda p, c: KeyRing.open(folder, key, passphrase), self._opened)

    def decode_value(self) -> None:
        """Decode one published value of the chosen attribute."""
        if self.ring is None:
            return
        attribute, text = self.attribute_combo.currentText(), self.value_edit.text().strip()
        try:
            values = self.ring.decode_value(attribute, text)
        except PPDPError as exc:
            self.value_result.clear()
            self._show_error(exc.phrase(window_name))
            return
        self.value_result.setText(visible(values[0]) if len(values) == 1 else "one of: " + ", ".join(map(visible, values)))
        self._show_info("")

    def decode_pseudonym(self) -> None:
        """Show the removed identifiers and the decoded row of one pseudonym."""
        if self.ring is None:
            return
        try:
            row = self.ring.lookup_pseudonym(self.pseudonym_edit.text().strip())
        except PPDPError as exc:
            self.pseudonym_table.setRowCount(0)
            self.pseudonym_note.setVisible(False)
            self._show_error(exc.phrase(window_name))
            return
        self._show_row(row)
        self._show_info("")

    def _show_row(self, row: LookedUp) -> None:
        """Each value beside what it is; the release's values (not the patient's) named again below."""
        fill_marked_table(self.pseudonym_table, row)
        self.pseudonym_note.setText(note_text(row))
        self.pseudonym_note.setVisible(bool(self.pseudonym_note.text()))

    def decode_file(self) -> None:
        """Decode a whole results file into a CSV (written atomically)."""
        ring, source, out = self.ring, self.file_edit.text().strip(), self.out_edit.text().strip()
        if ring is None:
            return
        if not source or not out:
            self._show_error("Enter the results file and the output CSV.")
            return
        if Path(out).resolve() == Path(source).resolve():
            self._show_error("The output must be another file than the results file.")
            return
        if Path(out).exists() and not self.file_overwrite.isChecked():
            self._show_error(f"{out} already exists; choose another output or tick Overwrite.")
            return
        self.file_button.setEnabled(False)
        self.file_result.clear()
        self._show_info("Decoding…")
        key, overwrite = self.key_edit.text().strip(), self.file_overwrite.isChecked()
        self._run(FILE_JOB, lambda p, c: decode_file(ring, source, out, key, overwrite), self._file_done)

    # --- results ------------------------------------------------------------------------------
    def _opened(self, ring: KeyRing) -> None:
        self.ring = ring
        self.passphrase_edit.clear()
        self.open_button.setEnabled(True)
        names = list(ring.payload.get("aliases", {})) + list(ring.payload.get("graded", {}))
        self.attribute_combo.clear()
        self.attribute_combo.addItems(names)
        self.tabs.setEnabled(True)
        self.opened_label.setText(visible(f"Opened the key of {ring.release.folder} ({len(ring.release.table):,} records)."))
        notes = [visible(note) for note in ring.provenance_notes()]  # made with other versions than this app's
        self._show_info("\n".join(note[0].upper() + note[1:] for note in notes))

    def _file_done(self, decoded: Decoded) -> None:
        self.file_button.setEnabled(True)
        released = [n for n, m in decoded.marks.items() if not m.is_original and m.status != "pseudonym"]
        text = (f"Decoded {len(decoded.table):,} rows into {self.out_edit.text().strip()}; each column's header says "
                "what it is.")
        if released:
            text += " Not the patients' values (the release's): " + ", ".join(
                f"{n} ({decoded.marks[n].status})" for n in released) + "."
        self.file_result.setText(visible(text))
        self.file_result.setStyleSheet(WARNING_STYLE if released else "")
        self._show_info("")

    def _failed(self, message: str) -> None:
        self.open_button.setEnabled(True)
        self.file_button.setEnabled(True)
        self._show_error(message)

    # --- running ------------------------------------------------------------------------------
    def _run(self, name: str, fn: Callable[..., Any], done: Callable[[Any], None]) -> None:
        """Run ``fn`` in the worker if it is idle, else directly; then ``done(result)`` or show the error."""
        if self.worker is None or self.worker.is_running():
            try:
                result = fn(no_progress, CancelToken())
            except Exception as exc:  # noqa: BLE001 - shown inline like the worker's errors
                self._failed(describe_error(exc)[0])
                return
            done(result)
            return
        self._pending[name] = done
        self.worker.start(name, fn)

    def _on_finished(self, name: str, result: object) -> None:
        if name in self._pending:
            self._pending.pop(name)(result)

    def _on_errored(self, name: str, message: str, details: str = "") -> None:
        if self._pending.pop(name, None) is not None:
            self._failed(message)

    def _on_cancelled(self, name: str) -> None:
        self._on_errored(name, "Cancelled.")

    def _show_error(self, text: str) -> None:
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setText(visible_lines(text))  # an error may quote the release: its own lines, nothing hidden

    def _show_info(self, text: str) -> None:
        self.message.setStyleSheet("")
        self.message.setText(visible_lines(text))
