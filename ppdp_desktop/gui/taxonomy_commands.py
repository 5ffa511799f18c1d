"""Undoable edits of a taxonomy: one ``QUndoCommand`` per kind of edit of :class:`TaxonomyModel`.

Every command names the nodes it touches by label, not by node object or index: the undo stack
guarantees that the tree is in the state the command left it in whenever it is undone or redone, so
a label always finds the right node, even after an undone delete has rebuilt that node as a new object.

A command is applied *before* it is pushed (:func:`push_command`): if the core refuses the edit, the
:class:`~ppdp_desktop.core.errors.TaxonomyError` reaches the caller and nothing is pushed. The
first :meth:`~TaxonomyCommand.redo`, which ``QUndoStack.push`` calls, then does nothing.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand, QUndoStack

from ppdp_desktop.core.taxonomy.tree import Taxonomy, TaxonomyNode

if TYPE_CHECKING:
    from ppdp_desktop.gui.taxonomy_model import TaxonomyModel


def explicit_aliases(node: TaxonomyNode) -> dict[str, str]:
    """The aliases set explicitly on a leaf, as keyword arguments of ``Taxonomy.set_alias``."""
    aliases: dict[str, str] = {}
    if node.is_leaf and node.alias1_is_set:
        aliases["alias1"] = node.alias1
    if node.is_leaf and node.alias2_is_set:
        aliases["alias2"] = node.alias2
    return aliases


@dataclass
class Snapshot:
    """A deleted subtree: labels, explicit aliases and children in order."""

    label: str
    aliases: dict[str, str]
    children: list[Snapshot] = field(default_factory=list)

    @classmethod
    def of(cls, node: TaxonomyNode) -> Snapshot:
        """The snapshot of ``node`` and everything under it (iterative: any depth)."""
        top = cls(node.label, explicit_aliases(node))
        stack = [(node, top)]
        while stack:
            current, shot = stack.pop()
            for child in current.children:
                child_shot = cls(child.label, explicit_aliases(child))
                shot.children.append(child_shot)
                stack.append((child, child_shot))
        return top


def restore_subtree(model: TaxonomyModel, parent_label: str, row: int, shot: Snapshot) -> None:
    """Rebuild a deleted subtree under ``parent_label`` at ``row`` through ``model`` (so views follow).

    A new node starts as a leaf, and a leaf's label must not be another leaf's explicit alias1, which a
    group's label may well be. Groups are therefore added under a unique placeholder label and renamed
    once they have children; explicit aliases are set last, when the tree is whole again.
    """
    taxonomy = model.taxonomy()
    renames: list[tuple[str, str]] = []
    aliases: list[tuple[str, dict[str, str]]] = []
    pending: list[tuple[str, int | None, Snapshot]] = [(parent_label, row, shot)]
    while pending:
        parent, at, current = pending.pop()
        label = current.label
        if current.children:
            label = _placeholder(taxonomy, current.label)
            renames.append((label, current.label))
        elif current.aliases:
            aliases.append((label, current.aliases))
        model.add_node(model.index_for(parent), label, at)
        pending.extend((label, None, child) for child in reversed(current.children))
    for placeholder, label in renames:
        model.rename(model.index_for(placeholder), label)
    for label, explicit in aliases:
        model.set_aliases(model.index_for(label), **explicit)


def _placeholder(taxonomy: Taxonomy, label: str) -> str:
    """A label that is neither in ``taxonomy`` nor anyone's alias (random, so practically unique)."""
    candidate = f"{label} (restoring {secrets.token_hex(8)})"
    while candidate in taxonomy:
        candidate = f"{label} (restoring {secrets.token_hex(8)})"
    return candidate


class TaxonomyCommand(QUndoCommand):
    """Base class: :meth:`perform` applies the edit before the push; ``redo`` then skips once.

    Parameters
    ----------
    model : TaxonomyModel
        The model whose methods make the change (and emit the signals views need).
    text : str
        The readable name shown in the undo history ("Rename 'Flu' to 'Influenza'").
    """

    def __init__(self, model: TaxonomyModel, text: str) -> None:
        super().__init__(text)
        self.model = model
        self._skip_next_redo = False

    def perform(self) -> None:
        """Apply the edit now; raises ``TaxonomyError`` (changing nothing) if the core refuses it."""
        self._apply()
        self._skip_next_redo = True

    def redo(self) -> None:  # noqa: D102 - Qt API
        if self._skip_next_redo:
            self._skip_next_redo = False
            return
        self._apply()

    def undo(self) -> None:  # noqa: D102 - Qt API
        self._revert()

    def _apply(self) -> None:
        raise NotImplementedError

    def _revert(self) -> None:
        raise NotImplementedError


def push_command(stack: QUndoStack, command: TaxonomyCommand) -> None:
    """Apply ``command`` and push it; if the core refuses, raise and push nothing."""
    command.perform()
    stack.push(command)


class AddCommand(TaxonomyCommand):
    """Add a leaf ``label`` under ``parent_label`` at ``row`` (default: last)."""

    def __init__(self, model: TaxonomyModel, parent_label: str, label: str, row: int | None = None) -> None:
        super().__init__(model, f"Add {label!r} under {parent_label!r}")
        self.parent_label, self.label, self.row = parent_label, label, row
        self._parent_aliases: dict[str, str] = {}

    def _apply(self) -> None:
        parent = self.model.index_for(self.parent_label)
        self._parent_aliases = explicit_aliases(self.model.node(parent))  # a leaf parent loses them
        self.row = self.model.add_node(parent, self.label, self.row).row()

    def _revert(self) -> None:
        self.model.delete(self.model.index_for(self.label))
        if self._parent_aliases:
            self.model.set_aliases(self.model.index_for(self.parent_label), **self._parent_aliases)


class RenameCommand(TaxonomyCommand):
    """Rename the node ``old`` to ``new``."""

    def __init__(self, model: TaxonomyModel, old: str, new: str) -> None:
        super().__init__(model, f"Rename {old!r} to {new!r}")
        self.old, self.new = old, new

    def _apply(self) -> None:
        self.model.rename(self.model.index_for(self.old), self.new)

    def _revert(self) -> None:
        self.model.rename(self.model.index_for(self.new), self.old)


class MoveCommand(TaxonomyCommand):
    """Move ``label`` (with its subtree) under ``new_parent``; ``row`` is its index there afterwards."""

    def __init__(self, model: TaxonomyModel, label: str, new_parent: str, row: int | None = None) -> None:
        super().__init__(model, f"Move {label!r} under {new_parent!r}")
        self.label, self.new_parent, self.row = label, new_parent, row
        self._old_parent, self._old_row = "", 0
        self._target_aliases: dict[str, str] = {}

    def _apply(self) -> None:
        node = self.model.node(self.model.index_for(self.label))
        target = self.model.index_for(self.new_parent)
        self._old_parent = node.parent.label if node.parent is not None else ""
        self._old_row = node.row()
        self._target_aliases = explicit_aliases(self.model.node(target))  # a leaf target loses them
        self.row = self.model.move(self.model.index_for(self.label), target, self.row).row()

    def _revert(self) -> None:
        self.model.move(self.model.index_for(self.label), self.model.index_for(self._old_parent), self._old_row)
        if self._target_aliases:
            self.model.set_aliases(self.model.index_for(self.new_parent), **self._target_aliases)


class DeleteCommand(TaxonomyCommand):
    """Delete ``label`` and its subtree; undo rebuilds the subtree with its explicit aliases."""

    def __init__(self, model: TaxonomyModel, label: str) -> None:
        size = sum(1 for _ in model.taxonomy().node(label).walk()) - 1
        more = f" and {size} node{'s' if size != 1 else ''} under it" if size else ""
        super().__init__(model, f"Delete {label!r}{more}")
        self.label = label
        self._parent, self._row, self._shot = "", 0, Snapshot(label, {})

    def _apply(self) -> None:
        index = self.model.index_for(self.label)
        node = self.model.node(index)
        if node.parent is not None:
            self._parent, self._row, self._shot = node.parent.label, node.row(), Snapshot.of(node)
        self.model.delete(index)  # the root: the core refuses with its own message

    def _revert(self) -> None:
        restore_subtree(self.model, self._parent, self._row, self._shot)


class SetAliasCommand(TaxonomyCommand):
    """Set alias ``which`` (1 or 2) of the leaf ``label`` to ``value`` (None: back to the default).

    Undoing a change of a default alias2 restores *a* default code: default codes are random and
    never published as meaningful, so a fresh one is as good as the old.
    """

    def __init__(self, model: TaxonomyModel, label: str, which: int, value: str | None) -> None:
        text = f"Reset alias {which} of {label!r}" if value is None else f"Set alias {which} of {label!r} to {value!r}"
        super().__init__(model, text)
        self.label, self.which, self.value = label, which, value
        self._old: str | None = None

    def _apply(self) -> None:
        index = self.model.index_for(self.label)
        self._old = explicit_aliases(self.model.node(index)).get(f"alias{self.which}")
        self.model.set_alias(index, self.which, self.value)

    def _revert(self) -> None:
        self.model.set_alias(self.model.index_for(self.label), self.which, self._old)


class ReplaceCommand(TaxonomyCommand):
    """Replace the whole taxonomy (import, build from data); undo brings the old one back untouched."""

    def __init__(self, model: TaxonomyModel, taxonomy: Taxonomy, text: str) -> None:
        super().__init__(model, text)
        self.new: Taxonomy = taxonomy
        self.old: Taxonomy | None = None

    def _apply(self) -> None:
        self.old = self.model.taxonomy()
        self.model.set_taxonomy(self.new)

    def _revert(self) -> None:
        self.model.set_taxonomy(self.old)
