"""Full-domain generalization to k-anonymity with suppression: hierarchies, the optimal lattice node
(against brute force), the released table's invariants, the verifier, and the errors users can cause."""
from __future__ import annotations

import csv
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.errors import Cancelled, InputError, ParameterError, TaxonomyError
from ppdp_desktop.core.generalization import Hierarchy, check_k_anonymity, exhaustive_generalization, optimal_generalization
from ppdp_desktop.core.generalization.intervals import cut_rows, width_rows
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.core.taxonomy.tree import Taxonomy
from tests.conftest import shared_adult

# --- helpers --------------------------------------------------------------------------------------


def same_answer(a, b) -> None:
    assert (a.levels, a.suppressed, a.precision) == (b.levels, b.suppressed, b.precision)


def expected_labels(hierarchy: Hierarchy, level: int) -> dict[str, str]:
    """value text -> its label at ``level``, read off the hierarchy one value at a time (no codes path)."""
    return {v: hierarchy.labels(level)[hierarchy.level_codes[level][i]] for i, v in enumerate(hierarchy.values)}


def text(column: pd.Series) -> pd.Series:
    return column.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v))
                      else str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))


def assert_release(frame: pd.DataFrame, hierarchies: dict[str, Hierarchy], g, labels_of=expected_labels) -> None:
    """Every invariant of the released quasi-identifiers of ``g`` on ``frame``."""
    released = g.apply(frame)
    n, limit = len(frame), math.floor(Fraction(repr(g.suppression_limit)) * len(frame))
    assert list(released.index) == list(frame.index) and list(released.columns) == list(hierarchies)
    mask = g.suppressed_mask(frame)
    assert mask.sum() == g.suppressed <= limit
    assert (released[mask] == "*").all(axis=None)
    for name, hierarchy in hierarchies.items():  # each released value is its original's label at the level
        wanted = text(frame[name]).map(labels_of(hierarchy, g.levels[name]))
        assert (released.loc[~mask, name] == wanted[~mask]).all(), name
    kept = released[~mask]
    if len(kept):
        # observed=True: the released columns are categoricals, and before pandas 3 a group-by also
        # lists every combination of categories that no record has (size 0)
        assert kept.groupby(list(kept.columns), observed=True).size().min() >= g.k
    ok, stars = check_k_anonymity(released, g.k, g.suppression_limit)
    assert ok
    assert stars == g.suppressed if stars < g.k else stars >= g.suppressed
    loss = sum(Fraction(g.levels[a], h.height) for a, h in hierarchies.items()) * (n - g.suppressed)
    loss += g.suppressed * len(hierarchies)
    assert g.precision == float(1 - loss / (n * len(hierarchies)))


# --- the golden hand example ----------------------------------------------------------------------

GOLDEN = pd.DataFrame({
    "age": [21, 23, 25, 27, 32, 34, 36, 45],
    "sex": ["M", "M", "F", "F", "M", "M", "F", "F"],
})


def golden_hierarchies() -> dict[str, Hierarchy]:
    return {
        "age": Hierarchy.from_intervals("age", GOLDEN["age"], [10]),  # value, decade, * (H = 2)
        "sex": Hierarchy.from_arx_rows("sex", [["M", "*"], ["F", "*"]], GOLDEN["sex"]),  # value, * (H = 1)
    }


def test_golden_hand_example():
    # k = 2, 8 records. Loss per kept record = h_age/2 + h_sex/1; a suppressed record loses 1 per QI.
    # (0,0), (0,1): every age distinct -> all 8 suppressed.        (1,1): decades 4/3/1 -> 1 suppressed.
    # (1,0): (20s,M)2 (20s,F)2 (30s,M)2 (30s,F)1 (40s,F)1 -> 2 suppressed (the 36 F and 45 F records).
    # (2,0): M 4, F 4 -> 0 suppressed.                               (2,1): one class of 8.
    # Limit 0.25 * 8 = 2: (1,0) loss = 6 * 1/2 + 2 * 2 = 7 -> Prec = 1 - 7/16 = 9/16 = 0.5625, beating
    #   (2,0) loss 8 * 1 = 8 -> Prec 1/2, and (1,1) loss 7 * 3/2 + 1 * 2 = 12.5 -> Prec 7/32.
    # Limit 0.2 * 8 = 1.6 -> 1: (1,0) is infeasible, so (2,0) with Prec 1/2 wins.
    hierarchies = golden_hierarchies()
    g = optimal_generalization(GOLDEN, hierarchies, 2, 0.25)
    assert (g.levels, g.suppressed, g.precision) == ({"age": 1, "sex": 0}, 2, 0.5625)
    released = g.apply(GOLDEN)
    assert released["age"].tolist() == ["20-29", "20-29", "20-29", "20-29", "30-39", "30-39", "*", "*"]
    assert released["sex"].tolist() == ["M", "M", "F", "F", "M", "M", "*", "*"]
    assert g.suppressed_mask(GOLDEN).tolist() == [False] * 6 + [True] * 2
    g = optimal_generalization(GOLDEN, hierarchies, 2, 0.2)
    assert (g.levels, g.suppressed, g.precision) == ({"age": 2, "sex": 0}, 0, 0.5)
    for limit in (0.0, 0.2, 0.25, 0.5):
        same_answer(g := optimal_generalization(GOLDEN, hierarchies, 2, limit),
                    exhaustive_generalization(GOLDEN, hierarchies, 2, limit))
        assert_release(GOLDEN, hierarchies, g)


def test_result_words_and_json():
    g = optimal_generalization(GOLDEN, golden_hierarchies(), 2, 0.25)
    lines = g.lines()
    assert lines[0] == "age: level 1 of 2 (e.g. 32 becomes 30-39)"  # the middle of the sorted ages
    assert lines[1] == "sex: kept as is (level 0 of 1)"
    assert any("2 of 8 records suppressed" in line for line in lines)
    listed = g.to_json()
    assert [a["levels"] for a in listed.pop("alternatives")][0] == {"age": 1, "sex": 0}  # the runners-up, this one first
    assert listed == {"levels": {"age": 1, "sex": 0}, "heights": {"age": 2, "sex": 1}, "k": 2,
                      "suppression_limit": 0.25, "n_records": 8, "suppressed": 2, "precision": 0.5625}
    top = optimal_generalization(GOLDEN, golden_hierarchies(), 8, 0.0)
    assert top.levels == {"age": 2, "sex": 1} and "not released" in top.lines()[0]
    ok, stars = check_k_anonymity(top.apply(GOLDEN), 8, 0.0)  # all "*" but a class of 8 >= k
    assert (ok, stars) == (True, 8)


def test_apply_keeps_row_order_and_index():
    frame = GOLDEN.iloc[[7, 2, 5, 0, 1, 6, 3, 4]].set_axis(list("hcfabgde"))
    g = optimal_generalization(frame, golden_hierarchies(), 2, 0.25)
    released = g.apply(frame)
    assert list(released.index) == list("hcfabgde")
    assert released.loc["h"].tolist() == ["*", "*"] and released.loc["c"].tolist() == ["20-29", "F"]


# --- Adult with ARX's hierarchies -----------------------------------------------------------------

ADULT_QIS = ["age", "sex", "race", "education", "marital-status"]


@pytest.fixture(scope="module")
def adult():
    frame = pd.read_csv(shared_adult(), sep=";")
    files = {a: shared_adult(f"adult_hierarchy_{a}.csv") for a in ADULT_QIS}
    hierarchies = {a: Hierarchy.from_arx_csv(path, a, frame[a]) for a, path in files.items()}
    return frame, hierarchies, files


def arx_labels(files):
    """Labels straight from the ARX files (csv module, padded with the last label): the test's own reading."""
    def labels_of(hierarchy: Hierarchy, level: int) -> dict[str, str]:
        with open(files[hierarchy.attribute], newline="", encoding="utf-8") as handle:
            rows = [row for row in csv.reader(handle, delimiter=";") if row]
        width = max(map(len, rows))
        return {row[0]: (row + [row[-1]] * (width - len(row)))[level] for row in rows}
    return labels_of


@pytest.mark.parametrize("k", [2, 5, 10, 50])
@pytest.mark.parametrize("suppression", [0.0, 0.01, 0.05])
def test_adult_optimal_is_exhaustive(adult, k, suppression):
    frame, hierarchies, files = adult
    g = optimal_generalization(frame, hierarchies, k, suppression)
    same_answer(g, exhaustive_generalization(frame, hierarchies, k, suppression))
    assert g.n_nodes_checked < 5 * 2 * 2 * 4 * 3  # pruning visits a part of the 240 nodes
    assert_release(frame, hierarchies, g, labels_of=arx_labels(files))


def test_adult_hierarchy_levels(adult):
    _, hierarchies, _ = adult
    age = hierarchies["age"]
    assert age.height == 4 and [age.labels(h)[age.generalize(age.encode(["39"]), h)[0]] for h in range(5)] == [
        "39", "35-39", "30-39", "20-39", "*"]
    assert [len(hierarchies[a].labels(hierarchies[a].height)) for a in ADULT_QIS] == [1] * 5


# --- random small tables (hypothesis) -------------------------------------------------------------


@st.composite
def random_hierarchy(draw, name: str):
    """A small hierarchy and the pool of values the data may use."""
    kind = draw(st.sampled_from(["widths", "cuts", "taxonomy", "arx"]))
    if kind in ("widths", "cuts"):
        values = draw(st.lists(st.integers(0, 30), min_size=1, max_size=8))
        if kind == "widths":
            widths = [draw(st.sampled_from([1, 2, 3, 5]))]
            for _ in range(draw(st.integers(0, 2))):
                widths.append(widths[-1] * draw(st.sampled_from([2, 3])))
            return Hierarchy.from_intervals(name, values, widths), values
        fine = sorted(draw(st.sets(st.integers(0, 31), min_size=1, max_size=5)))
        coarse = sorted(draw(st.sets(st.sampled_from(fine), min_size=1)))
        return Hierarchy.from_cuts(name, values, [fine, coarse]), values
    taxonomy = Taxonomy(name)
    nodes = [taxonomy.root]
    for i in range(draw(st.integers(0, 3))):
        nodes.append(taxonomy.add(draw(st.sampled_from(nodes)), f"{name}-g{i}"))
    for i in range(draw(st.integers(1, 6))):
        taxonomy.add(draw(st.sampled_from(nodes)), f"{name}{i}")
    leaves = taxonomy.leaf_labels()
    if kind == "taxonomy":
        return Hierarchy.from_taxonomy(taxonomy), leaves
    rows = [[leaf.label] + [n.label for n in leaf.path()[1:]] for leaf in taxonomy.leaves()]
    return Hierarchy.from_arx_rows(name, rows), leaves  # short rows padded with "*"


@st.composite
def random_table(draw):
    hierarchies, columns = {}, {}
    n = draw(st.integers(1, 30))
    for j in range(draw(st.integers(2, 3))):
        name = f"q{j}"
        hierarchies[name], pool = draw(random_hierarchy(name))
        cells = st.one_of(st.sampled_from(pool), st.none()) if draw(st.booleans()) else st.sampled_from(pool)
        columns[name] = draw(st.lists(cells, min_size=n, max_size=n))
    return pd.DataFrame(columns, dtype=object), hierarchies


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_table(), st.integers(1, 7), st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.29, 0.5, 0.9]))
def test_random_tables_optimal_is_exhaustive(table, k, suppression):
    frame, hierarchies = table
    try:
        g = optimal_generalization(frame, hierarchies, k, suppression)
    except ParameterError as exc:
        assert k > len(frame) and "largest k possible is" in str(exc)
        with pytest.raises(ParameterError):
            exhaustive_generalization(frame, hierarchies, k, suppression)
        return
    same_answer(g, exhaustive_generalization(frame, hierarchies, k, suppression))
    assert_release(frame, hierarchies, g)


# --- hierarchies ----------------------------------------------------------------------------------


def test_intervals_integer_labels_aligned_at_zero_and_missing_at_root():
    h = Hierarchy.from_intervals("age", pd.Series([20, 24, 25, 37, None]), [5, 10])
    assert h.height == 3 and h.values == ("20", "24", "25", "37", "")
    assert [expected_labels(h, 1)[v] for v in h.values] == ["20-24", "20-24", "25-29", "35-39", "*"]
    assert [expected_labels(h, 2)[v] for v in h.values] == ["20-29", "20-29", "20-29", "30-39", "*"]
    assert h.labels(3) == ("*",)
    codes = h.encode(pd.Series([37.0, np.nan, 20]))
    assert h.label_array(2)[h.generalize(codes, 2)].tolist() == ["30-39", "*", "20-29"]
    assert h.label_array(0)[h.generalize(codes, 0)].tolist() == ["37", "", "20"]


def test_intervals_fractional_labels_and_cuts():
    h = Hierarchy.from_intervals("x", [0.5, 1.25], [0.5])
    assert [expected_labels(h, 1)[v] for v in ("0.5", "1.25")] == ["[0.5, 1)", "[1, 1.5)"]
    h = Hierarchy.from_cuts("age", [5, 15, 25, 95], [[10, 20, 30], [20]])
    assert [expected_labels(h, 1)[v] for v in ("5", "15", "25", "95")] == ["<10", "10-19", "20-29", ">=30"]
    assert [expected_labels(h, 2)[v] for v in ("5", "15", "25", "95")] == ["<20", "<20", ">=20", ">=20"]
    assert h.height == 3


def test_intervals_nest_skip_missing_values_and_sort_numerically():
    # (moved from the deleted taxonomy.numeric builder: the same cases, in the labels the product prints)
    h = Hierarchy.from_intervals("age", [17, 23, 25.0, "30", 41, 90, None], [10, 20])
    assert h.values == ("17", "23", "25", "30", "41", "90", "")  # numeric text and floats as labels
    assert [expected_labels(h, 1)[v] for v in ("17", "25", "30", "90")] == ["10-19", "20-29", "30-39", "90-99"]
    assert [expected_labels(h, 2)[v] for v in ("17", "25", "30", "90")] == ["0-19", "20-39", "20-39", "80-99"]
    assert "50-59" not in h.labels(1)  # no empty intervals
    assert width_rows("age", [100, 9, 10], [5]) == [["9", "5-9"], ["10", "10-14"], ["100", "100-104"]]


def test_intervals_floating_point_bounds_fall_in_the_right_bin():
    # 0.3 / 0.1 is 2.9999999999999996 in floating point: it still belongs to [0.3, 0.4)
    rows = {row[0]: row[1:] for row in width_rows("x", [0.1, 0.3, 0.55], [0.1, 0.5])}
    assert rows == {"0.1": ["[0.1, 0.2)", "[0, 0.5)"], "0.3": ["[0.3, 0.4)", "[0, 0.5)"],
                    "0.55": ["[0.5, 0.6)", "[0.5, 1)"]}


def test_cuts_bound_values_outside_with_open_ended_bins():
    rows = {row[0]: row[1] for row in cut_rows("age", [-3, 0, 17, 18, 64, 65, 120, 121], [[0, 18, 65, 120]])}
    assert rows == {"-3": "<0", "0": "[0, 18)", "17": "[0, 18)", "18": "[18, 65)", "64": "[18, 65)",
                    "65": "[65, 120)", "120": ">=120", "121": ">=120"}


def test_taxonomy_levels_capped_at_root():
    taxonomy = Taxonomy("dx")
    taxonomy.add(taxonomy.add(taxonomy.root, "A"), "a1")
    taxonomy.add("A", "a2")
    taxonomy.add(taxonomy.root, "b")  # a leaf at depth 1: the root from level 1 on
    h = Hierarchy.from_taxonomy(taxonomy, ["a1", "b", None])
    assert h.height == 2
    assert expected_labels(h, 1) == {"a1": "A", "a2": "A", "b": "*", "": "*"}
    assert set(expected_labels(h, 2).values()) == {"*"}


def test_arx_rows_padded_with_last_label():
    h = Hierarchy.from_arx_rows("edu", [["BSc", "Uni", "Higher", "*"], ["Pre", "*"]])
    assert h.height == 3 and expected_labels(h, 1)["Pre"] == "*" and expected_labels(h, 2)["BSc"] == "Higher"


# --- errors ---------------------------------------------------------------------------------------


def test_value_missing_from_hierarchy():
    with pytest.raises(TaxonomyError, match=r"'sex'.*missing from its hierarchy.*'X'.*add them"):
        Hierarchy.from_arx_rows("sex", [["M", "*"], ["F", "*"]], ["M", "X", None])
    taxonomy = Taxonomy("dx")
    taxonomy.add(taxonomy.add(taxonomy.root, "A"), "a1")
    with pytest.raises(TaxonomyError, match=r"'dx'.*missing from its hierarchy.*'zz'"):
        Hierarchy.from_taxonomy(taxonomy, ["a1", "zz"])
    with pytest.raises(TaxonomyError, match=r"'dx'.*generalizations.*'A'.*leaf"):
        Hierarchy.from_taxonomy(taxonomy, ["A"])
    frame = GOLDEN.assign(sex=["M"] * 7 + ["Q"])
    with pytest.raises(TaxonomyError, match=r"Column 'sex'.*'Q'"):
        optimal_generalization(frame, golden_hierarchies(), 2)


def test_arx_errors(tmp_path):
    rows = [["a", "X", "P"], ["b", "X", "Q"]]
    with pytest.raises(TaxonomyError, match=r"'col' is not nested at level 1: the label 'X'.*'P'.*'Q'"):
        Hierarchy.from_arx_rows("col", rows)
    path = tmp_path / "h.csv"
    path.write_text("a;X;P\nb;X;Q\n", encoding="utf-8")
    with pytest.raises(TaxonomyError, match=r"^h\.csv: .*'col' is not nested at level 1"):
        Hierarchy.from_arx_csv(path, "col")
    with pytest.raises(TaxonomyError, match=r"more than one row.*'a'"):
        Hierarchy.from_arx_rows("col", [["a", "*"], ["a", "*"]])
    with pytest.raises(TaxonomyError, match=r"Cannot read"):
        Hierarchy.from_arx_csv(tmp_path / "absent.csv", "col")


def test_arx_hierarchy_encoding_is_told_as_a_data_file_s(tmp_path):
    path = tmp_path / "mesta.csv"
    path.write_bytes("Plzeň;Západ;*\nTřebíč;Východ;*\nKroměříž;Východ;*\n".encode("cp1250"))
    hierarchy = Hierarchy.from_arx_csv(path, "město", ["Plzeň", "Kroměříž"])  # the data's values all match
    codes = hierarchy.encode(["Plzeň", "Kroměříž"])
    assert [hierarchy.labels(1)[c] for c in hierarchy.generalize(codes, 1)] == ["Západ", "Východ"]
    unclear = tmp_path / "varos.csv"
    unclear.write_bytes("Győr;Nyugat;*\nPécs;Dél;*\n".encode("cp1250"))
    with pytest.raises(TaxonomyError, match=r'^varos\.csv: its encoding cannot be told.*"Győr".*save it as UTF-8'):
        Hierarchy.from_arx_csv(unclear, "varos")


def test_interval_errors():
    with pytest.raises(ParameterError, match=r"'age' do not nest: 50 is not a whole multiple .* of 20"):
        Hierarchy.from_intervals("age", [1, 2], [5, 10, 20, 50])
    with pytest.raises(ParameterError, match=r"'age' do not nest"):
        Hierarchy.from_intervals("age", [1, 2], [10, 5])
    with pytest.raises(ParameterError, match=r"'age' must be positive numbers"):
        Hierarchy.from_intervals("age", [1, 2], [0, 5])
    with pytest.raises(ParameterError, match=r"'age' do not nest: level 2 cuts at 15"):
        Hierarchy.from_cuts("age", [1, 2], [[10, 20], [15]])
    with pytest.raises(TaxonomyError, match=r"'age'.*not finite numbers.*'old'"):
        Hierarchy.from_intervals("age", [1, "old"], [5])
    with pytest.raises(TaxonomyError, match=r"not finite numbers \(2\): 'x', 'inf'"):
        Hierarchy.from_intervals("x", ["1", "x", "inf"], [1])
    with pytest.raises(TaxonomyError, match=r"'x' has no numeric values"):
        Hierarchy.from_intervals("x", [None], [1])
    with pytest.raises(ParameterError, match=r"'x' must be positive numbers"):
        Hierarchy.from_intervals("x", [1], [])
    for cuts in ([3, 2], ["a", "b"], []):
        with pytest.raises(ParameterError, match=r"level 1 of 'x' must be increasing numbers"):
            Hierarchy.from_cuts("x", [1], [cuts])


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "5", float("nan"), None])
def test_bad_k(k):
    with pytest.raises(ParameterError, match=r"'k' parameter must be a whole number >= 1. Got"):
        optimal_generalization(GOLDEN, golden_hierarchies(), k)


@pytest.mark.parametrize("suppression", [-0.1, 1, 1.5, float("nan"), "0.1", True])
def test_bad_suppression(suppression):
    with pytest.raises(ParameterError, match=r"'suppression' parameter must be a share"):
        optimal_generalization(GOLDEN, golden_hierarchies(), 2, suppression)


def test_infeasible_k_names_the_largest_possible():
    with pytest.raises(ParameterError,
                       match=r"k = 9 is impossible: the table has only 8 records, so the largest k possible is 8"):
        optimal_generalization(GOLDEN, golden_hierarchies(), 9, 0.5)
    assert optimal_generalization(GOLDEN, golden_hierarchies(), 8, 0.0).levels == {"age": 2, "sex": 1}


def test_other_input_errors():
    with pytest.raises(InputError, match=r"no column 'zip'"):
        optimal_generalization(GOLDEN, {"zip": golden_hierarchies()["sex"]}, 2)
    with pytest.raises(ParameterError, match=r"at least one quasi-identifier"):
        optimal_generalization(GOLDEN, {}, 2)
    with pytest.raises(InputError, match=r"no records"):
        optimal_generalization(GOLDEN.iloc[:0], golden_hierarchies(), 2)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        optimal_generalization(GOLDEN, golden_hierarchies(), 2, cancel=token)


# --- the verifier ---------------------------------------------------------------------------------


def test_check_k_anonymity_catches_violations():
    table = pd.DataFrame({"a": ["x", "x", "y", "y", "*"], "b": ["1", "1", "2", "2", "*"]})
    assert check_k_anonymity(table, 2, 0.2) == (True, 1)
    assert check_k_anonymity(table, 2, 0.1) == (False, 1)  # 1 suppressed > floor(0.5)
    assert check_k_anonymity(table, 3, 0.5) == (False, 1)  # classes of 2 < 3
    assert check_k_anonymity(table.assign(b=["1", "1", "2", "3", "*"]), 2, 0.2) == (False, 1)
    half_star = pd.DataFrame({"a": ["*", "*", "*"], "b": ["*", "*", "1"]})  # "*", "1" is a class, not suppressed
    assert check_k_anonymity(half_star, 2, 0.0) == (False, 2)
    assert check_k_anonymity(pd.DataFrame({"a": ["*"] * 3}), 3, 0.0) == (True, 3)
