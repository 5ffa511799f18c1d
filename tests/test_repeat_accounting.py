"""The cumulative guarantee across a project's releases (issue 30, part A): per-record cumulative epsilon, the
counts, the budget refusal, and the worst-case posterior after repeated observations.

Every figure is checked against an independent computation: a dictionary of (identity, draw) pairs for the
accounting, the enumeration of every observation sequence for the posterior, and simulated attacks."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.errors import ParameterError, PrivacyError, cli_name, setting_keys
from ppdp_desktop.core.repeat.accounting import (
    ATTACKER,
    check_budget,
    cumulative_guarantee,
    per_record_cumulative,
    posterior_after_persistent,
    posterior_after_repeats,
)
from ppdp_desktop.core.repeat.distinct import by_identity, history
from ppdp_desktop.core.repeat.records import ReleaseRecords

#: dyadic epsilons: their sums are exact in any order, so results can be compared with ==
EPSILONS = [0.0, 0.25, 0.5, 1.0, 2.0]


def records(identities, draws, epsilon) -> ReleaseRecords:
    n = len(identities)
    epsilon = np.broadcast_to(np.asarray(epsilon, dtype=float), (n,))
    return ReleaseRecords(np.asarray(identities, dtype=np.uint64), np.asarray(draws, dtype=np.uint64), epsilon)


def reference(previous, current, persistent=True):
    """The definition, record by record: per identity, the sum over its distinct (identity, draw) pairs of the
    largest epsilon recorded for the pair; unchanged = the pair is in an earlier release."""
    pairs: dict[tuple[int, int], float] = {}
    for release in previous:
        for i, d, e in zip(release.identities.tolist(), release.draws.tolist(), release.epsilon.tolist()):
            pairs[i, d] = max(pairs.get((i, d), 0.0), e)
    before, seen = set(pairs), {i for i, _ in pairs}
    ids, draws, eps = current.identities.tolist(), current.draws.tolist(), current.epsilon.tolist()
    if persistent:
        for i, d, e in zip(ids, draws, eps):
            pairs[i, d] = max(pairs.get((i, d), 0.0), e)
    total: dict[int, float] = {}
    for (i, _), e in pairs.items():
        total[i] = total.get(i, 0.0) + e
    if not persistent:
        for i, e in zip(ids, eps):
            total[i] = total.get(i, 0.0) + e
    return (np.array([total[i] for i in ids]), np.array([i in seen for i in ids], dtype=bool),
            np.array([persistent and (i, d) in before for i, d in zip(ids, draws)], dtype=bool))


@st.composite
def releases(draw, identities: int = 8, draws: int = 4, max_size: int = 12, unbounded: bool = False):
    n = draw(st.integers(0, max_size))
    values = EPSILONS + ([np.inf] if unbounded else [])
    return records(draw(st.lists(st.integers(0, identities - 1), min_size=n, max_size=n)),
                   draw(st.lists(st.integers(0, draws - 1), min_size=n, max_size=n)),
                   draw(st.lists(st.sampled_from(values), min_size=n, max_size=n)))


histories = st.tuples(st.lists(releases(unbounded=True), max_size=4), releases(unbounded=True), st.booleans())
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- the accounting against its definition ------------------------------------------------------------------------
@PROPERTY
@given(histories, st.sampled_from([None, 1, 3]))
def test_history_equals_the_definition(case, hash_bits):
    # hash_bits=1: the packed sort keys collide all the time, and the exact re-sort must still group right
    previous, current, persistent = case
    cumulative, matched, unchanged = reference(previous, current, persistent)
    found = history(previous, current, fresh=not persistent, hash_bits=hash_bits)
    assert np.array_equal(found.cumulative, cumulative)
    assert np.array_equal(found.matched, matched)
    assert np.array_equal(found.unchanged, unchanged)


@PROPERTY
@given(histories)
def test_guarantee_counts_and_maxima(case):
    previous, current, persistent = case
    cumulative, matched, unchanged = reference(previous, current, persistent)
    changed = matched & ~unchanged
    g = cumulative_guarantee(previous, current, ordinal=len(previous) + 1, budget=1.0, persistent=persistent)
    assert (g.records, g.matched, g.unchanged, g.changed, g.new) == (
        len(current), matched.sum(), unchanged.sum(), changed.sum(), (~matched).sum())
    assert g.matched == g.unchanged + g.changed and g.records == g.matched + g.new
    assert g.epsilon_release == (current.epsilon.max() if len(current) else 0.0)
    assert g.epsilon_cumulative_max == (cumulative.max() if len(current) else 0.0)
    assert g.epsilon_changed_max == (cumulative[changed].max() if changed.any() else 0.0)
    assert g.over_budget == (cumulative > 1.0).sum()
    json.dumps(g.to_json(), allow_nan=False)  # plain JSON numbers, inf as null


@PROPERTY
@given(st.lists(releases(), max_size=4), releases(), releases(), st.booleans())
def test_cumulative_epsilon_is_monotone_in_releases(previous, extra, current, persistent):
    fewer = per_record_cumulative(previous, current, persistent=persistent)
    for position in range(len(previous) + 1):
        more = per_record_cumulative([*previous[:position], extra, *previous[position:]], current, persistent=persistent)
        assert np.all(more >= fewer)


@PROPERTY
@given(releases(unbounded=True), st.integers(1, 4))
def test_identical_releases_add_nothing(release, copies):
    alone = per_record_cumulative([], release)
    assert np.array_equal(per_record_cumulative([release] * copies, release), alone)
    g = cumulative_guarantee([release] * copies, release, ordinal=copies + 1)
    assert g.unchanged == g.matched == g.records and g.changed == g.new == 0


@PROPERTY
@given(st.lists(releases(), min_size=1, max_size=4), st.data())
def test_all_new_draw_digests_add_exactly_their_epsilon(previous, data):
    # a release of patients seen before, each once, with digests never drawn before: each record's cumulative
    # epsilon grows by exactly its own epsilon, and every record is changed
    seen = sorted(set(np.concatenate([r.identities for r in previous]).tolist()))
    if not seen:
        return
    chosen = data.draw(st.lists(st.sampled_from(seen), min_size=1, max_size=len(seen), unique=True))
    epsilon = data.draw(st.lists(st.sampled_from(EPSILONS[1:]), min_size=len(chosen), max_size=len(chosen)))
    fresh = records(chosen, np.arange(1000, 1000 + len(chosen)), epsilon)
    without = records(chosen, np.arange(1000, 1000 + len(chosen)), 0.0)
    assert np.array_equal(per_record_cumulative(previous, fresh) - per_record_cumulative(previous, without), epsilon)
    g = cumulative_guarantee(previous, fresh, ordinal=len(previous) + 1)
    assert g.changed == g.matched == len(chosen) and g.unchanged == 0


@PROPERTY
@given(st.integers(1, 12), st.sampled_from(EPSILONS[1:] + [0.1, 1.1, 0.3]), st.integers(1, 20), st.booleans())
def test_fresh_draw_releases_compose_linearly(k, epsilon, n, persistent_flag):
    # k releases of the same n patients, each with fresh digests (never repeated): k * epsilon for everyone, whether
    # the last release calls itself persistent (its digests are new anyway) or not
    rng = np.random.default_rng(k * 1000 + n)
    made = [records(np.arange(n), rng.integers(0, 2**63, n, dtype=np.uint64), epsilon) for _ in range(k)]
    cumulative = per_record_cumulative(made[:-1], made[-1], persistent=persistent_flag)
    assert cumulative == pytest.approx(np.full(n, k * epsilon), rel=1e-12)
    # the same draw digests, but declared not persistent: the last release still composes
    same = per_record_cumulative([made[0]] * (k - 1), made[0], persistent=False)
    assert same == pytest.approx(np.full(n, (2 if k > 1 else 1) * epsilon), rel=1e-12)


@PROPERTY
@given(st.lists(releases(unbounded=True), min_size=2, max_size=5), releases(unbounded=True), st.booleans(), st.randoms())
def test_order_of_previous_releases_does_not_matter(previous, current, persistent, random):
    shuffled = list(previous)
    random.shuffle(shuffled)
    a = history(previous, current, fresh=not persistent)
    b = history(shuffled, current, fresh=not persistent)
    assert np.array_equal(a.cumulative, b.cumulative)
    assert np.array_equal(a.unchanged, b.unchanged) and np.array_equal(a.matched, b.matched)


def test_a_ledger_sorted_by_identity_gives_the_same_history():
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64)
    previous = [records(ids[rng.permutation(5000)[:4000]], rng.integers(0, 3, 4000), rng.choice(EPSILONS, 4000))
                for _ in range(4)]
    current = records(ids, rng.integers(0, 3, 5000), 0.5)
    a = history(previous, current)
    b = history([by_identity(r) for r in previous], current)
    assert np.array_equal(a.cumulative, b.cumulative) and np.array_equal(a.unchanged, b.unchanged)
    assert np.all(np.diff(by_identity(previous[0]).identities.astype(np.float64)) >= 0)


def test_large_digests_and_collisions_of_the_packed_keys():
    # real digests are 64-bit words; force collisions in the hash part of the sort keys and compare with the
    # definition (some identities have many releases with repeated and new digests)
    rng = np.random.default_rng(11)
    ids = rng.integers(0, 2**64 - 1, 300, dtype=np.uint64)
    pool = rng.integers(0, 2**64 - 1, 5, dtype=np.uint64)
    previous = [records(rng.choice(ids, 400), rng.choice(pool, 400), rng.choice(EPSILONS, 400)) for _ in range(6)]
    current = records(rng.choice(ids, 500), rng.choice(pool, 500), rng.choice(EPSILONS, 500))
    for persistent in (True, False):
        expected = reference(previous, current, persistent)
        for bits in (None, 1, 2, 8):
            found = history(previous, current, fresh=not persistent, hash_bits=bits)
            assert np.array_equal(found.cumulative, expected[0])
            assert np.array_equal(found.unchanged, expected[2])


def test_pair_keys_that_collide_are_resolved_exactly():
    # two draw digests whose hashes differ only in the lowest bit share a sort key for the same identity: a patient
    # with several records holding both must still count two pairs, and each earlier copy must fold onto its own
    factor = 0x9E3779B97F4A7C15  # folds.spread's
    a = 12346
    b = (a + pow(factor, -1, 2**64)) % 2**64  # spread(b) = spread(a) + 1, and spread(a) is even
    assert (a * factor % 2**64) >> 1 == (b * factor % 2**64) >> 1 and a != b
    previous = [records([7, 7, 8], [a, b, a], [1.0, 0.5, 2.0]), records([7, 8], [b, b], [0.25, 1.0])]
    current = records([7, 7, 7, 8, 8], [b, a, b, a, 99], [0.5, 4.0, 2.0, 0.5, 0.25])
    expected = reference(previous, current)
    found = history(previous, current)
    assert np.array_equal(found.cumulative, expected[0]) and np.array_equal(found.unchanged, expected[2])
    assert found.cumulative.tolist() == [6.0, 6.0, 6.0, 3.25, 3.25]  # 7: a 4 + b 2; 8: a 2 + b 1 + 99 0.25


# --- exact small examples ---------------------------------------------------------------------------------------------
def test_a_hand_example():
    # patients 1-5 in release 1; release 2: 1-3 as before, 4 drawn anew (a changed value), 6 new; now: 1 and 2 as
    # before, 3 drawn anew, 4 back to its release-1 draw (unchanged, but its release-2 draw still counts), 7 new
    r1 = records([1, 2, 3, 4, 5], [10, 20, 30, 40, 50], 1.0)
    r2 = records([1, 2, 3, 4, 6], [10, 20, 30, 41, 60], 1.0)
    now = records([1, 2, 3, 4, 7], [10, 20, 31, 40, 70], [1.0, 1.0, 0.5, 1.0, 2.0])
    assert per_record_cumulative([r1, r2], now).tolist() == [1.0, 1.0, 1.5, 2.0, 2.0]
    g = cumulative_guarantee([r1, r2], now, ordinal=3, budget=1.75, project_id="adult-monthly")
    assert (g.matched, g.unchanged, g.changed, g.new) == (4, 3, 1, 1)
    assert (g.epsilon_release, g.epsilon_cumulative_max, g.epsilon_changed_max) == (2.0, 2.0, 1.5)
    assert g.over_budget == 2  # patient 4 (2.0) and the new patient 7 (2.0)
    text = g.sentences()
    assert text[0] == ("This is release 3 of project 'adult-monthly', after 2 earlier releases in this computer's "
                       "ledger. Of its 5 records, 4 are of patients released before in this project (3 unchanged, "
                       "1 changed) and 1 is new.")
    assert any(s.startswith("3 records are unchanged") and ATTACKER in s for s in text)
    assert any(s.startswith("For the 1 record drawn anew") and "add up to at most 1.5 (budget 1.75)" in s
               and ATTACKER in s for s in text)
    assert any("no patient of this release has a cumulative epsilon above 2" in s and ATTACKER in s for s in text)
    assert text[-1] == "2 records are above the project's budget of 1.75."
    # not persistent: every matched record composes, none is unchanged
    g = cumulative_guarantee([r1, r2], now, ordinal=3, persistent=False)
    assert (g.unchanged, g.changed) == (0, 4)
    assert per_record_cumulative([r1, r2], now, persistent=False).tolist() == [2.0, 2.0, 1.5, 3.0, 2.0]
    assert any("fresh, not persistent" in s for s in g.sentences())


def test_a_patient_with_several_records():
    # identity 1 has two records now (two visits, or two patients alike in every identifying column): each distinct
    # draw counts once, and a draw seen before is unchanged
    before = records([1, 1, 2], [10, 11, 20], [1.0, 0.5, 1.0])
    now = records([1, 1, 1, 2], [10, 12, 12, 20], [1.0, 2.0, 2.0, 1.0])
    assert per_record_cumulative([before], now).tolist() == [3.5, 3.5, 3.5, 1.0]
    assert history([before], now).unchanged.tolist() == [True, False, False, True]


def test_the_largest_epsilon_recorded_for_a_draw_counts():
    assert per_record_cumulative([records([1], [5], 0.5), records([1], [5], 2.0)], records([1], [5], 1.0)).tolist() == [2.0]


def test_a_method_without_epsilon_bound_is_unbounded_and_over_any_budget():
    g = cumulative_guarantee([records([1, 2], [1, 2], 1.0)], records([1, 2], [1, 3], [1.0, np.inf]), ordinal=2,
                             budget=1e9)
    assert g.epsilon_cumulative_max == np.inf and g.over_budget == 1 and g.unbounded
    out = g.to_json()
    assert out["epsilon_unbounded"] is True and out["epsilon_cumulative_max"] is None and out["epsilon_changed_max"] is None
    assert out["epsilon_release"] is None and out["budget"] == 1e9
    assert any("no bound" in s for s in g.sentences())
    with pytest.raises(PrivacyError) as caught:
        check_budget(g, None)
    assert caught.value.value == np.inf


def test_the_first_release():
    g = cumulative_guarantee([], records([1, 2, 2], [1, 2, 3], [0.5, 1.0, 1.0]), ordinal=1, budget=5, project_id="p")
    assert (g.matched, g.new, g.previous_releases, g.epsilon_cumulative_max) == (0, 3, 0, 2.0)
    assert g.sentences() == ["This is release 1 of project 'p'; no earlier release of it is in this computer's ledger, "
                             "so only this release counts: no patient of this release has a cumulative epsilon above 2.",
                             "Every record is within the project's budget of 5."]


def test_empty_releases():
    g = cumulative_guarantee([records([], [], 0.0)], records([], [], 0.0), ordinal=2)
    assert (g.records, g.epsilon_release, g.epsilon_cumulative_max) == (0, 0.0, 0.0)
    assert per_record_cumulative([], records([], [], 0.0)).shape == (0,)


def test_the_stated_epsilon_is_rounded_up():
    g = cumulative_guarantee([records([1], [1], 1.1)], records([1], [2], 1.0 + 1e-9), ordinal=2)
    assert g.epsilon_changed_max > 2.1
    assert any("at most 2.11" in s for s in g.sentences())  # never "2.1", which would understate it


def test_settings_are_checked():
    r = records([1], [1], 1.0)
    with pytest.raises(ParameterError):
        cumulative_guarantee([], r, ordinal=0)
    with pytest.raises(ParameterError) as caught:
        cumulative_guarantee([], r, ordinal=1, budget=-1)
    assert caught.value.setting == "budget"
    with pytest.raises(ParameterError):
        cumulative_guarantee([], r, ordinal=1, budget=float("nan"))
    with pytest.raises(PrivacyError, match="earlier release 1"):  # a damaged ledger is refused, never guessed
        cumulative_guarantee([records([1], [1], np.nan)], r, ordinal=2)
    with pytest.raises(PrivacyError, match="being made"):
        cumulative_guarantee([], records([1], [1], -1.0), ordinal=1)


# --- the budget -----------------------------------------------------------------------------------------------------
def over_budget():
    previous = [records(np.arange(50), np.arange(50) + 1000 * (r + 1), 1.1) for r in range(4)]
    return cumulative_guarantee(previous, records(np.arange(60), np.arange(60), 1.1), ordinal=5, budget=4.0,
                                project_id="adult-monthly")


def test_past_the_budget_is_refused_with_one_line_naming_it():
    g = over_budget()
    assert g.over_budget == 50 and g.epsilon_cumulative_max == pytest.approx(5.5)
    for reason in (None, "", "   \t"):
        with pytest.raises(PrivacyError) as caught:
            check_budget(g, reason)
        error = caught.value
        assert (error.setting, error.allowed) == ("budget", "at most 4.0")
        assert error.value == pytest.approx(5.5)
        assert setting_keys(error.message) == ["budget", "over-budget-reason"]
        line = str(error)
        assert "\n" not in line
        assert ("Release 5 of project 'adult-monthly' refused: 50 records would reach a cumulative epsilon above the "
                "project's budget of 4 (largest 5.5).") in line
        assert f"({cli_name('budget', 'EPSILON')})" in line and f"({cli_name('over-budget-reason', 'TEXT')})" in line
        assert "--" not in error.message  # the message itself names settings by key; each face phrases them


def test_a_reason_publishes_past_the_budget():
    check_budget(over_budget(), "the ethics board approved a second look at this cohort")


def test_within_or_without_a_budget_nothing_is_refused():
    r = records([1], [1], 3.0)
    check_budget(cumulative_guarantee([], r, ordinal=1), None)
    check_budget(cumulative_guarantee([], r, ordinal=1, budget=3.0), None)  # at the budget is within it
    with pytest.raises(PrivacyError):
        check_budget(cumulative_guarantee([], r, ordinal=1, budget=2.999), None)


def test_local_dp_epsilons_add_up_exactly():
    # what "the epsilons add up" rests on: a record released k times with independent draws of a mechanism of
    # local-DP epsilon e gives likelihood ratios up to exactly e^(k e) between two true values (composition is tight
    # for these matrices), while k persistent releases show one draw (ratio e^e)
    for matrix in (retention(np.array([0.5, 0.2, 0.7])), rr_matrix(4, 0.55)):
        epsilon = np.log(max(matrix[y, a] / matrix[y, b] for y in range(len(matrix)) for a in range(len(matrix))
                             for b in range(len(matrix))))
        for k in (1, 2, 3):
            worst = 0.0
            for ys in itertools.product(range(len(matrix)), repeat=k):
                likelihood = np.prod(matrix[list(ys)], axis=0)
                worst = max(worst, likelihood.max() / likelihood.min())
            assert np.log(worst) == pytest.approx(k * epsilon)


# --- the posterior after repeated observations ---------------------------------------------------------------------
def retention(p: np.ndarray, starts=(0,)) -> np.ndarray:
    """The dense retention matrix: keep value j with probability p_j, else a uniform value of its block."""
    m = len(p)
    matrix = np.zeros((m, m))
    bounds = [*starts, m]
    for a, b in zip(bounds[:-1], bounds[1:]):
        matrix[a:b, a:b] = (1 - p[a:b]) / (b - a)
        matrix[np.arange(a, b), np.arange(a, b)] += p[a:b]
    return matrix


def rr_matrix(d: int, p: float) -> np.ndarray:
    matrix = np.full((d, d), (1 - p) / (d - 1))
    np.fill_diagonal(matrix, p)
    return matrix


def brute_force(matrix: np.ndarray, prior: np.ndarray, k: int) -> np.ndarray:
    """The largest posterior of each true value over every sequence of k released values."""
    best = np.zeros(matrix.shape[1])
    for ys in itertools.product(range(matrix.shape[0]), repeat=k):
        joint = prior * np.prod(matrix[list(ys)], axis=0)
        if joint.sum() > 0:
            best = np.maximum(best, joint / joint.sum())
    return best


def equal_observations(matrix: np.ndarray, prior: np.ndarray, k: int) -> np.ndarray:
    joint = prior[None, :] * matrix ** k
    totals = joint.sum(axis=1, keepdims=True)
    return np.where(totals > 0, joint / np.where(totals > 0, totals, 1), 0).max(axis=0)


@st.composite
def distributions(draw, m: int):
    weights = np.array(draw(st.lists(st.integers(0, 20), min_size=m, max_size=m)), dtype=float)
    if weights.sum() == 0:
        weights[0] = 1
    return weights / weights.sum()


@st.composite
def app_matrices(draw):
    """The matrices the app releases with: retention (one block or a partition's blocks) and randomized response."""
    m = draw(st.integers(2, 4))
    if draw(st.booleans()):
        return rr_matrix(m, draw(st.floats(1 / m, 1.0))), draw(distributions(m))
    p = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=m, max_size=m)))
    starts = (0, draw(st.integers(1, m - 1))) if m > 2 and draw(st.booleans()) else (0,)
    return retention(p, starts), draw(distributions(m))


@st.composite
def any_matrices(draw):
    m, out = draw(st.integers(2, 3)), draw(st.integers(2, 4))
    columns = [draw(distributions(out)) for _ in range(m)]
    return np.column_stack(columns), draw(distributions(m))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(app_matrices(), st.integers(1, 4))
def test_for_the_apps_matrices_the_worst_case_is_k_equal_observations(case, k):
    matrix, prior = case
    exact = brute_force(matrix, prior, k)
    assert posterior_after_repeats(matrix, prior, k) == pytest.approx(exact, abs=1e-9)
    assert equal_observations(matrix, prior, k) == pytest.approx(exact, abs=1e-9)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_matrices(), st.integers(1, 4))
def test_for_any_matrix_the_bound_is_never_below_the_worst_sequence(case, k):
    matrix, prior = case
    bound = posterior_after_repeats(matrix, prior, k)
    assert np.all(bound >= brute_force(matrix, prior, k) - 1e-9)
    assert np.all(bound <= 1.0)
    if k == 1:  # one observation: exact
        assert bound == pytest.approx(brute_force(matrix, prior, 1), abs=1e-12)
    assert np.all(posterior_after_repeats(matrix, prior, k + 1) >= bound - 1e-12)  # more releases never help


def test_the_worst_case_is_not_always_k_equal_observations():
    # y1 rules out a (not b), y2 rules out b (not a): one of each beats two of either, so the bound must not be the
    # equal-observation formula for such a matrix
    #            x     a     b
    matrix = np.array([[0.5, 0.0, 0.5],   # y1
                       [0.5, 0.5, 0.0],   # y2
                       [0.0, 0.5, 0.5]])  # y3
    prior = np.full(3, 1 / 3)
    exact = brute_force(matrix, prior, 2)
    assert exact[0] == pytest.approx(1.0)  # (y1, y2) leaves only x
    assert equal_observations(matrix, prior, 2)[0] == pytest.approx(0.5)
    assert posterior_after_repeats(matrix, prior, 2)[0] == pytest.approx(1.0)


def test_persistent_releases_teach_what_one_release_teaches():
    matrix, prior = retention(np.array([0.6, 0.3, 0.8, 0.5])), np.array([0.1, 0.2, 0.3, 0.4])
    one = posterior_after_persistent(matrix, prior)
    assert one == pytest.approx(brute_force(matrix, prior, 1))
    assert np.array_equal(one, posterior_after_repeats(matrix, prior, 1))
    assert np.all(posterior_after_repeats(matrix, prior, 10) > one)


def test_the_posterior_inputs_are_checked():
    matrix = rr_matrix(3, 0.6)
    with pytest.raises(ParameterError):
        posterior_after_repeats(matrix, np.full(3, 1 / 3), 0)
    with pytest.raises(ParameterError):
        posterior_after_repeats(matrix * 0.9, np.full(3, 1 / 3), 2)  # columns do not sum to 1
    with pytest.raises(ParameterError):
        posterior_after_persistent(matrix, np.full(2, 0.5))
    with pytest.raises(ParameterError):
        posterior_after_persistent(matrix, np.array([0.5, -0.5, 1.0]))
    # a value of prior 0 has posterior 0; the prior need not be normalized
    assert posterior_after_repeats(matrix, np.array([0.0, 1.0, 1.0]), 3)[0] == 0.0
    assert posterior_after_repeats(matrix, np.array([2.0, 1.0, 1.0]), 3) == pytest.approx(
        posterior_after_repeats(matrix, np.array([0.5, 0.25, 0.25]), 3))


def test_the_attack_on_simulated_records_reaches_the_bound_and_never_exceeds_it():
    # 200,000 patients, their values drawn from the prior, released k = 3 times through a fine-grain retention
    # matrix: (a) independent draws: the attacker's exact Bayes posterior never exceeds the bound, and among the
    # records released as x three times the true value is x as often as the bound says (it is reached); (b)
    # persistent draws (one draw shown three times): the frequency is the one-release posterior
    rng = np.random.default_rng(2024)
    p, prior = np.array([0.55, 0.35, 0.7, 0.45]), np.array([0.4, 0.3, 0.2, 0.1])
    matrix, k, n = retention(p), 3, 200_000
    truth = rng.choice(4, n, p=prior)
    cumulative = np.cumsum(matrix, axis=0)

    def release() -> np.ndarray:
        return (rng.random(n)[:, None] > cumulative[:, truth].T).sum(axis=1)

    seen = np.column_stack([release() for _ in range(k)])
    joint = prior[None, :] * np.prod(matrix[seen], axis=1)  # (n, values)
    posterior = joint / joint.sum(axis=1, keepdims=True)
    bound = posterior_after_repeats(matrix, prior, k)
    assert np.all(posterior <= bound[None, :] + 1e-12)
    for x in range(4):
        alike = np.all(seen == x, axis=1)
        frequency, count = (truth[alike] == x).mean(), alike.sum()
        assert abs(frequency - bound[x]) < 4 * np.sqrt(bound[x] * (1 - bound[x]) / count) + 1e-3
    once = release()  # persistent: the same draw in every release, so the attacker sees it k times
    persistent = posterior_after_persistent(matrix, prior)
    for x in range(4):
        alike = once == x
        frequency, count = (truth[alike] == x).mean(), alike.sum()
        assert abs(frequency - persistent[x]) < 4 * np.sqrt(persistent[x] * (1 - persistent[x]) / count)
    assert np.all(persistent < bound)


@PROPERTY
@given(st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=40), st.data(), st.booleans())
def test_a_first_release_of_distinct_patients_equals_the_definition(identities, data, persistent):
    # the shortcut for a project's first release with one record a patient (issue 34: no per-identity folds)
    n = len(identities)
    current = records(identities, data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
                      data.draw(st.lists(st.sampled_from([*EPSILONS, np.inf]), min_size=n, max_size=n)))
    cumulative, matched, unchanged = reference([], current, persistent)
    found = history([], current, fresh=not persistent)
    assert np.array_equal(found.cumulative, cumulative) and found.cumulative.dtype == np.float64
    assert np.array_equal(found.matched, matched) and np.array_equal(found.unchanged, unchanged)
    assert not np.shares_memory(found.cumulative, current.epsilon)


def test_an_epsilon_the_same_for_every_record_is_held_once() -> None:
    """A release's records spend one epsilon (the usual case): held as one value broadcast to every record (issue 34:
    7.6 MB of a 1M-record job), stored as one value, read back as one per record; any other epsilon array is made
    a contiguous float64 array of its own, as before."""
    n = 1000
    ids, draws = np.arange(n, dtype=np.uint64), np.arange(n, 2 * n, dtype=np.uint64)
    kept = ReleaseRecords(ids, draws, np.broadcast_to(np.float64(0.5), (n,)))
    assert kept.epsilon.strides == (0,) and len(kept.epsilon) == n and not kept.epsilon.flags.writeable
    blobs = kept.to_blobs()
    assert len(blobs["epsilon"]) == 8
    back = ReleaseRecords.from_blobs(bytes(blobs["identities"]), bytes(blobs["draws"]), bytes(blobs["epsilon"]), None)
    assert back.epsilon.tolist() == [0.5] * n and back.identities.tolist() == ids.tolist()
    made = ReleaseRecords(ids, draws, np.ones(n, dtype=np.int64))
    assert made.epsilon.dtype == np.float64 and made.epsilon.flags.c_contiguous and made.epsilon.strides == (8,)
    with pytest.raises(ValueError, match="one entry per record"):
        ReleaseRecords(ids, draws, np.broadcast_to(np.float64(0.5), (n + 1,)))
