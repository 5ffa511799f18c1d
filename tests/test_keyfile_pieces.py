"""The key's JSON is encoded in pieces (so the window keeps running) and is the same text as in one call."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.release import keyfile

LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text())
TREE = st.recursive(LEAF, lambda inner: st.one_of(st.lists(inner, max_size=12),
                                                   st.dictionaries(st.one_of(st.text(), st.integers()), inner,
                                                                   max_size=5)), max_leaves=60)


@settings(max_examples=300, deadline=None)
@given(TREE)
def test_pieces_give_the_same_text(value):
    old = keyfile.JSON_PIECE
    keyfile.JSON_PIECE = 3  # small pieces: every list of the example is split
    try:
        expected = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        assert keyfile.dumps_in_pieces(value) == expected
    finally:
        keyfile.JSON_PIECE = old


def test_a_large_pseudonym_list_round_trips(tmp_path):
    payload = {"pseudonyms": {"ids": [f"P{i:08d}" for i in range(50_001)], "records": {"x": list(range(50_001))}}}
    path = keyfile.seal(payload, "correct horse battery", "ab" * 32, tmp_path / "k.ppdpkey")
    assert keyfile.open_key(path, "correct horse battery", "ab" * 32) == payload
