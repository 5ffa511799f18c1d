"""Privacy criteria in the lattice search (issue 33): golden values from an independent brute force.

The brute force below shares no code with the search: it reads the ARX hierarchy files with ``csv``, generalizes
every record of a small adult sample at every lattice node with dictionaries, groups them in a ``Counter``,
evaluates each criterion from its definition in plain Python (the hierarchical earth mover's distance by
recursion over the tree), suppresses the failing classes (then the smallest ones for the average risk) and keeps
the most precise node (exact fractions; ties: fewer suppressed, then the smaller level vector).
"""
from __future__ import annotations

import csv
import itertools
import math
from collections import Counter, defaultdict
from fractions import Fraction

import pandas as pd
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.generalization import Hierarchy, optimal_generalization
from ppdp_desktop.core.generalization.check_criteria import check_criteria
from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.metrics import Utility
from tests.conftest import shared_adult

QUASI = ["age", "sex", "marital-status", "education"]
SENSITIVE = "occupation"
N = 1000


def _rows(name: str) -> dict[str, list[str]]:
    """value -> [value, level 1, ..., '*'] from an ARX hierarchy file, padded, with '*' on top."""
    with open(shared_adult(f"adult_hierarchy_{name}.csv"), newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f, delimiter=";") if r]
    width = max(len(r) for r in rows)
    rows = [r + [r[-1]] * (width - len(r)) for r in rows]
    if len({r[-1] for r in rows}) > 1:
        rows = [r + ["*"] for r in rows]
    return {r[0]: r for r in rows}


@pytest.fixture(scope="module")
def sample():
    with open(shared_adult(), newline="", encoding="utf-8") as f:
        records = list(csv.DictReader(f, delimiter=";"))[:N]
    return records, {a: _rows(a) for a in [*QUASI, SENSITIVE]}


def _emd_hierarchical(p: dict[str, float], q: dict[str, float], chains: dict[str, list[str]]) -> float:
    height = len(next(iter(chains.values()))) - 1
    children: dict[tuple[int, str], set[tuple[int, str]]] = defaultdict(set)
    for chain in chains.values():
        for h in range(1, height + 1):
            children[(h, chain[h])].add((h - 1, chain[h - 1]))
    cost = 0.0

    def extra(node: tuple[int, str]) -> float:
        nonlocal cost
        h, label = node
        if h == 0:
            return p.get(label, 0.0) - q.get(label, 0.0)
        parts = [extra(child) for child in sorted(children[node])]
        positive = sum(e for e in parts if e > 0)
        negative = -sum(e for e in parts if e < 0)
        cost += h / height * min(positive, negative)
        return sum(parts)

    extra((height, "*"))
    return cost


def _passes(values: list[str], c: Criteria, overall: dict[str, float], chains: dict[str, list[str]]) -> bool:
    size = len(values)
    counts = Counter(values)
    shares = {v: n / size for v, n in counts.items()}
    if size < c.k or (c.highest_risk is not None and Fraction(1, size) > Fraction(repr(c.highest_risk))):
        return False
    if c.distinct_l is not None and len(counts) < c.distinct_l:
        return False
    if c.entropy_l is not None and -sum(s * math.log(s) for s in shares.values()) < math.log(c.entropy_l) - 1e-12:
        return False
    if c.recursive_l is not None:
        ranked = sorted(counts.values(), reverse=True)
        if len(ranked) < c.recursive_l or not ranked[0] < c.recursive_c * sum(ranked[c.recursive_l - 1:]):
            return False
    if c.t is not None:
        if c.hierarchical_t:
            distance = _emd_hierarchical(shares, overall, chains)
        else:
            distance = 0.5 * sum(abs(shares.get(v, 0.0) - overall[v]) for v in overall)
        if distance > c.t + 1e-12:
            return False
    return True


def brute_force(records, hierarchies, c: Criteria, suppression: float, metric: str = "precision"):
    """(levels, suppressed, precision) of the best node by ``metric`` (precision, discernibility or aecs; ties: fewer
    suppressed records, then discernibility, then precision loss), over every node."""
    n, q = len(records), len(QUASI)
    heights = [len(next(iter(hierarchies[a].values()))) - 1 for a in QUASI]
    limit = math.floor(Fraction(repr(suppression)) * n)
    overall = {v: s / n for v, s in Counter(r[SENSITIVE] for r in records).items()}
    chains = hierarchies[SENSITIVE]
    best = None
    for levels in itertools.product(*(range(h + 1) for h in heights)):
        classes: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for r in records:
            classes[tuple(hierarchies[a][r[a]][lv] for a, lv in zip(QUASI, levels))].append(r[SENSITIVE])
        kept = [len(v) for v in classes.values() if _passes(v, c, overall, chains)]
        suppressed = n - sum(kept)
        if c.average_risk is not None:
            risk = Fraction(repr(c.average_risk))
            kept.sort()
            while kept and Fraction(len(kept), sum(kept)) > risk:
                suppressed += kept.pop(0)
        if suppressed > limit:
            continue
        loss = (n - suppressed) * sum(Fraction(lv, h) for lv, h in zip(levels, heights)) + suppressed * q
        dm = sum(size * size for size in kept) + suppressed * n
        aecs = Fraction(n, len(kept) + (1 if suppressed else 0))
        candidate = {"precision": (loss, suppressed, dm), "discernibility": (dm, suppressed, loss),
                     "aecs": (aecs, suppressed, dm, loss)}[metric] + (levels, suppressed, loss)
        best = candidate if best is None or candidate < best else best
    assert best is not None
    return best[-3], best[-2], float(1 - best[-1] / (n * q))


CASES = [
    Criteria(k=5, distinct_l=3),
    Criteria(k=2, entropy_l=2.5),
    Criteria(k=2, recursive_c=3.0, recursive_l=2),
    Criteria(k=3, t=0.3),
    Criteria(k=3, t=0.25, hierarchical_t=True),
    Criteria(k=2, average_risk=0.1),
    Criteria(k=2, highest_risk=0.2),
    Criteria(k=3, distinct_l=2, t=0.4, hierarchical_t=True, average_risk=0.2),
]


def _search(sample, c: Criteria, suppression: float, **options):
    records, rows = sample
    frame = pd.DataFrame(records)
    hierarchies = {a: Hierarchy.from_arx_rows(a, list(rows[a].values())) for a in QUASI}
    sensitive = Hierarchy.from_arx_rows(SENSITIVE, list(rows[SENSITIVE].values()))
    result = optimal_generalization(frame, hierarchies, c.k, suppression, criteria=c, sensitive=sensitive, **options)
    return frame, result


@pytest.mark.parametrize("suppression", [0.0, 0.1])
@pytest.mark.parametrize("criteria", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.to_json().items()))
def test_search_finds_the_brute_force_optimum(sample, criteria, suppression):
    """Node, suppressed records and precision equal the brute force's, and applying the node suppresses exactly the
    records of the classes the criteria fail."""
    levels, suppressed, precision = brute_force(*sample, criteria, suppression)
    frame, result = _search(sample, criteria, suppression)
    assert tuple(result.levels[a] for a in QUASI) == levels
    assert result.suppressed == suppressed
    assert result.precision == pytest.approx(precision, abs=1e-12)
    released = result.apply(frame[[*QUASI, SENSITIVE]])
    assert int(released.eq("*").all(axis=1).sum()) == suppressed


@pytest.mark.parametrize("metric", ["discernibility", "aecs"])
@pytest.mark.parametrize("criteria", CASES[:3] + CASES[5:6], ids=lambda c: "-".join(f"{k}={v}" for k, v in c.to_json().items()))
def test_criteria_with_another_metric_find_the_brute_force_optimum(sample, criteria, metric):
    """The criteria and the utility metrics combine: the class-size metrics score the classes the criteria keep."""
    levels, suppressed, _ = brute_force(*sample, criteria, 0.1, metric)
    _, result = _search(sample, criteria, 0.1, utility=Utility(metric))
    assert (tuple(result.levels[a] for a in QUASI), result.suppressed) == (levels, suppressed)


@pytest.mark.parametrize("criteria", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.to_json().items()))
def test_the_greedy_search_meets_the_criteria(sample, criteria):
    """The greedy search (for lattices too large to walk) never returns a node the criteria fail, and says it is
    not proven optimal; its precision is at most the optimum's."""
    _, optimum = _search(sample, criteria, 0.1)
    frame, result = _search(sample, criteria, 0.1, search="heuristic")
    released = result.apply(frame[[*QUASI, SENSITIVE]]).assign(**{SENSITIVE: frame[SENSITIVE].to_numpy()})
    ok, suppressed, problems = check_criteria(released, QUASI, SENSITIVE, criteria, 0.1, _chains(sample[1][SENSITIVE]))
    assert (ok, suppressed, problems) == (True, result.suppressed, [])
    assert not result.proven_optimal and result.precision <= optimum.precision + 1e-12


GOLDEN = [  # (criteria, levels of age, sex, marital-status, education, suppressed, precision), suppression 0.1
    (Criteria(k=5), (4, 0, 0, 1), 54, 0.6306666666666667),
    (Criteria(k=5, distinct_l=3), (4, 0, 0, 1), 68, 0.6213333333333333),
    (Criteria(k=2, recursive_c=3.0, recursive_l=2), (1, 0, 0, 2), 98, 0.6952916666666666),
    (Criteria(k=3, t=0.25, hierarchical_t=True), (4, 0, 0, 3), 58, 0.471),
    (Criteria(k=2, average_risk=0.1), (2, 0, 0, 1), 76, 0.7315),
]


@pytest.mark.parametrize("criteria, levels, suppressed, precision", GOLDEN,
                         ids=lambda v: "-".join(f"{k}={x}" for k, x in v.to_json().items()) if isinstance(v, Criteria) else "")
def test_golden_values(sample, criteria, levels, suppressed, precision):
    """Fixed values the brute force gave once (the criteria bind: distinct 3-diversity on occupation suppresses 68
    records where k = 5 alone suppresses 54)."""
    frame, result = _search(sample, criteria, 0.1)
    assert (tuple(result.levels[a] for a in QUASI), result.suppressed) == (levels, suppressed)
    assert result.precision == pytest.approx(precision, abs=1e-12)


def test_unmeetable_criteria_are_a_clear_error(sample):
    with pytest.raises(ParameterError, match="No generalization meets the criteria"):
        _search(sample, Criteria(k=2, distinct_l=50), 0.0)


@pytest.mark.parametrize("bad", [{"k": 0}, {"distinct_l": 0}, {"entropy_l": 0.5}, {"recursive_c": 2.0},
                                 {"recursive_c": -1.0, "recursive_l": 2}, {"t": 1.5}, {"average_risk": 0.0},
                                 {"highest_risk": float("nan")}])
def test_bad_criteria_are_refused(bad):
    with pytest.raises(ParameterError):
        Criteria(**bad)


def test_criteria_round_trip_through_json():
    c = Criteria(k=4, entropy_l=2.0, t=0.2, hierarchical_t=True, average_risk=0.05)
    assert Criteria.from_json(c.to_json()) == c


def _chains(rows: dict[str, list[str]]) -> dict[str, list[str]]:
    return {value: list(chain) for value, chain in rows.items()}


@pytest.mark.parametrize("criteria", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.to_json().items()))
def test_the_verifier_passes_the_release_and_catches_a_homogeneous_group(sample, criteria):
    """check_criteria (released text only) accepts what the search released, and refuses it once one released group's
    sensitive values are all made the same (k still holds, so only a diversity or closeness check can see it)."""
    frame, result = _search(sample, criteria, 0.1)
    released = result.apply(frame[[*QUASI, SENSITIVE]]).assign(**{SENSITIVE: frame[SENSITIVE].to_numpy()})
    chains = _chains(sample[1][SENSITIVE])
    ok, suppressed, problems = check_criteria(released, QUASI, SENSITIVE, criteria, 0.1, chains)
    assert (ok, suppressed, problems) == (True, result.suppressed, [])
    if not criteria.needs_sensitive:
        return
    kept = released[~released[QUASI].eq("*").all(axis=1)]
    largest = kept.groupby(QUASI, observed=True).size().idxmax()
    group = (released[QUASI] == pd.Series(largest, index=QUASI)).all(axis=1)
    tampered = released.copy()
    tampered.loc[group, SENSITIVE] = "Armed-Forces"
    ok, _, problems = check_criteria(tampered, QUASI, SENSITIVE, criteria, 0.1, chains)
    assert not ok and "fail" in problems[0]
