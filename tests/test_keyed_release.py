"""The perturbation family draws every record's randomness from keyed streams (issue 19, point 1, started):
the same seed gives the same release however the records are cut into chunks, and the released values
still follow the published matrix."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdp_desktop.core.methods.partition.blocks import SubtableBlocks
from ppdp_desktop.core.methods.perturbation.plan import perturb_records
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.privacy.randomness import job_randomness
from ppdp_desktop.core.privacy.structured import RetentionMatrix
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings


def _chunks(n: int, size: int) -> list[tuple[int, int]]:
    return [(a, min(a + size, n)) for a in range(0, n, size)]


@pytest.mark.parametrize("size", [1, 7, 10_000])
def test_perturbing_in_chunks_gives_the_same_values(size):
    rng = np.random.default_rng(1)
    n, m = 20_011 if size > 1 else 301, 40
    codes = rng.integers(0, m, n)
    retention = rng.uniform(0.1, 0.9, m)
    keyed = KeyedRandomness(2026)
    whole = perturb_records(codes, retention, keyed, "diag")
    pieces = [perturb_records(codes[a:b], retention, keyed, "diag", start=a) for a, b in _chunks(n, size)]
    np.testing.assert_array_equal(np.concatenate(pieces), whole)
    assert not np.array_equal(whole, perturb_records(codes, retention, KeyedRandomness(2027), "diag"))


@pytest.mark.parametrize("size", [1, 7, 10_000])
def test_sub_tables_perturb_alike_in_chunks(size):
    counts = np.array([[30, 20, 0, 5], [0, 10, 40, 5]])
    blocks = SubtableBlocks.from_counts(counts, np.array([0.4, 0.7]))
    rng = np.random.default_rng(2)
    n = 2000 if size > 1 else 200
    sub = rng.integers(0, 2, n)
    entries = np.where(sub == 0, rng.choice([0, 1, 2], n), rng.choice([3, 4, 5], n))
    keyed = KeyedRandomness(7)
    whole = blocks.perturb(sub, entries, keyed, "dx")
    pieces = [blocks.perturb(sub[a:b], entries[a:b], keyed, "dx", start=a) for a, b in _chunks(n, size)]
    np.testing.assert_array_equal(np.concatenate(pieces), whole)
    assert np.all(np.isin(whole[sub == 0], blocks.members(0))) and np.all(np.isin(whole[sub == 1], blocks.members(1)))


def test_the_released_counts_follow_the_matrix():
    """Chi-square of the released counts against P @ f (the keyed draws keep exactly the published law)."""
    rng = np.random.default_rng(3)
    m, n = 12, 200_000
    codes = rng.integers(0, m, n)
    retention = rng.uniform(0.2, 0.8, m)
    released = perturb_records(codes, retention, KeyedRandomness(11), "x")
    expected = RetentionMatrix(retention) @ np.bincount(codes, minlength=m).astype(float)
    observed = np.bincount(released, minlength=m)
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_the_same_seed_gives_the_same_release_and_its_row_order_is_keyed():
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.dataset import Dataset

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], 3000), "dx": rng.choice(list("abcdefgh"), 3000)})
    settings = AnonymizationSettings("dx", "uniform", [], [], SensitivitySettings(rho1=0.1, rho2=0.5), seed=99)
    first, second = anonymize(Dataset(frame), settings), anonymize(Dataset(frame), settings)
    pd.testing.assert_frame_equal(first.table, second.table)
    source, _ = job_randomness(99)
    np.testing.assert_array_equal(first.order, source.shuffle_order(len(frame)))


@pytest.mark.parametrize("size", [1, 7, 10_000])
def test_randomized_response_in_chunks_gives_the_same_values(size):
    from ppdp_desktop.core.methods.rr.estimate import randomize_records
    from ppdp_desktop.core.methods.rr.parameters import rr_matrix

    rng = np.random.default_rng(6)
    n, d, p = (20_011 if size > 1 else 301), 6, 0.6
    codes = rng.integers(0, d, n)
    keyed = KeyedRandomness(31)
    whole = randomize_records(codes, d, p, keyed, "age")
    pieces = [randomize_records(codes[a:b], d, p, keyed, "age", start=a) for a, b in _chunks(n, size)]
    np.testing.assert_array_equal(np.concatenate(pieces), whole)
    if size == 10_000:  # and the released counts follow the RR matrix
        expected = rr_matrix(d, p) @ np.bincount(codes, minlength=d).astype(float)
        assert stats.chisquare(np.bincount(whole, minlength=d), expected).pvalue > 1e-4


def test_pseudonyms_of_a_seeded_job_belong_to_their_records():
    """With a fixed seed, record i's pseudonym is AES(the key from the seed's "(pseudonyms)" stream, i), wherever the
    record lands."""
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey

    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"name": [f"P{i}" for i in range(500)], "dx": rng.choice(list("abcdef"), 500)})
    settings = AnonymizationSettings("dx", "uniform", ["name"], [], SensitivitySettings(rho1=0.1, rho2=0.5), seed=5)
    job = anonymize(Dataset(frame), settings)
    ids = PseudonymKey.from_seed(KeyedRandomness(5)).ids(0, 500).to_numpy(zero_copy_only=False)
    expected = list(ids[job.order])
    assert list(job.table[job.pseudonym_column]) == expected
    assert list(job.pseudonym_map["name"]) == list(frame["name"].take(job.order))
