"""Keyed, record-addressed randomness (issue 19, point 1): ppdp_desktop.core.privacy.keyed."""
from __future__ import annotations

import hashlib
import hmac
import struct

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy.keyed import HKDF_INFO, HKDF_SALT, KeyedRandomness, derive_key, stream_tag

SEED = 2024
KEYED = KeyedRandomness(SEED)
ALPHA = 1e-4  # fixed seed: deterministic; a failure means a real defect, not bad luck


# -- a pure-Python ChaCha20 block function (RFC 8439 section 2.3), independent of OpenSSL ----------
def _rotl(v: int, c: int) -> int:
    return ((v << c) & 0xFFFFFFFF) | (v >> (32 - c))


def _quarter(s: list[int], a: int, b: int, c: int, d: int) -> None:
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF; s[d] = _rotl(s[d] ^ s[a], 16)  # noqa: E702
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = _rotl(s[b] ^ s[c], 12)  # noqa: E702
    s[a] = (s[a] + s[b]) & 0xFFFFFFFF; s[d] = _rotl(s[d] ^ s[a], 8)  # noqa: E702
    s[c] = (s[c] + s[d]) & 0xFFFFFFFF; s[b] = _rotl(s[b] ^ s[c], 7)  # noqa: E702


def chacha20_block(key: bytes, counter: int, nonce12: bytes) -> bytes:
    """RFC 8439 block function: 32-bit counter in state word 12, 96-bit nonce in words 13-15."""
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574, *struct.unpack("<8I", key),
             counter, *struct.unpack("<3I", nonce12)]
    work = list(state)
    for _ in range(10):
        _quarter(work, 0, 4, 8, 12); _quarter(work, 1, 5, 9, 13)  # noqa: E702
        _quarter(work, 2, 6, 10, 14); _quarter(work, 3, 7, 11, 15)  # noqa: E702
        _quarter(work, 0, 5, 10, 15); _quarter(work, 1, 6, 11, 12)  # noqa: E702
        _quarter(work, 2, 7, 8, 13); _quarter(work, 3, 4, 9, 14)  # noqa: E702
    return struct.pack("<16I", *((w + s) & 0xFFFFFFFF for w, s in zip(work, state)))


def reference_word(key: bytes, labels: tuple, record: int) -> int:
    """Record ``record``'s word by the documented addressing, computed block by block in Python."""
    block, word = divmod(record, 8)
    nonce12 = struct.pack("<I", block >> 32) + stream_tag(*labels)
    data = chacha20_block(key, block & 0xFFFFFFFF, nonce12)
    return struct.unpack_from("<Q", data, 8 * word)[0]


# -- the primitive: RFC 8439 / RFC 7539 test vectors -----------------------------------------------
RFC_KEY = bytes(range(32))
RFC_PLAINTEXT = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
                 b"the future, sunscreen would be it.")


def test_quarter_round_rfc8439_2_1_1():
    s = [0x11111111, 0x01020304, 0x9B8D6F43, 0x01234567]
    _quarter(s, 0, 1, 2, 3)
    assert s == [0xEA2A92F4, 0xCB1CF8CE, 0x4581472E, 0x5881C4BB]


def test_block_all_zero_key_rfc8439_a1():
    expected = bytes.fromhex(
        "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
        "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586")
    assert chacha20_block(bytes(32), 0, bytes(12)) == expected
    stream = Cipher(algorithms.ChaCha20(bytes(32), bytes(16)), mode=None).encryptor()
    assert stream.update(bytes(64)) == expected


def test_cryptography_chacha20_as_used_matches_rfc8439_2_4_2():
    """cryptography's 16-byte nonce is the 4-byte little-endian counter then RFC's 12-byte nonce."""
    nonce12 = bytes.fromhex("000000000000004a00000000")
    enc = Cipher(algorithms.ChaCha20(RFC_KEY, struct.pack("<I", 1) + nonce12), mode=None).encryptor()
    ciphertext = enc.update(RFC_PLAINTEXT)
    assert ciphertext[:16] == bytes.fromhex("6e2e359a2568f98041ba0728dd0d6981")
    keystream = b"".join(chacha20_block(RFC_KEY, 1 + i, nonce12) for i in range(2))
    assert ciphertext == bytes(p ^ k for p, k in zip(RFC_PLAINTEXT, keystream))


def test_block_function_rfc8439_2_3_2():
    nonce12 = bytes.fromhex("000000090000004a00000000")
    block = chacha20_block(RFC_KEY, 1, nonce12)
    assert block[:16] == bytes.fromhex("10f1e7e4d13b5915500fdd1fa32071c4")
    enc = Cipher(algorithms.ChaCha20(RFC_KEY, struct.pack("<I", 1) + nonce12), mode=None).encryptor()
    assert enc.update(bytes(64)) == block


# -- key derivation and addressing -----------------------------------------------------------------
def test_key_is_hkdf_sha256_of_the_seed_as_documented():
    ikm = SEED.to_bytes(16, "big")
    prk = hmac.new(HKDF_SALT, ikm, hashlib.sha256).digest()
    okm = hmac.new(prk, HKDF_INFO + b"\x01", hashlib.sha256).digest()
    assert derive_key(SEED) == okm
    assert len(derive_key(2**200)) == 32 and derive_key(2**200) != derive_key(2**200 + 1)


@pytest.mark.parametrize("record", [0, 1, 7, 8, 13, 8 * 2**32 - 1, 8 * 2**32, 8 * 2**32 + 9,
                                    5 * 8 * 2**32 + 3])
def test_words_follow_the_documented_addressing(record):
    key = derive_key(SEED)
    words = KEYED.stream("diag", "keep").words(record, record + 1)
    assert int(words[0]) == reference_word(key, ("diag", "keep"), record)


def test_known_answer_for_a_fixed_seed():
    """Pins the derivation: a change of key, tag, addressing or conversion fails here."""
    assert derive_key(SEED).hex() == "268e5734b7e0879d5e4ed1855fdf1e05d8470514df863d74bed44b267db2e2ab"
    keep = KEYED.stream("diag", "keep")
    assert [hex(int(w)) for w in keep.words(0, 4)] == [
        "0x180de644b2b327bc", "0x1854516818b29c23", "0xecb193462083630b", "0x454f971f608e9c69"]
    assert keep.uniforms(0, 4).tolist() == [
        0.09396208932112105, 0.09503659049432611, 0.9245845838745601, 0.2707457019428666]
    assert KEYED.stream("diag", "value").integers(0, 8, 50).tolist() == [40, 34, 28, 2, 2, 17, 10, 42]


# -- any cut of a range gives the same numbers -----------------------------------------------------
def _draw(stream, kind: str, start: int, stop: int) -> np.ndarray:
    if kind == "uniforms":
        return stream.uniforms(start, stop)
    if kind == "sort_keys":
        return stream.sort_keys(start, stop)
    if kind == "bernoulli":
        return stream.bernoulli(start, stop, 0.37)
    if kind == "integers":
        return stream.integers(start, stop, 50)
    if kind == "integers_heavy_rejection":  # about half of every 32-bit half is rejected
        return stream.integers(start, stop, 2**31 + 1)
    if kind == "integers_per_record":
        high = (np.arange(start, stop) % 9 + 1).astype(np.int64)
        return stream.integers(start, stop, high)
    raise AssertionError(kind)


KINDS = ["uniforms", "sort_keys", "bernoulli", "integers", "integers_heavy_rejection",
         "integers_per_record"]


def _chunked(stream, kind: str, start: int, cuts: list[int], stop: int) -> np.ndarray:
    edges = [start, *sorted(set(c for c in cuts if start < c < stop)), stop]
    return np.concatenate([_draw(stream, kind, a, b) for a, b in zip(edges, edges[1:])])


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(KINDS), start=st.integers(0, 10_000), length=st.integers(0, 3_000),
       cuts=st.lists(st.integers(0, 13_000), max_size=12))
def test_any_split_gives_the_same_draws(kind, start, length, cuts):
    stream = KEYED.stream("diag", kind)
    stop = start + length
    np.testing.assert_array_equal(_chunked(stream, kind, start, cuts, stop),
                                  _draw(stream, kind, start, stop))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_fixed_chunk_sizes_give_the_same_draws(kind, chunk):
    start, stop = 13, 13 + (2_000 if chunk == 1 else 25_000)
    stream = KEYED.stream("age", kind)
    whole = _draw(stream, kind, start, stop)
    np.testing.assert_array_equal(_chunked(stream, kind, start, list(range(start, stop, chunk)), stop),
                                  whole)


def test_a_range_beyond_the_internal_buffer_and_one_across_the_32_bit_counter():
    stream = KEYED.stream("diag", "keep")
    start, stop = 5, 400_005  # several cipher calls of the internal buffer
    np.testing.assert_array_equal(stream.uniforms(start, stop),
                                  _chunked(stream, "uniforms", start, [77_777, 200_000], stop))
    edge = 8 * 2**32  # first record of block 2**32: a new nonce, the counter back at 0
    start, stop = edge - 21, edge + 35
    whole = stream.sort_keys(start, stop)
    np.testing.assert_array_equal(whole, _chunked(stream, "sort_keys", start, [edge - 3, edge, edge + 1], stop))
    key = derive_key(SEED)
    assert [int(w) for w in whole] == [reference_word(key, ("diag", "keep"), i) for i in range(start, stop)]


def test_streams_and_keys_differ():
    a = KEYED.stream("diag", "keep").words(0, 1000)
    for other in (KEYED.stream("diag", "value"), KEYED.stream("age", "keep"),
                  KeyedRandomness(SEED + 1).stream("diag", "keep"), KEYED.stream("dia", "gkeep")):
        assert np.mean(a == other.words(0, 1000)) == 0.0
    assert stream_tag("a", "bc") != stream_tag("ab", "c")
    assert "secret" in repr(KEYED) and derive_key(SEED).hex() not in repr(KEYED)


# -- distributions ---------------------------------------------------------------------------------
def test_uniforms_pass_kolmogorov_smirnov_and_use_53_bits():
    u = KEYED.stream("stats", "uniform").uniforms(0, 200_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > ALPHA
    scaled = u * 2.0**53
    assert np.all(scaled == np.floor(scaled))
    assert np.mean(scaled % 2 == 1) > 0.49  # the lowest of the 53 bits is random too


def test_bernoulli_is_exactly_uniforms_below_p():
    stream = KEYED.stream("stats", "keep")
    u = stream.uniforms(0, 100_000)
    for p in (0.0, 1e-9, 0.3, 0.5, 0.999, 1.0):
        np.testing.assert_array_equal(stream.bernoulli(0, 100_000, p), u < p)
    p = np.linspace(0, 1, 100_000)
    np.testing.assert_array_equal(stream.bernoulli(0, 100_000, p), u < p)


@pytest.mark.parametrize("high", [2, 3, 50, 1000])
def test_integers_chi_square(high):
    draws = KEYED.stream("stats", f"int{high}").integers(0, 600_000, high)
    assert draws.dtype == np.int64 and draws.min() >= 0 and draws.max() < high
    counts = np.bincount(draws, minlength=high)
    assert stats.chisquare(counts).pvalue > ALPHA


def test_integers_unbiased_for_high_3_with_many_draws():
    """floor(u * 3) on 32 bits would be off by 2**-32; with 3M draws the shares sit within 4 sigma."""
    draws = KEYED.stream("stats", "three").integers(0, 3_000_000, 3)
    shares = np.bincount(draws, minlength=3) / len(draws)
    sigma = np.sqrt((1 / 3) * (2 / 3) / len(draws))
    assert np.all(np.abs(shares - 1 / 3) < 4 * sigma)


def test_integers_per_record_high_chi_square():
    n = 600_000
    high = np.array([3, 7, 50, 2**31 + 1])[np.arange(n) % 4]
    draws = KEYED.stream("stats", "per-record").integers(0, n, high)
    assert np.all((draws >= 0) & (draws < high))
    for h in (3, 7, 50):
        assert stats.chisquare(np.bincount(draws[high == h], minlength=h)).pvalue > ALPHA
    big = draws[high == 2**31 + 1]  # heavy rejection: the retries must stay uniform
    assert stats.chisquare(np.bincount(big * 16 // (2**31 + 1), minlength=16)).pvalue > ALPHA


def test_integers_full_32_bit_range_and_one():
    stream = KEYED.stream("stats", "edges")
    assert np.all(stream.integers(0, 1000, 1) == 0)
    draws = stream.integers(0, 100_000, 2**32)
    assert draws.max() < 2**32
    assert stats.chisquare(np.bincount(draws >> 28, minlength=16)).pvalue > ALPHA


def test_sort_keys_are_distinct_and_give_uniform_permutations():
    keys = KEYED.stream("shuffle", "position").sort_keys(0, 1_000_000)
    assert keys.dtype == np.uint64 and len(np.unique(keys)) == len(keys)
    # 60,000 independent shuffles of 10 records: where does record 0 land?
    blocks = KEYED.stream("shuffle", "blocks").sort_keys(0, 600_000).reshape(-1, 10)
    order = np.argsort(blocks, axis=1, kind="stable")
    position_of_0 = np.argmax(order == 0, axis=1)
    assert stats.chisquare(np.bincount(position_of_0, minlength=10)).pvalue > ALPHA
    # and all 6 permutations of 3 records are equally likely
    triples = KEYED.stream("shuffle", "triples").sort_keys(0, 300_000).reshape(-1, 3)
    perm = np.argsort(triples, axis=1, kind="stable")
    code = perm[:, 0] * 3 + perm[:, 1]
    counts = np.bincount(code, minlength=9)[[1, 2, 3, 5, 6, 7]]
    assert counts.sum() == len(perm) and stats.chisquare(counts).pvalue > ALPHA


# -- errors ----------------------------------------------------------------------------------------
def test_clear_errors():
    stream = KEYED.stream("diag", "keep")
    with pytest.raises(ParameterError, match="seed must be a non-negative integer; got -1"):
        KeyedRandomness(-1)
    with pytest.raises(ParameterError, match="0 <= start <= stop; got start=5, stop=3"):
        stream.uniforms(5, 3)
    with pytest.raises(ParameterError, match=r"high must be an integer in \[1, 2\*\*32\]; got 0"):
        stream.integers(0, 3, 0)
    with pytest.raises(ParameterError, match=r"high must be an integer in \[1, 2\*\*32\]"):
        stream.integers(0, 3, 2**32 + 1)
    with pytest.raises(ParameterError, match=r"one bound per record \(3\); got shape \(2,\)"):
        stream.integers(0, 3, np.array([2, 3]))
    with pytest.raises(ParameterError, match="Every high must be an integer"):
        stream.integers(0, 2, np.array([2, 0]))
    with pytest.raises(ParameterError, match="two texts"):
        KEYED.stream("diag", 3)  # type: ignore[arg-type]
    assert len(stream.uniforms(4, 4)) == 0 and stream.integers(4, 4, 5).dtype == np.int64
