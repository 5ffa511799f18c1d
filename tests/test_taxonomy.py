"""The taxonomy model: edits, aliases, validation, and semantic distance (interval hierarchies: test_generalization)."""
from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.errors import PPDPError, TaxonomyError
from ppdp_desktop.core.generalization.intervals import width_rows
from ppdp_desktop.core.taxonomy import semantic
from ppdp_desktop.core.taxonomy.io import from_arx_csv
from ppdp_desktop.core.taxonomy.semantic import distance, distance_matrix, marginality
from ppdp_desktop.core.taxonomy.tree import ALIAS_ALPHABET, Taxonomy, TaxonomyNode

CODE = re.compile(rf"A[{ALIAS_ALPHABET}]{{8}}")


def small() -> Taxonomy:
    """Any -> {Respiratory -> {Flu, Asthma, COPD}, Cardio -> {Stroke, Angina}, Other}."""
    t = Taxonomy("diagnosis", "Any")
    for chapter, leaves in {"Respiratory": ["Flu", "Asthma", "COPD"], "Cardio": ["Stroke", "Angina"]}.items():
        t.add("Any", chapter)
        for leaf in leaves:
            t.add(chapter, leaf)
    t.add(t.root, "Other")
    return t


def assert_consistent(t: Taxonomy) -> None:
    """Every parent link matches the children lists and the index; validate finds nothing."""
    assert t.validate() == ([] if t.leaves() else ["it has no values (leaves)"])
    for node in t.root.walk():
        assert t.node(node.label) is node
        for row, child in enumerate(node.children):
            assert child.parent is node and child.row() == row


# --- structure and lookup ------------------------------------------------------------------------


def test_tree_shape_lookup_and_qt_friendly_node_api() -> None:
    t = small()
    assert [leaf.label for leaf in t.leaves()] == ["Flu", "Asthma", "COPD", "Stroke", "Angina", "Other"]
    assert t.depth == 2 and len(t) == 9 and "Flu" in t and "Measles" not in t
    assert t.ancestors("Flu") == ["Flu", "Respiratory", "Any"]
    assert t.ancestors("Any") == ["Any"]
    cardio = t.node("Cardio")
    assert cardio.row() == 1 and cardio.children[1].label == "Angina" and len(cardio.children) == 2
    assert cardio.parent is t.root and t.root.row() == 0 and t.root.parent is None
    assert not cardio.is_leaf and t.node("Angina").is_leaf and not t.root.is_leaf
    assert t.leaf("Flu").depth == 2
    assert t.find("Measles") is None
    assert_consistent(t)


def test_lookup_errors_name_the_label() -> None:
    t = small()
    with pytest.raises(TaxonomyError, match="'Measles'"):
        t.node("Measles")
    with pytest.raises(TaxonomyError, match="'Cardio' is a generalization"):
        t.leaf("Cardio")
    with pytest.raises(TaxonomyError, match="'Measles'"):
        t.ancestors("Measles")


def test_errors_are_ppdp_errors() -> None:
    assert issubclass(TaxonomyError, PPDPError)


# --- edits ---------------------------------------------------------------------------------------


def test_add_at_a_row_and_by_node() -> None:
    t = small()
    measles = t.add(t.node("Respiratory"), "Measles", row=0)
    assert isinstance(measles, TaxonomyNode) and measles.row() == 0
    assert [c.label for c in t.node("Respiratory").children] == ["Measles", "Flu", "Asthma", "COPD"]
    assert_consistent(t)


@pytest.mark.parametrize(
    ("parent", "label", "row", "match"),
    [
        ("Cardio", "Flu", None, "'Flu' is already used under 'Respiratory'"),
        ("Cardio", "Any", None, "'Any' is already used as the root"),
        ("Cardio", "   ", None, "label '   ' is empty or not text"),
        ("Cardio", "", None, "label '' is empty or not text"),
        ("Cardio", 42, None, "label 42 is empty or not text"),
        ("Cardio", "bad \ud800", None, "label 'bad \\ud800' is empty or not text"),
        ("Nowhere", "Measles", None, "no label 'Nowhere'"),
        ("Cardio", "Measles", 5, "row 5 for 'Measles'"),
        ("Cardio", "Measles", -1, "row -1 for 'Measles'"),
    ],
)
def test_invalid_add_is_refused_naming_the_value(parent: str, label: object, row: int | None, match: str) -> None:
    t = small()
    before = t.parents()
    with pytest.raises(TaxonomyError, match=re.escape(match)):
        t.add(parent, label, row=row)  # type: ignore[arg-type]
    assert t.parents() == before
    assert_consistent(t)


def test_rename_updates_index_and_default_alias1() -> None:
    t = small()
    t.rename("Respiratory", "Lungs")
    assert "Respiratory" not in t and t.node("Lungs").children[0].label == "Flu"
    assert t.leaf("Flu").alias1 == "Lungs"
    t.rename("Lungs", "Lungs")  # same label: no-op
    with pytest.raises(TaxonomyError, match="'Stroke' is already used"):
        t.rename("Flu", "Stroke")
    with pytest.raises(TaxonomyError, match="is empty"):
        t.rename("Flu", " ")
    assert_consistent(t)


def test_move_with_row_and_cycle_refused() -> None:
    t = small()
    t.move("Other", "Cardio", row=0)
    assert [c.label for c in t.node("Cardio").children] == ["Other", "Stroke", "Angina"]
    t.move("Other", "Cardio", row=2)  # within the same parent: row is the final index
    assert [c.label for c in t.node("Cardio").children] == ["Stroke", "Angina", "Other"]
    t.move("Respiratory", "Cardio")
    assert t.ancestors("Flu") == ["Flu", "Respiratory", "Cardio", "Any"]
    with pytest.raises(TaxonomyError, match="cannot move 'Cardio' under 'Flu'.*cycle"):
        t.move("Cardio", "Flu")
    with pytest.raises(TaxonomyError, match="cannot move 'Cardio' under 'Cardio'.*itself"):
        t.move("Cardio", "Cardio")
    with pytest.raises(TaxonomyError, match="root 'Any' cannot be moved"):
        t.move("Any", "Cardio")
    with pytest.raises(TaxonomyError, match="row 9 for 'Stroke'"):
        t.move("Stroke", "Any", row=9)
    assert_consistent(t)


def test_delete_removes_the_subtree() -> None:
    t = small()
    t.delete("Respiratory")
    assert all(label not in t for label in ["Respiratory", "Flu", "Asthma", "COPD"])
    assert t.leaf_labels() == ["Stroke", "Angina", "Other"]
    t.add("Any", "Flu")  # the label is free again
    with pytest.raises(TaxonomyError, match="root 'Any' cannot be deleted"):
        t.delete("Any")
    stroke = t.node("Stroke")
    t.delete(stroke)
    with pytest.raises(TaxonomyError, match="'Stroke' is not \\(or no longer\\) in it"):
        t.delete(stroke)
    assert_consistent(t)


def test_node_of_another_taxonomy_is_refused() -> None:
    with pytest.raises(TaxonomyError, match="'Flu' is not"):
        small().rename(small().node("Flu"), "X")


NAMES = st.sampled_from(["Flu", "Cardio", "Any", "Other", "New", "Newer", "", " ", "Asthma", "Stroke", "X-1"])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_random_edit_sequences_keep_the_tree_valid(data: st.DataObject) -> None:
    t = small()
    for _ in range(data.draw(st.integers(1, 25))):
        op = data.draw(st.sampled_from(["add", "rename", "move", "delete", "alias1", "alias2"]))
        a, b = data.draw(NAMES), data.draw(NAMES)
        row = data.draw(st.none() | st.integers(-1, 4))
        before = t.parents()
        try:
            if op == "add":
                t.add(a, b, row=row)
            elif op == "rename":
                t.rename(a, b)
            elif op == "move":
                t.move(a, b, row=row)
            elif op == "delete":
                t.delete(a)
            else:
                t.set_alias(a, **{op: data.draw(st.none() | NAMES)})
        except TaxonomyError:
            assert t.parents() == before  # a refused edit changes nothing
        assert_consistent(t)
        assert len(t) == len(t.parents())


# --- aliases -------------------------------------------------------------------------------------


def test_alias_defaults() -> None:
    t = small()
    assert t.leaf("Flu").alias1 == "Respiratory"
    assert t.leaf("Other").alias1 == "Any"  # directly under the root
    codes = [leaf.alias2 for leaf in t.leaves()]
    assert all(CODE.fullmatch(code) for code in codes)
    assert len(set(codes)) == len(codes)
    for leaf in t.leaves():
        assert leaf.label.lower() not in leaf.alias2.lower()
        assert not leaf.alias1_is_set and not leaf.alias2_is_set


def test_alias2_is_random_between_builds() -> None:
    first = [leaf.alias2 for leaf in small().leaves()]
    second = [leaf.alias2 for leaf in small().leaves()]
    assert all(a != b for a, b in zip(first, second))


def test_default_alias1_follows_moves_explicit_does_not() -> None:
    t = small()
    t.set_alias("Asthma", alias1="Chronic")
    t.move("Flu", "Cardio")
    t.move("Asthma", "Cardio")
    assert t.leaf("Flu").alias1 == "Cardio"
    assert t.leaf("Asthma").alias1 == "Chronic" and t.leaf("Asthma").alias1_is_set
    t.set_alias("Asthma", alias1=None)  # back to the default
    assert t.leaf("Asthma").alias1 == "Cardio" and not t.leaf("Asthma").alias1_is_set


def test_alias_maps_for_reverse_lookup() -> None:
    t = small()
    t.set_alias("Flu", alias1="Infection", alias2="X-1")
    by1, by2 = t.alias_maps()
    assert by1 == {"Infection": ["Flu"], "Respiratory": ["Asthma", "COPD"], "Cardio": ["Stroke", "Angina"], "Any": ["Other"]}
    assert by2["X-1"] == "Flu" and len(by2) == 6
    assert {label: by2[t.leaf(label).alias2] for label in t.leaf_labels()} == {l: l for l in t.leaf_labels()}


def test_alias1_may_be_shared() -> None:
    t = small()
    t.set_alias("Flu", alias1="Common")
    t.set_alias("Stroke", alias1="Common")
    assert t.alias_maps()[0]["Common"] == ["Flu", "Stroke"]
    assert t.validate() == []


@pytest.mark.parametrize(
    ("leaf", "kwargs", "match"),
    [
        ("Asthma", {"alias2": "FLU-CODE"}, "alias2 'FLU-CODE' of 'Asthma' is already the alias2 of 'Flu'"),
        ("Asthma", {"alias2": "Stroke"}, "alias2 'Stroke' of 'Asthma' is already a label"),
        ("Asthma", {"alias2": "Cardio"}, "alias2 'Cardio' of 'Asthma' is already a label"),
        ("Asthma", {"alias2": ""}, "alias2 of 'Asthma' must be non-empty text"),
        ("Asthma", {"alias2": 7}, "alias2 of 'Asthma' must be non-empty text, not 7"),
        ("Asthma", {"alias1": "Stroke"}, "alias1 'Stroke' of 'Asthma' is already the label of the value 'Stroke'"),
        ("Asthma", {"alias1": "FLU-CODE"}, "alias1 'FLU-CODE' of 'Asthma' is already the alias2 of 'Flu'"),
        ("Asthma", {"alias1": " "}, "alias1 of 'Asthma' must be non-empty text"),
        ("Cardio", {"alias1": "x"}, "'Cardio' is not a leaf"),
        ("Measles", {"alias1": "x"}, "no label 'Measles'"),
    ],
)
def test_invalid_alias_is_refused_and_nothing_changes(leaf: str, kwargs: dict, match: str) -> None:
    t = small()
    t.set_alias("Flu", alias2="FLU-CODE")
    before = t.alias_maps()
    with pytest.raises(TaxonomyError, match=re.escape(match)):
        t.set_alias(leaf, **kwargs)
    assert t.alias_maps() == before


def test_alias2_reset_draws_a_new_code_and_labels_cannot_take_codes() -> None:
    t = small()
    t.set_alias("Flu", alias2="F1")
    with pytest.raises(TaxonomyError, match="label 'F1' is the alias2 of 'Flu'"):
        t.add("Any", "F1")
    with pytest.raises(TaxonomyError, match="label 'F1' is the alias2 of 'Flu'"):
        t.rename("Other", "F1")
    t.set_alias("Flu", alias2=None)
    assert CODE.fullmatch(t.leaf("Flu").alias2) and not t.leaf("Flu").alias2_is_set
    t.add("Any", "F1")


def test_edits_cannot_make_a_value_equal_to_an_explicit_alias1() -> None:
    t = small()
    t.set_alias("Flu", alias1="Viral")
    t.set_alias("Stroke", alias1="Respiratory")  # an inner label is a fine alias1
    with pytest.raises(TaxonomyError, match="cannot add 'Viral': 'Viral' is the alias1 of 'Flu'"):
        t.add("Any", "Viral")
    with pytest.raises(TaxonomyError, match="cannot rename 'Other' to 'Viral': 'Viral' is the alias1 of 'Flu'"):
        t.rename("Other", "Viral")
    t.rename("Cardio", "Viral")  # an inner node may carry it
    t.rename("Viral", "Cardio")
    t.set_alias("Flu", alias1="Flu2")
    t.rename("Flu", "Flu2")  # its own alias1
    t.move("Flu2", "Cardio")
    t.move("Asthma", "Cardio")
    with pytest.raises(TaxonomyError,
                       match=r"cannot move 'COPD' \(it would turn 'Respiratory' into a value\).*alias1 of 'Stroke'"):
        t.move("COPD", "Any")
    with pytest.raises(TaxonomyError, match=r"cannot delete 'COPD' \(it would turn 'Respiratory' into a value\)"):
        t.delete("COPD")
    t.delete("Respiratory")  # the whole group may go
    assert_consistent(t)


def test_a_value_that_becomes_a_generalization_loses_its_explicit_aliases() -> None:
    t = small()
    t.set_alias("Other", alias1="Misc", alias2="O-1")
    t.add("Other", "Rare")
    other = t.node("Other")
    assert not other.alias1_is_set and not other.alias2_is_set and CODE.fullmatch(other.alias2)
    t.set_alias("Flu", alias1="Misc", alias2="O-1")  # both are free again
    t.set_alias("Asthma", alias1="Common")
    t.move("Stroke", "Asthma")
    assert not t.node("Asthma").alias1_is_set
    assert_consistent(t)


def test_explicit_alias1_cannot_become_an_alias2() -> None:
    t = small()
    t.set_alias("Flu", alias1="Infection")
    with pytest.raises(TaxonomyError, match="alias2 'Infection' of 'Stroke' is already an alias1"):
        t.set_alias("Stroke", alias2="Infection")
    t.delete("Flu")  # its alias1 is released
    t.set_alias("Stroke", alias2="Infection")


# --- validation ----------------------------------------------------------------------------------


def test_validate_names_data_values_without_a_leaf() -> None:
    t = small()
    assert t.validate(["Flu", "Stroke", "Flu", ""]) == []  # missing values need no leaf
    messages = t.validate(["Flu", "Measles", "Cardio", "Measles"])
    assert messages == ["data values without a leaf (2): 'Measles', 'Cardio'"]
    many = [f"v{i}" for i in range(25)]
    (message,) = t.validate(many)
    assert message.startswith("data values without a leaf (25): 'v0'") and "'v9'" in message
    assert "'v10'" not in message and message.endswith("and 15 more")


def test_validate_accepts_a_pandas_column_and_numbers() -> None:
    t = Taxonomy.flat("age", [17, 23.0, "30"])
    assert t.validate(pd.Series([17, 23, 23, np.nan])) == []
    assert t.validate(pd.Series([17.0, 99.0])) == ["data values without a leaf (1): '99'"]
    assert t.validate(pd.Series(["17", pd.NA, None], dtype="string")) == []
    assert t.validate([17, None, float("nan"), pd.NA, pd.NaT]) == []


def test_validate_catches_damage_made_outside_the_api() -> None:
    t = small()
    flu, stroke, cardio = t.node("Flu"), t.node("Stroke"), t.node("Cardio")
    flu._label = "Stroke"  # a duplicate leaf
    cardio.children.append(TaxonomyNode("  ", cardio, "AXXXXXXXX"))  # an empty label
    stroke._alias2 = t.node("Asthma").alias2  # a duplicate alias2
    messages = t.validate()
    assert "labels used more than once (labels must be unique) (1): 'Stroke'" in messages
    assert "the label '  ' is empty or not text; give every node a name" in messages
    assert any(m.startswith("alias2 codes shared by several values (1): ") for m in messages)
    with pytest.raises(TaxonomyError, match="Taxonomy of 'diagnosis' is not valid: .*'Stroke'"):
        t.check()


def test_validate_catches_a_cycle() -> None:
    t = small()
    resp = t.node("Respiratory")
    resp.children.append(t.root)  # a cycle built behind the API's back
    assert any("'Any' is reached twice" in m for m in t.validate())


def test_check_raises_with_all_messages() -> None:
    t = small()
    t.check(["Flu"])
    with pytest.raises(TaxonomyError, match=r"'Measles'"):
        t.check(["Measles"])
    with pytest.raises(TaxonomyError, match="no values"):
        Taxonomy("empty").check()


# --- flat taxonomy -------------------------------------------------------------------------------


def test_flat_taxonomy_from_data() -> None:
    t = Taxonomy.flat("sex", ["F", "M", "F", None, np.nan, pd.NA, 1.0], root_label="Any sex")
    assert t.root.label == "Any sex" and t.depth == 1
    assert t.leaf_labels() == ["F", "M", "1"]
    assert {leaf.alias1 for leaf in t.leaves()} == {"Any sex"}
    with pytest.raises(TaxonomyError, match="'\\*' is already used as the root"):
        Taxonomy.flat("x", ["a", "*"])


# --- semantic distance and marginality -----------------------------------------------------------


def brute_distance(t: Taxonomy, a: str, b: str) -> float:
    pa, pb = set(t.ancestors(a)), set(t.ancestors(b))
    return math.log2(1 + len(pa ^ pb) / len(pa | pb))


def test_distance_hand_computed_values() -> None:
    t = small()
    assert distance(t, "Flu", "Asthma") == pytest.approx(math.log2(1 + 2 / 4))  # siblings in a chapter
    assert distance(t, "Flu", "Stroke") == pytest.approx(math.log2(1 + 4 / 5))  # other chapter
    assert distance(t, "Flu", "Other") == pytest.approx(math.log2(1 + 3 / 4))  # leaf under the root
    assert distance(t, "Flu", "Respiratory") == pytest.approx(math.log2(1 + 1 / 3))  # its parent
    assert distance(t, "Flu", "Flu") == 0.0


@pytest.mark.parametrize("table", [True, False], ids=["lookup-table", "per-cell"])
def test_distance_matrix_properties_and_agreement(table: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not table:
        monkeypatch.setattr(semantic, "_TABLE_MAX", 0)  # the path taken for very deep trees
    levels = width_rows("x", range(40), [2, 6, 12])  # the product's interval levels: 0-1, 0-5, 0-11
    t = from_arx_csv("\n".join(";".join(row) for row in levels), "x")
    t.add("*", "odd one")  # uneven depth
    rows, cols, m = distance_matrix(t)
    assert rows == cols == t.leaf_labels() and m.shape == (41, 41)
    assert np.allclose(m, m.T) and np.all(np.diag(m) == 0)
    assert np.all((m >= 0) & (m < 1))
    for i, j in itertools.product(range(0, 41, 5), repeat=2):
        assert m[i, j] == pytest.approx(brute_distance(t, rows[i], rows[j]))


def test_distance_matrix_with_inner_nodes() -> None:
    t = small()
    rows, cols, m = distance_matrix(t, ["Flu", "Respiratory", "Any"], ["Respiratory", "Asthma", "Any"])
    for i, a in enumerate(rows):
        for j, b in enumerate(cols):
            assert m[i, j] == pytest.approx(brute_distance(t, a, b))


def test_marginality_matches_a_double_loop() -> None:
    t = small()
    counts = {"Flu": 5, "Asthma": 1, "Stroke": 3, "Other": 2}
    expected = {a: sum(n * brute_distance(t, a, b) for b, n in counts.items()) for a in t.leaf_labels()}
    got = marginality(t, counts)
    assert got.keys() == expected.keys()
    assert all(got[a] == pytest.approx(expected[a]) for a in expected)
    records = [v for v, n in counts.items() for _ in range(n)] + [None, pd.NA]
    assert marginality(t, records) == pytest.approx(got)
    assert marginality(t, pd.Series(records)) == pytest.approx(got)


def test_marginality_names_unknown_values() -> None:
    with pytest.raises(TaxonomyError, match=r"data values not in it \(1\): 'Measles'"):
        marginality(small(), ["Flu", "Measles"])
