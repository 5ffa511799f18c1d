"""A thin ``QAbstractItemModel`` over a core :class:`~ppdp_desktop.core.taxonomy.tree.Taxonomy`.

The tree lives in the core; this model only adapts it (Qt for Python's editabletreemodel pattern).
The root is the single top-level row; columns are the label and the two aliases of each value.
Every change goes through a method here that calls the core and emits the signals views need.

Qt needs structural changes announced *before* they happen, but the core only refuses an edit by
raising. The core's edits are atomic (they raise before changing anything) and exactly reversible,
so :meth:`add_node`, :meth:`move` and :meth:`delete` first ask the core itself: they make the change,
undo it, and only then announce and make it for real. A refusal is the core's own
:class:`~ppdp_desktop.core.errors.TaxonomyError`, re-raised with the tree and the views unchanged.

Edits that come from a view (``setData``, drops) go through :attr:`TaxonomyModel.undo_stack` when
one is set, so they can be undone; their refusals are emitted as :attr:`TaxonomyModel.edit_refused`.
"""
from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QMimeData, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont, QUndoStack

from ppdp_desktop.core.data.bounded_json import parse_json
from ppdp_desktop.core.errors import PPDPError, TaxonomyError
from ppdp_desktop.core.taxonomy.tree import UNSET, Taxonomy, TaxonomyNode
from ppdp_desktop.gui.taxonomy_commands import (
    MoveCommand,
    RenameCommand,
    SetAliasCommand,
    TaxonomyCommand,
    explicit_aliases,
    push_command,
)
from ppdp_desktop.gui.wording import window_name

_Index = QModelIndex | QPersistentModelIndex
LABEL, ALIAS1, ALIAS2 = range(3)
HEADERS = ("Value / group", "Alias 1 (generalized)", "Alias 2 (code)")
MIME_TYPE = "application/x-ppdp-taxonomy-node"
_ROLE = Qt.ItemDataRole
_F = Qt.ItemFlag  # combined once: ``|`` on Python enums is slow in calls made per row
_NO_FLAGS = _F.NoItemFlags
_FIXED_FLAGS = _F.ItemIsEnabled | _F.ItemIsSelectable | _F.ItemIsDropEnabled
_ROOT_FLAGS = _FIXED_FLAGS | _F.ItemIsEditable
_DRAG_FLAGS = _FIXED_FLAGS | _F.ItemIsDragEnabled
_EDIT_FLAGS = _DRAG_FLAGS | _F.ItemIsEditable
_ALIAS_HELP = {
    ALIAS1: ("Alias 1: the generalized value published instead of this value under privacy choice 2.",
             "Default: the label of its group. Type to set it; clear the cell to go back to the default."),
    ALIAS2: ("Alias 2: an opaque code published instead of this value under privacy choice 3.",
             "Default: a random code. Type to set it; clear the cell to go back to a random code."),
}


class TaxonomyModel(QAbstractItemModel):
    """The taxonomy tree for a ``QTreeView``: label, alias 1 and alias 2 of every node.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        The tree to show and edit (in place); None shows nothing.
    undo_stack : QUndoStack, optional
        Where edits made in a view (cell edits, drops) are pushed as commands; without one they are
        applied directly.
    parent : QObject, optional
        The Qt parent.
    """

    #: A view's edit was refused; the argument is the core's message.
    edit_refused = Signal(str)

    def __init__(self, taxonomy: Taxonomy | None = None, undo_stack: QUndoStack | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._taxonomy = taxonomy
        self.undo_stack = undo_stack
        # Indexes carry raw pointers to nodes; this keeps every node handed out alive and lets
        # ``node`` look an index up by id without dereferencing a stale pointer.
        self._nodes: dict[int, TaxonomyNode] = {}

    # --- the taxonomy and its nodes -----------------------------------------------------------

    def taxonomy(self) -> Taxonomy | None:
        """The taxonomy shown (edited in place)."""
        return self._taxonomy

    def set_taxonomy(self, taxonomy: Taxonomy | None) -> None:
        """Show another taxonomy (a model reset)."""
        self.beginResetModel()
        self._taxonomy = taxonomy
        self._nodes.clear()
        self.endResetModel()

    def node(self, index: _Index) -> TaxonomyNode | None:
        """The node of ``index`` (any column), or None for an invalid or stale index."""
        return self._nodes.get(index.internalId())  # an invalid index has id 0, never a node's

    def index_for(self, node: TaxonomyNode | str, column: int = LABEL) -> QModelIndex:
        """The index of a node or label; raises ``TaxonomyError`` if the taxonomy has no such node."""
        if self._taxonomy is None:
            raise TaxonomyError("There is no taxonomy to edit.")
        return self._index(self._taxonomy.node(node), column)

    def _index(self, node: TaxonomyNode, column: int = LABEL, row: int | None = None) -> QModelIndex:
        self._nodes[id(node)] = node
        return self.createIndex(node.row() if row is None else row, column, node)

    def _node_at(self, index: _Index) -> TaxonomyNode:
        node = self.node(index)
        if node is None or self._taxonomy is None:
            raise TaxonomyError("Select a node of the taxonomy first.")
        return node

    # --- read-only Qt API ---------------------------------------------------------------------

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: D102
        if self._taxonomy is None or not self.hasIndex(row, column, parent):
            return QModelIndex()
        node = self.node(parent).children[row] if parent.isValid() else self._taxonomy.root
        return self._index(node, column, row)

    def parent(self, index: _Index | None = None) -> Any:  # noqa: D102 - Qt API (and QObject.parent())
        if index is None:
            return QObject.parent(self)
        node = self.node(index)
        if node is None or node.parent is None:
            return QModelIndex()
        return self._index(node.parent)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, D102
        if self._taxonomy is None or parent.column() > 0:
            return 0
        if not parent.isValid():
            return 1
        node = self.node(parent)
        return len(node.children) if node is not None else 0

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, D102
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _ROLE.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(HEADERS):
            return None
        if role == _ROLE.DisplayRole:
            return HEADERS[section]
        if role == _ROLE.ToolTipRole and section in _ALIAS_HELP:
            return _ALIAS_HELP[section][0]
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:  # noqa: D102
        node = self.node(index)
        if node is None:
            return _NO_FLAGS  # nothing can be dropped beside the root
        if node.parent is None:
            return _ROOT_FLAGS if index.column() == LABEL else _FIXED_FLAGS
        return _EDIT_FLAGS if index.column() == LABEL or not node.children else _DRAG_FLAGS

    def data(self, index: _Index, role: int = _ROLE.DisplayRole) -> Any:  # noqa: D102
        node = self.node(index)
        if node is None:
            return None
        column = index.column()
        if role in (_ROLE.DisplayRole, _ROLE.EditRole):
            if column == LABEL:
                return node.label
            return (node.alias1 if column == ALIAS1 else node.alias2) if node.is_leaf else None
        if role == _ROLE.ToolTipRole:
            return self._tooltip(node, column)
        if column != LABEL and node.is_leaf and not _alias_is_set(node, column):
            if role == _ROLE.FontRole:
                font = QFont()
                font.setItalic(True)
                return font
            if role == _ROLE.ForegroundRole:
                return QColor(Qt.GlobalColor.gray)
        return None

    def _tooltip(self, node: TaxonomyNode, column: int) -> str | None:
        if column == LABEL:
            if node.parent is None:
                return f"The root: the most general label of {self._taxonomy.attribute!r}."
            if node.is_leaf:
                return f"A value of {self._taxonomy.attribute!r}. Drag it onto a group to move it."
            leaves = sum(1 for n in node.walk() if n.is_leaf)
            return f"A group of {leaves} value{'s' if leaves != 1 else ''}."
        if not node.is_leaf:
            return "Only values (leaves) have aliases."
        state = "set explicitly" if _alias_is_set(node, column) else "the default (grey)"
        return f"{_ALIAS_HELP[column][0]}\nThis one is {state}. {_ALIAS_HELP[column][1]}"

    # --- edits from a view --------------------------------------------------------------------

    def setData(self, index: _Index, value: Any, role: int = _ROLE.EditRole) -> bool:  # noqa: N802, D102
        node = self.node(index)
        if node is None or role != _ROLE.EditRole:
            return False
        text = "" if value is None else str(value)
        if index.column() == LABEL:
            return text == node.label or self.submit_command(RenameCommand(self, node.label, text))
        which = index.column()
        if not node.is_leaf:
            return False
        new = text or None  # an empty cell means "back to the default"
        current = node.alias1 if which == ALIAS1 else node.alias2
        if new == current or (new is None and not _alias_is_set(node, which)):
            return True
        return self.submit_command(SetAliasCommand(self, node.label, which, new))

    def submit_command(self, command: TaxonomyCommand) -> bool:
        """Apply ``command`` (through :attr:`undo_stack` if set); emit ``edit_refused`` and return False if refused."""
        try:
            if self.undo_stack is not None:
                push_command(self.undo_stack, command)
            else:
                command.perform()
        except TaxonomyError as exc:
            self.edit_refused.emit(exc.phrase(window_name))
            return False
        return True

    # --- edits (each calls the core and emits the signals) ------------------------------------

    def add_node(self, parent_index: _Index, label: str, row: int | None = None) -> QModelIndex:
        """Add a leaf ``label`` under the node of ``parent_index`` at ``row`` (default: last); return its index."""
        taxonomy, parent = self._taxonomy, self._node_at(parent_index)
        row = len(parent.children) if row is None else row
        aliases = explicit_aliases(parent)
        taxonomy.delete(taxonomy.add(parent, label, row))  # ask the core first (raises if refused)
        if aliases:
            taxonomy.set_alias(parent, **aliases)
        self.beginInsertRows(self._index(parent), row, row)
        node = taxonomy.add(parent, label, row)
        self.endInsertRows()
        self._aliases_changed(parent)  # a leaf parent has become a group
        return self._index(node, LABEL, row)

    def rename(self, index: _Index, label: str) -> None:
        """Rename the node of ``index`` (its children's default alias 1 follows)."""
        node = self._node_at(index)
        self._taxonomy.rename(node, label)
        cell = self._index(node)
        self.dataChanged.emit(cell, cell)
        if node.children:
            last = len(node.children) - 1
            self.dataChanged.emit(self._index(node.children[0], ALIAS1, 0),
                                  self._index(node.children[-1], ALIAS1, last))

    def move(self, index: _Index, new_parent_index: _Index, row: int | None = None) -> QModelIndex:
        """Move a node and its subtree under another; ``row`` is its index there afterwards (default: last)."""
        taxonomy, node, target = self._taxonomy, self._node_at(index), self._node_at(new_parent_index)
        source = node.parent
        if source is None:
            taxonomy.move(node, target, row)  # the root: the core refuses with its own message
        old_row = node.row()
        row = len(target.children) - (source is target) if row is None else row
        if source is target and row == old_row:
            return self._index(node, LABEL, row)
        aliases = explicit_aliases(target)
        taxonomy.move(node, target, row)  # ask the core first (raises if refused), then move back
        taxonomy.move(node, source, old_row)
        if aliases:
            taxonomy.set_alias(target, **aliases)
        destination = row + 1 if source is target and row > old_row else row  # Qt counts before removal
        if not self.beginMoveRows(self._index(source), old_row, old_row, self._index(target), destination):
            self.beginResetModel()  # cannot happen for a move the core accepts; stay consistent anyway
            taxonomy.move(node, target, row)
            self.endResetModel()
            return self._index(node)
        taxonomy.move(node, target, row)
        self.endMoveRows()
        self._aliases_changed(source)
        self._aliases_changed(target)
        self._aliases_changed(node)  # a default alias 1 is the new parent's label
        return self._index(node, LABEL, row)

    def delete(self, index: _Index) -> None:
        """Delete the node of ``index`` and everything under it."""
        taxonomy, node = self._taxonomy, self._node_at(index)
        parent = node.parent
        if parent is None:
            taxonomy.delete(node)  # raises: the root cannot be deleted
        row = node.row()
        if parent.parent is not None:  # (a node right under the root can always go)
            try:  # moving it out makes the same check as deleting it: would its group become a value?
                taxonomy.move(node, taxonomy.root)
            except TaxonomyError:
                taxonomy.delete(node)  # refused for the same reason, so this raises in the core's words
                raise
            taxonomy.move(node, parent, row)
        self.beginRemoveRows(self._index(parent), row, row)
        taxonomy.delete(node)
        self.endRemoveRows()
        self._aliases_changed(parent)  # it may have become a value

    def set_alias(self, index: _Index, which: int, value: str | None) -> None:
        """Set alias ``which`` (1 or 2) of a leaf to ``value``; None restores the default."""
        if which not in (ALIAS1, ALIAS2):
            raise ValueError(f"The 'which' parameter must be 1 or 2. Got {which!r} instead.")
        self.set_aliases(index, **{f"alias{which}": value})

    def set_aliases(self, index: _Index, alias1: str | None = UNSET, alias2: str | None = UNSET) -> None:
        """Set both aliases of a leaf at once (see ``Taxonomy.set_alias``; omitted: unchanged)."""
        node = self._node_at(index)
        self._taxonomy.set_alias(node, alias1, alias2)
        self._aliases_changed(node)

    def _aliases_changed(self, node: TaxonomyNode) -> None:
        self.dataChanged.emit(self._index(node, ALIAS1), self._index(node, ALIAS2))

    # --- drag and drop ------------------------------------------------------------------------

    def supportedDropActions(self) -> Qt.DropAction:  # noqa: N802, D102
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:  # noqa: N802, D102
        return [MIME_TYPE]

    def mimeData(self, indexes: list[QModelIndex]) -> QMimeData | None:  # noqa: N802
        """The labels of the dragged nodes (once each, the root excluded), tagged with this model."""
        nodes = {id(n): n for n in (self.node(i) for i in indexes) if n is not None and n.parent is not None}
        if not nodes:
            return None
        labels = [node.label for node in nodes.values()]
        data = QMimeData()
        data.setData(MIME_TYPE, json.dumps({"model": id(self), "labels": labels}).encode("utf-8"))
        data.setText("\n".join(labels))
        return data

    def canDropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int,  # noqa: N802
                        parent: _Index) -> bool:
        """True for a move of this model's node(s) to a node not inside them."""
        target, nodes = self.node(parent), self._dragged(data)
        if action != Qt.DropAction.MoveAction or target is None or not nodes:
            return False
        return not any(node is ancestor for node in nodes for ancestor in target.path())

    def dropMimeData(self, data: QMimeData, action: Qt.DropAction, row: int, column: int,  # noqa: N802
                     parent: _Index) -> bool:
        """Move the dragged node under ``parent`` before ``row`` (-1: last), as an undoable command.

        Dropping a node onto itself or inside its own subtree is refused (``edit_refused``, False).
        """
        if action == Qt.DropAction.IgnoreAction:
            return True
        target, nodes = self.node(parent), self._dragged(data)
        if action != Qt.DropAction.MoveAction or target is None or nodes is None or len(nodes) != 1:
            return False
        node = nodes[0]
        same = node.parent is target
        final = len(target.children) - same if row < 0 else row - (same and node.row() < row)
        if same and final == node.row():
            return False
        return self.submit_command(MoveCommand(self, node.label, target.label, final))

    def _dragged(self, data: QMimeData) -> list[TaxonomyNode] | None:
        if self._taxonomy is None or not data.hasFormat(MIME_TYPE):
            return None
        try:
            payload = parse_json(bytes(data.data(MIME_TYPE).data()), "the dragged labels", max_bytes=None)
            labels = payload["labels"] if payload.get("model") == id(self) else []
        except (PPDPError, TypeError, KeyError, AttributeError):
            return None
        nodes = [self._taxonomy.find(label) if isinstance(label, str) else None for label in labels]
        return nodes if nodes and all(node is not None for node in nodes) else None


def _alias_is_set(node: TaxonomyNode, column: int) -> bool:
    return node.alias1_is_set if column == ALIAS1 else node.alias2_is_set
