"""Prosecutor re-identification risk (core.privacy.risk): every figure against an independent pandas
``groupby(dropna=False).size()``, a hand-computed golden example, the parameter checks, and the naive
linker of randomized quasi-identifiers."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.risk import NaiveLinkage, RiskAnalysis, analyse_risk, equivalence_classes, naive_linkage
from tests.conftest import shared_adult

ADULT_QI = [
    ["age", "sex", "race"],
    ["education", "marital-status", "sex", "race"],
    ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"],
]


def class_sizes(frame: pd.DataFrame, quasi: list[str]) -> np.ndarray:
    """Independent class sizes, one per record (pandas groupby, missing values as a group)."""
    if not quasi:
        return np.full(len(frame), len(frame), dtype=np.int64)
    return frame.groupby(quasi, dropna=False)[quasi[0]].transform("size").to_numpy(dtype=np.int64)


def check_against_groupby(frame: pd.DataFrame, quasi: list[str], threshold: float = 0.2,
                          k: int | None = 5) -> RiskAnalysis:
    n = len(frame)
    per_record = class_sizes(frame, quasi)
    sizes = (frame.groupby(quasi, dropna=False).size().to_numpy() if quasi else np.array([n] if n else [], dtype=int))
    a = analyse_risk(frame, quasi, threshold, k)
    assert a.n_records == n
    assert a.n_classes == len(sizes)
    assert a.sample_uniques == int((per_record == 1).sum())
    assert a.records_above_threshold == int((1.0 / per_record > threshold).sum())
    assert a.records_below_k == (None if k is None else int((per_record < k).sum()))
    if n:
        assert a.highest_risk == pytest.approx(float((1.0 / per_record).max()))
        assert a.average_risk == pytest.approx(float((1.0 / per_record).mean()))
        assert a.marketer_risk == pytest.approx(len(sizes) / n)
        assert a.share_sample_uniques == pytest.approx(a.sample_uniques / n)
        assert a.share_above_threshold == pytest.approx(a.records_above_threshold / n)
    else:
        assert (a.highest_risk, a.average_risk, a.marketer_risk, a.share_above_threshold) == (0.0, 0.0, 0.0, 0.0)
    assert sum(a.class_size_histogram.values()) == n
    expected_hist = pd.Series(per_record).value_counts().to_dict()
    assert a.class_size_histogram == {int(s): int(c) for s, c in expected_hist.items()}
    ids, csizes = equivalence_classes(frame, quasi)
    assert len(ids) == n and csizes.sum() == n and len(csizes) == a.n_classes
    if n:
        assert ids.min() == 0 and ids.max() == len(csizes) - 1
        assert np.array_equal(csizes[ids], per_record)
        assert np.array_equal(np.bincount(ids), csizes)
        if quasi:  # the same partition as pandas' groups: the pairing (ours, pandas') is one-to-one
            theirs = frame.groupby(quasi, dropna=False).ngroup().to_numpy()
            assert len(set(zip(ids.tolist(), theirs.tolist()))) == len(csizes)
    json.dumps(a.to_json(), allow_nan=False)
    assert all(isinstance(line, str) and line for line in a.lines())
    return a


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(shared_adult(), sep=";")


@pytest.mark.parametrize("quasi", ADULT_QI, ids=["age-sex-race", "edu-marital-sex-race", "all-8"])
def test_adult_figures_equal_groupby(adult, quasi):
    a = check_against_groupby(adult, quasi, threshold=0.2, k=5)
    assert a.quasi == tuple(quasi)
    assert a.missing_as_value is True


def test_adult_with_missing_values_kept_as_a_value(adult):
    frame = adult.copy()
    frame.loc[frame.index[::7], "race"] = None
    frame.loc[frame.index[::11], "age"] = np.nan
    check_against_groupby(frame, ["age", "sex", "race"], threshold=0.1, k=3)


VALUES = {
    "text": st.sampled_from(["a", "b", "c", None, np.nan]),
    "float": st.sampled_from([0.5, 1.0, 2.0, np.nan]),
    "int": st.integers(0, 3),
}


@st.composite
def tables(draw):
    n = draw(st.integers(0, 40))
    kinds = draw(st.lists(st.sampled_from(sorted(VALUES)), min_size=1, max_size=4))
    columns = {}
    for j, kind in enumerate(kinds):
        cells = draw(st.lists(VALUES[kind], min_size=n, max_size=n))
        columns[f"c{j}"] = pd.Series(cells, dtype=object if kind == "text" else float if kind == "float" else np.int64)
    frame = pd.DataFrame(columns)
    quasi = draw(st.lists(st.sampled_from(list(columns)), unique=True, max_size=len(columns)))
    return frame, quasi


@settings(max_examples=150, deadline=None)
@given(tables(), st.sampled_from([0.05, 0.2, 0.5, 1.0]), st.one_of(st.none(), st.integers(1, 6)))
def test_random_tables_equal_groupby(table, threshold, k):
    frame, quasi = table
    check_against_groupby(frame, quasi, threshold, k)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["x", "y", None, np.nan]), min_size=1, max_size=30))
def test_single_column_with_missing(cells):
    frame = pd.DataFrame({"dx": pd.Series(cells, dtype=object)})
    a = check_against_groupby(frame, ["dx"])
    missing = sum(c is None or (isinstance(c, float) and math.isnan(c)) for c in cells)
    assert a.n_classes == len({c for c in cells if isinstance(c, str)}) + (missing > 0)


def test_empty_quasi_list_is_one_class_of_all_records():
    frame = pd.DataFrame({"age": [1, 2, 3, 4]})
    ids, sizes = equivalence_classes(frame, [])
    assert ids.tolist() == [0, 0, 0, 0] and sizes.tolist() == [4]
    a = analyse_risk(frame, [])
    assert (a.n_classes, a.highest_risk, a.sample_uniques, a.class_size_histogram) == (1, 0.25, 0, {4: 4})
    assert "No quasi-identifiers" in a.lines()[0]


def test_key_overflowing_int64_is_refactorized():
    rng = np.random.default_rng(3)
    n = 3000
    frame = pd.DataFrame({f"q{j}": rng.integers(0, 500, n) for j in range(10)})  # 500^10 >> 2^63
    frame["last"] = rng.integers(0, 2, n)
    frame.iloc[1000:] = frame.iloc[:2000].to_numpy()  # plenty of repeated records
    check_against_groupby(frame, list(frame.columns))


def test_golden_six_records_by_hand():
    # classes: (30, F, missing) x3 -- None and NaN are the same missing value -- (40, M, 2000) x2, (50, M, 2000) x1
    frame = pd.DataFrame({
        "age": [30, 30, 30, 40, 40, 50],
        "sex": ["F", "F", "F", "M", "M", "M"],
        "postcode": [None, np.nan, None, "2000", "2000", "2000"],
    })
    quasi = ["age", "sex", "postcode"]
    ids, sizes = equivalence_classes(frame, quasi)
    assert sorted(sizes.tolist()) == [1, 2, 3]
    assert ids[0] == ids[1] == ids[2] and ids[3] == ids[4] != ids[5]
    a = analyse_risk(frame, quasi, threshold=0.4, k=3)
    assert (a.n_records, a.n_classes) == (6, 3)
    assert a.highest_risk == 1.0
    assert a.average_risk == 0.5 and a.marketer_risk == 0.5  # (3 * 1/3 + 2 * 1/2 + 1) / 6 = 3 / 6
    assert (a.sample_uniques, a.share_sample_uniques) == (1, 1 / 6)
    assert (a.records_above_threshold, a.share_above_threshold) == (3, 0.5)  # 1/2 and 1 exceed 0.4; 1/3 does not
    assert a.records_below_k == 3
    assert a.class_size_histogram == {1: 1, 2: 2, 3: 3}
    assert a.verdict() == "not protected"  # k = 3 does not hold: 3 records in groups smaller than 3
    assert analyse_risk(frame, quasi, threshold=0.5).records_above_threshold == 1  # 1/2 is not above 0.5
    assert analyse_risk(frame, quasi).records_below_k is None
    lines = a.lines()
    assert lines[0] == "1 of 6 records (16.7 %) is the only one with their age, sex and postcode."
    assert lines[1] == "The highest risk of re-identification is 100 % (a record alone in its group); on average 50 %."
    assert lines[2] == "3 records (50 %) are above the threshold of 40 %."
    assert lines[3] == "3 records are in groups smaller than k = 3."
    assert any("missing value counts as a value of its own" in line for line in lines)
    data = json.loads(json.dumps(a.to_json(), allow_nan=False))
    assert data["class_size_histogram"] == {"1": 1, "2": 2, "3": 3}
    assert data["sample_uniques"] == 1 and data["verdict"] == "not protected" and data["quasi_identifiers"] == quasi


def test_verdict_levels():
    """The one rule: green only when the stated k holds and every record is within the threshold."""
    fours = pd.DataFrame({"a": np.repeat([1, 2, 3], 4)})
    threes = pd.DataFrame({"a": np.repeat([1, 2], 3)})
    assert analyse_risk(fours, ["a"], threshold=0.5).verdict() == "not protected"  # no k stated
    assert analyse_risk(fours, ["a"], threshold=0.25, k=4).verdict() == "protected"  # 1/4 is not above 0.25
    assert analyse_risk(threes, ["a"], threshold=0.3, k=3).verdict() == "above threshold"  # 1/3 > 0.3
    assert analyse_risk(fours, ["a"], threshold=0.5, k=5).verdict() == "not protected"  # groups smaller than k
    assert analyse_risk(threes, [], threshold=0.3, k=3).verdict() == "not measured"


def test_empty_table_has_zeros_and_no_division_error():
    frame = pd.DataFrame({"age": pd.Series([], dtype=float), "sex": pd.Series([], dtype=object)})
    for quasi in (["age", "sex"], []):
        a = check_against_groupby(frame, quasi, k=2)
        assert (a.n_classes, a.sample_uniques, a.records_below_k, a.class_size_histogram) == (0, 0, 0, {})
        assert a.verdict() == ("protected" if quasi else "not measured") and "no records" in a.lines()[0]


@pytest.mark.parametrize("threshold", [0, 0.0, -0.1, 1.5, float("nan"), float("inf"), "0.2", True])
def test_bad_threshold(threshold):
    with pytest.raises(ParameterError, match=r"'threshold' parameter must be a risk in \(0, 1\]"):
        analyse_risk(pd.DataFrame({"a": [1]}), ["a"], threshold=threshold)


@pytest.mark.parametrize("k", [0, -1, 2.5, float("nan"), True])
def test_bad_k(k):
    with pytest.raises(ParameterError, match=r"'k' parameter must be a whole number of at least 1"):
        analyse_risk(pd.DataFrame({"a": [1]}), ["a"], k=k)


def test_good_edge_parameters():
    a = analyse_risk(pd.DataFrame({"a": [1, 2]}), ["a"], threshold=1, k=1)
    assert (a.records_above_threshold, a.records_below_k) == (0, 0)  # 1/1 is not above 1; no class below 1


def test_unknown_column_is_named_with_the_columns():
    frame = pd.DataFrame({"age": [1], "sex": ["F"]})
    with pytest.raises(ParameterError, match=r"'postcode'.*its columns: age, sex"):
        analyse_risk(frame, ["age", "postcode"])
    with pytest.raises(ParameterError, match="'zip'"):
        equivalence_classes(frame, ["zip"])


# --- naive linkage of randomized quasi-identifiers -------------------------------------------------------------

def test_naive_linkage_by_hand():
    original = pd.DataFrame({"a": [1.0, 1.0, 2.0, 3.0, 4.0, np.nan], "b": ["x", "x", "y", "y", "z", "w"]})
    released = pd.DataFrame({"a": ["1", "1", "2", "3", "5", None], "b": ["x", "x", "y", "y", "z", "w"]},
                            index=[10, 11, 12, 13, 14, 15])  # aligned by position, not by index
    # rows 0, 1: true values shown but shared (class of 2); rows 2, 3: true and unique; row 4: changed;
    # row 5: missing shown as missing, unique -> 3 of 6
    link = naive_linkage(original, released, ["a", "b"])
    assert isinstance(link, NaiveLinkage)
    assert (link.records, link.n_records, link.share) == (3, 6, 0.5)
    assert link.lines() == ["A naive linker who looks up a person's true a and b in the release finds the right record "
                            "for 3 of 6 records (50 %): their released values are unchanged and unique."]
    assert json.loads(json.dumps(link.to_json(), allow_nan=False))["records"] == 3


def test_naive_linkage_identity_release_counts_every_unique_record(adult):
    for quasi in ADULT_QI:
        assert naive_linkage(adult, adult, quasi).records == analyse_risk(adult, quasi).sample_uniques


@settings(max_examples=60, deadline=None)
@given(tables())
def test_naive_linkage_identity_on_random_tables(table):
    frame, quasi = table
    assert naive_linkage(frame, frame.copy(), quasi).records == analyse_risk(frame, quasi).sample_uniques


CELLS = st.sampled_from([1, 2, 1.0, 2.5, "1", "2", "2.5", None, np.nan])


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 30).flatmap(
    lambda n: st.tuples(*[st.lists(st.tuples(CELLS, CELLS), min_size=n, max_size=n)] * 2)))
def test_naive_linkage_equals_a_text_column_computation(rows):
    true_rows, shown_rows = rows
    original = pd.DataFrame(true_rows, columns=["a", "b"], dtype=object)
    released = pd.DataFrame(shown_rows, columns=["a", "b"], dtype=object)
    true = pd.DataFrame({c: text_column(original[c]) for c in original})
    shown = pd.DataFrame({c: text_column(released[c]) for c in released})
    same = (true == shown).all(axis=1).to_numpy()
    unique = class_sizes(shown, ["a", "b"]) == 1 if len(shown) else np.zeros(0, dtype=bool)
    assert naive_linkage(original, released, ["a", "b"]).records == int((same & unique).sum())


def test_naive_linkage_shuffled_column():
    rng = np.random.default_rng(7)
    n = 2000
    original = pd.DataFrame({"id": np.arange(n), "sex": rng.choice(["F", "M"], n), "age": rng.integers(0, 90, n)})
    rolled = original.assign(id=np.roll(original["id"].to_numpy(), 1))  # every record gets another's id
    assert naive_linkage(original, rolled, ["id", "sex", "age"]).records == 0
    shuffled = original.assign(age=rng.permutation(original["age"].to_numpy()))
    quasi = ["sex", "age"]
    expected = ((shuffled["age"] == original["age"]).to_numpy() & (class_sizes(shuffled, quasi) == 1)).sum()
    link = naive_linkage(original, shuffled, quasi)
    assert link.records == expected and link.share == pytest.approx(expected / n)


def test_naive_linkage_needs_aligned_frames():
    with pytest.raises(ParameterError, match="same records in the same order"):
        naive_linkage(pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"a": [1]}), ["a"])
    with pytest.raises(ParameterError, match="'a' is not a column of the release"):
        naive_linkage(pd.DataFrame({"a": [1]}), pd.DataFrame({"b": [1]}), ["a"])
