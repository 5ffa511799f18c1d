"""Whole-file byte work in pieces (issue 34: no stall while a file loads): the same results as the one call,
whatever the piece size, a character cut between two pieces, a byte-order mark, or bytes that do not decode."""
from __future__ import annotations

import codecs
import random

import pytest

from ppdp_desktop.core.data import in_pieces, sniffing


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(in_pieces, "PIECE", 5)  # every multi-byte character of the samples straddles some cut


def _samples(codec: str) -> list[bytes]:
    rng = random.Random(34)
    out = []
    for n in range(300):
        text = "".join(rng.choice('aä€😀ß\n\r;,"') for _ in range(rng.randint(0, 60)))
        try:
            data = text.encode("utf-8" if codec == "utf-8-sig" else codec)
        except UnicodeEncodeError:
            continue
        out.append(codecs.BOM_UTF8 + data if codec == "utf-8-sig" and n % 2 else data)
    return out


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "cp1252", "utf-16", "latin-1"])
def test_decoded_in_pieces_as_in_one_call(small_pieces, codec):
    for data in _samples(codec):
        assert in_pieces.decode(data, codec) == data.decode(codec)


def test_counted_in_pieces_as_in_one_call(small_pieces):
    for data in _samples("utf-8"):
        for byte in (b'"', b"\n", b"\r"):
            for start in (0, 1, 7):
                assert in_pieces.count_bytes(data, byte, start) == data.count(byte, start)
    with pytest.raises(ValueError):
        in_pieces.count_bytes(b"abc", b"ab")


@pytest.mark.parametrize("data", [b"plain text " * 3 + "Müller".encode("cp1252") + b" and more",
                                  b"x" * 21 + b"\xe2\x82", b"\xff" + b"a" * 30])
def test_bytes_that_do_not_decode_raise_the_one_calls_error(small_pieces, data):
    with pytest.raises(UnicodeDecodeError) as whole:
        data.decode("utf-8")
    with pytest.raises(UnicodeDecodeError) as pieces:
        in_pieces.decode(data, "utf-8")
    assert (pieces.value.start, pieces.value.end, pieces.value.reason) == (whole.value.start, whole.value.end,
                                                                           whole.value.reason)


def test_a_latin1_file_is_still_told_by_its_offending_byte(small_pieces):
    """The sniffing decode reads UTF-8 first in pieces; a cp1252 file still falls back with the same offsets."""
    data = ("Name;Stadt\n" + "Anna;Köln\n" * 5).encode("cp1252")
    text, codec = sniffing.decode(data, None, "orte.csv")
    assert text == data.decode("cp1252") and codec == "cp1252"
