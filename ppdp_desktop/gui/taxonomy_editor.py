"""The taxonomy editor: a tree of one attribute's values and groups, with undo, import and export.

Every edit is a command on :attr:`TaxonomyEditor.undo_stack`. An edit the core refuses (a duplicate
or empty label, a clashing alias, a move into the node's own subtree) changes nothing and is shown
in red in the validation line under the tree, which also lists what :meth:`Taxonomy.validate
<ppdp_desktop.core.taxonomy.tree.Taxonomy.validate>` finds after every change (for example data values
that no leaf covers), or says in green that the taxonomy is valid.
"""
from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.errors import TaxonomyError
from ppdp_desktop.core.taxonomy.io import load_taxonomy, save_taxonomy
from ppdp_desktop.core.taxonomy.tree import Taxonomy
from ppdp_desktop.gui.taxonomy_commands import (
    AddCommand,
    DeleteCommand,
    MoveCommand,
    RenameCommand,
    ReplaceCommand,
    SetAliasCommand,
    TaxonomyCommand,
    push_command,
)
from ppdp_desktop.gui.taxonomy_model import LABEL, TaxonomyModel

_RED, _GREEN = "#b71c1c", "#1b5e20"
_CONTEXT = Qt.ShortcutContext.WidgetWithChildrenShortcut
#: Larger taxonomies open with only the root expanded: a tree view lays out every expanded row
#: again after each change, which takes seconds at tens of thousands of rows.
EXPAND_ALL_LIMIT = 2000


def _tool_button(action: QAction) -> QToolButton:
    """A flat text button for ``action``, like a toolbar's (out of the Tab order: the actions have shortcuts)."""
    button = QToolButton()
    button.setDefaultAction(action)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    button.setAutoRaise(True)
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    return button


class FlowLayout(QLayout):
    """Its widgets left to right, wrapping onto another row where the width runs out (never hidden
    behind an overflow button, as a :class:`QToolBar` does). Its natural size is one row."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 10, row_spacing: int = 2) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._row_spacing = row_spacing
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        shown = [item.sizeHint() for item in self._items if not item.isEmpty()]
        width = sum(s.width() for s in shown) + self.spacing() * max(len(shown) - 1, 0)
        return QSize(width, max((s.height() for s in shown), default=0))

    def minimumSize(self) -> QSize:  # noqa: N802 - the widest item: narrower, it would be cut
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, move: bool) -> int:
        """Place the items (if ``move``) in rows within ``rect``; the height they take."""
        x, y, row_height = rect.x(), rect.y(), 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if x > rect.x() and x + hint.width() > rect.right() + 1:
                x, y, row_height = rect.x(), y + row_height + self._row_spacing, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self.spacing()
            row_height = max(row_height, hint.height())
        return y + row_height - rect.y()


class TaxonomyEditor(QWidget):
    """Edit a taxonomy: add, rename (edit a cell), drag to move, delete, set aliases, undo and redo.

    Parameters
    ----------
    parent : QWidget, optional
        The Qt parent.

    Attributes
    ----------
    undo_stack : QUndoStack
        The edit history of the taxonomy shown (cleared by :meth:`set_taxonomy`).
    model : TaxonomyModel
        The model of :attr:`tree`.
    tree : QTreeView
        The tree: the root, its groups and the values, with their aliases.
    validation_label : QLabel
        Refused edits and validation messages in red, or a green "valid" line.
    toolbar : QWidget
        The actions' buttons in groups (edit, history, file) that wrap onto a second row when the
        editor is narrow, so none is ever hidden.
    """

    #: Emitted after every successful edit, undo, redo, import and build from data.
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data_values: list[object] = []
        self._attribute = "value"
        self._problems: list[str] = []
        self._refusal = ""
        self._loading = False
        self.undo_stack = QUndoStack(self)
        self.model = TaxonomyModel(undo_stack=self.undo_stack, parent=self)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.tree.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.tree.setDropIndicatorShown(True)
        self.tree.setUniformRowHeights(True)  # large taxonomies: no per-row size queries
        self.tree.setColumnWidth(LABEL, 240)
        self.tree.setToolTip("Values grouped under broader labels. Drag a value onto a group to move it; "
                             "double-click a label or an alias to change it.")
        self.validation_label = QLabel()
        self.validation_label.setWordWrap(True)
        self.validation_label.setTextFormat(Qt.TextFormat.RichText)
        self.validation_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status_label = QLabel()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.toolbar = self._make_toolbar()
        layout.addWidget(self.toolbar)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.validation_label)
        layout.addWidget(self.status_label)
        self.undo_stack.indexChanged.connect(self._on_history_changed)
        self.model.edit_refused.connect(self._show_refusal)
        self.model.modelReset.connect(self._on_model_reset)
        self.model.rowsInserted.connect(lambda parent, *_: self.tree.expand(parent))
        self.tree.selectionModel().currentChanged.connect(self._update_actions)
        self._refresh()

    def _make_toolbar(self) -> QWidget:
        self.undo_action = self.undo_stack.createUndoAction(self, "Undo")
        self.undo_action.setShortcuts([QKeySequence("Ctrl+Z")])
        self.redo_action = self.undo_stack.createRedoAction(self, "Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.add_child_action = self._action("Add child", "Ins", "Add a new value under the selected node",
                                             self._on_add_child_clicked)
        self.add_sibling_action = self._action("Add sibling", "", "Add a new value after the selected node",
                                               self._on_add_sibling_clicked)
        self.rename_action = self._action("Rename", "F2", "Edit the label of the selected node", self._on_rename_clicked)
        self.delete_action = self._action("Delete", "Del", "Delete the selected node and everything under it",
                                          lambda: self.delete())
        self.build_action = self._action("Build from data", "", "Replace the taxonomy by one group of every data value",
                                         lambda: self.build_from_data())
        self.import_action = self._action("Import…", "", "Read a taxonomy JSON or an ARX hierarchy CSV",
                                          self._on_import_clicked)
        self.export_action = self._action("Export…", "", "Write the taxonomy as JSON or as an ARX hierarchy CSV",
                                          self._on_export_clicked)
        for action in (self.import_action, self.export_action):
            action.setIconText(action.text())  # a button would drop the "…" that says a dialog opens
        for action, word in ((self.undo_action, "Undo"), (self.redo_action, "Redo")):
            action.setIconText(word)  # short buttons that keep their place; the tooltip names the edit
        toolbar = QWidget()
        flow = FlowLayout(toolbar)
        groups = [(self.add_child_action, self.add_sibling_action, self.rename_action, self.delete_action),
                  (self.undo_action, self.redo_action), (self.build_action, self.import_action, self.export_action)]
        for group in groups:  # a group wraps as a whole
            box = QWidget()
            row = QHBoxLayout(box)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(0)
            for action in group:
                action.setShortcutContext(_CONTEXT)
                row.addWidget(_tool_button(action))
                self.addAction(action)  # the shortcuts work wherever the focus is inside the editor
            flow.addWidget(box)
        return toolbar

    def button_for(self, action: QAction) -> QToolButton:
        """The toolbar button of ``action``."""
        return next(b for b in self.toolbar.findChildren(QToolButton) if b.defaultAction() is action)

    def _action(self, text: str, shortcut: str, tip: str, slot: Callable[[], None]) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(f"{tip} ({shortcut})" if shortcut else tip)
        action.triggered.connect(slot)
        return action

    # --- the taxonomy -------------------------------------------------------------------------

    def set_taxonomy(self, taxonomy: Taxonomy | None, data_values: Iterable[object] = ()) -> None:
        """Edit ``taxonomy`` (in place) against ``data_values``; clears the undo history. Emits nothing."""
        self._loading = True
        try:
            self.undo_stack.clear()
        finally:
            self._loading = False
        self._data_values = list(data_values)
        self._attribute = taxonomy.attribute if taxonomy is not None else self._attribute
        self._refusal = ""
        self.model.set_taxonomy(taxonomy)
        self.status_label.clear()
        self._refresh()

    def set_data_values(self, data_values: Iterable[object]) -> None:
        """Check the taxonomy shown against other data values (the column read again), keeping its edit history."""
        self._data_values = list(data_values)
        self._refresh()

    def taxonomy(self) -> Taxonomy | None:
        """The taxonomy being edited (a new object after an import or a build from data)."""
        return self.model.taxonomy()

    def data_values(self) -> list[object]:
        """The data values every leaf set is checked against."""
        return list(self._data_values)

    def problems(self) -> list[str]:
        """The current validation messages (empty when the taxonomy is valid)."""
        return list(self._problems)

    # --- edits (each returns whether it was applied; a refusal is shown inline) ---------------

    def add_child(self, parent: QModelIndex | None = None, label: str | None = None) -> QModelIndex:
        """Add ``label`` (default: "New value", numbered) under ``parent`` (default: the current node or the root)."""
        node = self.model.node(parent if parent is not None else self.tree.currentIndex())
        taxonomy = self.model.taxonomy()
        if node is None and taxonomy is not None:
            node = taxonomy.root
        if node is None:
            self._show_refusal("There is no taxonomy to add to.")
            return QModelIndex()
        return self._add(AddCommand(self.model, node.label, label or self._new_label()))

    def add_sibling(self, index: QModelIndex | None = None, label: str | None = None) -> QModelIndex:
        """Add ``label`` right after the node of ``index`` (default: the current node)."""
        node = self.model.node(index if index is not None else self.tree.currentIndex())
        if node is None or node.parent is None:
            self._show_refusal("Select a node other than the root to add a sibling; the root has none.")
            return QModelIndex()
        return self._add(AddCommand(self.model, node.parent.label, label or self._new_label(), node.row() + 1))

    def rename(self, index: QModelIndex, label: str) -> bool:
        """Rename the node of ``index`` to ``label``."""
        node = self.model.node(index)
        if node is not None and label == node.label:
            return True
        return node is not None and self._run(RenameCommand(self.model, node.label, label))

    def move(self, index: QModelIndex, new_parent: QModelIndex, row: int | None = None) -> bool:
        """Move the node of ``index`` under ``new_parent`` at ``row`` (its index there afterwards)."""
        node, target = self.model.node(index), self.model.node(new_parent)
        return node is not None and target is not None and self._run(MoveCommand(self.model, node.label, target.label, row))

    def delete(self, index: QModelIndex | None = None) -> bool:
        """Delete the node of ``index`` (default: the current node) with its subtree."""
        node = self.model.node(index if index is not None else self.tree.currentIndex())
        return node is not None and self._run(DeleteCommand(self.model, node.label))

    def set_alias(self, index: QModelIndex, which: int, value: str | None) -> bool:
        """Set alias ``which`` (1 or 2) of a leaf; None (or "") restores the default."""
        node = self.model.node(index)
        return node is not None and self._run(SetAliasCommand(self.model, node.label, which, value or None))

    def build_from_data(self) -> bool:
        """Replace the taxonomy by a flat one: every data value a leaf under the root (undoable)."""
        if not self._data_values:
            self._show_refusal("There are no data values to build a taxonomy from.")
            return False
        current = self.model.taxonomy()
        try:
            flat = Taxonomy.flat(self._attribute, self._data_values, current.root.label if current else "*")
        except TaxonomyError as exc:
            self._show_refusal(str(exc))
            return False
        return self._run(ReplaceCommand(self.model, flat, "Build a flat taxonomy from the data"))

    def import_from(self, path: str | os.PathLike[str]) -> bool:
        """Replace the taxonomy by the one in a JSON or ARX hierarchy CSV file (undoable)."""
        try:
            taxonomy = load_taxonomy(path, self._attribute)
        except TaxonomyError as exc:
            self._show_refusal(str(exc))
            return False
        if not self._run(ReplaceCommand(self.model, taxonomy, f"Import {Path(path).name}")):
            return False
        self.status_label.setText(f"Imported {Path(path).name}.")
        return True

    def export_to(self, path: str | os.PathLike[str]) -> bool:
        """Write the taxonomy as JSON or (by the extension) an ARX hierarchy CSV, which has no aliases."""
        taxonomy = self.model.taxonomy()
        if taxonomy is None:
            self._show_refusal("There is no taxonomy to export.")
            return False
        try:
            save_taxonomy(taxonomy, path)
        except TaxonomyError as exc:
            self._show_refusal(str(exc))
            return False
        lost = Path(path).suffix.lower() != ".json" and any(
            leaf.alias1_is_set or leaf.alias2_is_set for leaf in taxonomy.leaves())
        self.status_label.setText(f"Exported to {Path(path).name}"
                                  + (" (without the aliases: an ARX hierarchy has none)." if lost else "."))
        return True

    def _add(self, command: AddCommand) -> QModelIndex:
        if not self._run(command):
            return QModelIndex()
        index = self.model.index_for(command.label)
        self.tree.setCurrentIndex(index)
        return index

    def _run(self, command: TaxonomyCommand) -> bool:
        try:
            push_command(self.undo_stack, command)
        except TaxonomyError as exc:
            self._show_refusal(str(exc))
            return False
        return True

    def _new_label(self) -> str:
        taxonomy, label, n = self.model.taxonomy(), "New value", 1
        while taxonomy is not None and label in taxonomy:
            n += 1
            label = f"New value {n}"
        return label

    # --- slots --------------------------------------------------------------------------------

    def _on_add_child_clicked(self) -> None:
        index = self.add_child()
        if index.isValid():
            self.tree.edit(index)

    def _on_add_sibling_clicked(self) -> None:
        index = self.add_sibling()
        if index.isValid():
            self.tree.edit(index)

    def _on_rename_clicked(self) -> None:
        index = self.tree.currentIndex()
        if index.isValid():
            self.tree.edit(index.siblingAtColumn(LABEL))

    def _on_import_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Import taxonomy", "", "Taxonomies (*.json *.csv *.txt);;JSON (*.json);;ARX hierarchy (*.csv *.txt)")
        if path:
            self.import_from(path)

    def _on_export_clicked(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export taxonomy", f"{self._attribute}_taxonomy.json", "JSON (*.json);;ARX hierarchy CSV (*.csv)")
        if path:
            if not Path(path).suffix:
                path += ".csv" if "CSV" in chosen else ".json"
            self.export_to(path)

    def _on_model_reset(self) -> None:
        taxonomy = self.model.taxonomy()
        if taxonomy is not None and len(taxonomy) <= EXPAND_ALL_LIMIT:
            self.tree.expandAll()
        else:
            self.tree.expandToDepth(0)

    def _on_history_changed(self) -> None:
        if self._loading:
            return
        self._refusal = ""
        self._refresh()
        self.changed.emit()

    def _show_refusal(self, message: str) -> None:
        self._refusal = message
        self._render()

    # --- validation line ----------------------------------------------------------------------

    def _refresh(self) -> None:
        taxonomy = self.model.taxonomy()
        self._problems = taxonomy.validate(self._data_values) if taxonomy is not None else []
        self._render()
        self._update_actions()

    def _render(self) -> None:
        taxonomy = self.model.taxonomy()
        lines = [f'<b style="color:{_RED}">Not changed: {html.escape(self._refusal, quote=False)}</b>'] \
            if self._refusal else []
        if taxonomy is None:
            lines.append("No taxonomy to edit.")
        elif self._problems:
            lines += [f'<span style="color:{_RED}">• {html.escape(p, quote=False)}</span>' for p in self._problems]
        else:
            n = len(taxonomy.leaves())
            lines.append(f'<span style="color:{_GREEN}">Taxonomy is valid: {n} value{"s" if n != 1 else ""}.</span>')
        self.validation_label.setText("<br>".join(lines))

    def _update_actions(self, *_: object) -> None:
        node = self.model.node(self.tree.currentIndex())
        has_taxonomy = self.model.taxonomy() is not None
        for action in (self.add_child_action, self.export_action):
            action.setEnabled(has_taxonomy)
        for action in (self.add_sibling_action, self.delete_action):
            action.setEnabled(node is not None and node.parent is not None)
        self.rename_action.setEnabled(node is not None)
        self.build_action.setEnabled(bool(self._data_values))

