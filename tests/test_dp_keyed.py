"""dp-microaggregation draws from keyed streams addressed by (attribute, cluster in rank order) (issue 19, point 1):
the same seed gives the same release, the draws keep their laws (discrete Laplace, exponential mechanism), and neither
the order in which the records arrive nor the chunks they are released in change a record's value."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.dp.categorical import exponential_centroids, plain_exponential, rank_categorical
from ppdp_desktop.core.methods.dp.grid import Grid, discrete_t
from ppdp_desktop.core.methods.dp.noise import (
    CHOICE_DRAW,
    DISCRETE_LAPLACE_DRAW,
    PLAIN_LAPLACE_DRAW,
    discrete_laplace,
    inverse_cdf_choice,
    laplace_noise,
)
from ppdp_desktop.core.methods.dp.numeric import NumericDomain, dp_microaggregate, grid_means, plain_laplace
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.privacy.randomness import RandomSource
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.taxonomy.tree import Taxonomy


def _taxonomy() -> Taxonomy:
    tax = Taxonomy("dx")
    for group, leaves in {"A": ["a1", "a2"], "B": ["b1", "b2"]}.items():
        tax.add(tax.root, group)
        for leaf in leaves:
            tax.add(group, leaf)
    return tax


def _frame(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(19)
    return pd.DataFrame({
        "weight": rng.normal(70, 12, n),  # continuous: no ties
        "age": rng.integers(20, 80, n),  # integers: many ties
        "dx": rng.choice(["a1", "a2", "b1", "b2"], n, p=[0.4, 0.1, 0.3, 0.2]),  # declared taxonomy
        "blood": rng.choice(["A", "B", "AB", "O"], n),  # no taxonomy: a flat one from the data
    })


def _settings(seed: int = 7) -> AnonymizationSettings:
    dp = DPSettings(["weight", "age", "dx", "blood"], epsilon=2.0, k=7,
                    domains={"weight": (0, 200), "age": (0, 120)}, taxonomies={"dx": _taxonomy()})
    return AnonymizationSettings("", "dp-microagg", options=dp, seed=seed)


def _released(frame: pd.DataFrame, seed: int = 7) -> tuple[dict, object]:
    """The plan's released columns in the frame's record order (the job without its row shuffle)."""
    plan = get_method("dp-microagg").prepare(Dataset(frame), _settings(seed))
    plan.verify()
    return plan.apply(frame, RandomSource(seed)).columns, plan


# --- the same seed, the same release ---------------------------------------------------------------

def test_the_same_seed_gives_the_same_release():
    frame = _frame()
    first, second = anonymize(Dataset(frame), _settings()), anonymize(Dataset(frame), _settings())
    pd.testing.assert_frame_equal(first.table, second.table)
    other = anonymize(Dataset(frame), _settings(seed=8))
    assert not np.array_equal(first.applied.columns["weight"], other.applied.columns["weight"])


def test_the_draws_are_words_of_the_streams_named_by_attribute_and_cluster():
    """Cluster c's noise is drawn from the words of cluster c in (attribute, "discrete laplace") and its step
    streams, the same computed alone or in any range."""
    rng = np.random.default_rng(1)
    values = rng.normal(50, 10, 1000)
    domain = NumericDomain("x", -1e6, 1e6)
    grid = Grid.for_domain(-1e6, 1e6, Fraction(1, 10), False, "x")
    keyed = KeyedRandomness(3)
    released, clusters, noise = dp_microaggregate(values, domain, 10, grid, 400, keyed)
    stream = keyed.stream("x", DISCRETE_LAPLACE_DRAW)
    np.testing.assert_array_equal(noise, discrete_laplace(stream, 0, 100, 400))
    pieces = [discrete_laplace(stream, a, min(a + 7, 100), 400) for a in range(0, 100, 7)]
    np.testing.assert_array_equal(np.concatenate(pieces), noise)
    alone = [discrete_laplace(stream, c, c + 1, 400)[0] for c in (0, 37, 99)]
    assert alone == noise[[0, 37, 99]].tolist()
    sums = np.bincount(clusters.cluster, weights=np.rint(values * 10) + 10_000_000)  # grid units: 10 v - first
    np.testing.assert_array_equal(released, grid.values(grid_means(sums, clusters.sizes, noise, grid.units))[clusters.cluster])
    # the plain Laplace baseline draws per record: record i owns word i of (x, "plain laplace")
    np.testing.assert_array_equal(plain_laplace(values, domain, 4.0, keyed),
                                  values + laplace_noise(keyed.stream("x", PLAIN_LAPLACE_DRAW), 0, 1000, 4.0))


# --- the laws ------------------------------------------------------------------------------------

class _Words:
    """A stand-in stream that returns given words (to pin the inverse CDF at its extremes)."""

    def __init__(self, words: list[int]) -> None:
        self._words = np.array(words, dtype=np.uint64)

    def words(self, start: int, stop: int) -> np.ndarray:
        return self._words[start:stop]


def test_laplace_inverse_cdf_is_finite_and_exactly_symmetric():
    """The plain Laplace baseline's floating-point draw (a comparison, never released)."""
    top = [m << 11 for m in (0, (1 << 52) - 1, 1 << 52, (1 << 53) - 1)]  # u = (m + 1/2) 2**-53
    x = laplace_noise(_Words(top), 0, 4, 1.0)
    assert x[0] == pytest.approx(-53 * np.log(2)) and x[3] == -x[0]  # the extremes: +-36.74 b, never infinite
    assert x[1] == -x[2] and -1e-15 < x[1] < 0  # around u = 1/2
    m = np.random.default_rng(2).integers(0, 1 << 53, 1000, dtype=np.uint64)
    mirrored = (np.uint64((1 << 53) - 1) - m) << np.uint64(11)
    np.testing.assert_array_equal(laplace_noise(_Words(list(m << np.uint64(11))), 0, 1000, 2.5),
                                  -laplace_noise(_Words(list(mirrored)), 0, 1000, 2.5))
    low_bits = (m << np.uint64(11)) | np.uint64(0x7FF)  # the 11 low bits are not used
    np.testing.assert_array_equal(laplace_noise(_Words(list(low_bits)), 0, 1000, 2.5),
                                  laplace_noise(_Words(list(m << np.uint64(11))), 0, 1000, 2.5))


def _discrete_cdf(z: np.ndarray, t: float) -> np.ndarray:
    """P(Z <= z) of the discrete Laplace exp(-|z|/t) (1 - q) / (1 + q), q = e^(-1/t)."""
    q = np.exp(-1.0 / t)
    z = np.floor(z)
    return np.where(z < 0, q ** -z / (1 + q), 1 - q ** (z + 1) / (1 + q))


def _discrete_ks(z: np.ndarray, t: float) -> float:
    """Kolmogorov distance of the sample from the discrete Laplace CDF (checked at every jump)."""
    values, counts = np.unique(z, return_counts=True)
    after = np.cumsum(counts) / len(z)
    before = after - counts / len(z)
    return float(max(np.abs(after - _discrete_cdf(values, t)).max(), np.abs(before - _discrete_cdf(values - 1, t)).max()))


def test_cluster_noise_from_the_keyed_streams_is_discrete_laplace_with_the_stated_t():
    """4000 clusters: the draws follow the discrete Laplace CDF of t = ceil(M units / epsilon) (Kolmogorov-Smirnov
    against the discrete CDF, checked at every jump; a discrete law only makes the test conservative), and t 0.8
    or 1.25 times as large is rejected."""
    values = np.random.default_rng(4).normal(50, 10, 40_000)
    domain = NumericDomain("x", 0, 100)
    grid = Grid.for_domain(0, 100, Fraction(1, 10), False, "x")
    t = discrete_t(grid.units, 2, 1.0)  # M = 2: 2 * 1000 / 1
    assert t == 2000
    _, _, noise = dp_microaggregate(values, domain, 10, grid, t, KeyedRandomness(2026))
    assert len(noise) == 4000 and noise.dtype == np.int64  # one whole-number draw per cluster
    n = len(noise)
    assert stats.kstwo.sf(_discrete_ks(noise, t), n) > 0.01
    assert stats.kstwo.sf(_discrete_ks(noise, t * 0.8), n) < 1e-4  # the test has power
    assert stats.kstwo.sf(_discrete_ks(noise, t * 1.25), n) < 1e-4
    assert abs(np.median(noise)) < 0.1 * t


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_the_exponential_mechanism_chooses_with_weights_exp_eps_q_over_2(epsilon):
    """6000 alike clusters (k = 4 records of a1) choose from one stream, word c for cluster c, every label a
    candidate: the choices follow exp(epsilon q / (2 Delta_u)), Delta_u = 1 (chi-square)."""
    ranking = rank_categorical(pd.Series(["a1"] * 24_000, name="dx"), _taxonomy(), 4, "taxonomy")
    quality = ranking.quality(slice(0, 1))[0]
    assert np.allclose(ranking.quality(slice(0, 6000)), quality) and len(set(np.round(quality, 9))) == 6
    weights = np.exp(epsilon * quality / 2.0)
    chosen = exponential_centroids(ranking, epsilon, KeyedRandomness(11))
    observed = np.bincount(chosen, minlength=len(weights))
    assert stats.chisquare(observed, weights / weights.sum() * len(chosen)).pvalue > 0.001
    wrong = np.exp(1.5 * epsilon * quality / 2.0)  # the test has power: another epsilon is rejected
    assert stats.chisquare(observed, wrong / wrong.sum() * len(chosen)).pvalue < 1e-6


def test_inverse_cdf_never_chooses_a_zero_weight_and_follows_the_weights():
    weights = np.array([0.0, 1.0, 0.0, 2.0, 0.5, 0.0])
    u = KeyedRandomness(5).stream("w", CHOICE_DRAW).uniforms(0, 70_000)
    chosen = inverse_cdf_choice(weights, u)
    np.testing.assert_array_equal(inverse_cdf_choice(np.tile(weights, (len(u), 1)), u), chosen)  # rows alike
    observed = np.bincount(chosen, minlength=6)
    assert observed[[0, 2, 5]].sum() == 0
    assert stats.chisquare(observed[[1, 3, 4]], weights[[1, 3, 4]] / 3.5 * len(u)).pvalue > 0.001
    edges = np.array([0.0, np.nextafter(1.0, 0.0)])  # the smallest and largest uniforms
    np.testing.assert_array_equal(inverse_cdf_choice(weights, edges), [1, 4])


# --- arrival order and chunks -------------------------------------------------------------------

def _tied_across_clusters(original: np.ndarray, released: np.ndarray) -> np.ndarray:
    """Records whose original value is shared by records released with another value (ties cut by a cluster border)."""
    pairs = pd.DataFrame({"x": original, "y": released})
    spans = pairs.groupby("x")["y"].nunique()
    return pairs["x"].map(spans).to_numpy() > 1


def test_shuffled_records_keep_their_released_values():
    """Clusters and draws are addressed by rank, not by arrival: a record keeps its released value when the input is
    shuffled (same seed), exactly when no tie crosses a cluster border; tied records that straddle a border are
    equal in value and are assigned by record index, so they may trade released values, and the released
    (original, released) pairs are then still the same multiset."""
    frame = _frame()
    perm = np.random.default_rng(6).permutation(len(frame))
    shuffled = frame.iloc[perm].reset_index(drop=True)
    before, plan = _released(frame)
    after, _ = _released(shuffled)
    for name in ["weight", "age", "dx", "blood"]:
        x, y = frame[name].to_numpy(), np.asarray(before[name])
        y_after = np.asarray(after[name])
        straddling = _tied_across_clusters(x, y)
        same = y_after == y[perm]
        assert same[~straddling[perm]].all(), name  # every record not tied across a border: the same value
        pairs = sorted(zip(map(str, x), map(str, y)))
        assert pairs == sorted(zip(map(str, x[perm]), map(str, y_after))), name  # the same released pairs
        # in rank order (by value, ties by record index) the released column is the same, position by position
        rank, rank_after = np.argsort(x, kind="stable"), np.argsort(x[perm], kind="stable")
        np.testing.assert_array_equal(y_after[rank_after], y[rank], err_msg=name)
        if name == "weight":
            assert not straddling.any() and same.all()  # no ties: exact for every record
    # the ties do bite: some tied records did trade clusters (so per-record equality is not exact for them)
    assert any(not np.array_equal(np.asarray(after[n]), np.asarray(before[n])[perm]) for n in ["age", "dx", "blood"])
    assert plan.attributes[3].taxonomy_from_data  # 'blood': the flat taxonomy from the data, its labels sorted


def test_the_flat_taxonomy_from_the_data_does_not_depend_on_the_row_order():
    frame = _frame(100)
    first, _ = _released(frame)
    plan = get_method("dp-microagg").prepare(Dataset(frame.iloc[::-1].reset_index(drop=True)), _settings())
    assert [n.label for n in plan.attributes[3].taxonomy.root.children] == ["A", "AB", "B", "O"]


@pytest.mark.parametrize("size", [1, 13, 600])
def test_releasing_in_chunks_gives_the_same_columns(size):
    """``bind`` clusters and draws once for the whole table; ``apply`` releases any chunk's slice of it."""
    frame = _frame()
    whole, plan = _released(frame)
    source = RandomSource(7)
    bound = plan.bind(frame, source)
    pieces = [plan.apply(frame.iloc[a:a + size], source, start=a, bound=bound).columns
              for a in range(0, len(frame), size)]
    for name, values in whole.items():
        np.testing.assert_array_equal(np.concatenate([np.asarray(p[name]) for p in pieces]), np.asarray(values))


def test_a_part_of_the_table_is_refused_without_the_whole_tables_clusters():
    frame = _frame()
    plan = get_method("dp-microagg").prepare(Dataset(frame), _settings())
    with pytest.raises(Exception, match="whole table"):
        plan.apply(frame.iloc[:100], RandomSource(7))
    bound = plan.bind(frame, RandomSource(7))
    with pytest.raises(Exception, match="beyond"):
        plan.apply(frame.iloc[:100], RandomSource(7), start=550, bound=bound)


def test_the_per_record_exponential_baseline_is_keyed_by_record():
    column = pd.Series(np.random.default_rng(9).choice(["a1", "a2", "b1", "b2"], 500), name="dx")
    ranking = rank_categorical(column, _taxonomy(), 5)
    keyed = KeyedRandomness(12)
    whole = plain_exponential(ranking, 1.0, keyed)
    np.testing.assert_array_equal(whole, plain_exponential(ranking, 1.0, keyed))
    assert not np.array_equal(whole, plain_exponential(ranking, 1.0, KeyedRandomness(13)))


def test_a_streamed_release_is_the_in_memory_one_byte_for_byte(tmp_path):
    """The streamed job binds the plan once (pass 1: the protected columns of every record) and releases any
    chunk's slice: numeric, categorical with a declared taxonomy, and categorical with a flat one from the data."""
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.released import read_release
    from ppdp_desktop.core.data.streamed import open_streamed
    from ppdp_desktop.core.release.analysis import verify_release
    from ppdp_desktop.core.release.package import write_release
    from ppdp_desktop.core.streaming.release import write_streamed_release

    path = tmp_path / "data.csv"
    frame = _frame(300)
    frame.insert(0, "id", [f"P{i:04d}" for i in range(300)])
    frame.to_csv(path, index=False)
    dp = DPSettings(["weight", "age", "dx", "blood"], epsilon=2.0, k=7,
                    domains={"weight": (0, 200), "age": (0, 120)}, taxonomies={"dx": _taxonomy()})
    settings = AnonymizationSettings("", "dp-microagg", ["id"], [], options=dp, seed=3)
    kinds = {"id": "text"}
    write_release(anonymize(load_table(path, kinds=kinds), settings), tmp_path / "memory", include_report=False)
    expected = (tmp_path / "memory" / "release.csv").read_bytes()
    for size in (1, 7, 1000):
        out = tmp_path / f"streamed-{size}"
        write_streamed_release(open_streamed(path, kinds=kinds), settings, out, chunk_size=size, include_report=False)
        assert (out / "release.csv").read_bytes() == expected, f"chunks of {size}"
    with read_release(tmp_path / "streamed-7") as release:
        assert any(line.startswith("checksums") for line in verify_release(release))
