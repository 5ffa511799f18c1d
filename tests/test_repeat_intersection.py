"""The intersection of two generalized releases of a project (issue 30, part A): the records whose group shrinks
below k when someone combines the releases, on a hand example and on the shared adult data generalized two ways."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.repeat.intersection import ATTACKER, intersection_check
from ppdp_desktop.core.repeat.records import ReleaseRecords
from tests.conftest import shared_adult


def release(identities, classes) -> ReleaseRecords:
    n = len(identities)
    return ReleaseRecords(np.asarray(identities, dtype=np.uint64), np.arange(n, dtype=np.uint64), np.zeros(n),
                          np.asarray(classes, dtype=np.uint64))


def test_a_hand_example():
    # ten patients; the earlier release puts 0-4 in class 1 and 5-9 in class 2 (k = 5: 5-anonymous); this one cuts
    # across them: 0-2 with 5-6 in class 7, 3-4 with 7-9 in class 8 (5-anonymous too). Combined, the groups are
    # {0,1,2}, {3,4}, {5,6}, {7,8,9}: every record hides among fewer than 5
    before = release(range(10), [1] * 5 + [2] * 5)
    now = release(range(10), [7, 7, 7, 8, 8, 7, 7, 8, 8, 8])
    report = intersection_check(before, now, 5, same_node=False)
    assert (report.common, report.shrunk, report.smallest) == (10, 10, 2)
    assert intersection_check(before, now, 2, same_node=False).shrunk == 0
    assert intersection_check(before, now, 3, same_node=False).shrunk == 4  # {3,4} and {5,6}
    text = report.sentences()
    assert text[0] == ("This release uses a different generalization from the project's previous generalized release; "
                       "10 records are in both.")
    assert text[1].startswith("10 records would be in a group smaller than k = 5 (the smallest holds 2) if the two "
                              "releases were combined, because the groups of the two generalizations cut across each other")
    assert ATTACKER in text[1]
    assert json.loads(json.dumps(report.to_json())) == {"k": 5, "common": 10, "shrunk": 10, "smallest": 2,
                                                        "same_node": False}


def test_the_same_node_over_the_same_records_reveals_nothing():
    classes = [1] * 5 + [2] * 6
    report = intersection_check(release(range(11), classes), release(range(10, -1, -1), classes[::-1]), 5, True)
    assert (report.common, report.shrunk, report.smallest, report.same_node) == (11, 0, 5, True)
    assert report.sentences()[1] == (f"Combined, every record in both releases stays in a group of at least k = 5 (the "
                                     f"smallest holds 5) for {ATTACKER}.")


def test_the_same_node_over_a_changed_record_set_can_shrink_a_group():
    # patients 3 and 4 left and 10-12 joined class 1: each release is 5-anonymous, but of class 1 only 0-2 are in both
    before = release(range(10), [1] * 5 + [2] * 5)
    now = release([0, 1, 2, 10, 11, 12, 5, 6, 7, 8, 9], [1] * 6 + [2] * 5)
    report = intersection_check(before, now, 5, same_node=True)
    assert (report.common, report.shrunk, report.smallest) == (8, 3, 3)
    assert "because the records in each group changed between the releases" in report.sentences()[1]


def test_no_common_records_and_repeated_identities():
    report = intersection_check(release([1, 2], [1, 1]), release([3, 4], [1, 1]), 2, same_node=False)
    assert (report.common, report.shrunk, report.smallest) == (0, 0, 0)
    assert ATTACKER in report.sentences()[1]
    # a patient with two records counts once (with its first record's class): the group is never counted larger
    report = intersection_check(release([1, 1, 2], [5, 6, 5]), release([1, 2, 2], [7, 7, 8]), 2, same_node=False)
    assert (report.common, report.shrunk, report.smallest) == (2, 0, 2)


def test_a_release_without_classes_or_a_bad_k_is_refused():
    plain = ReleaseRecords(np.arange(3, dtype=np.uint64), np.arange(3, dtype=np.uint64), np.zeros(3))
    generalized = release(range(3), [1, 1, 1])
    with pytest.raises(ParameterError, match="The previous release records no equivalence classes"):
        intersection_check(plain, generalized, 2, same_node=True)
    with pytest.raises(ParameterError, match="This release records no equivalence classes"):
        intersection_check(generalized, plain, 2, same_node=True)
    with pytest.raises(ParameterError):
        intersection_check(generalized, generalized, 0, same_node=True)


# --- the shared adult data, generalized two ways -------------------------------------------------------------------
K = 25


def generalized(frame: pd.DataFrame, offset: int) -> pd.DataFrame:
    """Age in 10-year bands starting at ``offset`` with sex as the quasi-identifiers; the classes smaller than K
    suppressed, as a k-anonymous release would: a k-anonymous release of its own."""
    age = frame["age"].astype(int)
    band = (age - offset) // 10 * 10 + offset
    out = pd.DataFrame({"identity": frame.index.to_numpy(dtype=np.uint64),
                        "band": band.astype(str) + "-" + (band + 9).astype(str), "sex": frame["sex"]})
    sizes = out.groupby(["band", "sex"])["identity"].transform("size")
    return out[sizes >= K].reset_index(drop=True)


def as_records(table: pd.DataFrame) -> ReleaseRecords:
    classes = pd.util.hash_pandas_object(table[["band", "sex"]], index=False).to_numpy(dtype=np.uint64)
    return release(table["identity"].to_numpy(), classes)


def expected(before: pd.DataFrame, now: pd.DataFrame) -> tuple[int, int, int]:
    """The combined classes by a join (independent of the code under test)."""
    both = before.merge(now, on="identity", suffixes=("_before", "_now"))
    sizes = both.groupby(["band_before", "sex_before", "band_now", "sex_now"])["identity"].transform("size")
    return len(both), int((sizes < K).sum()), int(sizes.min())


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False)


def test_two_generalizations_of_adult_shrink_groups_below_k(adult):
    before, now = generalized(adult, 0), generalized(adult.sample(frac=1, random_state=5), 5)  # rows reordered too
    for table in (before, now):
        assert table.groupby(["band", "sex"]).size().min() >= K  # each release alone is K-anonymous
    report = intersection_check(as_records(before), as_records(now), K, same_node=False)
    assert (report.common, report.shrunk, report.smallest) == expected(before, now)
    assert report.shrunk > 0 and report.smallest < K
    assert f"{report.shrunk:,} records would be in a group smaller than k = {K}" in report.sentences()[1]


def test_the_same_generalization_of_adult_over_the_same_records_shrinks_nothing(adult):
    before = generalized(adult, 0)
    now = generalized(adult.sample(frac=1, random_state=9), 0)
    report = intersection_check(as_records(before), as_records(now), K, same_node=True)
    assert (report.common, report.shrunk) == (len(before), 0)
    assert report.smallest == before.groupby(["band", "sex"]).size().min() >= K
    # the same node, but a tenth of the patients replaced by others alike (new identities): every class keeps its
    # size, yet fewer of its records are in both releases; the groups that shrink are found, and they are the join's
    replaced = adult.sample(frac=0.1, random_state=1)
    later = generalized(pd.concat([adult.drop(replaced.index), replaced.set_axis(replaced.index + 100_000)]), 0)
    assert later.groupby(["band", "sex"]).size().min() >= K
    report = intersection_check(as_records(before), as_records(later), K, same_node=True)
    assert (report.common, report.shrunk, report.smallest) == expected(before, later)
    assert report.shrunk > 0
    assert "because the records in each group changed between the releases" in report.sentences()[1]
