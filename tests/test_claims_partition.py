"""Claims battery, perturbation partitioning (issue 28): every privacy sentence the app prints about such a
release — the CLI summary and ``--json``, README.txt, release.json's guarantee and sub-tables, the reports, the
window's method description — checked on a slice of the real Adult data, sub-table by sub-table, by exact
computation from the published retentions and by a Monte-Carlo Bayes attacker over many keyed releases.

The attacker: someone who reads a person's released sub-table number and value, and whose prior is the share of
each value among the records (the prior the method's guarantee is stated for); within a sub-table, the guarantee
covers any prior up to that sub-table's rho1. An attacker with another prior learns from the sub-table number
itself which few values the person can hold: every face must say that this is not covered.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from ppdp_desktop.core.anonymize import anonymize, plan_job
from ppdp_desktop.core.methods import get_method
from tests.claims_helpers import (
    RELEASES,
    Z,
    adult_slice,
    anonymize_faces,
    cli_job,
    flat,
    keyed_releases,
    number,
    one,
    percent_of,
    posterior,
    retention_matrix,
    same_release,
    verify_forged_guarantee,
    worst_posterior,
)

N_RECORDS = 2000
ATTRIBUTE = "native-country"  # 36 values on the slice, one of them (United-States) far above rho1
ARGS = ["--method", "partition", "--sensitive", ATTRIBUTE, "--rho1", "0.02", "--rho2", "0.1", "--seed", "5"]
SUB_TABLE_CAVEAT = "sub-table"  # the word a face must use to say what the sub-table number itself reveals


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    folder = tmp_path_factory.mktemp("claims-partition")
    data = adult_slice(folder, N_RECORDS)
    faces = anonymize_faces(data, folder / "release", ARGS)
    dataset, settings = cli_job(data, ARGS)
    result = anonymize(dataset, settings)
    assert same_release(result, faces.table)  # the in-process run is the written release (same seed)
    entry = faces.meta["sensitive"][0]
    values = [str(v) for v in entry["values"]]
    true_codes, _ = result.applied.codes[ATTRIBUTE]
    sub = np.asarray(result.applied.columns[entry["subtable_column"]])
    subtables = entry["subtables"]
    members = [[values.index(str(v)) for v in s["values"]] for s in subtables]
    counts = np.bincount(true_codes, minlength=len(values)).astype(float)
    protected = counts <= 0.02 * counts.sum()  # SA': the values the requirement protects (f/n <= rho1)
    return dict(faces=faces, dataset=dataset, settings=settings, result=result, entry=entry, values=values,
                true=true_codes, sub=sub, subtables=subtables, members=members, protected=protected,
                rho1=float(entry["guarantee"]["rho1"]), rho2=float(entry["guarantee"]["rho2"]))


def _within(case, s: int) -> np.ndarray:
    """Sub-table ``s``'s original counts of its own values (its members' order), counted from the records."""
    codes = case["true"][case["sub"] == s]
    return np.array([np.sum(codes == v) for v in case["members"][s]], dtype=float)


def test_the_configuration_splits_values_over_several_subtables(case):
    """The slice is chosen so that the sentences meet a real partition: several sub-tables, values split."""
    assert len(case["subtables"]) >= 3
    assert sum(len(m) for m in case["members"]) > len(set(v for m in case["members"] for v in m))


def test_each_subtable_holds_only_its_values_and_its_stated_count(case):
    """README: "a record's sub-table tells which few values it can hold"; release.json: each sub-table's values and
    record count. Every record of a sub-table holds (and is released as) one of its values; counts are exact."""
    table = case["faces"].table
    column = case["entry"]["subtable_column"]
    for s, sub in enumerate(case["subtables"]):
        mine = case["sub"] == s
        assert int(mine.sum()) == sub["n_records"] == int((table[column] == str(sub["id"])).sum())
        assert np.isin(case["true"][mine], case["members"][s]).all()
        released = table.loc[table[column] == str(sub["id"]), ATTRIBUTE]
        assert set(released) <= {str(v) for v in sub["values"]}
    assert "a record's sub-table tells which few values it can hold" in flat(case["faces"].readme)


def test_upward_bound_holds_in_every_subtable(case):
    """README: "Upward (rho1, rho2)-privacy within every sub-table (rho2 = R): whatever released value you see, your
    belief that a record holds a protected value cannot rise above rho2 if it was at most the sub-table's rho1
    before." Exact worst case over every prior up to each sub-table's rho1, from its published retention; its rho1
    is the largest share of a protected value in it, counted from the records, and its gamma is Eq. 9's."""
    readme = flat(case["faces"].readme)
    found = one(r"Upward \(rho1, rho2\)-privacy within every sub-table \(rho2 = ([\d.]+)\): whatever released value "
                r"you see, your belief that a record holds a protected value cannot rise above rho2 if it was at most "
                r"the sub-table's rho1 before\.", readme)
    rho2 = float(found[1])
    assert rho2 == case["rho2"]
    for s, sub in enumerate(case["subtables"]):
        within = _within(case, s)
        protected = case["protected"][case["members"][s]]
        rho1_s = float(np.max(np.where(protected, within, 0)) / within.sum())
        assert sub["rho1"] == pytest.approx(rho1_s, rel=1e-12) and rho1_s < rho2
        assert sub["gamma"] == pytest.approx(rho2 * (1 - rho1_s) / (rho1_s * (1 - rho2)), rel=1e-12)
        matrix = retention_matrix(np.full(len(within), sub["retention"]))
        worst = worst_posterior(matrix, np.where(protected, rho1_s, np.nan))
        assert np.all(worst[protected] <= rho2 * (1 + 1e-9)), (s, worst)


#: what every face says after the epsilon: it holds within each sub-table, not for the column (the words are checked
#: against the exact computation below, not taken on trust)
WITHIN = (r" within each sub-table only \((each record's sub-table is published and tells which few values it can hold), "
          r"so for the column as a whole no epsilon-local differential privacy bound holds\)")


def test_epsilon_ldp_is_the_largest_subtables_and_holds_within_each_only(case):
    """CLI, --json, README, release.json, both reports (the guarantee's line and its headline) and ``ppdp verify``:
    the largest epsilon-LDP equivalent over the sub-tables, "within each sub-table only (each record's sub-table is
    published and tells which few values it can hold, so for the column as a whole no epsilon-local differential
    privacy bound holds)". Exact: within a sub-table, ln of its matrix's largest ratio; for the column, the channel
    from a record's value to what is published of it, (sub-table, released value) = Pr[dealt to s | value] x P_s,
    counted from the records: some published pair has probability 0 from one value and not from another, so no
    finite epsilon bounds it."""
    from tests.claims_helpers import ldp_epsilon, run_cli

    exact = max(np.log((s["retention"] + (1 - s["retention"]) / len(s["values"])) / ((1 - s["retention"]) / len(s["values"])))
                for s in case["subtables"])
    m = len(case["values"])
    channel = np.zeros((len(case["subtables"]) * m, m))  # rows (sub-table, released value), columns the true value
    for s, (sub, idx) in enumerate(zip(case["subtables"], case["members"])):
        dealt = np.array([np.mean(case["sub"][case["true"] == x] == s) if np.any(case["true"] == x) else 0.0
                          for x in range(m)])
        block = np.zeros((m, m))
        block[np.ix_(idx, idx)] = retention_matrix(np.full(len(idx), sub["retention"]))
        channel[s * m:(s + 1) * m] = block * dealt[None, :]
    held = np.bincount(case["true"], minlength=m) > 0
    with np.errstate(divide="ignore"):
        assert not np.isfinite(ldp_epsilon(channel[channel[:, held].sum(axis=1) > 0][:, held]))
    faces = case["faces"]
    code, out, err = run_cli(["verify", faces.folder])
    assert code == 0, err
    said = [
        one(r"epsilon-LDP equivalent ([\d.]+)" + WITHIN + "$", "\n".join(faces.cli), re.M),
        one(r"Largest epsilon-local differential privacy equivalent: ([\d.]+)" + WITHIN + r"\.", flat(faces.readme)),
        one(r"^Equivalent to epsilon-local differential privacy with epsilon = ([\d.]+)" + WITHIN + r"\.$",
            "\n".join(faces.custodian), re.M),
        one(r"^Equivalent to epsilon-local differential privacy with epsilon = ([\d.]+)" + WITHIN + r"\.$",
            "\n".join(faces.report), re.M),
        one(r"; equivalent to epsilon-LDP with epsilon = ([\d.]+)" + WITHIN + r"\.$", "\n".join(faces.custodian), re.M),
        one(r"; equivalent to epsilon-LDP with epsilon = ([\d.]+)" + WITHIN + r"\.$", "\n".join(faces.report), re.M),
        one(r"largest epsilon-LDP equivalent ([\d.]+)" + WITHIN + r"\. Not covered: the published parameters", out),
    ]
    for found in said:
        assert float(found[1]) == pytest.approx(exact, abs=5e-4)
    for guarantee in (faces.document["guarantee"], case["entry"]["guarantee"]):
        assert guarantee["epsilon_ldp"] == pytest.approx(exact, rel=1e-12)
        assert re.fullmatch(WITHIN[1:], guarantee["epsilon_ldp_scope"])
    # no face states the epsilon without it
    for face, text in faces.all_text().items():
        for stated in re.finditer(r"epsilon(?:-LDP equivalent| = |-local differential privacy equivalent: )\s*([\d.]+)", text):
            assert text[stated.end():].startswith(" within each sub-table only"), (face, text[stated.start():stated.end() + 80])


@pytest.fixture(scope="module")
def attacker(case):
    """Per sub-table, ``counts[s][y][x]`` over RELEASES keyed releases (the release's own dealing and sampler)."""
    job = plan_job(case["dataset"], case["settings"])
    m = len(case["values"])
    counts = np.zeros((len(case["subtables"]), m, m), dtype=np.int64)
    column = case["entry"]["subtable_column"]
    for applied in keyed_releases(job, case["dataset"].frame, ATTRIBUTE, range(RELEASES)):
        true_codes, released = applied.codes[ATTRIBUTE]
        sub = np.asarray(applied.columns[column], dtype=np.int64)
        flat_index = (sub * m + released.astype(np.int64)) * m + true_codes.astype(np.int64)
        counts += np.bincount(flat_index, minlength=counts.size).reshape(counts.shape)
    return counts


def test_bayes_attacker_within_each_subtable(case, attacker):
    """With the data's prior, the attacker who reads the sub-table and the value believes Bayes' rule with the
    sub-table's matrix and its own shares: the keyed releases' empirical posterior matches it within sampling
    error, and for a protected value it never exceeds rho2 (the first page: "Someone who was at most rho1 sure
    ... cannot become more than rho2 sure by reading the release")."""
    rho2 = case["rho2"]
    for s, sub in enumerate(case["subtables"]):
        idx = case["members"][s]
        within = _within(case, s)
        matrix = retention_matrix(np.full(len(idx), sub["retention"]))
        exact = posterior(matrix, within / within.sum())
        observed = attacker[s][np.ix_(idx, idx)]
        seen = observed.sum(axis=1, keepdims=True)
        share = observed / np.maximum(seen, 1)
        se = np.sqrt(np.maximum(exact * (1 - exact), 1e-12) / np.maximum(seen, 1))
        assert np.all(np.abs(share - exact)[seen[:, 0] > 0] <= Z * se[seen[:, 0] > 0]), s
        protected = case["protected"][idx]
        assert np.all(exact[:, protected] <= rho2 * (1 + 1e-9))
        assert np.all((share - Z * se)[:, protected] <= rho2)
        assert np.all(np.diag(exact) < 1.0)  # "no one can tell which is which": no released value is surely kept


def test_the_subtable_number_is_not_covered_and_every_face_says_so(case):
    """An attacker whose prior is not the data's shares: at most rho1 on a protected value x, the rest on a value
    absent from x's sub-table. The sub-table number alone makes them sure of x. Every face that states the bound
    names the sub-table as not covered."""
    rho1, rho2 = case["rho1"], case["rho2"]
    s = next(s for s, idx in enumerate(case["members"])
             if any(case["protected"][idx]) and len(idx) < len(case["values"]))
    x = next(v for v in case["members"][s] if case["protected"][v])
    v = next(v for v in range(len(case["values"])) if v not in case["members"][s])
    prior = {x: rho1, v: 1 - rho1}
    dealt = {c: np.mean(case["sub"][case["true"] == c] == s) for c in prior}  # Pr[sub-table s | value]
    after = prior[x] * dealt[x] / sum(prior[c] * dealt[c] for c in prior)
    assert after == 1.0 > rho2
    faces = case["faces"]
    verdict = one(r"Someone who was at most (.+?) sure that a given person has a protected value cannot become more "
                  r"than (.+?) sure by reading the release\.(.*)$", "\n".join(faces.custodian), re.M)
    assert (verdict[1], verdict[2]) == (percent_of(rho1), percent_of(rho2))
    assert SUB_TABLE_CAVEAT in verdict[3]
    assert "a record's sub-table tells which few values it can hold" in flat(faces.readme)
    for text in ("\n".join(faces.cli), faces.document["guarantee"]["not_covered"], "\n".join(faces.custodian),
                 "\n".join(faces.report), get_method("partition").summary):
        assert re.search(r"sub-table (id )?(reveals|tells) (that its value is one of|which few values)", text), text


def test_downward_breaches_are_not_said_to_be_reported(case):
    """Partitioning computes no downward breach, so no face may say they "are reported" (which reads as: none
    exist); they are not covered. The per-sub-table check that would find them is here: within a sub-table, a value
    whose share is at least rho2 and whose posterior can fall to the sub-table's rho1 or below. If this slice has
    one, a face listing downward breaches must name it."""
    rho2 = case["rho2"]
    found = set()
    for s, sub in enumerate(case["subtables"]):
        within = _within(case, s)
        share = within / within.sum()
        exact = posterior(retention_matrix(np.full(len(within), sub["retention"])), share)
        breach = (share >= rho2) & (exact.min(axis=0) <= sub["rho1"])
        found |= {case["values"][case["members"][s][j]] for j in np.flatnonzero(breach)}
    for lines in (case["faces"].custodian, case["faces"].report):
        text = "\n".join(lines)
        assert "Downward breaches (belief in a common value falling) are reported" not in text
        assert "Downward breaches (belief in a common value falling) are not covered." in text
        listed = re.search(r"Downward breaches \(not covered by the guarantee; .*?\): (.+?)\.$", text, re.M)
        assert set(listed[1].split(", ")) == found if listed else True
    assert "Not covered: downward" in flat(case["faces"].readme)


def test_subtable_counts_finding(case):
    """Custodian's report: what the sub-table numbers tell exactly. Counted here: the records each sub-table holds,
    the records holding one of its values, and the values whose records are spread over several sub-tables."""
    text = "\n".join(case["faces"].custodian)
    holders = [int(np.isin(case["true"], idx).sum()) for idx in case["members"]]
    held = [int(np.sum(case["sub"] == s)) for s in range(len(case["subtables"]))]
    spread = int(np.sum(np.bincount([v for idx in case["members"] for v in idx]) > 1))
    exact = re.search(r"the number of records in each of the (\d+) sub-tables .*? is the true number of records "
                      r"holding one of its values", text)
    if exact:
        assert holders == held
    found = one(r"Each record carries the number of its sub-table, and release.json gives the true number of records "
                r"in each of the (\d+) sub-tables \(.*?\); every one of them holds one of its sub-table's values\. The "
                r"records of (\d+) [\w-]+ values? (?:are|is) spread over several sub-tables, so a sub-table's count is a "
                r"lower bound on the records holding its values, not their number\.", text)
    assert int(found[1]) == len(held) and int(found[2]) == spread > 0
    assert all(h >= n for h, n in zip(holders, held)) and any(h > n for h, n in zip(holders, held))
    assert [s["n_records"] for s in case["subtables"]] == held


def test_cli_plan_lines(case):
    """CLI: "split into K sub-tables of m1, m2, ... values" is release.json's partition."""
    found = one(rf"sensitive: {ATTRIBUTE} \((\d+) values\) split into (\d+) sub-tables of ([\d, …]+) values",
                "\n".join(case["faces"].cli))
    assert int(found[1]) == len(case["values"]) and int(found[2]) == len(case["subtables"])
    assert [number(x) for x in found[3].rstrip("…").split(", ")] == [len(m) for m in case["members"]][:12]


def test_window_description(case):
    """The window: "Protects each value held by at most rho1 of the records against raising belief above rho2".
    Those are exactly the values release.json's sub-tables protect (a sub-table's rho1 is the largest share of one
    of them); a value held by more records is believed above rho2 before any release is read."""
    summary = get_method("partition").summary
    found = one(r"Protects each value held by at most rho1 of the records against raising belief above rho2;", summary)
    assert found
    rho1, rho2 = case["rho1"], case["rho2"]
    counts = np.bincount(case["true"], minlength=len(case["values"]))
    share = counts / counts.sum()
    assert np.array_equal(case["protected"], share <= rho1)
    for s, sub in enumerate(case["subtables"]):
        within = _within(case, s)
        protected = case["protected"][case["members"][s]]
        assert sub["rho1"] == pytest.approx(np.max(np.where(protected, within, 0)) / within.sum(), rel=1e-12)
    assert np.max(share[~case["protected"]]) > rho2  # United-States: not covered, and could not be


def test_both_reports_give_each_value_the_same_status_and_the_first_page_counts_them(case):
    """The per-value tables of the custodian's report and of the report inside the release give every value its
    status by one rule: a value held by more than rho1 of the records (United-States, 92 % against rho1 = 2 %) is
    "not covered by its bound: held by more than rho1 of the records" in both (it was "no privacy concern" in one
    and "protected if held by at most rho1 ..." in the other), every other value "protected (verified)";
    release.json lists those values (prior_above_rho1). The first page of both reports counts them: "K of N values
    with a bound are protected, ...; 'United-States' is held by more than its rho1 of the records, where the bound
    says nothing about it". Shares counted here from the records."""
    import pandas as pd

    from tests.claims_helpers import bound_verdict_parts, sensitive_verdicts

    faces, values = case["faces"], case["values"]
    above = ~case["protected"]
    outside = [v for v, a in zip(values, above) if a]
    assert outside == ["United-States"] == case["entry"]["guarantee"]["prior_above_rho1"]
    custodian = faces.values.set_index("Value")["Status"].reindex(values)
    public = pd.read_csv(faces.folder / "report-values.csv", encoding="utf-8-sig").set_index("Value")["Status"]
    assert list(public.reindex(values)) == list(custodian)
    assert np.array_equal(custodian == "not covered by its bound: held by more than rho1 of the records", above)
    assert np.array_equal(custodian == "protected (verified)", ~above)
    for level, sentence in sensitive_verdicts(faces):
        assert level == "ok" and bound_verdict_parts(sentence) == (int((~above).sum()), len(values), outside), sentence


def test_a_subtable_that_keeps_every_value_is_stated_without_an_epsilon_everywhere(tmp_path, monkeypatch):
    """A sub-table with no protected value gets retention 1 (nothing to protect in it, so nothing is replaced); its
    matrix has no finite epsilon-LDP, and ``float(max(epsilons))`` put an infinity in release.json, which JSON cannot
    hold. The planner does not make such a sub-table on Adult, so the partition is made by hand from the planner's own
    (race, rho1 = 0.05: the protected values with half of White's records; Black and the other half of White alone).
    The release is written and verifies; release.json states ``epsilon_ldp: null`` and, in ``no_ldp_bound``, that
    the sub-table keeps every record's value, so a released value in it is the person's true value: checked on the
    published retention and by the release's own sampler over 50 keyed releases. Every face prints the statement
    and no epsilon, infinity or NaN."""
    import dataclasses

    from ppdp_desktop.core.methods.partition import method as partition_method
    from ppdp_desktop.core.methods.partition.blocks import canonical_counts
    from ppdp_desktop.core.methods.partition.subtables import eps_of, gamma_of, partition_domain
    from tests.claims_helpers import ldp_epsilon, run_cli

    def by_hand(counts, rho1, rho2, delta=0.05):
        planned = partition_domain(counts, rho1, rho2, delta)
        c = np.asarray(counts, dtype=np.int64)
        common = np.flatnonzero(~planned.sa_prime)
        assert len(common) >= 2
        first, second = np.where(planned.sa_prime, c, 0), np.where(planned.sa_prime, 0, c)
        big = common[np.argmax(c[common])]
        first[big], second[big] = c[big] // 2, c[big] - c[big] // 2
        table = canonical_counts(np.vstack([first, second]))
        size = np.array([first.sum(), second.sum()])
        rho1_i = np.array([first[planned.sa_prime].max() / size[0], 0.0])
        gamma_i = gamma_of(rho1_i, rho2)
        return dataclasses.replace(planned, table_counts=table, subtables=[[0], [1]], rho1_i=rho1_i, gamma_i=gamma_i,
                                   eps_i=eps_of(size, np.diff(table.indptr), gamma_i, planned.a))

    monkeypatch.setattr(partition_method, "partition_domain", by_hand)
    data = adult_slice(tmp_path, N_RECORDS)
    args = ["--method", "partition", "--sensitive", "race", "--rho1", "0.05", "--rho2", "0.3", "--seed", "5"]
    faces = anonymize_faces(data, tmp_path / "release", args)  # exit 0 asserted there
    entry = faces.meta["sensitive"][0]
    guarantee = entry["guarantee"]
    kept = [s for s in entry["subtables"] if s["retention"] == 1.0]
    assert len(kept) == 1 and len(kept[0]["values"]) >= 2 and not kept[0]["rho1"]
    with np.errstate(divide="ignore"):
        assert not np.isfinite(ldp_epsilon(retention_matrix(np.full(len(kept[0]["values"]), 1.0))))
    assert guarantee["epsilon_ldp"] is None and faces.document["guarantee"]["epsilon_ldp"] is None
    assert "epsilon_ldp_scope" not in guarantee
    statement = guarantee["no_ldp_bound"]
    assert faces.document["guarantee"]["no_ldp_bound"] == statement
    found = one(r"sub-table (\d+) keeps every record's value \(retention 1\), so anyone who sees the released value of "
                r"a record in it knows for certain that it is the person's true value\.", statement)
    assert found[1] == str(kept[0]["id"])
    # the attacker: the release's own dealing and sampler; every record of that sub-table shows its true value
    dataset, settings = cli_job(data, args)
    job = plan_job(dataset, settings)
    column = entry["subtable_column"]
    shown = 0
    for applied in keyed_releases(job, dataset.frame, "race", range(RELEASES // 8)):
        true_codes, released = applied.codes["race"]
        mine = np.asarray(applied.columns[column]) == kept[0]["id"]
        assert np.array_equal(released[mine], true_codes[mine])
        shown += int(mine.sum())
    assert shown > 0
    code, out, err = run_cli(["verify", faces.folder])
    assert code == 0, err
    texts = {**faces.all_text(), "verify": out + err}
    for face in ("cli", "readme", "report", "custodian report", "verify"):
        assert statement in flat(texts[face]), face
    for face, text in texts.items():
        assert not re.search(r"\b(?:inf|infinity|nan)\b", text, re.I), face
        assert not re.search(r"epsilon(?:-LDP equivalent| = | with epsilon = |[^.]*equivalent: )\s*\d", text), face


#: the statement every face prints about what the sub-tables' parameters reveal (checked word for word below)
PLANNED_AGAIN = ("Someone who already knows every other record can learn from them the last one's value, by planning "
                 "the split again with each value it could hold and keeping those that give the published sub-tables "
                 "(a value no other record holds is the last one's).")
COVERS = ("The bound covers attackers whose belief before the release is at most the sub-table's rho1, about what a "
          "person's released value tells them; it takes the published parameters as given.")


def _published_subtables(subtables: list[dict]) -> list[tuple]:
    """What release.json says of each sub-table that the planner decides: its values, records and rho1."""
    return [(sorted(str(v) for v in s["values"]), int(s["n_records"]), float(s["rho1"])) for s in subtables]


def _planned_subtables(counts: np.ndarray, values: list[str], rho1: float, rho2: float) -> list[tuple]:
    """The same, planned by the published method (the app's own planner, as anyone can run it) from ``counts``."""
    from ppdp_desktop.core.methods.partition.blocks import canonical_counts
    from ppdp_desktop.core.methods.partition.subtables import partition_domain

    planned = partition_domain(counts, rho1, rho2)
    table = canonical_counts(planned.table_counts)
    return [(sorted(values[j] for j in table.indices[table.indptr[s]:table.indptr[s + 1]]),
             int(table.data[table.indptr[s]:table.indptr[s + 1]].sum()), float(planned.rho1_i[s]))
            for s in range(table.shape[0])]


def test_release_json_gives_the_last_record_to_whoever_knows_every_other_record(case):
    """Every face: "the published parameters are computed from each value's count in the data and reveal it.
    release.json gives each sub-table's exact number of records ... and its rho1, the count of its most frequent
    protected value divided by that number ... Someone who already knows every other record can learn from them the
    last one's value, by planning the split again with each value it could hold and keeping those that give the
    published sub-tables". The counts: each sub-table's records and rho1 x records, counted here from the records.
    The attack, from release.json alone and the other 1,999 records' values: for a target holding each of the 8 most
    common values in turn (1,920 of the 2,000 records), plan the split with the app's planner on the other records
    plus each of the 36 listed values, and keep the candidates whose sub-tables (values, records, rho1) are
    release.json's. The true value is always kept; for most records it is the only one (run on all 36 values once:
    1,965 of the 2,000 records), certainty where the bound speaks of a belief of at most rho1 going to at most rho2.
    A value no other record holds is found from the list alone."""
    faces, entry, values = case["faces"], case["entry"], case["values"]
    m = len(values)
    counts = np.bincount(case["true"], minlength=m)
    for s, sub in enumerate(case["subtables"]):  # the counts release.json gives, exactly
        within = _within(case, s)
        top = np.max(np.where(case["protected"][case["members"][s]], within, 0))
        assert sub["n_records"] == within.sum() and round(sub["rho1"] * sub["n_records"]) == top > 0
    published = _published_subtables(case["subtables"])
    assert _planned_subtables(counts, values, case["rho1"], case["rho2"]) == published  # the plan is the counts'
    targets = np.argsort(-counts, kind="stable")[:8]
    found = {}
    for t in targets:
        others = counts - np.eye(m, dtype=np.int64)[t]  # what the attacker knows: every record but the target
        found[t] = [c for c in range(m) if _planned_subtables(others + np.eye(m, dtype=np.int64)[c], values,
                                                              case["rho1"], case["rho2"]) == published]
        assert t in found[t], values[t]
    exact = sum(int(counts[t]) for t in targets if found[t] == [t])
    assert exact > counts.sum() / 2, {values[t]: [values[c] for c in found[t]] for t in targets}
    assert found[targets[0]] == [targets[0]]  # United-States, 92 % of the records: the planner gives it away
    true = case["true"]  # every record as the target: a listed value none of the other records holds is its
    unheld = (counts[None, :] - np.eye(m, dtype=np.int64)[true]) == 0
    guess = np.where(unheld.sum(axis=1) == 1, unheld.argmax(axis=1), -1)
    lonely = counts[true] == 1
    assert lonely.sum() >= 5 and np.array_equal(guess[lonely], true[lonely]) and np.all(guess[~lonely] == -1)
    statement = entry["guarantee"]["not_covered"]
    assert statement == faces.document["guarantee"]["not_covered"]
    assert ("Not covered: the published parameters are computed from each value's count in the data and reveal it. "
            "release.json gives each sub-table's exact number of records (as the sub-table column does) and its rho1, "
            "the count of its most frequent protected value divided by that number, so that count too; it lists only "
            "the values the column holds; and the split into sub-tables is planned from every value's count.") \
        in statement
    assert PLANNED_AGAIN in statement and COVERS in statement
    from tests.claims_helpers import run_cli

    code, out, err = run_cli(["verify", faces.folder])
    assert code == 0, err
    parameters = statement[statement.index("Not covered: the published"):]
    for face, text in {**faces.all_text(), "verify": out}.items():
        assert flat(parameters) in flat(text), face
    first_page = one(r"^Sensitive values \(.+?\): .*$", "\n".join(faces.custodian), re.M)[0]
    assert parameters in first_page
    window = get_method("partition").summary
    assert ("The published sub-tables (their values, record counts and rho1) are computed from each value's count in "
            "the data and can reveal it: someone who already knows every other record can learn the last one's value "
            "from them") in window


def test_verify_accepts_only_the_true_statement_of_what_the_subtables_reveal(case, tmp_path):
    """``ppdp verify`` refuses a release.json whose ``not_covered`` says anything else (a forger's reassurance, or
    the statement with its last sentences cut); an older release.json, which stated only the downward breaches and
    the sub-table number, or nothing, still verifies, and verify prints what the parameters reveal."""

    faces = case["faces"]
    statement = case["entry"]["guarantee"]["not_covered"]
    parameters = statement[statement.index("Not covered: the published"):]

    def forged(change) -> tuple[int, str, str]:
        return verify_forged_guarantee(faces, tmp_path, change)

    for lie in ("Nothing about the data can be learned from release.json.", statement[:statement.index(" Someone")]):
        code, out, err = forged(lambda g, lie=lie: g.update(not_covered=lie))
        assert code != 0 and "reveal about the data" in err, err
    older = statement[:statement.index(" Not covered: the published")]
    assert older.startswith("Not covered: downward breaches") and older.endswith("that sub-table's values.")
    for change in (lambda g: g.update(not_covered=older), lambda g: g.pop("not_covered")):
        code, out, err = forged(change)
        assert code == 0 and flat(parameters) in flat(out), err
