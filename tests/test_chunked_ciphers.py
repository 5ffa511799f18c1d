"""The cipher calls made a chunk at a time into reused buffers (issue 34's memory) give exactly the words and ids of
one call over the whole array: the persistent PRF words, the persistent streams' draws and the pseudonyms, across
the chunks' boundaries (the chunks made small here so that a short array crosses several)."""
from __future__ import annotations

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ppdp_desktop.core.privacy import keyed, persistent, pseudonyms
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.privacy.persistent import PersistentKeys, prf_words
from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey, StablePseudonymKey

KEY = bytes(range(32))
RNG = np.random.default_rng(34)
SIZES = [0, 1, 6, 7, 8, 29]  # around the small chunks below (7 records)


def _one_call(key: bytes, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The words of one cipher call over every block (the construction, written plainly)."""
    blocks = np.column_stack([left, right]).astype("<u8")
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    out = encryptor.update(blocks.tobytes()) + encryptor.finalize()
    return np.frombuffer(out, dtype="<u8").reshape(-1, 2)[:, 0].astype(np.uint64)


def _one_call_ids(key: bytes, blocks: list[bytes]) -> list[str]:
    encryptor = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return ["R" + encryptor.update(block).hex() for block in blocks]


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(persistent, "PRF_CHUNK", 7)
    monkeypatch.setattr(keyed, "CHUNK_RECORDS", 7)
    monkeypatch.setattr(pseudonyms, "CHUNK", 7)


@pytest.mark.parametrize("n", SIZES)
def test_prf_words_in_chunks_are_one_calls_words(small_chunks, n):
    left = RNG.integers(0, 2**64, n, dtype=np.uint64)
    right = RNG.integers(0, 2**64, n, dtype=np.uint64)
    words = prf_words(KEY, left, right)
    assert words.dtype == np.uint64 and words.shape == (n,)
    assert np.array_equal(words, _one_call(KEY, left, right))
    assert np.array_equal(prf_words(KEY, np.repeat(left, 2)[::2], right), words)  # strided halves too


def test_persistent_draws_do_not_depend_on_the_chunk_size(monkeypatch):
    keys = PersistentKeys(bytes(range(32, 64)))
    identities = RNG.integers(0, 2**64, 40, dtype=np.uint64)
    mechanism = RNG.integers(0, 2**64, 40, dtype=np.uint64)

    def draws() -> list[np.ndarray]:
        bound = KeyedRandomness(34).with_records(keys, identities, 100)
        stream = bound.record_stream("diag", "value", 100, 140, mechanism)
        return [stream.words(100, 140), stream.uniforms(103, 131), stream.bernoulli(100, 140, 0.4),
                stream.integers(100, 140, 2**31 + 1), stream.integers(101, 139, np.arange(1, 39))]

    whole = draws()
    monkeypatch.setattr(keyed, "CHUNK_RECORDS", 7)
    monkeypatch.setattr(persistent, "PRF_CHUNK", 3)
    for chunked, expected in zip(draws(), whole):
        assert np.array_equal(chunked, expected)


@pytest.mark.parametrize("n", SIZES)
def test_pseudonyms_in_chunks_are_one_calls_ids(small_chunks, n):
    key = PseudonymKey(KEY)
    start = 2**40
    expected = _one_call_ids(KEY, [i.to_bytes(16, "big") for i in range(start, start + n)])
    assert key.ids(start, start + n).to_pylist() == expected
    order = RNG.permutation(n)
    assert key.ids_at(order).to_pylist() == [_one_call_ids(KEY, [int(i).to_bytes(16, "big")])[0] for i in order]
    first = RNG.integers(0, 2**64, n, dtype=np.uint64)
    second = RNG.integers(0, 2**64, n, dtype=np.uint64)
    blocks = [int(a).to_bytes(8, "little") + int(b).to_bytes(8, "little") for a, b in zip(first, second)]
    assert StablePseudonymKey(KEY).ids_of(first, second).to_pylist() == _one_call_ids(KEY, blocks)
