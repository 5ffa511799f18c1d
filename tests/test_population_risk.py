"""Population risk: the uniqueness estimators (Zayatz, Pitman, SNB, Dankar et al.'s rule) against independent
brute-force computations and a Monte-Carlo population, and the journalist risk against a population table."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from ppdp_desktop.core.errors import InputError, ParameterError
from ppdp_desktop.core.privacy.journalist import journalist_risk, read_population
from ppdp_desktop.core.privacy.uniqueness import (
    PITMAN,
    SNB,
    ZAYATZ,
    estimate_uniqueness,
    pitman,
    pitman_fit,
    shlosser_classes,
    snb_expected,
    snb_fit,
    zayatz,
)

SIZES = {1: 30, 2: 10, 3: 5, 5: 2, 25: 1}  # a sample of 100 records in 48 classes


def test_zayatz_equals_the_exact_hypergeometric_computation():
    big_n, n = 1000, 100
    u = sum(SIZES.values())

    def one(j):  # exactly one of a class of j people drawn into a sample of n out of N
        return Fraction(j * math.comb(big_n - j, n - 1), math.comb(big_n, n))

    share = Fraction(SIZES[1], u) * one(1) / sum(Fraction(c, u) * one(j) for j, c in SIZES.items())
    expected = SIZES[1] * share / Fraction(n, big_n)
    assert zayatz(SIZES, big_n) == pytest.approx(float(expected), rel=1e-12)


def _pitman_loglik(theta, alpha, sizes):
    """The Pitman sampling formula's log-probability of the partition, by its products written out."""
    n, u = sum(j * c for j, c in sizes.items()), sum(sizes.values())
    out = sum(math.log(theta + i * alpha) for i in range(1, u)) - sum(math.log(theta + i) for i in range(1, n))
    return out + sum(c * sum(math.log(i - alpha) for i in range(1, j)) for j, c in sizes.items())


def test_pitman_fit_is_the_maximum_of_the_written_out_likelihood():
    def minus(x):
        theta, alpha = x
        if not (0 < alpha < 1 and theta > -alpha):
            return 1e12
        return -_pitman_loglik(theta, alpha, SIZES)

    grid = [(t, a) for t in np.linspace(0.5, 200, 60) for a in np.linspace(0.02, 0.98, 49)]
    start = min(grid, key=minus)
    best = optimize.minimize(minus, start, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-13,
                                                                           "maxiter": 20000}).x
    theta, alpha = pitman_fit(SIZES)
    assert theta == pytest.approx(best[0], rel=1e-4) and alpha == pytest.approx(best[1], rel=1e-4)
    big_n = 5000
    expected = math.gamma(best[0] + 1) / math.gamma(best[0] + best[1]) * big_n ** best[1]
    assert pitman(SIZES, big_n) == pytest.approx(expected, rel=1e-3)


def test_pitman_gives_no_estimate_where_the_likelihood_has_no_maximum():
    assert pitman_fit({1: 40}) is None  # every record unique: alpha runs to 1
    assert math.isnan(pitman({1: 40}, 4000))


def _slide_nb_expected(classes, fraction, alpha, beta, m):
    """Expected sample classes of size m: each of K population classes has 1 + NB(alpha, beta) people, each
    drawn with probability ``fraction``; summed term by term over the population class size."""
    total, size = 0.0, 1
    while True:
        y = size - 1
        nb = math.exp(math.lgamma(alpha + y) - math.lgamma(alpha) - math.lgamma(y + 1)) * beta ** alpha * (1 - beta) ** y
        term = nb * math.comb(size, m) * fraction ** m * (1 - fraction) ** (size - m) if size >= m else 0.0
        total += term
        if size > 50 and nb < 1e-18:
            return classes * total
        size += 1


@pytest.mark.parametrize("alpha, beta, fraction", [(0.7, 0.4, 0.2), (2.5, 0.15, 0.05), (0.3, 0.8, 0.5)])
def test_snb_expectations_and_fit_match_the_model_summed_out(alpha, beta, fraction):
    classes = 10_000
    f1 = _slide_nb_expected(classes, fraction, alpha, beta, 1)
    f2 = _slide_nb_expected(classes, fraction, alpha, beta, 2)
    assert snb_expected(classes, fraction, alpha, beta) == pytest.approx((f1, f2), rel=1e-9)
    fitted = snb_fit(classes, fraction, f1, f2)  # the moments of a known model give back its parameters
    assert fitted == pytest.approx((alpha, beta), rel=1e-5)


def test_shlosser_sh3_as_haas_et_al_write_it():
    q = 0.1
    u, f1 = sum(SIZES.values()), SIZES[1]
    top = sum(j * q * q * (1 - q * q) ** (j - 1) * c for j, c in SIZES.items())
    bottom = sum((1 - q) ** j * ((1 + q) ** j - 1) * c for j, c in SIZES.items())
    ratio = sum((1 - q) ** j * c for j, c in SIZES.items()) / sum(j * q * (1 - q) ** (j - 1) * c for j, c in SIZES.items())
    assert shlosser_classes(SIZES, q) == pytest.approx(u + f1 * top / bottom * ratio ** 2, rel=1e-12)


def test_dankar_rule_chooses_as_arx_does():
    small = estimate_uniqueness(SIZES, 0.05)
    assert small.model == PITMAN and small.uniques == small.estimates[PITMAN]
    uniques_only = estimate_uniqueness({1: 40}, 0.05)  # Pitman cannot be fitted: Zayatz
    assert uniques_only.estimates[PITMAN] is None and uniques_only.model == ZAYATZ
    large = estimate_uniqueness(SIZES, 0.3)
    assert large.model in (ZAYATZ, SNB) and large.uniques == min(large.estimates[ZAYATZ], large.estimates[SNB])
    none = estimate_uniqueness({2: 10, 4: 3}, 0.05)
    assert none.model == "none" and none.uniques == 0.0 and "no record is alone" in none.lines()[0]


@pytest.mark.parametrize("fraction", [0, -0.1, 1.5, float("nan"), "x", True])
def test_a_sampling_fraction_outside_0_1_is_refused(fraction):
    with pytest.raises(ParameterError, match="sampling-fraction"):
        estimate_uniqueness(SIZES, fraction)


def _population(rng, size):
    """A synthetic population of clinical quasi-identifiers: age, sex, a skewed postcode and a skewed diagnosis."""
    age = np.clip(rng.normal(45, 20, size).astype(int), 0, 99)
    sex = rng.integers(0, 2, size)
    postcode = rng.zipf(1.3, size) % 2000
    diagnosis = rng.zipf(1.5, size) % 300
    return ((age * 2 + sex) * 2000 + postcode) * 300 + diagnosis


@pytest.mark.parametrize("fraction, within", [(0.01, 0.25), (0.05, 0.12), (0.2, 0.06), (0.5, 0.03)])
def test_monte_carlo_the_estimate_is_near_the_true_population_uniques(fraction, within):
    """A 1 % sample (3,000 records) estimates the population's uniques within 25 % (over seeds 0-7 the ratio ran
    0.80-1.15); larger samples closer."""
    rng = np.random.default_rng(7)
    population = _population(rng, 300_000)
    _, counts = np.unique(population, return_counts=True)
    truth = int((counts == 1).sum())
    drawn = rng.random(len(population)) < fraction
    _, sample_counts = np.unique(population[drawn], return_counts=True)
    sizes, classes = np.unique(sample_counts, return_counts=True)
    result = estimate_uniqueness(dict(zip(sizes.tolist(), classes.tolist())), drawn.sum() / len(population))
    assert result.uniques == pytest.approx(truth, rel=within)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_journalist_risk_against_a_population_table(tmp_path):
    frame = pd.DataFrame({"age": [34, 34, 50, 71, None], "sex": ["f", "f", "m", "m", "f"]})
    table = _write(tmp_path / "census.csv", "age;sex;count\n34;f;8\n50;m;1\n71;m;4\n;f;2\n99;m;30\n")
    population = read_population(table, ["age", "sex"])
    risk = journalist_risk(frame, ["age", "sex"], population, threshold=0.2)
    per_record = [1 / 8, 1 / 8, 1 / 1, 1 / 4, 1 / 2]  # each record's 1/F, written out
    assert risk.population_size == 45 and risk.n_records == 5
    assert risk.highest_risk == 1.0 and risk.average_risk == pytest.approx(sum(per_record) / 5)
    assert risk.records_above_threshold == sum(r > 0.2 for r in per_record) == 3
    assert risk.population_uniques == 1
    assert "45 people" in risk.lines()[0] and "1 record is the only person in the population" in risk.lines()[1]


@pytest.mark.parametrize("text, message", [
    ("age;count\n34;8\n", "no column 'sex'"),
    ("age;sex;count\n34;f;zwei\n", "line 2: the count 'zwei' is not a whole number"),
    ("age;sex;count\n34;f;8\n34;f;3\n", "line 3: age='34', sex='f' is counted again (first on line 2)"),
    ("age;sex;count\n34;f;1\n50;m;2\n", "line 2: 1 people have age='34', sex='f', but the data alone holds 2"),
    ("age;sex;count\n34;f;9\n", "no row for age='50', sex='m'"),
])
def test_a_population_table_that_does_not_fit_is_named(tmp_path, text, message):
    frame = pd.DataFrame({"age": [34, 34, 50], "sex": ["f", "f", "m"]})
    with pytest.raises(InputError, match=None) as caught:
        journalist_risk(frame, ["age", "sex"], read_population(_write(tmp_path / "p.csv", text), ["age", "sex"]))
    assert message in str(caught.value) and "p.csv" in str(caught.value)
