"""The taxonomy tree of one attribute's values, with the aliases of SPEC 4.

The leaves are the attribute's values (the :func:`~ppdp_desktop.core.data.domain.label_text` of each data
value); inner nodes are generalizations; the root is the most general label. Every leaf carries an
``alias1`` (published for privacy choice 2; by default its parent's label) and an ``alias2`` (an
opaque random code published for choice 3); :mod:`~ppdp_desktop.core.taxonomy.node` describes them.

The tree is plain Python that a ``QAbstractItemModel`` adapts: each :class:`TaxonomyNode` has
``parent``, a ``children`` list and :meth:`~TaxonomyNode.row`; edits insert or remove at a row. Edit
only through :class:`Taxonomy`'s methods, which keep labels unique and the label index (O(1) lookup)
up to date, and raise :class:`~ppdp_desktop.core.errors.TaxonomyError` naming the value otherwise.
:meth:`Taxonomy.validate` re-checks the whole tree without trusting the index
(:mod:`~ppdp_desktop.core.taxonomy.checks`).

The node class and value helpers live in :mod:`~ppdp_desktop.core.taxonomy.node`, the whole-tree
checks in :mod:`~ppdp_desktop.core.taxonomy.checks`; both are re-exported here.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ppdp_desktop.core.errors import TaxonomyError
from ppdp_desktop.core.taxonomy.checks import MAX_LISTED, alias1_clash, alias2_clash, label_problem, list_values, tree_problems
from ppdp_desktop.core.taxonomy.node import ALIAS_ALPHABET, UNSET, TaxonomyNode, data_labels, is_missing, is_text, new_alias_code

__all__ = [
    "ALIAS_ALPHABET", "MAX_LISTED", "UNSET", "Taxonomy", "TaxonomyNode",
    "data_labels", "is_missing", "is_text", "list_values", "new_alias_code",
]


class Taxonomy:
    """A taxonomy tree of the values of ``attribute`` (see the module docstring).

    Parameters
    ----------
    attribute : str
        The column the taxonomy describes.
    root_label : str, default "*"
        The label of the root (the most general value).
    """

    def __init__(self, attribute: str, root_label: str = "*") -> None:
        self.attribute = attribute
        self._by_label: dict[str, TaxonomyNode] = {}
        self._by_alias2: dict[str, TaxonomyNode] = {}
        self._alias1_set: Counter[str] = Counter()  # explicit alias1 values
        self.root = self._register(self._checked_label(root_label), None)

    # --- lookup -------------------------------------------------------------------------------

    def __contains__(self, label: object) -> bool:
        return label in self._by_label

    def __len__(self) -> int:
        """Number of nodes, the root included."""
        return len(self._by_label)

    def find(self, label: str) -> TaxonomyNode | None:
        """The node labelled ``label``, or None."""
        return self._by_label.get(label)

    def node(self, ref: TaxonomyNode | str) -> TaxonomyNode:
        """The node for a label or a node of this taxonomy; raises :class:`TaxonomyError` otherwise."""
        if isinstance(ref, TaxonomyNode):
            if self._by_label.get(ref.label) is not ref:
                raise TaxonomyError(f"{self._name}: the node {ref.label!r} is not (or no longer) in it.")
            return ref
        node = self._by_label.get(ref) if isinstance(ref, str) else None
        if node is None:
            raise TaxonomyError(f"{self._name}: there is no label {ref!r}.")
        return node

    def leaf(self, label: str) -> TaxonomyNode:
        """The leaf ``label``; raises :class:`TaxonomyError` if absent or an inner node."""
        node = self.node(label)
        if not node.is_leaf:
            raise TaxonomyError(f"{self._name}: {label!r} is a generalization (it has children), not a value.")
        return node

    def leaves(self) -> list[TaxonomyNode]:
        """The leaves in pre-order (the order of the tree)."""
        return [node for node in self.root.walk() if node.is_leaf]

    def leaf_labels(self) -> list[str]:
        return [node.label for node in self.leaves()]

    def ancestors(self, label: str) -> list[str]:
        """Labels from ``label`` up to the root, both inclusive."""
        return [node.label for node in self.node(label).path()]

    def parents(self) -> dict[str, str | None]:
        """Every label with the label of its parent (None for the root), in pre-order."""
        return {n.label: (n.parent.label if n.parent is not None else None) for n in self.root.walk()}

    @property
    def depth(self) -> int:
        """Number of edges from the root to the deepest leaf."""
        best, stack = 0, [(self.root, 0)]
        while stack:
            node, d = stack.pop()
            best = max(best, d)
            stack.extend((c, d + 1) for c in node.children)
        return best

    def alias_maps(self) -> tuple[dict[str, list[str]], dict[str, str]]:
        """``(alias1 -> leaf labels, alias2 -> leaf label)`` over the leaves, for reverse lookup."""
        by1: dict[str, list[str]] = {}
        by2: dict[str, str] = {}
        for leaf in self.leaves():
            by1.setdefault(leaf.alias1, []).append(leaf.label)
            by2[leaf.alias2] = leaf.label
        return by1, by2

    # --- edits --------------------------------------------------------------------------------

    def add(self, parent: TaxonomyNode | str, label: str, row: int | None = None) -> TaxonomyNode:
        """Insert a new leaf ``label`` under ``parent`` at ``row`` (default: last) and return it.

        A leaf ``parent`` becomes a generalization and loses any explicit aliases.
        """
        parent = self.node(parent)
        row = self._checked_row(row, len(parent.children), label)
        self._refuse_alias1_clash(self._checked_label(label), f"cannot add {label!r}")
        self._forget_aliases(parent)
        node = self._register(label, parent)
        parent.children.insert(row, node)
        return node

    def rename(self, node: TaxonomyNode | str, new_label: str) -> TaxonomyNode:
        """Give ``node`` a new unique label (children with a default alias1 follow it)."""
        node = self.node(node)
        if new_label != node.label:
            self._checked_label(new_label)
            if node.is_leaf:
                self._refuse_alias1_clash(new_label, f"cannot rename {node.label!r} to {new_label!r}", node)
            del self._by_label[node.label]
            node._label = new_label
            self._by_label[new_label] = node
        return node

    def move(self, node: TaxonomyNode | str, new_parent: TaxonomyNode | str, row: int | None = None) -> TaxonomyNode:
        """Move ``node`` (with its subtree) under ``new_parent``; ``row`` is its index there afterwards."""
        node, new_parent = self.node(node), self.node(new_parent)
        if node.parent is None:
            raise TaxonomyError(f"{self._name}: the root {node.label!r} cannot be moved.")
        if any(n is node for n in new_parent.path()):
            raise TaxonomyError(
                f"{self._name}: cannot move {node.label!r} under {new_parent.label!r}, which is "
                f"{'itself' if new_parent is node else 'inside it'} (that would make a cycle)."
            )
        remaining = len(new_parent.children) - (node.parent is new_parent)
        row = self._checked_row(row, remaining, node.label)
        if node.parent is not new_parent:
            self._refuse_emptying(node, "move")
        self._forget_aliases(new_parent)
        node.parent.children.pop(node.row())
        new_parent.children.insert(row, node)
        node.parent = new_parent
        return node

    def delete(self, node: TaxonomyNode | str) -> None:
        """Remove ``node`` and everything under it."""
        node = self.node(node)
        if node.parent is None:
            raise TaxonomyError(f"{self._name}: the root {node.label!r} cannot be deleted.")
        self._refuse_emptying(node, "delete")
        node.parent.children.pop(node.row())
        node.parent = None
        for gone in node.walk():
            del self._by_label[gone.label]
            del self._by_alias2[gone.alias2]
            self._count_alias1(gone._alias1, -1)

    def set_alias(self, leaf: TaxonomyNode | str, alias1: str | None = UNSET, alias2: str | None = UNSET) -> None:
        """Set a leaf's aliases explicitly (``None`` restores the default; omitted: unchanged).

        alias1 may be shared by several leaves but must not be another leaf's label or any alias2;
        alias2 must be unique within the attribute and must not equal any label or any alias1.
        Nothing changes if either is refused.
        """
        leaf = self.node(leaf)
        if not leaf.is_leaf:
            raise TaxonomyError(f"{self._name}: {leaf.label!r} is not a leaf; only values have aliases.")
        if alias1 is not UNSET and alias1 is not None:
            self._check_alias(alias1, "alias1", leaf)
            used = alias1_clash(alias1, alias2, leaf, self._by_label, self._by_alias2)
            if used is not None:
                raise TaxonomyError(f"{self._name}: alias1 {alias1!r} of {leaf.label!r} is already {used}.")
        if alias2 is not UNSET and alias2 is not None:
            self._check_alias(alias2, "alias2", leaf)
            used = alias2_clash(alias2, leaf, self._by_label, self._by_alias2, self._alias1_set)
            if used is not None:
                raise TaxonomyError(f"{self._name}: alias2 {alias2!r} of {leaf.label!r} is already {used}.")
        if alias1 is not UNSET:
            self._count_alias1(leaf._alias1, -1)
            leaf._alias1 = alias1
            self._count_alias1(alias1, +1)
        if alias2 is not UNSET:
            del self._by_alias2[leaf.alias2]
            leaf._alias2 = alias2 if alias2 is not None else self._fresh_code()
            leaf._alias2_set = alias2 is not None
            self._by_alias2[leaf.alias2] = leaf

    # --- validation ---------------------------------------------------------------------------

    def validate(self, data_values: Iterable[object] | None = None) -> list[str]:
        """Messages naming every problem of the tree (and of its cover of ``data_values``).

        Walks the tree itself (not the index), so it also catches trees damaged from outside: cycles
        or shared nodes, empty or duplicate labels, duplicate alias2, aliases that clash with labels.
        ``data_values`` (any iterable, e.g. a column) are compared as ``label_text``; missing values
        (None, NaN, NA, ``""``) need no leaf. An empty list means valid.
        """
        return tree_problems(self, data_values)

    def check(self, data_values: Iterable[object] | None = None) -> None:
        """Raise :class:`TaxonomyError` with every message of :meth:`validate`, if any."""
        problems = self.validate(data_values)
        if problems:
            raise TaxonomyError(f"{self._name} is not valid: " + "; ".join(problems))

    @classmethod
    def flat(cls, attribute: str, values: Iterable[object], root_label: str = "*") -> Taxonomy:
        """A one-level taxonomy: every distinct non-missing value a leaf under the root, in first-seen order."""
        taxonomy = cls(attribute, root_label)
        for value in data_labels(values):
            taxonomy.add(taxonomy.root, value)
        return taxonomy

    # --- internals ----------------------------------------------------------------------------

    @property
    def _name(self) -> str:
        return f"Taxonomy of {self.attribute!r}"

    def _register(self, label: str, parent: TaxonomyNode | None) -> TaxonomyNode:
        node = TaxonomyNode(label, parent, self._fresh_code())
        self._by_label[label] = node
        self._by_alias2[node.alias2] = node
        return node

    def _refuse_alias1_clash(self, label: str, action: str, own: TaxonomyNode | None = None) -> None:
        """A leaf's label must not be another leaf's explicit alias1 (published values would clash)."""
        if self._alias1_set.get(label, 0) > (own is not None and own._alias1 == label):
            holder = next(leaf.label for leaf in self.leaves() if leaf._alias1 == label and leaf is not own)
            raise TaxonomyError(f"{self._name}: {action}: {label!r} is the alias1 of {holder!r}; change that alias first.")

    def _refuse_emptying(self, node: TaxonomyNode, verb: str) -> None:
        parent = node.parent
        if parent is not None and parent.parent is not None and len(parent.children) == 1:
            self._refuse_alias1_clash(parent.label, f"cannot {verb} {node.label!r} (it would turn {parent.label!r} into a value)")

    def _forget_aliases(self, node: TaxonomyNode) -> None:
        """Explicit aliases belong to values: drop them from a leaf that becomes a generalization."""
        if node.is_leaf and (node.alias1_is_set or node.alias2_is_set):
            self.set_alias(node, alias1=None, alias2=None if node.alias2_is_set else UNSET)

    def _count_alias1(self, alias1: str | None, delta: int) -> None:
        if alias1 is not None:
            self._alias1_set[alias1] += delta
            if self._alias1_set[alias1] <= 0:
                del self._alias1_set[alias1]

    def _fresh_code(self) -> str:
        code = new_alias_code()
        while code in self._by_alias2 or code in self._by_label or code in self._alias1_set:
            code = new_alias_code()
        return code

    def _checked_label(self, label: object) -> str:
        problem = label_problem(label, self._by_label, self._by_alias2)
        if problem is not None:
            raise TaxonomyError(f"{self._name}: {problem}")
        assert is_text(label)  # label_problem refuses anything but text
        return label

    def _check_alias(self, alias: object, kind: str, leaf: TaxonomyNode) -> None:
        if not is_text(alias):
            raise TaxonomyError(f"{self._name}: {kind} of {leaf.label!r} must be non-empty text, not {alias!r}.")

    def _checked_row(self, row: int | None, size: int, label: object) -> int:
        if row is None:
            return size
        if isinstance(row, bool) or not isinstance(row, int) or not 0 <= row <= size:
            raise TaxonomyError(f"{self._name}: row {row!r} for {label!r} is not between 0 and {size}.")
        return row
