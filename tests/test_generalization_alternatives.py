"""The few best nodes of one search (ARX's solution view, issue 33), each level in words, and the chosen node unchanged
by keeping them: golden values from the independent brute force (tests/generalization_brute.py)."""
from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import pytest

from ppdp_desktop.core.generalization import Hierarchy, optimal_generalization
from ppdp_desktop.core.generalization.alternatives import ALTERNATIVES, alternatives_table, level_words
from ppdp_desktop.core.generalization.metrics import Utility
from tests.conftest import shared_adult
from tests.generalization_brute import node_figures, score

QUASI = ["age", "sex", "race", "marital-status", "education"]
METRICS = ["precision", "loss", "entropy", "discernibility", "aecs"]

# (k, suppression, metric) -> the five best (levels of QUASI, suppressed records, metric value), adult.csv rows 0-1999
GOLDEN = {
    (5, 0.05, "precision"): [((4, 0, 0, 1, 1), 57, 0.38471666666666665), ((4, 0, 0, 0, 3), 40, 0.412),
                             ((2, 0, 0, 1, 3), 85, 0.4255), ((4, 0, 0, 2, 0), 92, 0.4276),
                             ((4, 0, 0, 1, 2), 31, 0.44211666666666666)],
    (5, 0.05, "loss"): [((3, 0, 0, 2, 1), 98, 0.31197636363636366), ((2, 0, 0, 1, 3), 85, 0.3340257575757576),
                        ((3, 0, 0, 2, 2), 69, 0.335919595959596), ((3, 0, 1, 0, 2), 86, 0.34188),
                        ((4, 0, 0, 1, 1), 57, 0.3441533333333333)],
    (10, 0.0, "aecs"): [((4, 1, 1, 1, 1), 0, 200.0), ((4, 0, 1, 2, 1), 0, 200.0), ((4, 1, 1, 1, 2), 0, 1000 / 3),
                        ((4, 0, 1, 2, 2), 0, 1000 / 3), ((4, 1, 1, 2, 1), 0, 400.0)],
}


@pytest.fixture(scope="module")
def sample():
    adult = pd.read_csv(shared_adult(), sep=";", dtype=str)
    frame = adult.iloc[:2000][QUASI]
    files = {a: shared_adult(f"adult_hierarchy_{a}.csv") for a in QUASI}
    hierarchies = {a: Hierarchy.from_arx_csv(files[a], a, frame[a]) for a in QUASI}
    return frame, files, hierarchies


def brute_ranking(frame, files, k: int, suppression: float, metric: str, count: int) -> list[tuple]:
    """Every feasible node scored from the metric's definition, ordered as the search orders them; the first ``count``."""
    n, nodes = len(frame), []
    for node, sizes, cells in node_figures(frame, files):
        if (sizes < k).sum() <= math.floor(Fraction(repr(suppression)) * n):
            nodes.append(score(node, sizes, cells, k, n))

    def key(f):
        second = (f["suppressed"], f["precision"]) if metric == "discernibility" else (f["suppressed"], f["discernibility"],
                                                                                       f["precision"])
        return (f[metric], *second, f["levels"])

    cell = metric in ("precision", "loss", "entropy")
    return [(f["levels"], f["suppressed"], float(f[metric] / (n * f["wsum"]) if cell else f[metric]))
            for f in sorted(nodes, key=key)[:count]]


def test_brute_force_gives_the_golden_rankings(sample):
    frame, files, _ = sample
    for (k, suppression, metric), golden in GOLDEN.items():
        found = brute_ranking(frame, files, k, suppression, metric, ALTERNATIVES)
        assert [f[:2] for f in found] == [g[:2] for g in golden], metric
        assert [f[2] for f in found] == pytest.approx([g[2] for g in golden], rel=1e-12)


@pytest.mark.parametrize("key", list(GOLDEN))
def test_the_search_keeps_the_five_best_nodes(sample, key):
    frame, _, hierarchies = sample
    k, suppression, metric = key
    g = optimal_generalization(frame, hierarchies, k, suppression, utility=Utility(metric))
    found = [(tuple(a.levels[q] for q in QUASI), a.suppressed, a.metric_value) for a in g.alternatives]
    assert [f[:2] for f in found] == [golden[:2] for golden in GOLDEN[key]]
    assert [f[2] for f in found] == pytest.approx([golden[2] for golden in GOLDEN[key]], rel=1e-12)
    first = g.alternatives[0]  # the chosen node heads the list
    assert first.levels == g.levels and first.suppressed == g.suppressed and first.metric_value == g.metric_value


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("utility", [{}, {"max_levels": {"age": 2}}, {"weights": {"age": 4.0}, "min_levels": {"education": 1}}])
def test_the_chosen_node_is_the_same_with_and_without_alternatives(sample, metric, utility):
    frame, _, hierarchies = sample
    u = Utility(metric, **utility)
    alone = optimal_generalization(frame, hierarchies, 5, 0.05, utility=u, alternatives=1)
    kept = optimal_generalization(frame, hierarchies, 5, 0.05, utility=u)
    assert len(alone.alternatives) == 1 and len(kept.alternatives) == ALTERNATIVES
    listed = kept.to_json()  # levels, suppression, precision, the metric and what the choices cost; and the runners-up
    assert listed.pop("alternatives") == [a.to_json(metric) for a in kept.alternatives] and listed == alone.to_json()
    assert (kept.metric_value, kept.lines()) == (alone.metric_value, alone.lines())
    assert kept.n_nodes_checked >= alone.n_nodes_checked  # the runners-up cost a few more nodes, never fewer
    within = [a for a in kept.alternatives if all(lv <= 2 for name, lv in a.levels.items() if name == "age")]
    assert "max_levels" not in utility or within == list(kept.alternatives)  # the runners-up keep the bounds too


def test_the_greedy_search_gives_its_node_alone(sample):
    frame, _, hierarchies = sample
    g = optimal_generalization(frame, hierarchies, 5, 0.05, search="heuristic")
    assert [a.levels for a in g.alternatives] == [g.levels]


def test_each_level_in_words_with_labels_of_the_column(sample):
    _, _, hierarchies = sample
    age = hierarchies["age"]  # ARX's: 5, 10 and 20 years, then *
    words = [level_words(age, level) for level in range(age.height + 1)]
    assert words[0].startswith("exact values (") and words[4] == "not released (*)"
    assert words[1].startswith("5-year bands (") and words[2].startswith("10-year bands (")
    assert words[3].startswith("20-year bands (")
    examples = words[2].split("(")[1].rstrip(")").split(", ")
    assert examples[-1] == "…" and all(label in age.labels(2) for label in examples[:-1]) and len(examples) == 3
    assert level_words(hierarchies["marital-status"], 1) == "2 groups (spouse present, spouse not present)"
    assert level_words(hierarchies["sex"], 0) == "exact values (Male, Female)"
    size = Hierarchy.from_intervals("size_cm", pd.Series([151, 163, 170, 188]), [10, 50])
    assert level_words(size, 1) == "10-wide bands (170-179, 180-189, …)"
    assert level_words(size, 2) == "not released (150-199)"
    cuts = Hierarchy.from_cuts("age", pd.Series([12, 30, 50, 70]), [[18, 65]])
    assert level_words(cuts, 1).startswith("3 groups (")


def test_the_table_of_alternatives_in_words(sample):
    frame, _, hierarchies = sample
    g = optimal_generalization(frame, hierarchies, 5, 0.05, utility=Utility("loss"))
    headings, rows, tips = alternatives_table(g.alternatives, g.hierarchies, "loss")
    assert headings == ["", "Suppressed records", "Loss (ARX)", *QUASI]
    golden = GOLDEN[(5, 0.05, "loss")]
    assert [row[:2] for row in rows] == [["chosen", "98"], ["2.", "85"], ["3.", "69"], ["4.", "86"], ["5.", "57"]]
    assert [float(row[2]) for row in rows] == pytest.approx([value for _, _, value in golden], rel=1e-3)
    assert rows[0][3:] == ["20-year bands", "exact values", "exact values", "not released", "5 groups"]
    assert tips[0][3].startswith("age: 20-year bands (") and tips[0][:3] == ["", "", ""]
