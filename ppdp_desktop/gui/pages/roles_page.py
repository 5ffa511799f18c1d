"""Step 2: each column's role and kind (a changed kind reads the file again), and the taxonomy of the
sensitive and quasi-identifier columns that are not numeric.

A changed kind keeps every other column's taxonomy, and of the column's own settings what still applies to its
values as now read (:mod:`~ppdp_desktop.core.taxonomy.kind_change`); what cannot be kept is said in a question
with Cancel before anything changes."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGroupBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.schema import Kind, Role
from ppdp_desktop.core.data.sentences import full_stop
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.taxonomy.kind_change import KindChange
from ppdp_desktop.gui.import_dialog import kind_combo
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.risk_panel import RiskPanel
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.taxonomy_editor import TaxonomyEditor

ROLE_HELP = {
    Role.IDENTIFIER: "identifies a person (name, record number): removed, replaced by a pseudonym",
    Role.QUASI_IDENTIFIER: "could single a person out when combined (age, postcode, sex)",
    Role.SENSITIVE: "what must not be learned about anyone (diagnosis)",
    Role.INSENSITIVE: "released as it is",
}
ROLE_LABELS = {Role.IDENTIFIER: "Identifier", Role.QUASI_IDENTIFIER: "Quasi-identifier",
               Role.SENSITIVE: "Sensitive", Role.INSENSITIVE: "Insensitive"}
EDITOR_HINT = "Select a sensitive or quasi-identifier column that is not numeric to edit its taxonomy."
CHANGE_KIND = "Change the kind"


def kind_change_question(changes: list[KindChange]) -> str:
    """What reading the columns as their new kinds cannot keep, and what it keeps, for the question before it."""
    parts = []
    for change in changes:
        lines = "\n".join(f"• {line}" for line in change.lost)
        parts.append(f"Reading {change.column!r} as {change.new.label} instead of {change.old.label} cannot keep:\n{lines}")
    columns = ", ".join(repr(c.column) for c in changes)
    return ("\n\n".join(parts) + "\n\nEverything else is kept: the taxonomies of the other columns, every role and "
            f"setting. Change the kind anyway? Cancel leaves {columns} as {'it is' if len(changes) == 1 else 'they are'}.")


class RolesPage(WizardPage):
    title = "Roles & taxonomies"
    help_anchor = "roles"  # its section of the user guide (F1)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Column", "Kind", "Role"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().moveSection(2, 1)  # shown Column, Role, Kind: the role is what this step asks,
        # so a small window keeps it in view (the kind is found from the data); the columns keep their indices
        self.table.verticalHeader().setVisible(False)
        self.table.setToolTip("Every column of the data: choose how it is read (kind) and its role. Select a "
                              "column to edit its taxonomy on the right.")
        self.table.currentCellChanged.connect(lambda row, *_: self._show_taxonomy(row))
        self.help = QLabel("\n".join(f"• {ROLE_LABELS[r]}: {text}" for r, text in ROLE_HELP.items()))
        self.help.setWordWrap(True)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.editor = TaxonomyEditor()
        self.editor.changed.connect(self._on_taxonomy_changed)
        self.editor_box = QGroupBox("Taxonomy")
        box = QVBoxLayout(self.editor_box)
        self.editor_hint = QLabel(EDITOR_HINT)
        self.editor_hint.setWordWrap(True)
        box.addWidget(self.editor_hint)
        box.addWidget(self.editor, 1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        self.risk = RiskPanel(state)
        notes = QWidget()  # under the table; in a low window (600 px) they scroll instead of overlapping
        notes_layout = QVBoxLayout(notes)
        notes_layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.help, self.status, self.risk):
            notes_layout.addWidget(widget)
        self.notes = _Notes()
        self.notes.setWidget(notes)
        self.notes.setWidgetResizable(True)
        self.notes.setFrameShape(QFrame.Shape.NoFrame)
        self.notes.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.notes.setMinimumWidth(notes.minimumSizeHint().width() + self.notes.verticalScrollBar().sizeHint().width())
        left_layout.addWidget(self.notes)
        self.table.setMinimumHeight(6 * self.table.verticalHeader().defaultSectionSize())
        policy = self.table.sizePolicy()  # the notes get their height first, the table the rest (at least 6 rows)
        policy.setVerticalPolicy(QSizePolicy.Policy.Ignored)
        self.table.setSizePolicy(policy)
        self.split = split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.editor_box)
        split.setStretchFactor(0, 1)  # a narrow window shares its width: the roles table keeps its columns
        split.setStretchFactor(1, 1)
        QVBoxLayout(self).addWidget(split)
        self._combos: list[QComboBox] = []
        self._shown: str | None = None  # the column whose taxonomy the editor shows
        state.dataset_changed.connect(self.refresh)
        state.kind_refused.connect(self._on_kind_refused)
        state.confirm_kind_change = self._confirm_kind_change

    def refresh(self) -> None:
        dataset = self.state.dataset
        item = self.table.item(self.table.currentRow(), 0) if self.table.currentRow() >= 0 else None
        current = item.text() if item is not None else self._shown  # the column chosen before
        self._shown = None
        self.table.blockSignals(True)  # the rows are rebuilt: no column is chosen meanwhile
        self.table.setRowCount(0)
        self.table.blockSignals(False)
        self._combos = []
        self._kind_combos: list[QComboBox] = []
        if dataset is None:
            self._clear_editor()
            return
        self.table.setRowCount(len(dataset.frame.columns))
        for row, name in enumerate(dataset.frame.columns):
            item = QTableWidgetItem(name)
            item.setToolTip(name)  # whole, where a small window shortens the column
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(row, 0, item)
            kind = kind_combo(dataset.schema.attributes[name].kind)
            kind.setToolTip(f"How {name!r} is read; changing it reads the file again (settings stay).")
            kind.currentIndexChanged.connect(lambda _i, n=name, c=kind: self._on_kind_changed(n, c))
            self.table.setCellWidget(row, 1, kind)
            self._kind_combos.append(kind)
            combo = QComboBox()
            combo.setToolTip(f"The role of {name!r}: Identifier (removed, replaced by a pseudonym), "
                             "Quasi-identifier (could single a person out), Sensitive (must not be learned) "
                             "or Insensitive (released as it is)")
            for role in Role:
                combo.addItem(ROLE_LABELS[role], role.value)
                combo.setItemData(combo.count() - 1, ROLE_HELP[role], Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(combo.findData(self.state.project.roles.get(name, Role.INSENSITIVE.value)))
            combo.currentIndexChanged.connect(lambda _i, n=name, c=combo: self._on_role_changed(n, c))
            self.table.setCellWidget(row, 2, combo)
            self._combos.append(combo)
        columns = list(dataset.frame.columns)
        if current in columns:  # the same column (the page shown again, the file read again): its tree kept
            self.table.blockSignals(True)
            self.table.setCurrentCell(columns.index(current), 0)
            self.table.blockSignals(False)
            self._show_taxonomy(columns.index(current))
        else:  # another file: none of the previous file's trees
            self._clear_editor()
        self._update_status()
        self.risk.schedule()
        QTimer.singleShot(0, self._give_the_table_room)  # once the table's columns have their widths

    def showEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        QTimer.singleShot(0, self._give_the_table_room)  # once the splitter has its size

    def _give_the_table_room(self) -> None:
        """Widen the table to show every column's name, role and kind, up to 55 % of the page, and in a small window
        (800x600, where the taxonomy side keeps the room its buttons need) shorten the names' column so that the
        roles stay in view, each name whole in its tooltip: the names had scrolled out of sight."""
        total = sum(self.split.sizes())
        if total <= 0 or self.table.rowCount() == 0:
            return
        header = self.table.horizontalHeader()
        chrome = self.table.verticalScrollBar().sizeHint().width() + 2 * self.table.frameWidth()
        names, roles = self.table.sizeHintForColumn(0), self.table.sizeHintForColumn(2)
        left = min(names + roles + self.table.sizeHintForColumn(1) + chrome, int(total * 0.55))
        if self.split.sizes()[0] < left:
            self.split.setSizes([left, total - left])
        room = self.split.sizes()[0] - roles - chrome
        if names > room:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(0, max(60, room))
        else:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalScrollBar().setValue(0)

    def set_role(self, column: str, role: Role) -> None:
        """Set a column's role (as the user would with its combo box)."""
        row = list(self.state.dataset.frame.columns).index(column)
        combo = self._combos[row]
        combo.setCurrentIndex(combo.findData(role.value))

    def set_kind(self, column: str, kind: Kind) -> None:
        """Set a column's kind (as the user would with its combo box)."""
        combo = self._kind_combos[list(self.state.dataset.frame.columns).index(column)]
        combo.setCurrentIndex(combo.findData(kind.value))

    def _on_kind_changed(self, name: str, combo: QComboBox, kind: Kind | None = None) -> None:
        kind = kind or Kind(combo.currentData())
        if combo.hasFocus():  # disabling the focused combo would pass the focus on, and the current cell with it
            self.table.setFocus()  # (the kind is the last column shown: to the next row, whose tree would open)
        for other in self._kind_combos:
            other.setEnabled(False)  # until the file has been read again
        self.status.setStyleSheet("")
        self.status.setText(f"Reading the data again with {name!r} as {kind.label}…")
        self.state.change_kind(name, kind)

    def _confirm_kind_change(self, changes: list[KindChange]) -> bool:
        """Ask before reading columns as other kinds loses some of their settings (the state calls it)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Change the kind?", kind_change_question(changes),
                          QMessageBox.StandardButton.Cancel, self)
        change = box.addButton(CHANGE_KIND, QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is change

    def _on_kind_refused(self, message: str) -> None:
        self.refresh()  # the kinds in use again
        self.status.setStyleSheet("color: #b71c1c;")
        self.status.setText(f"The kind was not changed. {message}")

    def _on_role_changed(self, name: str, combo: QComboBox) -> None:
        role = Role(combo.currentData())
        self.state.set_role(name, role)
        if role is Role.IDENTIFIER and self.state.dataset.schema.attributes[name].kind is Kind.NUMERIC:
            # an identifier is a code: "007" and "7" are different people, and the key maps the text read
            self._on_kind_changed(name, self._kind_combos[list(self.state.dataset.frame.columns).index(name)],
                                  Kind.TEXT)
        for row, other in enumerate(self.state.dataset.frame.columns):  # only one sensitive column
            expected = self._combos[row].findData(self.state.project.roles[other])
            if self._combos[row].currentIndex() != expected:
                self._combos[row].blockSignals(True)
                self._combos[row].setCurrentIndex(expected)
                self._combos[row].blockSignals(False)
        self._show_taxonomy(list(self.state.dataset.frame.columns).index(name))
        self._update_status()
        self.risk.schedule()
        self.complete_changed.emit()

    def _show_taxonomy(self, row: int) -> None:
        dataset = self.state.dataset
        if dataset is None or row < 0 or row >= len(dataset.frame.columns):
            return
        name = dataset.frame.columns[row]
        role = self.state.project.roles.get(name)
        categorical = dataset.schema.attributes[name].kind is not Kind.NUMERIC
        editable = categorical and role in (Role.SENSITIVE.value, Role.QUASI_IDENTIFIER.value)
        if not editable:
            self._clear_editor()
            self.editor_hint.setText(
                f"{name!r} has no taxonomy to edit: taxonomies belong to sensitive or quasi-identifier columns that "
                "are not numeric (a numeric quasi-identifier gets interval widths, cut points or a hierarchy file "
                "on step 4)."
            )
            return
        values = sorted({label_text(v) for v in dataset.frame[name].dropna().unique()})
        self.editor.setEnabled(True)
        self.editor_box.setTitle(f"Taxonomy of {name}")
        self.editor_hint.setText(
            "Group values under broader labels (drag to move). Alias 1 is the generalized value a record may show "
            "instead of its own; alias 2 is a meaningless code. Both stay secret in the key file."
        )
        tree = self.state.taxonomy_for(name)
        if self.editor.taxonomy() is tree:  # shown already (the file read again): keep its edit history
            self.editor.set_data_values(values)
        else:
            self.editor.set_taxonomy(tree, values)
        self._shown = name

    def _clear_editor(self) -> None:
        """No tree in the editor (another file, or a column without one)."""
        self._shown = None
        self.editor.set_taxonomy(None)
        self.editor.setEnabled(False)
        self.editor_box.setTitle("Taxonomy")
        self.editor_hint.setText(EDITOR_HINT)

    def _on_taxonomy_changed(self) -> None:
        self.state.set_taxonomy(self.editor.taxonomy())

    def _update_status(self) -> None:
        sensitive = self.state.project.sensitive
        method = get_method(self.state.project.method)
        changes, self.state.kind_changes = self.state.kind_changes, []  # said once, right after the change
        if changes:
            self.status.setStyleSheet("color: #1b5e20;")
            self.status.setText(" ".join(
                f"{c.column!r} is read as {c.new.label} now; "
                + "; ".join(c.kept + [f"not kept: {line}" for line in c.lost] or ["nothing made for it had to change"])
                + ". The other columns' taxonomies and settings are kept." for c in changes))
        elif sensitive is None and not method.needs_sensitive:
            self.status.setStyleSheet("color: #1b5e20;")
            self.status.setText(
                f"No sensitive column: {method.title} generalizes the quasi-identifiers tagged here and releases the "
                "other columns unchanged." if method.generalizes_only else
                f"No sensitive column: {method.title} (step 4) protects the columns chosen there.")
        elif sensitive is None:
            self.status.setStyleSheet("color: #b71c1c;")
            self.status.setText("Mark one column as Sensitive to go on.")
        else:
            self.status.setStyleSheet("color: #1b5e20;")
            ids = self.state.project.columns_with(Role.IDENTIFIER)
            self.status.setText(f"{full_stop(f'Sensitive: {sensitive}')} "
                                f"{full_stop('Identifiers removed: ' + (', '.join(ids) or 'none'))}")

    def is_complete(self) -> bool:  # a method may protect its own list of columns (step 4)
        return self.state.project.sensitive is not None or not get_method(self.state.project.method).needs_sensitive


class _Notes(QScrollArea):
    """The notes under the roles table: as tall as their text when the page has the room, scrolling when it has not."""

    def setWidget(self, widget: QWidget) -> None:  # noqa: N802 - Qt API
        super().setWidget(widget)
        widget.installEventFilter(self)  # a longer risk text asks the page for more room

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        hint = super().sizeHint()
        body = self.widget()
        if body is None:
            return hint
        width = max(1, self.width() - self.verticalScrollBar().sizeHint().width())
        height = body.heightForWidth(width) if body.hasHeightForWidth() else body.sizeHint().height()
        return QSize(hint.width(), height + 2 * self.frameWidth())
