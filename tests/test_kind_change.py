"""What a column keeps when it is read as another kind (core/taxonomy/kind_change.py, issue 31 point 1), and the
hierarchy files step 4 takes (core.protection.read_hierarchy, point 2)."""
from __future__ import annotations

import pandas as pd
import pytest
from conftest import shared_adult

from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import TaxonomyError
from ppdp_desktop.core.protection import builtin_hierarchy, read_hierarchy
from ppdp_desktop.core.taxonomy.kind_change import has_edits, relabelling, review_kind_change
from ppdp_desktop.core.taxonomy.tree import Taxonomy


def zip_tree() -> Taxonomy:
    tree = Taxonomy("PLZ")
    for group, values in (("Ost", ["02134", "01067"]), ("West", ["47602"])):
        tree.add(tree.root, group)
        for value in values:
            tree.add(group, value)
    tree.set_alias("47602", alias1="Duisburg")
    return tree


TEXT = pd.Series(["02134", "47602", "01067", "02134", None])
NUMBERS = pd.Series([2134.0, 47602.0, 1067.0, 2134.0, float("nan")])


def test_relabelling_follows_the_records():
    assert relabelling(TEXT, NUMBERS) == {"02134": ["2134"], "47602": ["47602"], "01067": ["1067"]}
    assert relabelling(TEXT, NUMBERS[:2]) == {}  # records that do not line up: nothing to follow


def test_a_tree_follows_its_values_to_numbers_and_back_with_groups_and_aliases():
    tree = zip_tree()
    there = review_kind_change("PLZ", Kind.TEXT, Kind.NUMERIC, TEXT, NUMBERS, tree, {}, "quasi-identifier")
    assert there.lost == [] and there.taxonomy is not tree  # a copy: the tree being edited waits for the yes
    assert there.taxonomy.parents() == {"*": None, "Ost": "*", "2134": "Ost", "1067": "Ost", "West": "*",
                                        "47602": "West"}
    assert there.taxonomy.find("47602").alias1 == "Duisburg"
    assert there.renamed == {"02134": "2134", "01067": "1067"}
    assert "'02134' is now '2134'" in there.kept[0] and "step 4 uses it as the column's hierarchy" in there.kept[0]
    back = review_kind_change("PLZ", Kind.NUMERIC, Kind.TEXT, NUMBERS, TEXT, there.taxonomy, {}, "quasi-identifier")
    assert back.taxonomy.parents() == tree.parents() and back.lost == []


def test_labels_that_stay_keep_the_very_tree():
    tree = zip_tree()
    change = review_kind_change("PLZ", Kind.TEXT, Kind.CATEGORICAL, TEXT, TEXT.copy(), tree, {}, None)
    assert change.taxonomy is tree and change.renamed == {} and change.lost == []


def test_values_that_become_one_across_groups_are_said_before():
    tree = Taxonomy("x")
    for group, values in (("A", ["02134", "5"]), ("B", ["2134"])):
        tree.add(tree.root, group)
        for value in values:
            tree.add(group, value)
    change = review_kind_change("x", Kind.TEXT, Kind.NUMERIC, pd.Series(["02134", "2134", "5"]),
                                pd.Series([2134, 2134, 5]), tree, {}, None)
    assert change.lost == ["'02134' is read as '2134' like another value: it stays under 'B', no longer also under 'A'"]
    assert change.taxonomy.parents() == {"*": None, "A": "*", "5": "A", "B": "*", "2134": "B"}


def test_one_number_written_two_ways_becomes_two_values_in_its_group():
    tree = Taxonomy("x")
    tree.add(tree.root, "G")
    tree.add("G", "7")
    change = review_kind_change("x", Kind.NUMERIC, Kind.TEXT, pd.Series([7, 7]), pd.Series(["007", "7"]), tree, {}, None)
    assert change.lost == [] and change.taxonomy.parents() == {"*": None, "G": "*", "007": "G", "7": "G"}


def test_numeric_only_settings_and_per_value_settings():
    protection = {"k": 5, "intervals": {"age": [5.0, 10.0]}, "cuts": {"bmi": [[18.5, 25.0]]}}
    change = review_kind_change("age", Kind.NUMERIC, Kind.CATEGORICAL, pd.Series([39, 40]), pd.Series(["39", "40"]),
                                None, protection, "quasi-identifier")
    assert change.protection == {"k": 5, "intervals": {}, "cuts": {"bmi": [[18.5, 25.0]]}}
    assert change.lost == ["its interval widths 5,10 (step 4): only a numeric column has them; a categorical column is "
                           "generalized by its taxonomy (step 2)"]
    assert review_kind_change("age", Kind.CATEGORICAL, Kind.NUMERIC, pd.Series(["39"]), pd.Series([39]), None,
                              protection).protection is None
    pairs = review_kind_change("code", Kind.TEXT, Kind.NUMERIC, pd.Series(["01", "1", "2"]), pd.Series([1, 1, 2]),
                               None, {}, "sensitive", {"01": [0.1, 0.5], "1": [0.2, 0.6], "2": [0.1, 0.4]}, {"2": 3})
    assert pairs.pairs == {"1": [0.1, 0.5], "2": [0.1, 0.4]} and pairs.value_choices == {"2": 3}
    assert pairs.lost == ["the sensitivity pair of '1' ([0.2, 0.6]): '1' is read as '1' like '01', whose sensitivity "
                          "pair ([0.1, 0.5]) it keeps"]


def test_a_flat_tree_of_the_data_holds_no_work():
    assert not has_edits(Taxonomy.flat("x", ["a", "b"]))
    tree = Taxonomy.flat("x", ["a", "b"])
    tree.set_alias("a", alias2="Q1")
    assert has_edits(tree) and has_edits(zip_tree())


def test_a_hierarchy_file_must_fit_its_column():
    ages = pd.Series([39, 50, 17])
    assert read_hierarchy(shared_adult("adult_hierarchy_age.csv"), "age", ages).depth == 4
    with pytest.raises(TaxonomyError) as caught:
        read_hierarchy(shared_adult("adult_hierarchy_education.csv"), "age", ages)
    assert str(caught.value) == ("adult_hierarchy_education.csv does not fit column 'age': values of the column are not "
                                 "in it (3): '39', '50', '17'; add them to the file, or choose the hierarchy made for "
                                 "this column.")
    with pytest.raises(TaxonomyError, match="single level"):
        read_hierarchy(shared_adult("adult_hierarchy_sex.csv"), "sex", pd.Series(["Male", "Female"]))


def test_the_built_in_levels_step_4_describes_are_the_jobs():
    dates = builtin_hierarchy("d", pd.Series(["2020-03-17", "1967-12-01"]), Kind.DATE)
    assert dates.chain("2020-03-17") == ["2020-03-17", "2020-03", "2020", "2020-2029", "*"]
    codes = builtin_hierarchy("z", pd.Series(["01067", "04109", "80331"]), Kind.TEXT)
    assert codes.chain("04109") == ["04109", "0410*", "041**", "04***", "0****", "*"]
    assert builtin_hierarchy("s", pd.Series(["m", "w"]), Kind.CATEGORICAL).chain("w") == ["w", "*"]
