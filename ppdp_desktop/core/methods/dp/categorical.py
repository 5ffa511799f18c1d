"""Individual-ranking microaggregation of a categorical attribute over a taxonomy (SPEC 5).

1. Marginality ``m(a) = sum over records b of dis(a, b)`` of every value in the data; the most
   marginal value ``a*`` anchors a total order: values sorted by ``dis(a*, value)`` (ties in the
   taxonomy's pre-order).
2. Records sorted in that order are cut into clusters of ``k`` (the last ``k..2k-1``).
3. Each cluster's centroid is drawn by the exponential mechanism among the labels of the smallest
   sub-taxonomy covering the cluster (rooted at the lowest common ancestor of its values), with quality
   ``u(c) = -sum_{b in cluster} dis(c, b)`` and probability proportional to ``exp(eps_j u / (2 Delta_u))``,
   ``Delta_u = 1``. One draw per cluster, shared by all its records: cluster ``c`` (in rank order)
   takes word ``c`` of the keyed stream ``(attribute, "choice")`` and chooses by the inverse CDF over
   its candidates' weights in pre-order (:mod:`~ppdp_desktop.core.methods.dp.noise`).

Nothing depends on the order in which the records arrive: the distinct values are numbered in sorted
order, the records are ranked stably (ties by record index), and the draws are addressed by cluster.

Vectorized: nodes are numbered in pre-order so a sub-taxonomy is a contiguous range ``[i, end[i])``;
the qualities are one sparse-by-dense product; the choice is an inverse CDF on masked weights.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.errors import ParameterError, PrivacyError, TaxonomyError, setting_ref
from ppdp_desktop.core.methods.dp.noise import CHOICE_DRAW, PLAIN_CHOICE_DRAW, exponential_weights, inverse_cdf_choice
from ppdp_desktop.core.methods.dp.numeric import check_cluster_shape, ranked_clusters
from ppdp_desktop.core.taxonomy.semantic import distance_matrix
from ppdp_desktop.core.taxonomy.tree import Taxonomy, list_values

if TYPE_CHECKING:  # scipy is imported when a column is ranked, not when the window opens
    from scipy import sparse

    from ppdp_desktop.core.privacy.keyed import KeyedRandomness

MAX_CELLS = 40_000_000  # nodes x data values in the distance matrix (320 MB of float64)
CHUNK = 2048  # clusters scored at a time


@dataclass
class TaxonomyIndex:
    """A taxonomy's nodes in pre-order with subtree ranges and root paths, for vectorized LCAs."""

    taxonomy: Taxonomy
    labels: list[str]
    end: np.ndarray  # subtree of node i is [i, end[i])
    paths: np.ndarray  # (nodes, depth + 1) node numbers from the root down, padded with -1

    @classmethod
    def build(cls, taxonomy: Taxonomy) -> TaxonomyIndex:
        nodes = list(taxonomy.root.walk())
        number = {id(n): i for i, n in enumerate(nodes)}
        parent = np.array([number[id(n.parent)] if n.parent is not None else -1 for n in nodes], dtype=np.int64)
        depth = np.zeros(len(nodes), dtype=np.int64)
        for i in range(1, len(nodes)):  # pre-order: a parent comes before its children
            depth[i] = depth[parent[i]] + 1
        size = np.ones(len(nodes), dtype=np.int64)
        for i in range(len(nodes) - 1, 0, -1):
            size[parent[i]] += size[i]
        paths = np.full((len(nodes), int(depth.max()) + 1), -1, dtype=np.int64)
        paths[0, 0] = 0
        for i in range(1, len(nodes)):
            d = depth[i]
            paths[i, :d] = paths[parent[i], :d]
            paths[i, d] = i
        return cls(taxonomy, [n.label for n in nodes], np.arange(len(nodes)) + size, paths)

    def lca(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Lowest common ancestors of the node pairs ``(a[i], b[i])``."""
        agree = np.cumprod(self.paths[a] == self.paths[b], axis=1).sum(axis=1)
        return self.paths[a, agree - 1]


@dataclass
class CategoricalRanking:
    """The clustering of one categorical attribute and what the exponential mechanism needs."""

    index: TaxonomyIndex
    value_nodes: np.ndarray  # node number of each distinct data value
    distances: np.ndarray  # dis(node, value): (nodes, values)
    record_value: np.ndarray  # per record: position in value_nodes
    cluster: np.ndarray  # per record
    sizes: np.ndarray  # per cluster
    composition: sparse.csr_matrix  # clusters x values: counts
    cover: np.ndarray  # per cluster: root of the smallest covering sub-taxonomy
    anchor: str  # the most marginal value
    attribute: str = ""  # the column's name: names its keyed streams

    def quality(self, clusters: slice) -> np.ndarray:
        """``u(c)`` for the clusters of the slice and every node: ``-sum_b count_b dis(c, b)``."""
        return -np.asarray(self.composition[clusters] @ self.distances.T)

    def candidates(self, clusters: slice) -> np.ndarray:
        """Boolean mask (clusters, nodes): the node lies in the cluster's covering sub-taxonomy."""
        nodes = np.arange(len(self.index.labels))
        root = self.cover[clusters]
        return (nodes[None, :] >= root[:, None]) & (nodes[None, :] < self.index.end[root][:, None])


CANDIDATES = ("covering", "taxonomy")


def rank_categorical(column: pd.Series, taxonomy: Taxonomy, k: int, candidates: str = "covering") -> CategoricalRanking:
    """Order the records by distance to the most marginal value and cluster ``k`` consecutive ones.

    ``candidates="covering"`` (seed 003, SPEC 5) lets each cluster's centroid range over its smallest
    covering sub-taxonomy: a cluster whose records share one value then releases it unchanged.
    ``"taxonomy"`` lets every cluster range over every label: the candidate set no longer depends on
    the data, at the price of more distortion.
    """
    if candidates not in CANDIDATES:
        raise ParameterError(f"The centroid candidates must be one of {', '.join(CANDIDATES)}; got {candidates!r}.")
    name = column.name
    text = text_column(column)
    missing = np.flatnonzero((text == "").to_numpy())
    if len(missing):
        rows = ", ".join(str(r + 1) for r in missing[:5])
        raise ParameterError(f"Column {name!r} has {len(missing)} blank cells "
                             f"(data rows {rows}{'…' if len(missing) > 5 else ''}); choose what to do with them "
                             f"({setting_ref('blanks', f'{name}=CHOICE')}).", setting="blanks", column=str(name))
    codes, values = pd.factorize(text, sort=True)  # values numbered in sorted order, not in order of arrival
    index = TaxonomyIndex.build(taxonomy)
    position = {label: i for i, label in enumerate(index.labels)}
    unknown = [v for v in values if v not in position]
    if unknown:
        raise TaxonomyError(f"Taxonomy of {name!r}: " + list_values(unknown, "data values not in it"))
    if len(index.labels) * len(values) > MAX_CELLS:
        raise ParameterError(f"The taxonomy of {name!r} has {len(index.labels)} labels and the data {len(values)} "
                             "distinct values: too large for the distance matrix; use a smaller taxonomy.")
    value_nodes = np.array([position[v] for v in values], dtype=np.int64)
    _, _, dist = distance_matrix(taxonomy, index.labels, list(values))
    counts = np.bincount(codes, minlength=len(values)).astype(np.float64)
    among_values = dist[value_nodes]  # (values, values)
    marginality = among_values @ counts
    best = np.flatnonzero(marginality == marginality.max())
    anchor = best[np.argmin(value_nodes[best])]  # ties: first in pre-order
    rank_of_value = np.lexsort((value_nodes, among_values[anchor]))  # by distance, then pre-order
    rank = np.empty(len(values), dtype=np.int64)
    rank[rank_of_value] = np.arange(len(values))
    order = np.argsort(rank[codes], kind="stable")
    sorted_cluster = ranked_clusters(len(codes), k)
    n_clusters = int(sorted_cluster[-1]) + 1
    cluster = np.empty(len(codes), dtype=np.int64)
    cluster[order] = sorted_cluster
    from scipy import sparse

    composition = sparse.csr_matrix((np.ones(len(codes)), (cluster, codes)), shape=(n_clusters, len(values)))
    composition.sum_duplicates()
    sorted_nodes = value_nodes[codes[order]]
    starts = np.flatnonzero(np.r_[True, np.diff(sorted_cluster) != 0])
    lo = np.minimum.reduceat(sorted_nodes, starts)
    hi = np.maximum.reduceat(sorted_nodes, starts)
    cover = index.lca(lo, hi) if candidates == "covering" else np.zeros(n_clusters, dtype=np.int64)
    return CategoricalRanking(index, value_nodes, dist, codes, cluster, np.bincount(sorted_cluster), composition,
                              cover, str(values[anchor]), str(name))


def exponential_centroids(ranking: CategoricalRanking, epsilon: float, keyed: KeyedRandomness,
                          sensitivity: float = 1.0) -> np.ndarray:
    """One node per cluster drawn with probability proportional to ``exp(eps u / (2 Delta_u))``.

    Cluster ``c`` chooses by the inverse CDF at uniform ``c`` of the keyed stream
    ``(ranking.attribute, "choice")``, over its candidates' weights in pre-order.
    """
    chosen = np.empty(len(ranking.sizes), dtype=np.int64)
    uniforms = keyed.stream(ranking.attribute, CHOICE_DRAW).uniforms(0, len(chosen))
    for start in range(0, len(chosen), CHUNK):
        part = slice(start, min(start + CHUNK, len(chosen)))
        score = ranking.quality(part) * (epsilon / (2.0 * sensitivity))
        weights = exponential_weights(np.where(ranking.candidates(part), score, -np.inf))
        chosen[part] = inverse_cdf_choice(weights, uniforms[part])
    return chosen


def marginal_centroids(ranking: CategoricalRanking) -> np.ndarray:
    """Baseline without noise: the best-quality label of each cluster's covering sub-taxonomy."""
    chosen = np.empty(len(ranking.sizes), dtype=np.int64)
    for start in range(0, len(chosen), CHUNK):
        part = slice(start, min(start + CHUNK, len(chosen)))
        chosen[part] = np.argmax(np.where(ranking.candidates(part), ranking.quality(part), -np.inf), axis=1)
    return chosen


def plain_exponential(ranking: CategoricalRanking, epsilon: float, keyed: KeyedRandomness) -> np.ndarray:
    """Baseline: each record's own label drawn by the exponential mechanism over the whole taxonomy
    (quality ``-dis(c, b)``, ``Delta_u = 1``): what epsilon costs without microaggregation. Per record:
    record ``i`` chooses at uniform ``i`` of the keyed stream ``(ranking.attribute, "plain choice")``."""
    out = np.empty(len(ranking.record_value), dtype=np.int64)
    weights = exponential_weights(-ranking.distances.T * (epsilon / 2.0))  # (values, nodes)
    uniforms = keyed.stream(ranking.attribute, PLAIN_CHOICE_DRAW).uniforms(0, len(out))
    order = np.argsort(ranking.record_value, kind="stable")
    counts = np.bincount(ranking.record_value, minlength=len(weights))
    for v, rows in enumerate(np.split(order, np.cumsum(counts)[:-1])):  # the records of a value share its weights
        if len(rows):
            out[rows] = inverse_cdf_choice(weights[v], uniforms[rows])
    return out


def check_categorical_structure(released_nodes: np.ndarray, ranking: CategoricalRanking, k: int, attribute: str) -> None:
    """Fail closed unless clusters have ``k`` records (last ``k..2k-1``), share one label, and that
    label lies in the cluster's covering sub-taxonomy."""
    first = check_cluster_shape(released_nodes, ranking.cluster, ranking.sizes, k, attribute, "label")
    inside = (first >= ranking.cover) & (first < ranking.index.end[ranking.cover])
    if not inside.all():
        raise PrivacyError(f"{attribute!r}: a released label lies outside its cluster's sub-taxonomy.")


def released_labels(ranking: CategoricalRanking, nodes: np.ndarray) -> pd.Categorical:
    """Released node numbers as a categorical of labels (only the labels used)."""
    used, codes = np.unique(nodes, return_inverse=True)
    labels = [ranking.index.labels[i] for i in used]
    return pd.Categorical.from_codes(codes, categories=labels)
