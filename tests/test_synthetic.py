"""Synthetic tables of the thesis' settings (4.4): Zipf SA, categorical non-sensitive attributes."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.data.synthetic import thesis_table, zipf_counts
from ppdp_desktop.core.errors import ParameterError


def test_shape_and_columns():
    frame = thesis_table(n=30_000, m=50, skew=1.0, seed=0)
    assert frame.shape == (30_000, 4)
    assert list(frame.columns) == ["A1", "A2", "A3", "SA"]
    assert frame["SA"].nunique() == 50 and {"v00", "v49"} <= set(frame["SA"])
    for col in ["A1", "A2", "A3"]:
        assert 2 <= frame[col].nunique() <= 20
    assert thesis_table(n=1000, m=20, n_quasi=1).shape == (1000, 2)


@pytest.mark.parametrize("m,skew", [(50, 1.0), (75, 1.0), (100, 2.0), (150, 1.0), (50, 2.0)])
def test_zipf_ordering(m, skew):
    frame = thesis_table(n=300_000, m=m, skew=skew, seed=1)
    width = max(2, len(str(m - 1)))
    counts = frame["SA"].value_counts().reindex([f"v{i:0{width}d}" for i in range(m)]).to_numpy()
    assert (np.diff(counts) <= 0).all() and counts.sum() == 300_000
    ratio = counts[0] / counts[-1]
    assert m**skew / 3 <= ratio <= m**skew * 3


def test_every_value_occurs_even_at_high_skew():
    counts = zipf_counts(300_000, 150, 3.0)
    assert counts.sum() == 300_000 and counts.min() >= 1 and (np.diff(counts) <= 0).all()
    with pytest.raises(ParameterError):
        zipf_counts(10, 50, 1.0)


def test_deterministic_for_a_seed():
    a = thesis_table(n=20_000, seed=4)
    pd.testing.assert_frame_equal(a, thesis_table(n=20_000, seed=4))
    assert not a.equals(thesis_table(n=20_000, seed=5))


def test_quasi_attributes_are_mildly_correlated_with_sa():
    frame = thesis_table(n=100_000, m=50, seed=2)
    table = pd.crosstab(frame["SA"], frame["A1"]).to_numpy().astype(float)
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    cramers_v = np.sqrt(((table - expected) ** 2 / expected).sum() / (table.sum() * (min(table.shape) - 1)))
    assert 0.05 < cramers_v < 0.8
