"""The taxonomy tree of one attribute's values, with the aliases of SPEC 4.

The leaves are the attribute's values (the :func:`~ppdp_desktop.core.domain.label_text` of each data
value); inner nodes are generalizations; the root is the most general label. Every leaf carries

* ``alias1``, the generalized value published for privacy choice 2. By default it is the label of
  the leaf's parent (the root's label for a leaf directly under the root) and follows the leaf when it
  moves; an alias1 set explicitly stays as set.
* ``alias2``, the opaque code published for choice 3: by default ``"A"`` and 8 symbols drawn with
  :mod:`secrets` from an alphabet without look-alikes (no 0/O, 1/I), random on every build and never
  derived from the label. It is unique within the attribute and never equals a label.

The tree is plain Python that a ``QAbstractItemModel`` adapts: each :class:`TaxonomyNode` has
``parent``, a ``children`` list and :meth:`~TaxonomyNode.row`; edits insert or remove at a row. Edit
only through :class:`Taxonomy`'s methods, which keep labels unique and the label index (O(1) lookup)
up to date, and raise :class:`~ppdp_desktop.core.errors.TaxonomyError` naming the value otherwise.
:meth:`Taxonomy.validate` re-checks the whole tree without trusting the index.
"""
from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import pandas as pd

from ppdp_desktop.core.domain import label_text
from ppdp_desktop.core.errors import TaxonomyError

#: The 32 symbols of default alias2 codes (digits 2-9 and capitals without I and O).
ALIAS_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
_ALIAS_TABLE = bytes(ord(ALIAS_ALPHABET[i % 32]) for i in range(256))  # 256 % 32 == 0: uniform
MAX_LISTED = 10
UNSET: Any = object()


def new_alias_code() -> str:
    """A fresh random alias2 code: ``"A"`` and 8 symbols of :data:`ALIAS_ALPHABET` (40 random bits)."""
    return "A" + secrets.token_bytes(8).translate(_ALIAS_TABLE).decode("ascii")


def is_text(value: object) -> bool:
    """True for a string that is not blank and is valid Unicode (no lone surrogates)."""
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_missing(value: object) -> bool:
    """True for None, NaN, ``pd.NA`` and ``pd.NaT`` (values that need no leaf)."""
    return value is None or (not isinstance(value, str) and pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def data_labels(values: Iterable[object]) -> list[str]:
    """The distinct non-missing ``values`` as ``label_text``, first seen first (pandas: via ``unique()``)."""
    unique = getattr(values, "unique", None)
    if callable(unique):
        values = unique()
    return [text for text in dict.fromkeys(label_text(v) for v in values if not is_missing(v)) if text]


def list_values(values: list[str], what: str) -> str:
    """``"<what> (3): 'a', 'b', 'c'"``, listing at most :data:`MAX_LISTED` values."""
    shown = ", ".join(repr(v) for v in values[:MAX_LISTED])
    more = f" and {len(values) - MAX_LISTED} more" if len(values) > MAX_LISTED else ""
    return f"{what} ({len(values)}): {shown}{more}"


class TaxonomyNode:
    """One label of the tree. Read ``parent`` and ``children``; change them only via :class:`Taxonomy`."""

    __slots__ = ("_label", "parent", "children", "_alias1", "_alias2", "_alias2_set")

    def __init__(self, label: str, parent: TaxonomyNode | None, alias2: str) -> None:
        self._label = label
        self.parent = parent
        self.children: list[TaxonomyNode] = []
        self._alias1: str | None = None
        self._alias2 = alias2
        self._alias2_set = False

    @property
    def label(self) -> str:
        return self._label

    @property
    def alias1(self) -> str:
        """The explicit alias1, else the parent's label (the root's own label for the root)."""
        if self._alias1 is not None:
            return self._alias1
        return self.parent.label if self.parent is not None else self._label

    @property
    def alias2(self) -> str:
        return self._alias2

    @property
    def alias1_is_set(self) -> bool:
        return self._alias1 is not None

    @property
    def alias2_is_set(self) -> bool:
        return self._alias2_set

    @property
    def is_leaf(self) -> bool:
        """True for a node without children other than the root (a value of the attribute)."""
        return not self.children and self.parent is not None

    @property
    def depth(self) -> int:
        """Number of edges up to the root (0 for the root)."""
        depth, node = 0, self.parent
        while node is not None:
            depth, node = depth + 1, node.parent
        return depth

    def row(self) -> int:
        """Index of this node among its parent's children (0 for the root)."""
        return 0 if self.parent is None else self.parent.children.index(self)

    def path(self) -> list[TaxonomyNode]:
        """This node and its ancestors, up to the root inclusive."""
        nodes, node = [], self
        while node is not None:
            nodes.append(node)
            node = node.parent
        return nodes

    def walk(self) -> Iterator[TaxonomyNode]:
        """This node and its descendants in pre-order (iterative: any depth)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def __repr__(self) -> str:
        return f"TaxonomyNode({self._label!r}, children={len(self.children)})"


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
            other = self._by_label.get(alias1)
            holder = self._by_alias2.get(alias1)
            if (other is not None and other.is_leaf and other is not leaf) or holder is not None or alias1 == alias2:
                used = f"the label of the value {alias1!r}" if holder is None else f"the alias2 of {holder.label!r}"
                raise TaxonomyError(f"{self._name}: alias1 {alias1!r} of {leaf.label!r} is already {used}.")
        if alias2 is not UNSET and alias2 is not None:
            self._check_alias(alias2, "alias2", leaf)
            holder = self._by_alias2.get(alias2)
            if alias2 in self._by_label or (holder is not None and holder is not leaf) or alias2 in self._alias1_set:
                used = ("a label" if alias2 in self._by_label else
                        f"the alias2 of {holder.label!r}" if holder is not None else "an alias1")
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
        problems: list[str] = []
        labels: Counter[str] = Counter()
        leaves: list[TaxonomyNode] = []
        seen: set[int] = set()
        stack = [self.root]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                problems.append(f"the node {node.label!r} is reached twice (a cycle or a node with two parents)")
                continue
            seen.add(id(node))
            if not is_text(node.label):
                problems.append(f"the label {node.label!r} is empty or not text; give every node a name")
            labels[node.label] += 1
            for child in node.children:
                if child.parent is not node:
                    problems.append(f"the node {child.label!r} is listed under {node.label!r} but points elsewhere")
                stack.append(child)
            if not node.children and node is not self.root:
                leaves.append(node)
        if not leaves:
            problems.append("it has no values (leaves)")
        dups = [label for label, n in labels.items() if n > 1]
        if dups:
            problems.append(list_values(dups, "labels used more than once (labels must be unique)"))
        codes = Counter(leaf.alias2 for leaf in leaves)
        dups = [code for code, n in codes.items() if n > 1]
        if dups:
            problems.append(list_values(dups, "alias2 codes shared by several values"))
        bad = [code for code in codes if code in labels]
        if bad:
            problems.append(list_values(bad, "alias2 codes equal to a label"))
        leaf_labels = {leaf.label for leaf in leaves}
        bad = [f.alias1 for f in leaves if f.alias1 in codes or (f.alias1 in leaf_labels and f.alias1 != f.label)]
        if bad:
            problems.append(list_values(list(dict.fromkeys(bad)), "alias1 values equal to another value or an alias2"))
        if data_values is not None:
            uncovered = [value for value in data_labels(data_values) if value not in leaf_labels]
            if uncovered:
                problems.append(list_values(uncovered, "data values without a leaf"))
        return problems

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
        if not is_text(label):
            raise TaxonomyError(f"{self._name}: the label {label!r} is empty or not text; give every node a name.")
        existing = self._by_label.get(label)
        if existing is not None:
            where = f" under {existing.parent.label!r}" if existing.parent is not None else " as the root"
            raise TaxonomyError(f"{self._name}: the label {label!r} is already used{where}; labels must be unique.")
        holder = self._by_alias2.get(label)
        if holder is not None:
            raise TaxonomyError(f"{self._name}: the label {label!r} is the alias2 of {holder.label!r}.")
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
