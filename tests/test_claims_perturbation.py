"""Claims battery, uniform and fine-grain perturbation (issue 28): every privacy sentence the app prints about
such a release — the CLI summary and its ``--json`` document, README.txt, release.json's guarantee, the report's
lines and per-value table, the window's method description — checked on a slice of the real Adult data by an
exact computation from the published matrix, and by a Monte-Carlo Bayes attacker over many keyed releases.

The attacker of (rho1, rho2)-privacy: someone who, before the release, believes a person holds value x with
probability at most rho1 (for the data's own prior: the share of records holding x), reads the person's released
value and updates by Bayes' rule with the published matrix. Every figure is parsed from the outputs.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize, plan_job
from ppdp_desktop.core.methods import get_method
from tests.claims_helpers import (
    RELEASES,
    Z,
    adult_slice,
    anonymize_faces,
    cli_job,
    empirical_agrees,
    flat,
    joint_counts,
    keyed_releases,
    ldp_epsilon,
    one,
    percent_of,
    posterior,
    retention_matrix,
    same_release,
    verify_forged_guarantee,
    worst_posterior,
)

N_RECORDS = 2000
#: name -> (sensitive column, arguments of ppdp anonymize); the last one has a downward breach (a frequent value
#: given a pair of its own, as the SPEC's caution on fine-grain perturbation describes)
CONFIGS = {
    "uniform": ("occupation", ["--method", "uniform", "--theta", "3"]),
    "finegrain": ("occupation", ["--method", "finegrain", "--theta", "3"]),
    "finegrain-downward": ("sex", ["--method", "finegrain", "--theta", "3", "--pairs", "{pairs}"]),
}


@pytest.fixture(scope="module")
def slice_csv(tmp_path_factory):
    folder = tmp_path_factory.mktemp("claims-perturbation")
    (folder / "pairs.csv").write_text("Male,0.1,0.3\n", encoding="utf-8")
    return adult_slice(folder, N_RECORDS)


@pytest.fixture(scope="module", params=list(CONFIGS))
def case(request, slice_csv):
    """One release per configuration, its faces, the in-process job with the same settings and the truth."""
    attribute, extra = CONFIGS[request.param]
    args = ["--sensitive", attribute, *[a.format(pairs=slice_csv.parent / "pairs.csv") for a in extra], "--seed", "7"]
    faces = anonymize_faces(slice_csv, slice_csv.parent / request.param, args)
    dataset, settings = cli_job(slice_csv, args)
    entry = faces.meta["sensitive"][0]
    values = [str(v) for v in entry["values"]]
    # the data's own prior, counted here with pandas (the prior the sentences name: each value's share)
    counts = dataset.frame[attribute].astype(str).value_counts().reindex(values, fill_value=0).to_numpy(dtype=float)
    pairs = entry["guarantee"]["pairs"]
    rho1 = np.array([np.nan if p["rho1"] is None else p["rho1"] for p in pairs], dtype=float)
    rho2 = np.array([np.nan if p["rho2"] is None else p["rho2"] for p in pairs], dtype=float)
    matrix = retention_matrix(np.asarray(entry["retention"], dtype=float))
    return dict(name=request.param, attribute=attribute, faces=faces, dataset=dataset, settings=settings,
                entry=entry, values=values, prior=counts / counts.sum(), rho1=rho1, rho2=rho2, matrix=matrix)


def _protected(case) -> np.ndarray:
    return np.isfinite(case["rho1"])


def test_the_published_matrix_is_the_one_the_release_was_drawn_with(case):
    """The in-process job with the CLI's settings writes the same release (same seed), so the attacks below
    run the release's own sampler; its plan publishes exactly release.json's retentions."""
    result = anonymize(case["dataset"], case["settings"])
    assert same_release(result, case["faces"].table)
    np.testing.assert_array_equal(result.plan.retention, case["entry"]["retention"])


def test_upward_bound_holds_for_every_prior_up_to_rho1(case):
    """README: "whatever released value you see, your belief that a record really holds such a value cannot rise
    above its rho2 if it was at most rho1 before"; the report: "N of M values are protected: ... (for any prior up
    to its rho1)"; the window: no observed value raises belief in a value above its rho2. Exact worst case over
    every prior, from the published matrix and pairs."""
    faces = case["faces"]
    assert ("whatever released value you see, your belief that a record really holds such a value cannot rise above "
            "its rho2 if it was at most rho1 before") in flat(faces.readme)
    found = one(r"(\d+) of (\d+) values are protected: whatever released value an adversary sees, a protected "
                r"value's posterior stays at or below its rho2 \(for any prior up to its rho1\)\.",
                "\n".join(faces.custodian))
    protected = _protected(case)
    assert (int(found[1]), int(found[2])) == (int(protected.sum()), len(case["values"]))
    worst = worst_posterior(case["matrix"], case["rho1"])
    assert np.all(worst[protected] <= case["rho2"][protected] * (1 + 1e-9)), (worst, case["rho2"])
    # the bound is the matrix's, not a slack one: the strictest value reaches its rho2
    assert np.max(worst[protected] / case["rho2"][protected]) > 0.999
    # the report inside the release: each value's retention and pair as published, "protected (verified)" for
    # exactly the values the bound above covers for the data's own frequencies (a pair and a share at most its rho1);
    # "not covered by its bound" for a value with a pair held by more than its rho1 of the records (counted here)
    public = pd.read_csv(faces.folder / "report-values.csv", encoding="utf-8-sig").set_index("Value").reindex(case["values"])
    np.testing.assert_allclose(public["Kept (p)"], case["entry"]["retention"], rtol=1e-12)
    np.testing.assert_allclose(public["rho1"], case["rho1"], rtol=1e-12)
    np.testing.assert_allclose(public["rho2"], case["rho2"], rtol=1e-12)
    above = protected & (case["prior"] > case["rho1"] * (1 + 1e-9))
    assert np.array_equal(public["Status"].str.startswith("protected (verified)").to_numpy(), protected & ~above)
    assert np.array_equal(public["Status"].str.startswith("not covered by its bound: held by more than rho1 of the "
                                                          "records").to_numpy(), above)


def test_first_page_bounds_are_the_pairs(case):
    """First page: "Someone who was at most A sure that a given person has each protected value cannot become more
    than B sure by reading the release." A and B are the pairs' ranges (the bound itself is checked above)."""
    for lines in (case["faces"].report, case["faces"].custodian):
        found = one(r"Someone who was at most (.+?) sure that a given person has (?:each|a) protected value cannot "
                    r"become more than (.+?) sure by reading the release\.", "\n".join(lines))
        protected = _protected(case)
        for said, bound in zip(found.groups(), (case["rho1"][protected], case["rho2"][protected])):
            lo, hi = percent_of(bound.min()), percent_of(bound.max())
            assert said == (lo if lo == hi else f"{lo} to {hi} (depending on the value)")


def test_epsilon_ldp_is_the_published_matrix(case):
    """The epsilon-LDP equivalent every face states is ln of the matrix's largest ratio in one released value."""
    faces = case["faces"]
    exact = ldp_epsilon(case["matrix"])
    said = [
        one(r"Sensitive values: guarantee verified: upward \(rho1, rho2\)-privacy per value \(gamma-amplification\); "
            r"epsilon-LDP equivalent ([\d.]+)$", "\n".join(faces.cli), re.M)[1],
        one(r"Equivalent to epsilon-local differential privacy with epsilon = ([\d.]+)\.", flat(faces.readme))[1],
        one(r"Equivalent to epsilon-local differential privacy with epsilon = ([\d.]+)\.", "\n".join(faces.custodian))[1],
        one(r"Equivalent to epsilon-local differential privacy with epsilon = ([\d.]+)\.", "\n".join(faces.report))[1],
    ]
    for text in said:
        assert float(text) == pytest.approx(exact, abs=5e-4)
    for stated in (faces.document["guarantee"]["epsilon_ldp"], case["entry"]["guarantee"]["epsilon_ldp"]):
        assert stated == pytest.approx(exact, rel=1e-12)


def test_stated_gammas_and_pairs(case):
    """release.json: each value's gamma is its pair's (thesis Eq. 6) and bounds the matrix's amplification of it;
    the pairs are the rule's, recomputed from the data (theta: rho1 = share, rho2 = theta * share, protected only
    below 1/theta), and the CLI's "(N values, K protected; ...)" counts them."""
    rho1, rho2, prior = case["rho1"], case["rho2"], case["prior"]
    gamma = np.array([np.inf if g is None else g for g in case["entry"]["guarantee"]["gamma"]], dtype=float)
    protected = _protected(case)
    np.testing.assert_allclose(gamma[protected], (rho2 * (1 - rho1) / (rho1 * (1 - rho2)))[protected], rtol=1e-12)
    matrix = case["matrix"]
    amplification = (matrix / matrix.min(axis=1, keepdims=True)).max(axis=0)
    assert np.all(amplification[protected] <= gamma[protected] * (1 + 1e-9))
    theta = case["settings"].sensitivity.theta
    overrides = case["settings"].sensitivity.overrides
    rule = prior < 1 / theta
    for j, value in enumerate(case["values"]):
        if value in overrides:
            assert (rho1[j], rho2[j]) == overrides[value]
        elif rule[j]:
            assert rho1[j] == pytest.approx(prior[j], rel=1e-12) and rho2[j] == pytest.approx(theta * prior[j], rel=1e-12)
        else:
            assert np.isnan(rho1[j])
    found = one(rf"sensitive: {case['attribute']} \((\d+) values, (\d+) protected;", "\n".join(case["faces"].cli))
    assert (int(found[1]), int(found[2])) == (len(case["values"]), int(protected.sum()))


@pytest.fixture(scope="module")
def attacker(case):
    """The Monte-Carlo Bayes attacker: the release's own keyed sampler run with RELEASES seeds on the slice; for
    every (record, release) it sees the released value next to the truth."""
    job = plan_job(case["dataset"], case["settings"])
    np.testing.assert_array_equal(job.plan.retention, case["entry"]["retention"])
    m = len(case["values"])
    counts = np.zeros((m, m), dtype=np.int64)
    for applied in keyed_releases(job, case["dataset"].frame, case["attribute"], range(RELEASES)):
        true_codes, released = applied.codes[case["attribute"]]
        counts += joint_counts(true_codes, released, m)  # the plan's codes follow release.json's value order
    return counts


def test_the_release_is_drawn_with_the_published_matrix(case, attacker):
    """README "What was done": each record kept its value with the published retention, else got a value drawn
    uniformly from the column's values. The keyed releases' transition frequencies match P within sampling error."""
    assert ("each record kept its value with a probability set per value (listed as \"retention\" in release.json) "
            "and otherwise received a value drawn uniformly from the column's values") in flat(case["faces"].readme)
    ok, worst = empirical_agrees(attacker.T, case["matrix"].T)  # rows: the true value; shares: where it went
    assert ok, f"transition frequencies off by {worst:.1f} standard errors"


def test_bayes_attacker_posterior_is_the_exact_one_and_within_rho2(case, attacker):
    """The attacker's empirical Pr[original = x | released = y] over the keyed releases equals Bayes' rule with the
    published matrix and the data's prior (within sampling error); the custodian's per-value table states that
    exact maximum, and for every protected value whose prior is at most rho1 it stays within rho2."""
    exact = posterior(case["matrix"], case["prior"])
    ok, worst = empirical_agrees(attacker, exact)
    assert ok, f"empirical posterior off by {worst:.1f} standard errors"
    stated = case["faces"].values.set_index("Value").reindex(case["values"])
    np.testing.assert_allclose(stated["Max posterior"].to_numpy(dtype=float), exact.max(axis=0), rtol=1e-9)
    protected = _protected(case)
    # "protected (verified)" where the share is at most rho1 (and then the largest posterior is within rho2), "not
    # covered by its bound" where the share is above rho1 (outside its pair's promise; the posterior may then exceed
    # rho2), "; downward breach" added where there is one
    within = exact.max(axis=0) <= case["rho2"] + 1e-9
    above = protected & (case["prior"] > case["rho1"] * (1 + 1e-9))
    status = stated["Status"].str.replace("; downward breach", "", regex=False).to_numpy()
    assert np.all(status[protected & ~above] == "protected (verified)") and np.all(within[protected & ~above])
    assert np.all(status[above] == "not covered by its bound: held by more than rho1 of the records")
    assert not np.any(status == "NOT within bound")
    exposed = protected & (case["prior"] <= case["rho1"] * (1 + 1e-9))
    seen = attacker.sum(axis=1)
    empirical = attacker / seen[:, None]
    se = np.sqrt(exact * (1 - exact) / seen[:, None])
    assert np.all((empirical - Z * se)[:, exposed] <= case["rho2"][exposed])


def test_closest_to_bound_line(case):
    """Report: "Closest to its bound: 'X', max posterior A (rho2 B)." X is the protected value held by at most its rho1
    of the records whose exact largest posterior (data's prior) comes nearest its rho2; A and B are those figures."""
    found = one(r"Closest to its bound: '(.+?)', max posterior ([\d.]+) \(rho2 ([\d.]+)\)\.", "\n".join(case["faces"].custodian))
    largest = posterior(case["matrix"], case["prior"]).max(axis=0)
    protected = _protected(case) & (case["prior"] <= case["rho1"] * (1 + 1e-9))  # a value above rho1 is outside it
    j = int(np.argmax(np.where(protected, largest / case["rho2"], -np.inf)))
    assert found[1] == case["values"][j]
    assert float(found[2]) == pytest.approx(largest[j], abs=5e-5) and float(found[3]) == pytest.approx(case["rho2"][j], abs=5e-5)


def test_downward_breaches_are_the_exact_ones_and_the_attacker_sees_them(case, attacker):
    """Every face names the same downward breaches (a value believed at least rho2 before whose posterior can fall
    to rho1 or below), and they are exactly those Bayes' rule gives for the data's prior; the attacker observes each."""
    faces = case["faces"]
    exact = posterior(case["matrix"], case["prior"])
    protected = _protected(case)
    breach = protected & (case["prior"] >= case["rho2"]) & (exact.min(axis=0) <= case["rho1"])
    expected = [v for v, b in zip(case["values"], breach) if b]
    readme = re.search(r"Downward breaches were reported for: (.+?)\. ", flat(faces.readme) + " ")
    cli = re.search(r"downward breaches reported for: (.+)$", "\n".join(faces.cli), re.M)
    report = re.search(r"Downward breaches \(not covered by the guarantee; .*?\): (.+?)\.$", "\n".join(faces.custodian), re.M)
    for found in (readme, cli, report):
        assert (found[1].split(", ") if found else []) == expected
    assert faces.document["guarantee"]["downward_breaches"] == expected == case["entry"]["guarantee"]["downward_breaches"]
    assert ("No downward breach for the data's own frequencies." in faces.custodian) == (not expected)
    if case["name"] == "finegrain-downward":
        assert expected, "this configuration was chosen for its downward breach"
    seen = attacker.sum(axis=1)
    empirical = attacker / seen[:, None]
    se = np.sqrt(exact * (1 - exact) / seen[:, None])
    for j in np.flatnonzero(breach):
        assert np.min(empirical[:, j] - Z * se[:, j]) <= case["rho1"][j]


def test_the_share_replaced_and_no_one_can_tell_which(case):
    """First page: "X of the values were deliberately replaced by random ones; the rest are the original values,
    and no one can tell which is which." X is this release's share of changed values (checked against the
    in-process run and its expectation), and no released value is certainly the original one."""
    found = one(rf"{re.escape(case['attribute'])} \(sensitive\): (.+?) of the values were deliberately replaced by "
                r"random ones; the rest are the original values, and no one can tell which is which\.",
                "\n".join(case["faces"].report))
    result = anonymize(case["dataset"], case["settings"])
    true_codes, released = result.applied.codes[case["attribute"]]
    changed = float(np.mean(true_codes != released))
    assert found[1] == percent_of(changed)
    p, m = np.asarray(case["entry"]["retention"]), len(case["values"])
    expected = float(np.dot(case["prior"], (1 - p) * (m - 1) / m))
    assert abs(changed - expected) <= Z * np.sqrt(expected * (1 - expected) / len(true_codes))
    assert np.all(np.diag(posterior(case["matrix"], case["prior"])) < 1.0)


def test_columns_called_unchanged_are_unchanged_and_rows_shuffled(case):
    """README: every column it calls unchanged holds the original values (as a multiset: rows are shuffled), and
    "rows are in random order" (the rows are not in the original order)."""
    readme = case["faces"].readme
    listed = re.findall(r"^  (\S+) +unchanged$", readme, re.M)  # "What was done to each column"
    if "Every other column is unchanged" in flat(readme):  # the wording before issue 28
        listed = [c for c in case["faces"].table.columns if c != case["attribute"]]
    assert listed and case["attribute"] not in listed
    assert re.search(r"[Rr]ows are in random order", flat(readme))
    original = case["dataset"].frame.astype(str)
    table = case["faces"].table
    for column in listed:
        assert sorted(table[column]) == sorted(original[column]), column
    assert (table[listed].to_numpy() != original[listed].to_numpy()).any(axis=1).mean() > 0.5


@pytest.mark.parametrize("case", ["uniform"], indirect=True)
def test_uniform_strictest_value_sets_the_noise_for_all(case):
    """Window (uniform): "the strictest value sets the noise for all"; report: "Every value is kept with the same
    probability p = ...". One retention, the uniform matrix of the smallest gamma, whose value reaches rho2."""
    assert "the strictest value sets the noise for all" in get_method("uniform").summary
    p = np.asarray(case["entry"]["retention"])
    found = one(r"Every value is kept with the same probability p = ([\d.]+);", "\n".join(case["faces"].custodian))
    assert np.all(p == p[0]) and float(found[1]) == pytest.approx(p[0], abs=5e-5)
    rho1, rho2 = case["rho1"], case["rho2"]
    gamma = np.nanmin(rho2 * (1 - rho1) / (rho1 * (1 - rho2)))
    m = len(p)
    assert p[0] == pytest.approx((gamma - 1) / (m - 1 + gamma), rel=1e-12)
    worst = worst_posterior(case["matrix"], rho1)
    strictest = int(np.nanargmin(rho2 * (1 - rho1) / (rho1 * (1 - rho2))))
    assert worst[strictest] == pytest.approx(rho2[strictest], rel=1e-9)


@pytest.mark.parametrize("case", ["finegrain", "finegrain-downward"], indirect=True)
def test_finegrain_retention_is_the_best_the_pairs_allow(case):
    """Window (fine-grain): "Each value gets its own retention probability, the largest its own (rho1, rho2) pair
    allows, so common, less sensitive values are kept more often than rare, sensitive ones." The published
    retentions are the exact solver's for the data's prior (SPEC 2.2; its golden values have their own tests) and
    reach the linear program's optimum, solved here independently; a value with a looser bound is kept at least as
    often as one with a stricter bound."""
    from scipy.optimize import linprog

    from ppdp_desktop.core.methods.perturbation.solver import solve_exact

    summary = get_method("finegrain").summary
    assert "the largest its own (rho1, rho2) pair allows" in summary
    p = np.asarray(case["entry"]["retention"])
    rho1, rho2, prior = case["rho1"], case["rho2"], case["prior"]
    gamma = np.where(np.isfinite(rho1), rho2 * (1 - rho1) / (rho1 * (1 - rho2)), np.inf)
    np.testing.assert_allclose(p, solve_exact(prior, gamma), rtol=0, atol=1e-12)
    m = len(p)
    rows, bounds = [], []
    for i in np.flatnonzero(np.isfinite(gamma)):  # (m - 1) p_i + gamma_i p_j <= gamma_i - 1, j != i
        for j in range(m):
            if j != i:
                row = np.zeros(m)
                row[i], row[j] = m - 1, gamma[i]
                rows.append(row)
                bounds.append(gamma[i] - 1)
    lp = linprog(-prior * (1 - 1 / m), A_ub=np.array(rows), b_ub=np.array(bounds), bounds=[(0, 1)] * m, method="highs")
    assert lp.status == 0
    assert float(np.dot(prior, p + (1 - p) / m)) == pytest.approx(float(np.dot(prior, lp.x + (1 - lp.x) / m)), abs=1e-9)
    # "the largest its own pair allows": no retention can be raised alone without breaking a pair's constraint
    largest_other = np.array([np.max(np.delete(p, i)) for i in range(m)])
    own_slack = np.where(np.isfinite(gamma), gamma - 1 - (m - 1) * p - gamma * largest_other, np.inf)
    for i in range(m):
        others = [gamma[k] - 1 - (m - 1) * p[k] - gamma[k] * p[i] for k in range(m) if k != i and np.isfinite(gamma[k])]
        assert p[i] >= 1 - 1e-12 or min([own_slack[i], *others]) <= 1e-9, f"value {case['values'][i]!r} could be kept more"
    if "kept more often than rare, sensitive ones" in summary:  # more common and less strict: kept at least as often
        dominates = (prior[:, None] >= prior[None, :]) & (gamma[:, None] >= gamma[None, :])
        assert np.all((p[:, None] >= p[None, :] - 1e-12)[dominates])
    diagonal = p + (1 - p) / m
    if "stay mostly intact" in summary:  # the words before issue 28: a common value kept most of the time
        kept = diagonal[np.argmax(prior)]
        assert kept > 0.5, f"the most common value is kept with probability {kept:.2f}"


def test_both_reports_give_each_value_the_same_status(case):
    """The per-value table's status comes from one rule in the custodian's report and in the report inside the
    release, so both give every value the same words; a value with a pair that more than its rho1 of the records
    hold (Male in the downward configuration: 69 % against rho1 = 10 %) is "not covered by its bound" in both — the
    bound speaks of a belief up to rho1 — not "protected (verified)" in one and "NOT within bound" in the other.
    The custodian's report names those values, and its "closest to its bound" value is one the bound covers."""
    faces = case["faces"]
    custodian = faces.values.set_index("Value")["Status"].reindex(case["values"])
    public = pd.read_csv(faces.folder / "report-values.csv", encoding="utf-8-sig").set_index("Value")["Status"]
    assert list(public.reindex(case["values"])) == list(custodian)
    above = _protected(case) & (case["prior"] > case["rho1"] * (1 + 1e-9))  # shares counted here with pandas
    assert list(custodian.str.startswith("not covered by its bound: held by more than rho1 of the records")) == list(above)
    assert case["entry"]["guarantee"]["prior_above_rho1"] == [v for v, a in zip(case["values"], above) if a]
    said = re.search(r"^Not covered by their bound for the data's own frequencies \(held by more than their rho1 of the "
                     r"records\): (.+)\.$", "\n".join(faces.custodian), re.M)
    assert (said[1].split(", ") if said else []) == [v for v, a in zip(case["values"], above) if a]
    if case["name"] == "finegrain-downward":
        assert above[case["values"].index("Male")], "this configuration was chosen for a value above its rho1"
        closest = one(r"Closest to its bound: '(.+?)',", "\n".join(faces.custodian))[1]
        assert not above[case["values"].index(closest)]


def test_a_value_never_replaced_is_stated_without_an_epsilon_everywhere(slice_csv, tmp_path):
    """``--theta 5 --pairs 'Male,0.1,0.3'`` on sex: Female (31 %) carries no privacy concern, so fine-grain keeps
    Male in every record (retention 1) and the matrix has no finite epsilon-LDP (it used to end in "internal error:
    Out of range float values are not JSON compliant"). The release is written and verifies; release.json stores
    ``epsilon_ldp: null`` with the statement, and the CLI, its --json document, README, both reports and ``ppdp
    verify`` print that statement and no epsilon. What it says is checked against the published matrix and by the
    attacker over many keyed releases: a released value other than the never-replaced one never comes from a record
    holding it, and a released value the statement calls certain is always the person's true value."""
    from ppdp_desktop.core.data.checksums import write_checksums
    from tests.claims_helpers import run_cli

    pairs = tmp_path / "pairs.csv"
    pairs.write_text("Male,0.1,0.3\n", encoding="utf-8")
    args = ["--sensitive", "sex", "--method", "finegrain", "--theta", "5", "--pairs", pairs, "--seed", "7"]
    faces = anonymize_faces(slice_csv, tmp_path / "release", args)  # exit code 0 asserted there
    entry = faces.meta["sensitive"][0]
    guarantee, values = entry["guarantee"], [str(v) for v in entry["values"]]
    retention = np.asarray(entry["retention"], dtype=float)
    # exact: a retention of 1 leaves zeros in the matrix, so no finite epsilon bounds it
    matrix = retention_matrix(retention)
    assert (matrix == 0).any() and np.all(np.isfinite(matrix))
    assert guarantee["epsilon_ldp"] is None and faces.document["guarantee"]["epsilon_ldp"] is None
    statement = guarantee["no_ldp_bound"]
    assert faces.document["guarantee"]["no_ldp_bound"] == statement
    never = one(r"(?:^|: )((?:'[^']+'(?:, | and )?)+) (?:is|are) never replaced \((?:its|their) retention is 1\)",
                statement)[1]
    named = re.findall(r"'([^']+)'", never)
    assert named == [v for v, p in zip(values, retention) if p == 1.0] and named
    certain = re.findall(r"a released '([^']+)' is certainly the person's true value", statement)
    # the attacker: the release's own keyed sampler over many seeds, true value beside released value
    dataset, settings = cli_job(slice_csv, args)
    job = plan_job(dataset, settings)
    np.testing.assert_array_equal(job.plan.retention, retention)
    m = len(values)
    counts = np.zeros((m, m), dtype=np.int64)
    for applied in keyed_releases(job, dataset.frame, "sex", range(RELEASES // 4)):
        counts += joint_counts(*applied.codes["sex"], m)
    for value in named:  # "does not hold X unless X is the value shown"
        x = values.index(value)
        assert counts[np.arange(m) != x, x].sum() == 0 and counts[x, x] > 0
    for value in certain:  # "a released Y is certainly the person's true value"
        y = values.index(value)
        assert counts[y].sum() > 0 and counts[y, y] == counts[y].sum()
        assert posterior(matrix, np.maximum(counts.sum(axis=0), 1))[y, y] == 1.0
    assert certain == ([v for v in values if v not in named] if len(named) == m - 1 else [])
    # every face says it, none prints an epsilon or a non-number
    code, out, err = run_cli(["verify", faces.folder])
    assert code == 0, err
    texts = {**faces.all_text(), "verify": out + err}
    for face in ("cli", "readme", "report", "custodian report", "verify"):
        assert statement in flat(texts[face]), face
    for face, text in texts.items():
        assert not re.search(r"\b(?:inf|infinity|nan)\b", text, re.I), face
        assert not re.search(r"epsilon(?:-LDP equivalent| = | with epsilon = )\s*\d", text), face
    # a forged release that states a finite epsilon where none holds is refused
    meta = dict(faces.meta)
    meta["sensitive"][0]["guarantee"] = {k: v for k, v in guarantee.items() if k != "no_ldp_bound"} | {"epsilon_ldp": 2.0}
    forged = tmp_path / "forged"
    import shutil
    shutil.copytree(faces.folder, forged)
    (forged / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    for name in ("SHA256SUMS", "SIGNATURE"):
        (forged / name).unlink(missing_ok=True)
    write_checksums(forged)
    code, out, err = run_cli(["verify", forged])
    assert code != 0 and "states epsilon-LDP 2.0" in err and "no finite epsilon" in err, err


# --- what the published parameters reveal (issue 28): the attacker who knows every other record -------------------

#: the words every face uses for it (the window's description says it before any data is chosen)
COMPUTED_FROM_COUNTS = "the published parameters are computed from each value's count in the data and"
COVERS = "The bound covers attackers whose belief before the release is at most rho1"


def _theta_rule_values(case) -> np.ndarray:
    """The values whose pair the theta rule set (share below 1/theta, no pair of their own from a file), counted here
    from the records with pandas."""
    sensitivity = case["settings"].sensitivity
    return (case["prior"] < 1 / sensitivity.theta) & ~np.isin(case["values"], list(sensitivity.overrides))


def test_release_json_gives_a_counted_value_to_whoever_knows_every_other_record(case):
    """Every face: "the published parameters are computed from each value's count in the data and reveal it ...
    Someone who already knows every other record learns from them whether the last one holds such a value, and
    which. The bound covers attackers whose belief before the release is at most rho1". The attack, for every record
    of the slice as the target: from release.json alone (each rho1 times the published record count) and the other
    1,999 records' values, the value whose published count exceeds the others' by one. It finds every target whose
    value the theta rule protects, and says "none of them" for every other target: certainty, where the bound speaks
    of a belief of at most rho1 going to at most rho2."""
    faces, values = case["faces"], case["values"]
    true = pd.Index(values).get_indexer(case["dataset"].frame[case["attribute"]].astype(str))
    m = len(values)
    counts = np.bincount(true, minlength=m)
    published = case["rho1"] * faces.meta["n_records"]  # NaN where a value has no pair
    others = counts[None, :] - np.eye(m, dtype=np.int64)[true]  # each target's view of the rest, one row a target
    hit = np.abs(published[None, :] - others - 1.0) < 1e-6
    guess = np.where(hit.sum(axis=1) == 1, hit.argmax(axis=1), -1)
    ruled = _theta_rule_values(case)[true]
    assert ruled.mean() > 0.25, "the slice must hold targets whose value the rule protects"
    assert np.array_equal(guess[ruled], true[ruled])  # whether it holds such a value, and which: always right
    assert np.all(guess[~ruled] == -1)  # and that it holds none of them
    assert np.all(case["rho2"][true[ruled]] < 1.0)  # certainty is above every rho2 the bound promises
    statement = case["entry"]["guarantee"]["not_covered"]
    assert statement == faces.document["guarantee"]["not_covered"]
    assert COMPUTED_FROM_COUNTS + " reveal it" in statement and COVERS in statement
    assert ("Under the theta rule a value's rho1 is its exact share of the records (its count divided by the number of "
            "records), so release.json gives the exact count of every value whose pair the rule set") in statement
    assert "Someone who already knows every other record learns from them whether the last one holds such a value, " \
           "and which." in statement
    texts = faces.all_text()
    for face in ("cli", "readme", "report", "custodian report"):
        assert flat(statement) in flat(texts[face]), face
    first_page = one(r"^Sensitive values \(.+?\): .*$", "\n".join(faces.custodian), re.M)[0]
    assert statement in first_page
    window = get_method(faces.meta["method"]).summary
    assert COMPUTED_FROM_COUNTS[0].upper() + COMPUTED_FROM_COUNTS[1:] + " can reveal it" in window
    assert "someone who already knows every other record can learn the last one's value" in window


@pytest.mark.parametrize("case", ["finegrain", "finegrain-downward"], indirect=True)
def test_finegrain_retentions_alone_give_the_value_to_whoever_knows_every_other_record(case):
    """Fine-grain's statement: "fine-grain's retentions are computed from these counts". The attack without any
    rho1: for a target holding each value in turn, the attacker runs the published method (the theta rule, the file's
    pairs, the exact solver) on the other records plus each candidate value, and keeps the candidates whose
    retentions are release.json's: exactly one, the target's."""
    from ppdp_desktop.core.methods.perturbation.solver import solve_exact
    from ppdp_desktop.core.privacy.sensitivity import gamma_of

    assert "and fine-grain's retentions are computed from these counts" in case["entry"]["guarantee"]["not_covered"]
    values, sensitivity = case["values"], case["settings"].sensitivity
    m, n = len(values), case["faces"].meta["n_records"]
    counts = np.rint(case["prior"] * n)
    published = np.asarray(case["entry"]["retention"], dtype=float)
    override = pd.Index(values).isin(list(sensitivity.overrides))
    fixed = np.array([sensitivity.overrides.get(v, (np.nan, np.nan)) for v in values], dtype=float)
    for target in range(m):
        found = []
        for candidate in range(m):
            share = (counts - np.eye(m)[target] + np.eye(m)[candidate]) / n
            rho1 = np.where(override, fixed[:, 0], np.where(share < 1 / sensitivity.theta, share, np.nan))
            rho2 = np.where(override, fixed[:, 1], sensitivity.theta * rho1)
            retention = solve_exact(share, gamma_of(rho1, rho2))
            if np.allclose(retention, published, rtol=0, atol=1e-12):
                found.append(candidate)
        assert found == [target], (values[target], [values[c] for c in found])


def test_without_the_theta_rule_the_value_list_still_gives_a_value_no_one_else_holds(slice_csv, tmp_path):
    """With one pair for every value (``--rho1 0.02 --rho2 0.1``, uniform, native-country) no rho1 is a count, and
    the statement says what is still computed from the data: "release.json lists only the values the column holds
    ... Someone who already knows every other record learns from them the last one's value when no other record holds
    that value". The attack: each target whose value no other record of the slice holds (10 countries) is found by
    the one listed value none of the others holds. ``ppdp verify`` prints the statement, refuses an altered one and
    says it for an older release.json that states none."""
    from tests.claims_helpers import run_cli

    args = ["--sensitive", "native-country", "--method", "uniform", "--rho1", "0.02", "--rho2", "0.1", "--seed", "3"]
    faces = anonymize_faces(slice_csv, tmp_path / "release", args)
    entry = faces.meta["sensitive"][0]
    listed = [str(v) for v in entry["values"]]
    column = pd.read_csv(slice_csv, sep=";", dtype=str, keep_default_na=False)["native-country"]
    counts = column.value_counts().reindex(listed, fill_value=0).to_numpy()
    n = len(column)
    assert not np.any(np.abs(np.asarray([p["rho1"] for p in entry["guarantee"]["pairs"]]) * n - counts) < 1e-6)
    true = pd.Index(listed).get_indexer(column)
    others = counts[None, :] - np.eye(len(listed), dtype=np.int64)[true]
    unheld = others == 0  # listed, yet held by none of the records the attacker knows
    guess = np.where(unheld.sum(axis=1) == 1, unheld.argmax(axis=1), -1)
    lonely = counts[true] == 1
    assert lonely.sum() == 10 and np.array_equal(guess[lonely], true[lonely]) and np.all(guess[~lonely] == -1)
    statement = entry["guarantee"]["not_covered"]
    assert ("release.json lists only the values the column holds" in statement and COVERS in statement
            and "learns from them the last one's value when no other record holds that value" in statement)
    assert "exact share" not in statement and "fine-grain" not in statement
    code, out, err = run_cli(["verify", faces.folder])
    assert code == 0, err
    for face, text in {**faces.all_text(), "verify": out}.items():
        if face != "json":
            assert flat(statement) in flat(text), face

    def forged(change) -> tuple[int, str, str]:
        return verify_forged_guarantee(faces, tmp_path, change)

    code, out, err = forged(lambda g: g.update(not_covered="Nothing about the data can be learned from release.json."))
    assert code != 0 and "reveal about the data" in err, err
    code, out, err = forged(lambda g: g.pop("not_covered"))  # as an older release.json: verifies, and says it
    assert code == 0 and flat(statement) in flat(out), err


def test_first_page_says_which_values_the_bound_covers(case):
    """First page (both reports): "Sensitive values (X): protected, ..." only where the bound covers every value with a
    pair; else "K of N values with a bound are protected, ...; 'V' is held by more than its rho1 of the records, where
    the bound says nothing about it" (the downward configuration: Male, 69 % against rho1 = 10 %). Counted here."""
    from tests.claims_helpers import bound_verdict_parts, sensitive_verdicts

    protected = _protected(case)
    above = protected & (case["prior"] > case["rho1"] * (1 + 1e-9))
    outside = [v for v, a in zip(case["values"], above) if a]
    for level, sentence in sensitive_verdicts(case["faces"]):
        covered, total, named = bound_verdict_parts(sentence)
        assert level == "ok", sentence
        if not outside:
            assert covered is None, sentence
        else:
            assert (covered, total, named) == (int((protected & ~above).sum()), int(protected.sum()), outside)
    if case["name"] == "finegrain-downward":
        assert outside == ["Male"]


def test_first_page_says_no_value_is_covered_where_none_is(slice_csv, tmp_path):
    """``--theta 5 --pairs 'Male,0.1,0.3'`` on sex: Female (31 %) has no pair and Male, the only value with one, is
    held by 69 % of the records against its rho1 of 10 %: the bound says nothing about any value of this release
    (release.json lists Male in prior_above_rho1). The first page said "Sensitive values (sex): protected"; it says
    "no value is covered by its bound", amber, in both reports."""
    from tests.claims_helpers import bound_verdict_parts, sensitive_verdicts

    pairs = tmp_path / "pairs.csv"
    pairs.write_text("Male,0.1,0.3\n", encoding="utf-8")
    args = ["--sensitive", "sex", "--method", "finegrain", "--theta", "5", "--pairs", pairs, "--seed", "7"]
    faces = anonymize_faces(slice_csv, tmp_path / "release", args)
    column = pd.read_csv(slice_csv, sep=";", dtype=str, keep_default_na=False)["sex"]
    share = column.value_counts(normalize=True)
    pairs_ = {p["value"]: p["rho1"] for p in faces.meta["sensitive"][0]["guarantee"]["pairs"] if p["rho1"] is not None}
    outside = [v for v, rho1 in pairs_.items() if share[v] > rho1]
    assert outside == list(pairs_) == ["Male"] == faces.meta["sensitive"][0]["guarantee"]["prior_above_rho1"]
    for level, sentence in sensitive_verdicts(faces):
        assert level == "warning" and bound_verdict_parts(sentence) == (0, None, outside), sentence
        assert "protected, checked" not in sentence
