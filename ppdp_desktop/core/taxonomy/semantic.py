"""Semantic distance and marginality of categorical values over a taxonomy (SPEC 5).

``dis(a, b) = log2(1 + |phi(a) xor phi(b)| / |phi(a) or phi(b)|)`` with ``phi(v)`` the set of the
taxonomic ancestors of ``v`` including ``v`` itself **and the root**. The root is in every ``phi``, so
counting it never changes the numerator; it adds one to the denominator, which keeps the distance
strictly below 1 and makes siblings under the root ``log2(1 + 2/3)`` rather than ``log2(2) = 1``.

Because a tree has one path from each node to the root, ``|phi(a) & phi(b)| = depth(lca(a, b)) + 1``
and ``|phi(a)| = depth(a) + 1``. The matrix form compares the two nodes' root paths level by level:
paths agree exactly down to the lowest common ancestor, so the number of agreeing levels is the size of
the intersection. That is ``depth`` vectorized comparisons of an ``n x n`` array, and the distance
itself is looked up in a small table indexed by the three sizes.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.errors import TaxonomyError
from ppdp_desktop.core.taxonomy.tree import Taxonomy, TaxonomyNode, is_missing, list_values

_TABLE_MAX = 64  # up to this depth + 1, look distances up in an n**3 table


def distance(taxonomy: Taxonomy, a: str, b: str) -> float:
    """``dis(a, b)`` of two labels of ``taxonomy`` (any nodes, not only leaves), in [0, 1)."""
    phi_a = {id(n) for n in taxonomy.node(a).path()}
    phi_b = {id(n) for n in taxonomy.node(b).path()}
    return math.log2(1 + len(phi_a ^ phi_b) / len(phi_a | phi_b))


def distance_matrix(
    taxonomy: Taxonomy, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None
) -> tuple[list[str], list[str], np.ndarray]:
    """``dis`` between every label of ``rows`` and every label of ``cols`` (default: the leaves).

    Returns
    -------
    rows, cols : list of str
        The labels, in the order of the matrix.
    matrix : numpy.ndarray
        ``float64`` of shape ``(len(rows), len(cols))``; symmetric with a zero diagonal when
        ``rows == cols``. Temporary memory is about 20 bytes per cell (a few thousand labels: fine).
    """
    rows = taxonomy.leaf_labels() if rows is None else list(rows)
    cols = rows if cols is None else list(cols)
    ids: dict[int, int] = {}
    path_r, size_r, node_r = _paths(taxonomy, rows, ids)
    path_c, size_c, node_c = (path_r, size_r, node_r) if cols is rows else _paths(taxonomy, cols, ids)
    levels = min(path_r.shape[1], path_c.shape[1])
    inter = np.zeros((len(rows), len(cols)), dtype=np.int16)
    for level in range(levels):
        inter += path_r[:, level, None] == path_c[None, :, level]
    same = node_r[:, None] == node_c[None, :]
    inter[same] = np.broadcast_to(size_r[:, None], same.shape)[same]  # padding levels agree too
    n = int(max(path_r.shape[1], path_c.shape[1])) + 1
    if n > _TABLE_MAX:  # a very deep tree: compute each cell
        union = size_r[:, None] + size_c[None, :] - inter
        return rows, cols, np.log2(1.0 + (union - inter) / union)
    # dis depends only on (|phi(a)|, |phi(b)|, |phi(a) & phi(b)|), each at most depth + 1: look it up.
    size_a, size_b, common = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    common = np.minimum(common, np.minimum(size_a, size_b))  # the other cells are never looked up
    union = np.maximum(size_a + size_b - common, 1)
    table = np.log2(1.0 + (union - common) / union).ravel()
    key = (size_r[:, None] * n + size_c[None, :]) * n + inter
    matrix = table[key]
    return rows, cols, matrix


def marginality(taxonomy: Taxonomy, data: Mapping[str, float] | Iterable[object]) -> dict[str, float]:
    """``m(a) = sum over the records b of dis(a, b)`` for every leaf ``a`` of ``taxonomy``.

    Parameters
    ----------
    data : mapping or iterable
        Either value -> count, or the values themselves (one per record, e.g. a column). Values are
        compared as ``label_text``; missing values (``""``) are left out. Every other value must be a
        label of the taxonomy (normally a leaf).

    Raises
    ------
    TaxonomyError
        Naming the data values that are not in the taxonomy.
    """
    categories = getattr(getattr(data, "cat", None), "categories", None)
    if categories is not None:  # a loaded categorical: counted as its text is (ties in order of appearance, no zeros)
        data = data.astype(categories.dtype)  # type: ignore[union-attr]
    value_counts = getattr(data, "value_counts", None)
    if callable(value_counts):  # a pandas Series: count in pandas
        data = value_counts().to_dict()
    if isinstance(data, Mapping):
        counts: dict[str, float] = {}
        for value, count in data.items():
            key = "" if is_missing(value) else label_text(value)
            counts[key] = counts.get(key, 0.0) + float(count)
    else:
        counts = dict(Counter(label_text(v) for v in data if not is_missing(v)))
    counts.pop("", None)
    unknown = [v for v in counts if v not in taxonomy]
    if unknown:
        raise TaxonomyError(f"Taxonomy of {taxonomy.attribute!r}: " + list_values(unknown, "data values not in it"))
    leaves, values, matrix = distance_matrix(taxonomy, None, list(counts))
    weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
    return dict(zip(leaves, (matrix @ weights).tolist()))


def _paths(taxonomy: Taxonomy, labels: list[str], ids: dict[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Root paths as rows of node numbers (padded with a per-node negative number), sizes, node numbers."""
    nodes: list[TaxonomyNode] = [taxonomy.node(label) for label in labels]
    chains = [node.path()[::-1] for node in nodes]
    width = max((len(c) for c in chains), default=1)
    paths = np.empty((len(nodes), width), dtype=np.int64)
    number = np.empty(len(nodes), dtype=np.int64)
    for i, chain in enumerate(chains):
        numbers = [ids.setdefault(id(n), len(ids)) for n in chain]
        number[i] = numbers[-1]
        paths[i, : len(numbers)] = numbers
        paths[i, len(numbers):] = -1 - numbers[-1]
    sizes = np.fromiter((len(c) for c in chains), dtype=np.int32, count=len(chains))
    return paths, sizes, number
