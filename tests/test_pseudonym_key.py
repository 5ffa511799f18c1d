"""Pseudonyms unique by construction: record i's id is "R" + hex(AES-256(key, i)); the key gives the index back."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.privacy.pseudonyms import MAX_IDS_PER_ARRAY, PSEUDONYM_COLUMN, PseudonymKey, make_pseudonyms

KEY = PseudonymKey(bytes(range(32)))
ID = re.compile(r"R[0-9a-f]{32}")


def test_known_answer():
    """FIPS-197 / NIST SP 800-38A style check: the id is the AES-256 block of the index, big-endian."""
    assert PseudonymKey(bytes(32)).ids(0, 1).to_pylist() == ["Rdc95c078a2408989ad48a21492842087"]
    key = bytes(range(32))
    for index in (0, 1, 255, 2**32 + 7, 2**62):
        block = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(index.to_bytes(16, "big"))
        assert KEY.ids(index, index + 1).to_pylist() == ["R" + block.hex()]


def test_ids_are_distinct_and_of_the_new_form():
    ids = KEY.ids(0, 200_000)
    assert isinstance(ids, pa.StringArray) and ids.type == pa.string() and len(ids) == 200_000
    values = ids.to_numpy(zero_copy_only=False)
    assert len(set(values)) == len(values)
    assert all(ID.fullmatch(v) for v in values[:2000])
    assert pd.Series(values).str.fullmatch(ID.pattern).all()


def test_index_of_inverts_ids():
    for start, stop in ((0, 0), (0, 1), (5, 1000), (2**40, 2**40 + 300)):
        ids = KEY.ids(start, stop)
        assert np.array_equal(KEY.index_of(ids), np.arange(start, stop, dtype=np.int64))
        assert np.array_equal(KEY.index_of(ids.to_pylist()), np.arange(start, stop))
        assert KEY.index_of(ids).dtype == np.int64


@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, 2**62), size=st.integers(0, 400), cut=st.integers(0, 400))
def test_chunked_equals_whole_and_inverts(start, size, cut):
    cut = min(cut, size)
    whole = KEY.ids(start, start + size)
    parts = pa.concat_arrays([KEY.ids(start, start + cut), KEY.ids(start + cut, start + size)])
    assert parts.equals(whole)
    assert KEY.index_of(whole).tolist() == list(range(start, start + size))


def test_index_of_gives_minus_one_for_anything_else():
    ids = KEY.ids(0, 10).to_pylist()
    other = PseudonymKey(bytes(32)).ids(0, 10).to_pylist()
    texts = [ids[3], None, "", "R", ids[3].upper(), ids[3][:-1], ids[3] + "0", " " + ids[3][1:],
             "X" + ids[3][1:], ids[3][:-1] + "g", "R" + "0" * 32, "Ré" + ids[3][3:], float("nan"), 17, ids[9]]
    assert KEY.index_of(texts).tolist() == [3] + [-1] * 13 + [9]
    assert (KEY.index_of(other) == -1).all()  # the wrong key decrypts to junk: no index
    assert KEY.index_of(ids, n=5).tolist() == [0, 1, 2, 3, 4] + [-1] * 5  # an index beyond the release


def test_index_of_takes_series_arrays_and_chunks():
    ids = KEY.ids(0, 50)
    expected = np.arange(50)
    as_list = ids.to_pylist()
    for form in (pd.Series(as_list, dtype=object), pd.Series(as_list, dtype="string"),
                 pd.Series(pd.arrays.ArrowStringArray(ids)), np.array(as_list, dtype=object), tuple(as_list),
                 pa.chunked_array([ids.slice(0, 20), ids.slice(20)]), ids.cast(pa.large_string()),
                 ids.dictionary_encode(), pd.Series(as_list, dtype="category")):
        assert np.array_equal(KEY.index_of(form), expected), type(form)
    assert KEY.index_of([]).tolist() == [] and KEY.index_of(pa.chunked_array([], pa.string())).tolist() == []
    with pytest.raises(ParameterError, match="texts"):
        KEY.index_of(pa.array([1, 2]))


def test_seed_determinism_and_key_forms():
    a, b = PseudonymKey.from_seed(KeyedRandomness(5)), PseudonymKey.from_seed(KeyedRandomness(5))
    assert a == b and a.ids(0, 100).equals(b.ids(0, 100))
    assert a != PseudonymKey.from_seed(KeyedRandomness(6))
    assert PseudonymKey.random() != PseudonymKey.random()
    assert PseudonymKey.from_hex(a.hex()) == a and len(a.hex()) == 64
    assert "<secret key>" in repr(a) and a.hex() not in repr(a)
    for bad in (b"short", "x" * 32, None):
        with pytest.raises(ParameterError, match="32 bytes"):
            PseudonymKey(bad)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="64 hexadecimal"):
        PseudonymKey.from_hex("zz")


def test_range_limits():
    for start, stop in ((-1, 3), (5, 4), (0, 2**63)):
        with pytest.raises(ParameterError, match="record range"):
            KEY.ids(start, stop)
    with pytest.raises(ParameterError, match="in blocks"):
        KEY.ids(0, MAX_IDS_PER_ARRAY + 1)


def test_make_pseudonyms():
    series = make_pseudonyms(1000, key=KEY)
    assert series.name == PSEUDONYM_COLUMN and isinstance(series.array, pd.arrays.ArrowStringArray)
    assert list(series) == KEY.ids(0, 1000).to_pylist()
    keyed = KeyedRandomness(11)
    assert list(make_pseudonyms(300, keyed=keyed)) == PseudonymKey.from_seed(keyed).ids(0, 300).to_pylist()
    assert list(make_pseudonyms(300, keyed=keyed)) == list(make_pseudonyms(300, keyed=keyed))
    fresh = make_pseudonyms(300)
    assert fresh.is_unique and set(fresh).isdisjoint(make_pseudonyms(300)) and len(make_pseudonyms(0)) == 0
