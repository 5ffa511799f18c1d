"""A record's identity fingerprints depend on its own values only: the same whether its column is hashed cell by
cell (a lone record, an identifier) or through the column's distinct values (issue 34: a column of few distinct
values hashes those alone and gathers). The ledger recognises a patient across releases by them."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.privacy.persistent import identity_fingerprints

_cells = st.one_of(st.none(), st.integers(-5, 5), st.sampled_from(["a", "b", "02134", "ä", ""]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_cells, st.sampled_from(["x", "y", None])), min_size=1, max_size=8),
       st.integers(70, 300))
def test_a_record_fingerprint_is_its_own(records, repeats):
    rows = (records * repeats)[: max(len(records), repeats)]
    frame = pd.DataFrame({"code": pd.Series([r[0] for r in rows], dtype=object),
                          "ward": pd.Series([r[1] for r in rows], dtype="str")})
    first, second = identity_fingerprints(frame, ["code", "ward"])
    for i in range(len(records)):
        alone = frame.iloc[[i]].reset_index(drop=True)
        one, two = identity_fingerprints(alone, ["code", "ward"])
        assert (one[0], two[0]) == (first[i], second[i])


def test_an_identifier_column_and_a_repeated_one_agree():
    ids = pd.Series([f"P{i:06d}" for i in range(5000)], dtype="str")
    distinct = identity_fingerprints(pd.DataFrame({"id": ids}), ["id"])
    repeated = identity_fingerprints(pd.DataFrame({"id": pd.concat([ids[:50]] * 100, ignore_index=True)}), ["id"])
    assert np.array_equal(repeated[0][:50], distinct[0][:50])
    assert np.array_equal(repeated[1][:50], distinct[1][:50])
    assert len(np.unique(distinct[0])) == 5000


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=300), st.binary(min_size=32, max_size=32))
def test_ids_made_in_any_order_are_the_records_ids(records, secret):
    # the in-memory job makes its pseudonyms in the release's shuffled order (issue 34: no shuffled copy)
    from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey

    key = PseudonymKey(secret)
    made = key.ids_at(np.asarray(records, dtype=np.int64)).to_pylist()
    in_order = key.ids(0, 5001).to_pylist()
    assert made == [in_order[i] for i in records]
    assert key.index_of(made).tolist() == records


def test_a_stable_key_makes_no_id_from_an_index():
    import pytest

    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.privacy.persistent import PersistentKeys
    from ppdp_desktop.core.privacy.pseudonyms import StablePseudonymKey

    with pytest.raises(PrivacyError):
        StablePseudonymKey.from_secret(PersistentKeys(bytes(range(32)))).ids_at(np.arange(3))


def test_a_distinct_column_hashed_in_pieces_is_hashed_as_whole(monkeypatch):
    from ppdp_desktop.core.privacy import persistent

    frame = pd.DataFrame({"id": pd.Series([f"P{i:05d}" if i % 13 else None for i in range(3000)], dtype="str"),
                          "ward": pd.Series(["a", "b", "c"] * 1000, dtype="str")})
    whole = identity_fingerprints(frame, ["id", "ward"])
    monkeypatch.setattr(persistent, "_PIECE", 7)
    pieces = identity_fingerprints(frame, ["id", "ward"])
    assert np.array_equal(whole[0], pieces[0]) and np.array_equal(whole[1], pieces[1])


_texts = st.lists(st.one_of(st.none(), st.text(max_size=12)), min_size=1, max_size=40)


@settings(max_examples=80, deadline=None)
@given(_texts)
def test_an_arrow_text_column_hashes_as_its_text(cells):
    """The UTF-8 bytes read from Arrow (no Python text per cell) hash as the text does: the same fingerprints as an
    object column of the same texts, for any text (accents, emoji, empty, missing) and every Arrow-backed dtype."""
    from ppdp_desktop.core.privacy import persistent

    cells = [c if c is None else c.encode("utf-8", "replace").decode("utf-8") for c in cells]  # no lone surrogates
    expected = persistent._hashes(pd.Series(cells, dtype=object))
    for dtype in ("str", "string[pyarrow]", pd.ArrowDtype(pa.large_string())):
        column = pd.Series(cells, dtype=dtype)
        assert dtype == "str" or persistent._utf8_cells(column) is not None  # "str" is Arrow text from pandas 3 on
        got = persistent._hashes(column)
        assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True)), dtype
