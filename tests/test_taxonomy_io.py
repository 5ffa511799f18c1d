"""Reading and writing taxonomies: our JSON format, ARX hierarchy CSV, and hostile input."""
from __future__ import annotations

import codecs
import csv
import json
from pathlib import Path

import pytest
from conftest import shared_adult
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.data.resources import DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.errors import TaxonomyError
from ppdp_desktop.core.taxonomy.io import (
    from_arx_csv,
    from_dict,
    from_json,
    load_arx_csv,
    load_json,
    load_taxonomy,
    save_arx_csv,
    save_json,
    save_taxonomy,
    to_arx_csv,
    to_dict,
    to_json,
)
from ppdp_desktop.core.taxonomy.tree import Taxonomy

ADULT_HIERARCHIES = {
    "age": (100, 4),
    "education": (16, 3),
    "marital-status": (7, 2),
    "native-country": (41, 2),
    "occupation": (14, 2),
    "race": (5, 1),
    "salary-class": (2, 1),
    "sex": (2, 1),
    "workclass": (8, 2),
}


def uneven() -> Taxonomy:
    """Leaves at depths 1, 2 and 3, with labels that need quoting in CSV."""
    t = Taxonomy("diagnosis", "Any")
    t.add("Any", "Cancer")
    t.add("Cancer", "Solid; tumours")
    t.add("Solid; tumours", 'Lung "NSCLC"')
    t.add("Solid; tumours", "Breast, ductal")
    t.add("Cancer", "Leukaemia")
    t.add("Any", "Healthy")
    t.add("Any", "Ünïcode ✓")
    t.add("Ünïcode ✓", "naïve")
    return t


def same_tree(a: Taxonomy, b: Taxonomy) -> bool:
    """Same labels, same parent of every node, same child order."""
    return a.parents() == b.parents() and list(a.parents()) == list(b.parents())


# --- JSON ----------------------------------------------------------------------------------------


def test_demo_taxonomy_loads() -> None:
    t = load_json(resource_path(DEMO_TAXONOMY))
    assert t.attribute == "diagnosis" and t.root.label == "Any diagnosis"
    assert len(t.leaves()) == 41 and t.depth == 2
    assert t.validate() == []
    assert load_taxonomy(resource_path(DEMO_TAXONOMY), "dx").attribute == "dx"


def test_json_round_trip_keeps_tree_and_explicit_aliases(tmp_path: Path) -> None:
    t = uneven()
    t.set_alias("Leukaemia", alias1="Blood", alias2="K-17")
    t.set_alias("Healthy", alias1="Fine")
    path = tmp_path / "t.json"
    save_json(t, path)
    back = load_json(path)
    assert same_tree(t, back) and back.attribute == "diagnosis"
    leuk = back.leaf("Leukaemia")
    assert (leuk.alias1, leuk.alias2, leuk.alias1_is_set, leuk.alias2_is_set) == ("Blood", "K-17", True, True)
    assert back.leaf("Healthy").alias1 == "Fine" and not back.leaf("Healthy").alias2_is_set
    assert back.leaf("naïve").alias2 != t.leaf("naïve").alias2  # default codes are never written
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format_version"] == 1 and "alias2" not in json.dumps(data["root"]["children"][1])
    assert from_json(to_json(back).encode("utf-8")).parents() == t.parents()
    assert same_tree(from_dict(to_dict(t)), t)


def test_aliases_of_a_leaf_that_became_inner_are_not_written() -> None:
    t = uneven()
    t.set_alias("Healthy", alias1="Fine", alias2="H-1")
    t.add("Healthy", "Very healthy")
    back = from_json(to_json(t))
    assert same_tree(back, t) and not back.node("Healthy").alias2_is_set


def test_json_without_format_version_and_with_numeric_labels() -> None:
    t = from_json('{"attribute": "age", "root": {"label": "*", "children": [{"label": 17}, {"label": 18.0}]}}')
    assert t.leaf_labels() == ["17", "18"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"root": {"label": "*"}}', "'attribute' must name the column"),
        ('{"attribute": "a"}', "'root' must be an object"),
        ('{"attribute": "a", "root": []}', "'root' must be an object"),
        ('{"attribute": "a", "root": {}}', "the root has no 'label'"),
        ('{"attribute": "a", "root": {"label": "*", "children": {}}}', "'children' of '\\*' must be a list"),
        ('{"attribute": "a", "root": {"label": "*", "children": [3]}}', "child 1 of '\\*' must be an object"),
        ('{"attribute": "a", "root": {"label": "*", "children": [{"name": "x"}]}}', "child 1 of '\\*' has no 'label'"),
        ('{"attribute": "a", "root": {"label": "*", "children": [{"label": null}]}}', "must be text, got nothing"),
        ('{"attribute": "a", "root": {"label": "*", "children": [{"label": true}]}}', "must be text, got true/false"),
        ('{"attribute": "a", "root": {"label": "*", "children": [{"label": ""}]}}', "label '' is empty or not text"),
        (
            '{"attribute": "a", "root": {"label": "*", '
            '"children": [{"label": "x", "children": [{"label": "y"}]}, {"label": "y"}]}}',
            "the label 'y' is already used under",
        ),
        (
            '{"attribute": "a", "root": {"label": "*", '
            '"children": [{"label": "x", "alias2": "C"}, {"label": "y", "alias2": "C"}]}}',
            "alias2 'C' of '.' is already the alias2 of '.'",
        ),
        (
            '{"attribute": "a", "root": {"label": "*", "children": [{"label": "x", "alias2": "y"}, {"label": "y"}]}}',
            "alias2 'y' of 'x' is already a label",
        ),
        (
            '{"attribute": "a", "root": {"label": "*", "children": [{"label": "x", "alias1": 5}]}}',
            "alias1 of 'x' must be non-empty text, not 5",
        ),
        (
            '{"attribute": "a", "root": {"label": "*", '
            '"children": [{"label": "x", "alias1": "g", "children": [{"label": "y"}]}]}}',
            "'x' has aliases but is not a leaf",
        ),
        ('{"attribute": "a", "format_version": 2, "root": {"label": "*"}}', "newer version"),
        ('{"attribute": "a", "format_version": "1", "root": {"label": "*"}}', "'format_version' must be"),
        ("[" * 100_000, "nested more than 256 levels"),
        ("1" * 5_000, "a number of 5,000 characters"),
    ],
)
def test_bad_json_is_refused_with_a_clear_message(text: str, match: str) -> None:
    with pytest.raises(TaxonomyError, match=match):
        from_json(text, source="t.json")


def test_bad_json_message_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_bytes(b"\xff\xfe{")
    with pytest.raises(TaxonomyError, match="mine.json: not UTF-8"):
        load_json(path)
    with pytest.raises(TaxonomyError, match="missing.json: cannot be read"):
        load_json(tmp_path / "missing.json")


# --- ARX CSV -------------------------------------------------------------------------------------


@pytest.fixture(params=sorted(ADULT_HIERARCHIES))
def adult_hierarchy(request: pytest.FixtureRequest) -> tuple[str, Path]:
    return request.param, shared_adult(f"adult_hierarchy_{request.param}.csv")


def test_adult_hierarchy_imports(adult_hierarchy: tuple[str, Path]) -> None:
    name, path = adult_hierarchy
    t = load_taxonomy(path, name)
    leaves, depth = ADULT_HIERARCHIES[name]
    rows = [line.split(";") for line in path.read_text(encoding="utf-8").splitlines() if line]
    assert t.attribute == name and t.root.label == "*"
    assert sorted(t.leaf_labels()) == sorted(row[0] for row in rows)  # tree order groups siblings
    assert len(t.leaves()) == leaves and t.depth == depth
    for row in rows:  # every row is the path of its value (ARX padding collapsed)
        collapsed = [c for i, c in enumerate(row) if i == 0 or c != row[i - 1]]
        assert t.ancestors(row[0]) == collapsed
    assert t.validate([row[0] for row in rows]) == []


def test_adult_hierarchy_export_import_identity(adult_hierarchy: tuple[str, Path], tmp_path: Path) -> None:
    name, path = adult_hierarchy
    t = load_arx_csv(path, name)
    out = tmp_path / f"{name}.csv"
    save_arx_csv(t, out)
    assert same_tree(load_taxonomy(out, name), t)
    if name != "age":  # no padding needed: the same rows as ARX's file (in tree order)
        assert sorted(out.read_text(encoding="utf-8").splitlines()) == sorted(path.read_text(encoding="utf-8").splitlines())


def test_age_values_are_numbers_as_text() -> None:
    t = load_arx_csv(shared_adult("adult_hierarchy_age.csv"), "age")
    assert t.ancestors("17") == ["17", "15-19", "10-19", "0-19", "*"]
    assert t.validate(range(1, 101)) == []


def test_uneven_tree_export_pads_and_import_collapses(tmp_path: Path) -> None:
    t = uneven()
    text = to_arx_csv(t)
    rows = text.splitlines()
    assert rows[0] == '"Lung ""NSCLC""";"Solid; tumours";Cancer;Any'
    assert rows[2] == "Leukaemia;Leukaemia;Cancer;Any"
    assert rows[3] == "Healthy;Healthy;Healthy;Any"
    assert same_tree(from_arx_csv(text, "diagnosis"), t)
    path = tmp_path / "t.csv"
    save_taxonomy(t, path)
    assert same_tree(load_taxonomy(path, "diagnosis"), t)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "utf-16"])
def test_arx_encodings_are_sniffed(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "h.csv"
    path.write_bytes("Café;Drinks;*\nThé;Drinks;*\nPâté;Food;*\r\n".encode(encoding))
    t = load_arx_csv(path, "menu")
    assert t.leaf_labels() == ["Café", "Thé", "Pâté"] and t.ancestors("Thé") == ["Thé", "Drinks", "*"]


def test_a_windows_1250_hierarchy_loads_with_its_letters_and_an_unclear_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mesta.csv"
    path.write_bytes("Plzeň;Plzeňský kraj;*\nČeské Budějovice;Jihočeský kraj;*\nTřebíč;Kraj Vysočina;*\n"
                     "Kroměříž;Zlínský kraj;*\n".encode("cp1250"))
    t = load_arx_csv(path, "město")
    assert t.leaf_labels() == ["Plzeň", "České Budějovice", "Třebíč", "Kroměříž"]  # not "Plzeò", "Èeské"
    assert t.ancestors("Plzeň") == ["Plzeň", "Plzeňský kraj", "*"]
    unclear = tmp_path / "varos.csv"
    unclear.write_bytes("Győr;Nyugat;*\nPécs;Dél;*\n".encode("cp1250"))  # ő or õ: the file cannot tell
    with pytest.raises(TaxonomyError) as caught:
        load_arx_csv(unclear, "varos")
    message = str(caught.value)
    assert message.startswith("varos.csv: its encoding cannot be told") and caught.value.file == "varos.csv"
    assert '"Győr"' in message and '"Gyõr"' in message and "save it as UTF-8" in message and "\n" not in message


def test_arx_comma_separator_blank_lines_and_trailing_separator() -> None:
    assert from_arx_csv("a,x,*\nb,x,*\n\n", "v").ancestors("b") == ["b", "x", "*"]
    assert from_arx_csv("a;x;*;\nb;y;*;\n", "v").ancestors("b") == ["b", "y", "*"]


def test_arx_several_roots_get_a_synthetic_root_and_one_column_is_flat() -> None:
    t = from_arx_csv("a;x\nb;y\nc;y\n", "v")
    assert t.root.label == "*" and [c.label for c in t.root.children] == ["x", "y"]
    t = from_arx_csv("a\nb\n", "v")
    assert t.root.label == "*" and t.leaf_labels() == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "has no rows"),
        ("a;x;*\nb;;*\n", "line 2, column 2: empty cell"),
        ("a;x;*\nb;x\n", "line 2: 2 columns, but line 1 has 3"),
        ("a;x;*\nb;y;*\na;y;*\n", "line 3: the value 'a' already has a row \\(line 1\\)"),
        ("a;x;g;*\nb;x;h;*\n", "'x' is under 'g' on line 1 but under 'h' on line 2"),
        ("a;b;a;*\n", "'a' is under 'b' on line 1 but under '\\*' on line 1"),
        ("a;x;*\nx;y;*\n", "'x' is under '\\*' on line 1 but under 'y' on line 2"),
        ("a;a;*\nb;a;*\n", "'a' is a value \\(line 1\\) and also the generalization of 'b' \\(line 2\\)"),
        ("*;*\n", "line 1: the value '\\*' is also the root"),
        ("a;*;r\nb;c;r\nc;d;r\n", "'c' is under 'r' on line 2 but under 'd' on line 3"),
        ('a;"x"y;*\n', "line 1: ';' expected after"),
        ("a;r;x\nr;y;x\n", "'r' is under 'x' on line 1 but under 'y' on line 2"),
        ('a;"x\n', "line 1: unexpected end of data"),
        ("a;\x00;*\n", "NUL"),
    ],
)
def test_bad_arx_hierarchy_is_refused_naming_the_line_or_label(text: str, match: str) -> None:
    with pytest.raises(TaxonomyError, match=match):
        from_arx_csv(text, "v", source="h.csv")


def test_undecodable_arx_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_bytes(b"a;x\x81\x8dy;*\n")  # no encoding searched reads these bytes inside a word
    with pytest.raises(TaxonomyError, match="h.csv: byte offset 3 is not valid UTF-8 or Windows-1252"):
        load_arx_csv(path, "v")


def test_load_taxonomy_dispatch_errors(tmp_path: Path) -> None:
    with pytest.raises(TaxonomyError, match="unknown taxonomy file type '.xlsx'"):
        load_taxonomy(tmp_path / "h.xlsx", "v")
    with pytest.raises(TaxonomyError, match="unknown taxonomy file type"):
        save_taxonomy(uneven(), tmp_path / "h.xml")
    with pytest.raises(TaxonomyError, match="Cannot write"):
        save_json(uneven(), tmp_path / "no such folder" / "t.json")


# --- fuzzing: hostile input raises TaxonomyError and nothing else ---------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["label", "children", "alias1", "alias2", "x"]), inner, max_size=4),
    max_leaves=25,
)
node = st.recursive(
    st.fixed_dictionaries({"label": st.text(max_size=3) | st.integers(0, 3)}),
    lambda inner: st.fixed_dictionaries(
        {"label": st.text(max_size=3) | st.integers(0, 3)},
        optional={"children": st.lists(inner, max_size=4) | scalars, "alias1": scalars, "alias2": scalars},
    ),
    max_leaves=20,
)
documents = st.fixed_dictionaries(
    {"root": node | json_values}, optional={"attribute": st.text(max_size=3) | scalars, "format_version": scalars}
)
csv_text = st.lists(
    st.lists(st.sampled_from(["a", "b", "c", "*", "", " ", '"', "x;y", "\r"]), min_size=1, max_size=4).map(";".join),
    max_size=8,
).map("\n".join)


def _only_taxonomy_errors(parse, data) -> None:  # noqa: ANN001
    try:
        result = parse(data)
    except TaxonomyError:
        return
    assert isinstance(result, Taxonomy)
    result.validate()


@FUZZ
@given(st.binary(max_size=200))
def test_fuzz_json_bytes(data: bytes) -> None:
    _only_taxonomy_errors(from_json, data)


@FUZZ
@given(st.text(max_size=200))
def test_fuzz_json_text(text: str) -> None:
    _only_taxonomy_errors(from_json, text)


@FUZZ
@given(documents | json_values)
def test_fuzz_nested_json_documents(document: object) -> None:
    _only_taxonomy_errors(from_json, json.dumps(document))
    _only_taxonomy_errors(from_dict, document)


@FUZZ
@given(documents)
def test_fuzz_valid_json_documents_round_trip(document: object) -> None:
    try:
        t = from_dict(document)
    except TaxonomyError:
        return
    assert same_tree(from_json(to_json(t)), t)
    if t.leaves():
        assert same_tree(from_arx_csv(to_arx_csv(t), t.attribute), t)


@FUZZ
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda s: s.encode("utf-8")))
def test_fuzz_arx_bytes(data: bytes) -> None:
    _only_taxonomy_errors(lambda d: from_arx_csv(d, "v"), data)
    _only_taxonomy_errors(lambda d: from_arx_csv(codecs.BOM_UTF8 + d, "v"), data)


@FUZZ
@given(csv_text | st.text(max_size=200))
def test_fuzz_arx_text(text: str) -> None:
    _only_taxonomy_errors(lambda d: from_arx_csv(d, "v"), text)
    try:
        t = from_arx_csv(text, "v")
    except TaxonomyError:
        return
    assert same_tree(from_arx_csv(to_arx_csv(t), "v"), t)


def test_the_arx_export_has_no_live_formula_and_reads_back_exactly() -> None:
    """Issue 32, point 4: every CSV the app writes is formula-guarded, a taxonomy's ARX export too."""
    labels = ["=HYPERLINK(\"http://evil.example\")", "+1", "-2", "@SUM(A1)", "'=already quoted", "plain"]
    taxonomy = Taxonomy.flat("x", labels)
    text = to_arx_csv(taxonomy)
    cells = [cell for line in text.splitlines() for cell in next(csv.reader([line], delimiter=";"))]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], cells
    assert from_arx_csv(text, "x").leaf_labels() == labels
