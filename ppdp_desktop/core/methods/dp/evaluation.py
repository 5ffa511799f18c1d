"""Seed 003 section 4: utility of a dp-microagg release against its baselines (SPEC 5).

Measures (per attribute, then averaged over the attributes as the seed does):

* relative error (RE): numeric ``mean |x - x'| / max(|x|, sanity)``; categorical: mean semantic
  distance ``dis(x, x')`` (already in ``[0, 1]``);
* variation of the variance ``|var(x) - var(x')| / var(x)`` (numeric attributes only);
* Jensen-Shannon divergence (bits, in ``[0, 1]``) of the original and released histograms.

Baselines at the same epsilon, M and k: plain Laplace noise per value (scale ``M Delta / epsilon``;
for a categorical attribute its counterpart, the exponential mechanism per record with
``epsilon / M``) and individual ranking without noise (categorical: each cluster's best label).

The baselines are simulations, never released: they draw per record from keyed streams (record ``i``
owns word ``i`` of ``(attribute, "plain laplace")`` / ``(attribute, "plain choice")``) under a key
derived from the public :data:`EVALUATION_SEED`, never from the release's secret seed. Plain Laplace stays
the textbook floating-point mechanism on purpose (seed 003's baseline): it is a comparison, whereas the method's
own release draws exact discrete Laplace noise on a grid (issue 20).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation import metrics
from ppdp_desktop.core.methods.dp.categorical import marginal_centroids, plain_exponential
from ppdp_desktop.core.methods.dp.numeric import NumericDomain, plain_laplace, plain_ranking
from ppdp_desktop.core.methods.dp.plan import dp_plan
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.taxonomy.semantic import distance_matrix
from ppdp_desktop.core.taxonomy.tree import Taxonomy

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.base import Runner
    from ppdp_desktop.core.outcome import Anonymization

METHOD = "dp-microagg"
LAPLACE = "plain Laplace"
RANKING = "individual ranking (no noise)"
ALL = "all attributes"
EVALUATION_SEED = 20_240_603  # baselines only; unrelated to the release's secret seed
SANITY_SHARE = 100.0  # sanity bound = Delta / 100 (our reading of seed 003, see relative_error)
INTEGER_BINS_MAX = 200


@dataclass(frozen=True)
class DPRow:
    """One method's measures on one attribute (or ``ALL``: the average over the attributes).

    ``k`` is ``None`` for plain Laplace (it does not cluster); ``variance_variation`` is ``None``
    for a categorical attribute (and for ``ALL`` when no attribute is numeric).
    """

    method: str
    attribute: str
    k: int | None
    relative_error: float
    variance_variation: float | None
    jsd: float


def relative_error(original: np.ndarray, released: np.ndarray, domain: NumericDomain) -> float:
    """Mean relative error ``|x - x'| / max(|x|, Delta / 100)`` over the records.

    Seed 003 puts a sanity bound in the denominator "as a function of the domain of values of each
    attribute"; its formula was lost in the text we have. Our reading: one hundredth of the
    attribute's domain width ``Delta`` (the same 1/100 the seed uses for histogram bins), so the
    bound scales with the attribute's order of magnitude.
    """
    x = np.asarray(original, dtype=np.float64)
    y = np.asarray(released, dtype=np.float64)
    return float(np.mean(np.abs(x - y) / np.maximum(np.abs(x), domain.delta / SANITY_SHARE)))


def categorical_error(taxonomy: Taxonomy, original_labels: Sequence[Any], released_labels: Sequence[Any]) -> float:
    """Mean semantic distance ``dis(x, x')`` between original and released labels.

    Computed once per distinct (original, released) pair and weighted by the pair counts.
    """
    a, a_values = pd.factorize(text_column(pd.Series(np.asarray(original_labels, dtype=object))))
    b, b_values = pd.factorize(text_column(pd.Series(np.asarray(released_labels, dtype=object))))
    if len(a) == 0:
        return 0.0
    pairs, counts = np.unique(a.astype(np.int64) * len(b_values) + b, return_counts=True)
    _, _, dist = distance_matrix(taxonomy, list(a_values), list(b_values))
    return float(np.dot(dist[pairs // len(b_values), pairs % len(b_values)], counts) / len(a))


def variance_variation(original: np.ndarray, released: np.ndarray) -> float:
    """``|var(x) - var(x')| / var(x)`` with population variances (seed 003, Baeyens and Defays).

    A constant original column gives 0 if the release is constant too, else ``inf``.
    """
    v0 = float(np.var(np.asarray(original, dtype=np.float64)))
    v1 = float(np.var(np.asarray(released, dtype=np.float64)))
    if v0 == 0.0:
        return 0.0 if v1 == 0.0 else float("inf")
    return abs(v0 - v1) / v0


def histogram_edges(domain: NumericDomain) -> np.ndarray:
    """Bin edges: one bin per integer of an integer domain with at most 200 of them (seed: Adult),
    else 100 bins of 1/100 of the domain each (seed: Census)."""
    if domain.integer:
        lo, hi = np.ceil(domain.lo), np.floor(domain.hi)
        if hi - lo + 1 <= INTEGER_BINS_MAX:
            return np.arange(lo - 0.5, hi + 1.0, 1.0)
    return np.linspace(domain.lo, domain.hi, 101)


def histogram_jsd(original: Sequence[Any], released: Sequence[Any], domain: NumericDomain | None) -> float:
    """Jensen-Shannon divergence (base 2, in ``[0, 1]``) of the two histograms.

    Numeric (``domain`` given): bins of :func:`histogram_edges`. Categorical (``domain=None``): one
    bin per label of the union of the original and released labels.
    """
    p, q = histogram_counts(original, released, domain)[1:]
    return metrics.jensen_shannon(p, q)


@overload
def histogram_counts(original: None, released: Sequence[Any] | np.ndarray, domain: NumericDomain | None
                     ) -> tuple[list[str] | np.ndarray, None, np.ndarray]: ...
@overload
def histogram_counts(original: Sequence[Any] | np.ndarray, released: Sequence[Any] | np.ndarray,
                     domain: NumericDomain | None) -> tuple[list[str] | np.ndarray, np.ndarray, np.ndarray]: ...
def histogram_counts(original: Sequence[Any] | np.ndarray | None, released: Sequence[Any] | np.ndarray,
                     domain: NumericDomain | None) -> tuple[list[str] | np.ndarray, np.ndarray | None, np.ndarray]:
    """``(bins, original counts, released counts)``: bin edges (numeric) or labels (categorical);
    ``original=None`` counts the released column alone (original counts ``None``)."""
    if domain is not None:
        edges = histogram_edges(domain)
        q = np.histogram(np.asarray(released, dtype=np.float64), bins=edges)[0].astype(float)
        p = None if original is None else np.histogram(np.asarray(original, dtype=np.float64), bins=edges)[0].astype(float)
        return edges, p, q
    b = text_column(pd.Series(np.asarray(released, dtype=object)))
    if original is None:
        codes, labels = pd.factorize(b)
        return [str(v) for v in labels], None, np.bincount(codes, minlength=len(labels)).astype(float)
    a = text_column(pd.Series(np.asarray(original, dtype=object)))
    codes, labels = pd.factorize(pd.concat([a, b], ignore_index=True))
    p = np.bincount(codes[: len(a)], minlength=len(labels)).astype(float)
    q = np.bincount(codes[len(a):], minlength=len(labels)).astype(float)
    return [str(v) for v in labels], p, q


def measure(method: str, attribute: str, k: int | None, original: Any, released: Any,
            domain: NumericDomain | None, taxonomy: Taxonomy | None) -> DPRow:
    """The three measures of one released column (numeric with ``domain``, else categorical)."""
    if domain is not None:
        return DPRow(method, attribute, k, relative_error(original, released, domain),
                     variance_variation(original, released), histogram_jsd(original, released, domain))
    if taxonomy is None:
        raise ParameterError(f"{attribute!r} is categorical: measuring it needs its taxonomy.")
    return DPRow(method, attribute, k, categorical_error(taxonomy, original, released), None,
                 histogram_jsd(original, released, None))


def average_rows(rows: list[DPRow]) -> list[DPRow]:
    """One ``ALL`` row per (method, k): the mean of each measure over the attributes (none for a
    single attribute, where it would repeat that attribute's row)."""
    out: list[DPRow] = []
    if len({r.attribute for r in rows if r.attribute != ALL}) < 2:
        return out
    keys = list(dict.fromkeys((r.method, r.k) for r in rows if r.attribute != ALL))
    for method, k in keys:
        group = [r for r in rows if r.method == method and r.k == k and r.attribute != ALL]
        variations = [r.variance_variation for r in group if r.variance_variation is not None]
        out.append(DPRow(method, ALL, k, float(np.mean([r.relative_error for r in group])),
                         float(np.mean(variations)) if variations else None, float(np.mean([r.jsd for r in group]))))
    return out


def baseline_releases(original: Any, domain: NumericDomain | None, k: int, m: int, epsilon: float,
                      keyed: KeyedRandomness, clustering: Any = None, laplace: bool = True) -> list[tuple[str, int | None, Any]]:
    """``(method, k, released column)`` of the baselines at a release's epsilon, k and M: individual
    ranking without noise, then (if ``laplace``) plain Laplace / the per-record exponential mechanism,
    drawn per record from ``keyed`` (an evaluation key, see the module docstring).

    ``clustering`` is the job's own clustering of the column (numeric: optional, saves a sort;
    categorical: the :class:`~ppdp_desktop.core.methods.dp.categorical.CategoricalRanking`, required).
    """
    from ppdp_desktop.core.methods.dp.categorical import released_labels

    out: list[tuple[str, int | None, Any]]
    if domain is not None:
        out = [(RANKING, k, plain_ranking(original, domain, k, clustering))]
        if laplace:
            out.append((LAPLACE, None, plain_laplace(original, domain, m * domain.delta / epsilon, keyed)))
        return out
    out = [(RANKING, k, released_labels(clustering, marginal_centroids(clustering)[clustering.cluster]))]
    if laplace:
        out.append((LAPLACE, None, released_labels(clustering, plain_exponential(clustering, epsilon / m, keyed))))
    return out


def _job_rows(result: Anonymization, laplace: bool, keyed: KeyedRandomness) -> list[DPRow]:
    """Rows of the job's own release and its ranking baseline (and plain Laplace if asked)."""
    plan, frame = dp_plan(result), result.dataset.frame
    m, k = len(plan.attributes), plan.k
    rows: list[DPRow] = []
    unlinked = getattr(plan, "layout", "linked") == "unlinked"
    for a in plan.attributes:
        original = frame[a.attribute].to_numpy(dtype=np.float64) if a.domain is not None else frame[a.attribute]
        released = result.applied.columns[a.attribute]
        row = measure(METHOD, a.attribute, k, original, released, a.domain, a.taxonomy)
        # unlinked columns: a record's row shows another record's value, so there is no per-record error to measure
        rows.append(replace(row, relative_error=float("nan")) if unlinked else row)
        baselines = baseline_releases(original, a.domain, k, m, plan.epsilon, keyed, plan.clusterings[a.attribute], laplace)
        rows += [measure(method, a.attribute, kk, original, y, a.domain, a.taxonomy) for method, kk, y in baselines]
    return rows


def _ordered(rows: list[DPRow]) -> list[DPRow]:
    rank = {METHOD: 0, LAPLACE: 1, RANKING: 2}
    return sorted(rows, key=lambda r: (rank.get(r.method, 3), r.k or 0))


def evaluate_job(result: Anonymization, seed: int = EVALUATION_SEED) -> list[DPRow]:
    """The job's release and both baselines at its epsilon, k and M, per attribute plus ``ALL``.

    Uses the job's released columns in the original row order (``result.applied``); the baselines
    draw from keyed streams under ``seed`` (public; never the release's secret seed).
    """
    rows = _job_rows(result, True, KeyedRandomness(seed))
    return _ordered(rows + average_rows(rows))


def compare_dp(dataset: Dataset, attributes: list[str], epsilon: float, ks: list[int],
               domains: dict[str, tuple[float, float]] | None = None, taxonomies: dict[str, Any] | None = None,
               seed: int | None = None, candidates: str = "covering", *, run: Runner,
               blanks: dict[str, str] | None = None) -> list[DPRow]:
    """Run dp-microagg for each ``k`` and the baselines (plain Laplace once; ranking per ``k``).

    Each run goes through ``run`` (the job, :func:`~ppdp_desktop.core.anonymize.anonymize`: plan, verify,
    apply; passed in so that a method never imports its job); ``candidates`` is the categorical
    centroid rule and ``blanks`` what is done with a column's blank cells (see ``DPSettings``).
    """
    from ppdp_desktop.core.methods.dp.settings import DPSettings
    from ppdp_desktop.core.settings import AnonymizationSettings

    missing = [c for c in attributes if c not in dataset.frame.columns]
    if missing:
        raise ParameterError(f"{', '.join(map(repr, missing))} not in {dataset.label}; its columns are: "
                             f"{', '.join(map(str, dataset.frame.columns))}.")
    if not ks or min(ks) < 1:
        raise ParameterError(f"The cluster sizes k must be whole numbers of at least 1; got {ks}.")
    # the baselines' key: its seed drawn from a generator seeded with the public evaluation seed (and the jobs'
    # seed), not the jobs' key; the generator serves only to derive that seed, every baseline draw is keyed by record
    simulation = np.random.default_rng(EVALUATION_SEED if seed is None else [EVALUATION_SEED, seed])
    keyed = KeyedRandomness(int(simulation.integers(0, 2**63)))
    rows: list[DPRow] = []
    for i, k in enumerate(ks):
        settings = AnonymizationSettings(sensitive="", method=METHOD, seed=None if seed is None else seed + i,
                                         options=DPSettings(list(attributes), epsilon, int(k), dict(domains or {}),
                                                       dict(taxonomies or {}), candidates, blanks=dict(blanks or {})))
        rows += _job_rows(run(dataset, settings), i == 0, keyed)
    return _ordered(rows + average_rows(rows))


def format_dp_table(rows: list[DPRow]) -> str:
    """A plain-text table: method, k, attribute, relative error, variance change, Jensen-Shannon divergence;
    then one line saying what each measure means."""
    header = ["method", "k", "attribute", "relative error", "variance change", "Jensen-Shannon"]
    table = [header] + [
        [r.method, "-" if r.k is None else str(r.k), r.attribute, f"{r.relative_error:.4f}",
         "-" if r.variance_variation is None else f"{r.variance_variation:.4f}", f"{r.jsd:.4f}"]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines + ["", *TABLE_LEGEND])


#: what each measure of :func:`format_dp_table` means (0 = unchanged for each)
TABLE_LEGEND = (
    "plain Laplace: the textbook floating-point Laplace noise added to each value, a comparison baseline computed "
    "under a public key and never released (dp-microagg itself releases discrete Laplace noise on a grid).",
    "relative error: mean distance between a record's original and released value, relative to the value "
    "(categories: mean distance in the taxonomy, 0 to 1).",
    "variance change: |original variance - released variance| / original variance.",
    "Jensen-Shannon: Jensen-Shannon divergence of the released histogram from the original one "
    "(0 = same distribution, 1 = disjoint).",
)
