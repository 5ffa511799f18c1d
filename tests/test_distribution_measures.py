"""Each distance between an original distribution and its estimate has one definition (core/evaluation/metrics.py),
pinned to an exact value on a worked example computed by hand and to scipy's own implementation, so that a copy
with another formula (the two chi-squares of issue 29 divided by different cells) cannot come back unnoticed."""
from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import chisquare, entropy

from ppdp_desktop.core.evaluation import metrics

# Worked example. Original counts f = (30, 10, 0): shares p = (3/4, 1/4, 0). Estimate f* = (7, 7, -2): the negative
# cell is clipped to 0, shares q = (1/2, 1/2, 0). Mixture m = (p + q) / 2 = (5/8, 3/8, 0).
ORIGINAL = np.array([30.0, 10.0, 0.0])
ESTIMATE = np.array([7.0, 7.0, -2.0])
P = np.array([0.75, 0.25])
Q = np.array([0.5, 0.5])

#: KL(p || q) = 3/4 ln(3/4 / 1/2) + 1/4 ln(1/4 / 1/2) = 3/4 ln 3 - ln 2
KL = 0.75 * math.log(3) - math.log(2)
#: Pearson, the original as expected: (1/2 - 3/4)^2 / (3/4) + (1/2 - 1/4)^2 / (1/4) = 1/12 + 1/4 = 1/3
#: (Neyman's, dividing by the estimate, would be 1/16 / 1/2 * 2 = 1/4: the example tells them apart)
PEARSON = 1 / 3
#: JSD = H(m) - (H(p) + H(q)) / 2 in bits, H(m) = 3 - 5/8 log2 5 - 3/8 log2 3, H(p) = 2 - 3/4 log2 3, H(q) = 1:
#: 3/2 - 5/8 log2 5
JSD = 1.5 - 0.625 * math.log2(5)
#: mean |f - f*| / f over the values that occur: (23/30 + 3/10) / 2
RECONSTRUCTION = 8 / 15
#: 1 - mean |f - f*| / n with n = 40: 1 - (23 + 3 + 2) / 40 / 3
AGGREGATE = 23 / 30


def test_each_measure_is_its_hand_computed_value() -> None:
    assert metrics.kl_divergence(ORIGINAL, ESTIMATE) == pytest.approx(KL, rel=1e-14)
    assert metrics.pearson_chi_square(ORIGINAL, ESTIMATE) == pytest.approx(PEARSON, rel=1e-14)
    assert metrics.jensen_shannon(ORIGINAL, ESTIMATE) == pytest.approx(JSD, rel=1e-13)
    assert metrics.reconstruction_error(ORIGINAL, ESTIMATE) == pytest.approx(RECONSTRUCTION, rel=1e-14)
    assert metrics.aggregate_utility(ORIGINAL, ESTIMATE) == pytest.approx(AGGREGATE, rel=1e-14)


def test_each_measure_is_scipys() -> None:
    assert metrics.kl_divergence(ORIGINAL, ESTIMATE) == pytest.approx(entropy(P, Q), rel=1e-14)
    assert metrics.pearson_chi_square(ORIGINAL, ESTIMATE) == pytest.approx(chisquare(Q, P).statistic, rel=1e-14)
    assert metrics.jensen_shannon(ORIGINAL, ESTIMATE) == pytest.approx(jensenshannon(P, Q, base=2) ** 2, rel=1e-12)
    rng = np.random.default_rng(29)
    for _ in range(20):  # cells all present, any shape: the same as scipy's on the shares
        original, estimate = rng.integers(1, 50, size=(3, 4)), rng.integers(1, 50, size=(3, 4))
        p, q = original.ravel() / original.sum(), estimate.ravel() / estimate.sum()
        assert metrics.kl_divergence(original, estimate) == pytest.approx(entropy(p, q), rel=1e-12)
        assert metrics.pearson_chi_square(original, estimate) == pytest.approx(chisquare(q, p).statistic, rel=1e-12)
        assert metrics.jensen_shannon(original, estimate) == pytest.approx(jensenshannon(p, q, base=2) ** 2, rel=1e-9)


def test_the_report_prints_what_its_label_says() -> None:
    from ppdp_desktop.core.evaluation.utility import utility_summary

    summary = utility_summary(0.5, ORIGINAL, ORIGINAL, ESTIMATE, None)
    assert (summary.kl, summary.chi_square, summary.jensen_shannon) == pytest.approx((KL, PEARSON, JSD))
    assert "chi-square 0.33333" in summary.lines()[1]


#: functions outside metrics.py whose names say they are one of these measures, and why they may be
ALLOWED = {
    ("core/methods/rr/bounds.py", "_kl"): "Bernoulli KL cell by cell, the exponent of a Chernoff bound, no distance",
    ("core/methods/dp/evaluation.py", "histogram_jsd"): "bins two columns and calls metrics.jensen_shannon",
}
MEASURE_NAME = re.compile(r"(^|_)(kl|kullback|leibler|chi_?sq(uare)?|jensen|shannon|jsd|divergence|neyman|pearson)($|_)")


def test_no_other_module_defines_a_distance_between_distributions() -> None:
    package = Path(metrics.__file__).resolve().parents[2]
    found = set()
    for path in package.rglob("*.py"):
        where = path.relative_to(package).as_posix()
        if where == "core/evaluation/metrics.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and MEASURE_NAME.search(node.name.lower()):
                found.add((where, node.name))
    assert found == set(ALLOWED), "define each distance once, in core/evaluation/metrics.py"
