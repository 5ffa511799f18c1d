"""The rules a taxonomy's labels and aliases obey (SPEC 4), as pure functions.

* :func:`label_problem`, :func:`alias1_clash` and :func:`alias2_clash` judge one proposed label or
  alias against the indexes that :class:`~ppdp_desktop.core.taxonomy.tree.Taxonomy` keeps (label -> node,
  alias2 -> leaf, explicit alias1 values); its edit methods raise with their answers.
* :func:`tree_problems` is the body of :meth:`Taxonomy.validate
  <ppdp_desktop.core.taxonomy.tree.Taxonomy.validate>`: it walks the nodes themselves rather than trusting
  those indexes, so it also catches trees damaged from outside.
* :func:`list_values` formats the value lists of messages (here and in other modules) compactly.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Mapping
from typing import TYPE_CHECKING

from ppdp_desktop.core.taxonomy.node import TaxonomyNode, data_labels, is_text

if TYPE_CHECKING:
    from ppdp_desktop.core.taxonomy.tree import Taxonomy

MAX_LISTED = 10


def list_values(values: list[str], what: str) -> str:
    """``"<what> (3): 'a', 'b', 'c'"``, listing at most :data:`MAX_LISTED` values."""
    shown = ", ".join(repr(v) for v in values[:MAX_LISTED])
    more = f" and {len(values) - MAX_LISTED} more" if len(values) > MAX_LISTED else ""
    return f"{what} ({len(values)}): {shown}{more}"


def label_problem(label: object, labels: Mapping[str, TaxonomyNode], codes: Mapping[str, TaxonomyNode]) -> str | None:
    """Why ``label`` cannot name a new node (or a renamed one), or None if it can.

    Parameters
    ----------
    label : object
        The proposed label.
    labels : mapping of str to TaxonomyNode
        The taxonomy's nodes by label.
    codes : mapping of str to TaxonomyNode
        The taxonomy's nodes by alias2.

    Returns
    -------
    str or None
        A sentence naming ``label`` if it is not text, already a label, or an alias2; else None.
    """
    if not is_text(label):
        return f"the label {label!r} is empty or not text; give every node a name."
    existing = labels.get(label)
    if existing is not None:
        where = f" under {existing.parent.label!r}" if existing.parent is not None else " as the root"
        return f"the label {label!r} is already used{where}; labels must be unique."
    holder = codes.get(label)
    if holder is not None:
        return f"the label {label!r} is the alias2 of {holder.label!r}."
    return None


def alias1_clash(
    alias1: str, alias2: object, leaf: TaxonomyNode,
    labels: Mapping[str, TaxonomyNode], codes: Mapping[str, TaxonomyNode],
) -> str | None:
    """What an explicit ``alias1`` for ``leaf`` would clash with, or None if nothing.

    alias1 may be shared by several leaves but must not be another leaf's label or any alias2
    (including the ``alias2`` being set with it).

    Parameters
    ----------
    alias1 : str
        The proposed alias1 (already known to be text).
    alias2 : object
        The alias2 proposed together with it (any non-string if none).
    leaf : TaxonomyNode
        The leaf that would get the alias.
    labels, codes : mapping of str to TaxonomyNode
        The taxonomy's nodes by label and by alias2.

    Returns
    -------
    str or None
        What ``alias1`` already is (``"the label of the value 'x'"`` or ``"the alias2 of 'y'"``), or None.
    """
    other = labels.get(alias1)
    holder = codes.get(alias1)
    if (other is not None and other.is_leaf and other is not leaf) or holder is not None or alias1 == alias2:
        return f"the label of the value {alias1!r}" if holder is None else f"the alias2 of {holder.label!r}"
    return None


def alias2_clash(
    alias2: str, leaf: TaxonomyNode, labels: Mapping[str, TaxonomyNode], codes: Mapping[str, TaxonomyNode],
    alias1_values: Container[str],
) -> str | None:
    """What an explicit ``alias2`` for ``leaf`` would clash with, or None if nothing.

    alias2 must be unique within the attribute and must not equal any label or any alias1.

    Parameters
    ----------
    alias2 : str
        The proposed alias2 (already known to be text).
    leaf : TaxonomyNode
        The leaf that would get the code (its own current code does not clash).
    labels, codes : mapping of str to TaxonomyNode
        The taxonomy's nodes by label and by alias2.
    alias1_values : container of str
        The explicit alias1 values in use.

    Returns
    -------
    str or None
        What ``alias2`` already is (``"a label"``, ``"the alias2 of 'y'"`` or ``"an alias1"``), or None.
    """
    holder = codes.get(alias2)
    if alias2 in labels or (holder is not None and holder is not leaf) or alias2 in alias1_values:
        return ("a label" if alias2 in labels else
                f"the alias2 of {holder.label!r}" if holder is not None else "an alias1")
    return None


def tree_problems(taxonomy: Taxonomy, data_values: Iterable[object] | None = None) -> list[str]:
    """Messages naming every problem of ``taxonomy``'s tree (and of its cover of ``data_values``).

    Parameters
    ----------
    taxonomy : Taxonomy
        The taxonomy to check; only its ``root`` and the nodes reachable from it are read.
    data_values : iterable of object, optional
        Values (e.g. a column) that need a leaf each, compared as ``label_text``; missing values
        (None, NaN, NA, ``""``) need none.

    Returns
    -------
    list of str
        One message per kind of problem: cycles or shared nodes, empty or duplicate labels, no
        leaves, duplicate alias2, aliases that clash with labels, uncovered data values. Empty if valid.
    """
    root = taxonomy.root
    problems: list[str] = []
    labels: Counter[str] = Counter()
    leaves: list[TaxonomyNode] = []
    seen: set[int] = set()
    stack = [root]
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
        if not node.children and node is not root:
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
