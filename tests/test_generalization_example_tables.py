"""ARX's small example tables (issue 33): the search's node, suppressed records and metric value equal an independent
brute force, and fixed golden values it gave once.

Two tables the k-anonymity literature and ARX's examples use: the seven-record age/gender/zipcode table of ARX's
first example, and Li et al.'s nine-record ZIP/age/disease table from the t-closeness paper (ARX's ``test2``). Their
hierarchies are written here from their rules (ZIP codes masked one digit per level, ages in bands, the diseases in
Li et al.'s tree), not read from files. The brute force shares no code with the search: it groups the records of
every node with plain Python and scores it from the metric's definition.
"""
from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from fractions import Fraction

import pandas as pd
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.generalization import Criteria, Hierarchy, optimal_generalization
from ppdp_desktop.core.generalization.metrics import Utility
from tests.test_generalization_criteria import _passes

ARX_EXAMPLE = pd.DataFrame({
    "age": ["34", "45", "66", "70", "34", "70", "45"],
    "gender": ["male", "female", "male", "female", "female", "male", "male"],
    "zipcode": ["81667", "81675", "81925", "81931", "81931", "81931", "81931"],
})
LI_ET_AL = pd.DataFrame({
    "ZIPCode": ["47677", "47602", "47678", "47905", "47909", "47906", "47605", "47673", "47607"],
    "Age": ["29", "22", "27", "43", "52", "47", "30", "36", "32"],
    "Disease": ["gastric ulcer", "gastritis", "stomach cancer", "gastritis", "flu", "bronchitis", "bronchitis",
                "pneumonia", "stomach cancer"],
})
STOMACH = {"gastric ulcer", "gastritis", "stomach cancer"}


def _zip_chain(z: str) -> list[str]:
    return [z[: len(z) - i] + "*" * i for i in range(len(z) + 1)]


def _chains(frame: pd.DataFrame) -> dict[str, dict[str, list[str]]]:
    """column -> value -> [value, level 1, ..., "*"], from each column's rule."""
    out: dict[str, dict[str, list[str]]] = {}
    for column in frame.columns:
        values = sorted(set(frame[column]))
        if column.lower() == "zipcode":
            out[column] = {v: _zip_chain(v) for v in values}
        elif column == "age":
            out[column] = {v: [v, "<50" if int(v) < 50 else ">=50", "*"] for v in values}
        elif column == "Age":
            out[column] = {v: [v, f"[{int(v) // 10 * 10},{int(v) // 10 * 10 + 10}[" if int(v) < 40 else ">=40", "*"]
                           for v in values}
        elif column == "gender":
            out[column] = {v: [v, "*"] for v in values}
        else:  # Li et al.'s disease tree
            out[column] = {v: [v, "stomach disease" if v in STOMACH else "respiratory infection",
                               "digestive system disease" if v in STOMACH else "vascular lung disease", "*"]
                           for v in values}
    return out


def _hierarchy(column: str, chains: dict[str, list[str]]) -> Hierarchy:
    return Hierarchy.from_arx_rows(column, [chain for chain in chains.values()])


def brute_force(frame: pd.DataFrame, quasi: list[str], k: int, suppression: float, metric: str,
                criteria: Criteria | None = None, sensitive: str | None = None):
    """(levels, suppressed, value) of the best node: the metric (precision and loss per cell, discernibility, aecs),
    then fewer suppressed records, then discernibility, then precision loss, then the levels."""
    chains = _chains(frame)
    records = frame.to_dict("records")
    n, q = len(records), len(quasi)
    heights = [len(next(iter(chains[a].values()))) - 1 for a in quasi]
    limit = math.floor(Fraction(repr(suppression)) * n)
    c = criteria or Criteria(k=k)
    overall = {v: s / n for v, s in Counter(r[sensitive] for r in records).items()} if sensitive else {}
    best = None
    for levels in itertools.product(*(range(h + 1) for h in heights)):
        classes: dict[tuple[str, ...], list] = defaultdict(list)
        for r in records:
            classes[tuple(chains[a][r[a]][lv] for a, lv in zip(quasi, levels))].append(r)
        kept = {key: rs for key, rs in classes.items()
                if (_passes([r[sensitive] for r in rs], c, overall, chains[sensitive]) if sensitive else len(rs) >= c.k)}
        suppressed = n - sum(len(rs) for rs in kept.values())
        if suppressed > limit:
            continue
        prec = (n - suppressed) * sum(Fraction(lv, h) for lv, h in zip(levels, heights)) + suppressed * q
        loss = Fraction(0)
        for a, lv in zip(quasi, levels):
            domain = len(chains[a])
            under = Counter(chain[lv] for chain in chains[a].values())
            top = lv == len(next(iter(chains[a].values()))) - 1
            for rs in kept.values():
                for r in rs:
                    loss += 1 if top else Fraction(under[chains[a][r[a]][lv]] - 1, domain - 1)
            loss += suppressed
        dm = sum(len(rs) ** 2 for rs in kept.values()) + suppressed * n
        aecs = Fraction(n, len(kept) + (1 if suppressed else 0))
        value = {"precision": prec / (n * q), "loss": loss / (n * q), "discernibility": dm, "aecs": aecs}[metric]
        key = (value, suppressed, prec) if metric == "discernibility" else (value, suppressed, dm, prec)
        candidate = (*key, levels, suppressed, value)
        best = candidate if best is None or candidate < best else best
    if best is None:
        return None
    return best[-3], best[-2], float(best[-1])


def _search(frame, quasi, k, suppression, metric, criteria=None, sensitive=None):
    chains = _chains(frame)
    hierarchies = {a: _hierarchy(a, chains[a]) for a in quasi}
    carried = _hierarchy(sensitive, chains[sensitive]) if sensitive else None
    return optimal_generalization(frame, hierarchies, k, suppression, utility=Utility(metric), criteria=criteria,
                                  sensitive=carried)


METRICS = ["precision", "loss", "discernibility", "aecs"]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k, suppression", [(2, 0.0), (2, 0.3), (3, 0.0), (3, 0.3)])
def test_arx_example_table_equals_the_brute_force(k, suppression, metric):
    quasi = ["age", "gender", "zipcode"]
    expected = brute_force(ARX_EXAMPLE, quasi, k, suppression, metric)
    result = _search(ARX_EXAMPLE, quasi, k, suppression, metric)
    assert (tuple(result.levels[a] for a in quasi), result.suppressed) == expected[:2]
    assert result.metric_value == pytest.approx(expected[2], abs=1e-12)  # precision and loss: the loss per cell


LI_CRITERIA = [
    Criteria(k=3),
    Criteria(k=3, distinct_l=2),
    Criteria(k=2, entropy_l=2.0),
    Criteria(k=3, t=0.4),
    Criteria(k=3, t=0.3, hierarchical_t=True),
]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("suppression", [0.0, 0.34])
@pytest.mark.parametrize("criteria", LI_CRITERIA, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.to_json().items()))
def test_li_et_al_table_equals_the_brute_force(criteria, suppression, metric):
    quasi = ["ZIPCode", "Age"]
    expected = brute_force(LI_ET_AL, quasi, criteria.k, suppression, metric, criteria, "Disease")
    if expected is None:
        with pytest.raises(ParameterError):
            _search(LI_ET_AL, quasi, criteria.k, suppression, metric, criteria, "Disease")
        return
    result = _search(LI_ET_AL, quasi, criteria.k, suppression, metric, criteria, "Disease")
    assert (tuple(result.levels[a] for a in quasi), result.suppressed) == expected[:2]
    assert result.metric_value == pytest.approx(expected[2], abs=1e-12)


# (criteria, suppression) -> (levels of ZIPCode, Age; suppressed records; precision loss per cell), by precision: what
# the brute force gave once. (2, 1) is Li et al.'s 3-diverse Table 4 (476** / 4790* with ages in decades, >=40);
# (1, 2) their t-closeness Table 5's ZIP prefixes 4767*, 4760*, 4790*; equal-distance t = 0.4 needs one class of all.
LI_GOLDEN = [
    (Criteria(k=3), 0.0, (2, 1), 0, 0.45),
    (Criteria(k=3, distinct_l=2), 0.0, (2, 1), 0, 0.45),
    (Criteria(k=2, entropy_l=2.0), 0.34, (2, 1), 0, 0.45),
    (Criteria(k=3, t=0.4), 0.0, (3, 2), 0, 0.8),
    (Criteria(k=3, t=0.3, hierarchical_t=True), 0.0, (1, 2), 0, 0.6),
]


@pytest.mark.parametrize("criteria, suppression, levels, suppressed, loss", LI_GOLDEN, ids=str)
def test_li_et_al_golden_values(criteria, suppression, levels, suppressed, loss):
    result = _search(LI_ET_AL, ["ZIPCode", "Age"], criteria.k, suppression, "precision", criteria, "Disease")
    assert ((result.levels["ZIPCode"], result.levels["Age"]), result.suppressed) == (levels, suppressed)
    assert result.metric_value == pytest.approx(loss, abs=1e-12)


def test_arx_example_golden_values():
    """k = 2 with 30 % suppression: age as <50 / >=50, gender kept, ZIP as 81***, one record suppressed (brute force)."""
    result = _search(ARX_EXAMPLE, ["age", "gender", "zipcode"], 2, 0.3, "precision")
    assert (tuple(result.levels.values()), result.suppressed) == ((1, 0, 3), 1)
    assert result.metric_value == pytest.approx(0.45714285714285713, abs=1e-12)
