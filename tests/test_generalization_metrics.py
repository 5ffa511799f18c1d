"""Utility metrics, weights, level bounds, tie-breaking and the greedy search of the generalization (issue 33).

Golden values come from the independent brute force of :mod:`tests.generalization_brute` (every node of the
lattice, grouped with pandas, scored from the metrics' definitions), fixed here as literals.
"""
from __future__ import annotations

import pandas as pd
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.generalization import Hierarchy, lattice, optimal_generalization
from ppdp_desktop.core.generalization.metrics import Utility
from tests.conftest import shared_adult
from tests.generalization_brute import best

QUASI = ["age", "sex", "race", "marital-status", "education"]
METRICS = ["precision", "loss", "entropy", "discernibility", "aecs"]

# (k, suppression, metric) -> (levels of QUASI, suppressed records, metric value), adult.csv rows 0-1999
GOLDEN = {
    (5, 0.05, "precision"): ((4, 0, 0, 1, 1), 57, 0.38471666666666665),
    (5, 0.05, "loss"): ((3, 0, 0, 2, 1), 98, 0.31197636363636366),
    (5, 0.05, "entropy"): ((0, 1, 1, 1, 3), 61, 1.1209315707893017),
    (5, 0.05, "discernibility"): ((0, 1, 1, 2, 3), 28, 146070.0),
    (5, 0.05, "aecs"): ((0, 0, 1, 2, 3), 67, 21.27659574468085),
    (10, 0.0, "precision"): ((4, 0, 1, 2, 1), 0, 0.6666666666666666),
    (10, 0.0, "loss"): ((4, 0, 1, 2, 1), 0, 0.6381933333333333),
    (10, 0.0, "entropy"): ((4, 1, 1, 1, 1), 0, 1.8430054226379986),
    (10, 0.0, "discernibility"): ((4, 1, 1, 1, 1), 0, 721158.0),
    (10, 0.0, "aecs"): ((4, 1, 1, 1, 1), 0, 200.0),
}


@pytest.fixture(scope="module")
def sample():
    adult = pd.read_csv(shared_adult(), sep=";", dtype=str)
    frame = adult.iloc[:2000][QUASI]
    files = {a: shared_adult(f"adult_hierarchy_{a}.csv") for a in QUASI}
    hierarchies = {a: Hierarchy.from_arx_csv(files[a], a, frame[a]) for a in QUASI}
    return frame, files, hierarchies


def figures(g):
    return tuple(g.levels[a] for a in QUASI), g.suppressed, g.metric_value


def test_brute_force_gives_the_golden_values(sample):
    frame, files, _ = sample
    found = best(frame, files, [(5, 0.05), (10, 0.0)], METRICS)
    for key, (levels, suppressed, value) in GOLDEN.items():
        assert found[key][:2] == (levels, suppressed), key
        assert found[key][2] == pytest.approx(value, rel=1e-12), key


@pytest.mark.parametrize("key", list(GOLDEN))
def test_search_finds_the_golden_node_suppression_and_value(sample, key):
    frame, _, hierarchies = sample
    k, suppression, metric = key
    g = optimal_generalization(frame, hierarchies, k, suppression, utility=Utility(metric))
    levels, suppressed, value = GOLDEN[key]
    assert figures(g)[:2] == (levels, suppressed)
    assert g.metric_value == pytest.approx(value, rel=1e-12)
    assert g.proven_optimal


def test_a_weight_or_a_max_level_on_age_keeps_age_and_says_what_it_cost(sample):
    frame, files, hierarchies = sample
    plain = optimal_generalization(frame, hierarchies, 5, 0.05)
    assert plain.levels["age"] == 4  # precision alone releases age as '*'
    weighted = optimal_generalization(frame, hierarchies, 5, 0.05, utility=Utility(weights={"age": 5}))
    bounded = optimal_generalization(frame, hierarchies, 5, 0.05, utility=Utility(max_levels={"age": 2}))
    brute = best(frame, files, [(5, 0.05)], ["precision"], weights={"age": 5})[(5, 0.05, "precision")]
    assert figures(weighted)[:2] == brute[:2] == ((0, 0, 1, 2, 3), 67)
    assert weighted.metric_value == pytest.approx(brute[2], rel=1e-12)
    brute = best(frame, files, [(5, 0.05)], ["precision"], max_levels={"age": 2})[(5, 0.05, "precision")]
    assert figures(bounded)[:2] == brute[:2] == ((2, 0, 0, 1, 3), 85)
    assert bounded.levels["age"] == 2 and bounded.cost is not None
    assert bounded.cost.levels == plain.levels and bounded.cost.value == pytest.approx(plain.metric_value)
    text = "\n".join(bounded.lines())
    assert "Levels allowed: age 0-2." in text
    assert f"against {plain.metric_value:.4g} at the best node without them (levels age 4, sex 0" in text
    assert bounded.to_json()["constraint_cost"]["levels"]["age"] == 4


def test_ties_go_to_discernibility_not_to_column_order():
    # nodes (a 1, b 0) and (a 0, b 1) have the same precision and suppress nothing; generalizing a leaves four
    # classes of 2 (discernibility 16), generalizing b classes of 6 and 2 (40): a is generalized
    frame = pd.DataFrame({"a": list("pppppp") + list("qq"), "b": list("xyzwxyzw")})
    hierarchies = {c: Hierarchy.from_rows(c, [[v] for v in sorted(set(frame[c]))]) for c in "ab"}
    g = optimal_generalization(frame, hierarchies, 2, 0.0)
    assert (g.levels, g.suppressed) == ({"a": 1, "b": 0}, 0)


def test_the_greedy_search_gives_a_feasible_node_not_proven_optimal(sample, monkeypatch):
    frame, _, hierarchies = sample
    exact = optimal_generalization(frame, hierarchies, 5, 0.05, utility=Utility("loss"))
    greedy = optimal_generalization(frame, hierarchies, 5, 0.05, utility=Utility("loss"), search="heuristic")
    assert not greedy.proven_optimal and greedy.suppressed <= 100
    assert greedy.metric_value >= exact.metric_value
    assert greedy.n_nodes_checked < 240
    assert "not proven to be the best one" in "\n".join(greedy.lines())
    assert greedy.to_json()["proven_optimal"] is False
    monkeypatch.setattr(lattice, "MAX_NODES", 100)  # a lattice over the limit is searched greedily, not refused
    auto = optimal_generalization(frame, hierarchies, 5, 0.05, utility=Utility("loss"))
    assert not auto.proven_optimal and figures(auto) == figures(greedy)


@pytest.mark.parametrize("utility, words", [
    (Utility("utility"), "Unknown utility metric 'utility'"),
    (Utility(weights={"zip": 2}), "--weight names 'zip', which is not a quasi-identifier"),
    (Utility(weights={"age": -1}), "The weight of 'age' must be a finite number >= 0"),
    (Utility(min_levels={"age": 3}, max_levels={"age": 2}), "The min-level of 'age' (3) is above its max-level (2)"),
    (Utility(max_levels={"age": 9}), "The max-level of 'age' must be a whole number from 0 to its hierarchy's height 4"),
    (Utility(max_levels={a: 0 for a in QUASI}), "k = 5 is impossible within the highest levels allowed (--max-level)"),
])
def test_bad_utilities_are_refused_by_name(sample, utility, words):
    frame, _, hierarchies = sample
    with pytest.raises(ParameterError) as err:
        optimal_generalization(frame, hierarchies, 5, 0.05, utility=utility)
    assert words in str(err.value)


def _cli_args(data, out, *extra):
    adult = shared_adult().parent
    args = ["anonymize", data, "--out", out, "--method", "uniform", "--sensitive", "occupation", "--theta", "3",
            "--quasi", ",".join(QUASI), "--k-anonymity", "5", "--seed", "2"]
    for a in QUASI:
        if a != "sex":
            args += ["--hierarchy", f"{a}={adult / f'adult_hierarchy_{a}.csv'}"]
    return [*args, *extra]


def test_cli_max_level_keeps_age_in_the_release_and_says_the_cost(tmp_path):
    from tests.claims_helpers import adult_slice, run_cli

    data = adult_slice(tmp_path, 2000)
    code, out, err = run_cli(_cli_args(data, tmp_path / "r", "--max-level", "age=2", "--metric", "precision"))
    assert code == 0, err
    assert "age: level 2 of 4 (e.g. 51 becomes 50-59)" in out
    assert "What these choices cost: precision loss (share of generalization steps taken) 0.4255 against 0.3847" in out
    released = pd.read_csv(tmp_path / "r" / "release.csv", dtype=str)
    assert set(released["age"]) - {"*"} <= {f"{d}0-{d}9" for d in range(10)}  # 10-year bands, never '*' for all
    assert (released["age"] != "*").mean() > 0.9
    assert run_cli(["verify", tmp_path / "r"])[0] == 0


@pytest.mark.parametrize("extra, words", [
    (["--weight", "age=x"], "--weight 'age=x' must look like COL=NUMBER (a number), e.g. --weight age=5."),
    (["--max-level", "zip=2"], "--max-level names 'zip', which is not a quasi-identifier"),
    (["--metric", "utility"], "invalid choice: 'utility'"),
])
def test_cli_refuses_bad_utility_options_in_one_line(tmp_path, extra, words):
    from tests.claims_helpers import adult_slice, run_cli

    code, out, err = run_cli(_cli_args(adult_slice(tmp_path, 200), tmp_path / "r", *extra))
    assert code == 2 and words in err and "Traceback" not in err
    assert not (tmp_path / "r").exists()
