"""The nodes of a taxonomy tree and the small value helpers the tree is built from (SPEC 4).

Every leaf :class:`TaxonomyNode` carries

* ``alias1``, the generalized value published for privacy choice 2. By default it is the label of
  the leaf's parent (the root's label for a leaf directly under the root) and follows the leaf when it
  moves; an alias1 set explicitly stays as set.
* ``alias2``, the opaque code published for choice 3: by default ``"A"`` and 8 symbols drawn with
  :mod:`secrets` from an alphabet without look-alikes (no 0/O, 1/I), random on every build and never
  derived from the label (:func:`new_alias_code`). It is unique within the attribute and never equals
  a label.

Nodes are plain Python that a ``QAbstractItemModel`` adapts: each has ``parent``, a ``children`` list
and :meth:`~TaxonomyNode.row`. They are changed only by :class:`~ppdp_desktop.core.taxonomy.tree.Taxonomy`,
which keeps labels unique and its indexes up to date.
"""
from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from typing import Any, TypeGuard

from ppdp_desktop.core.data.labels import label_text

#: The 32 symbols of default alias2 codes (digits 2-9 and capitals without I and O).
ALIAS_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
_ALIAS_TABLE = bytes(ord(ALIAS_ALPHABET[i % 32]) for i in range(256))  # 256 % 32 == 0: uniform
UNSET: Any = object()


def new_alias_code() -> str:
    """A fresh random alias2 code: ``"A"`` and 8 symbols of :data:`ALIAS_ALPHABET` (40 random bits)."""
    return "A" + secrets.token_bytes(8).translate(_ALIAS_TABLE).decode("ascii")


def is_text(value: object) -> TypeGuard[str]:
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
    if value is None or isinstance(value, str):
        return value is None
    import pandas as pd  # here, not at the top: a taxonomy is made before the data (the window's first page)

    return value is None or (not isinstance(value, str) and pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def data_labels(values: Iterable[object]) -> list[str]:
    """The distinct non-missing ``values`` as ``label_text``, first seen first (pandas: via ``unique()``)."""
    unique = getattr(values, "unique", None)
    if callable(unique):
        values = unique()
    return [text for text in dict.fromkeys(label_text(v) for v in values if not is_missing(v)) if text]


class TaxonomyNode:
    """One label of the tree.

    Read ``parent`` and ``children``; change them only via :class:`~ppdp_desktop.core.taxonomy.tree.Taxonomy`.
    """

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
        nodes: list[TaxonomyNode] = []
        node: TaxonomyNode | None = self
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
