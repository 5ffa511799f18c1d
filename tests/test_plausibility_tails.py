"""The binomial tails of the plausibility check: exact where they can matter, skipped only where the median bound
shows they are at least 1/2 (issue 34: a genuine release's check does not import scipy)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import bdtr, bdtrc

from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.privacy.plausibility import FALSE_REFUSAL, binomial_tails, check_counts_plausible


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 10**6), p=st.floats(0.0, 1.0), frac=st.floats(0.0, 1.0))
def test_a_skipped_tail_is_at_least_one_half_and_a_computed_one_is_scipys(n: int, p: float, frac: float) -> None:
    observed = np.array([round(frac * n)], dtype=np.int64)
    ns = np.array([n], dtype=np.int64)
    low, high = binomial_tails(observed, ns, np.array([p]), np.array([p]))
    exact_low = bdtr(observed, ns, p)[0]
    exact_high = bdtrc(observed - 1, ns, p)[0] if observed[0] > 0 else 1.0
    assert low[0] == exact_low or (low[0] == 1.0 and exact_low >= 0.5)
    assert high[0] == exact_high or (high[0] == 1.0 and exact_high >= 0.5)


def test_every_tail_near_the_mean_is_exact_or_at_least_one_half() -> None:
    """Every count from 0 to n at chances around the rounding edges of n p (n p an integer, just below, just above)."""
    for n in (1, 7, 100, 1000):
        for p in (0.0, 0.25, 0.3, 0.5, 0.7 + 1e-12, 1.0 - 1e-12, 1.0, min(1.0, 3 / n)):
            observed = np.arange(n + 1, dtype=np.int64)
            ns = np.full(n + 1, n, dtype=np.int64)
            low, high = binomial_tails(observed, ns, np.full(n + 1, p), np.full(n + 1, p))
            exact_low = bdtr(observed, ns, p)
            exact_high = np.where(observed > 0, bdtrc(observed - 1, ns, p), 1.0)
            assert np.all((low == exact_low) | ((low == 1.0) & (exact_low >= 0.5))), (n, p)
            assert np.all((high == exact_high) | ((high == 1.0) & (exact_high >= 0.5))), (n, p)


def test_a_column_put_back_is_still_refused_and_a_genuine_one_kept() -> None:
    """A uniform matrix (retain 0.6, else one of the 3 others): the true counts put back (a value released 100 times
    where the matrix makes it at least 267 expected, one absent) are refused; a column drawn with the matrix passes."""
    m, p = 4, 0.6
    matrix = np.full((m, m), (1 - p) / (m - 1))
    np.fill_diagonal(matrix, p)
    true_counts = np.array([900, 100, 0, 1000])
    with pytest.raises(PrivacyError, match="not randomized with this matrix"):
        check_counts_plausible(true_counts, matrix, ["a", "b", "c", "d"], "diag")
    rng = np.random.default_rng(34)
    originals = np.repeat(np.arange(m), true_counts)
    released = np.array([rng.choice(m, p=matrix[:, x]) for x in originals])
    check_counts_plausible(np.bincount(released, minlength=m), matrix, ["a", "b", "c", "d"], "diag")
    assert FALSE_REFUSAL < 1e-6


def test_a_genuine_uniform_check_does_not_import_scipy() -> None:
    """The counts of a perturbed column lie between n lo and n hi: no tail is computed, so scipy is not imported."""
    code = ("import sys, numpy as np\n"
            "from ppdp_desktop.core.privacy.plausibility import check_counts_plausible\n"
            "m = np.full((3, 3), 0.1); np.fill_diagonal(m, 0.8)\n"
            "check_counts_plausible(np.array([400, 300, 300]), m, ['a', 'b', 'c'], 'x')\n"
            "print('scipy.special' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
