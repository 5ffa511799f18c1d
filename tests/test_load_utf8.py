"""The load's UTF-8 fast path (issue 34): a file is validated as UTF-8 in C and parsed as bytes, its text decoded
only as far as the sniffing sample reaches; the codec, the sample and every message are those of decoding it all."""
from __future__ import annotations

import codecs
import random

import pyarrow as pa
import pytest

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.kinds import type_text_columns
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.errors import InputError


def _decoded_codec(data: bytes, encoding: str | None) -> str | None:
    try:
        _text, codec = sniffing.decode(data, encoding, "f.csv")
    except InputError:  # refused (NUL bytes, encoding unclear, invalid in the given encoding)
        return None
    return codec if codec in ("utf-8", "utf-8-sig") else None


@pytest.mark.parametrize("encoding", [None, "utf-8", "UTF8", "utf-8-sig", "latin-1"])
def test_utf8_is_told_as_decoding_all_of_it_tells(encoding):
    rng = random.Random(34)
    pieces = [b"a", b",", b"\n", b"\xc3\xa4", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xc3", b"\x80", b"\xed\xa0\x80",
              b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xff", b"\x00", codecs.BOM_UTF8, codecs.BOM_UTF16_LE]
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert sniffing.valid_utf8(data, encoding, "f.csv") == _decoded_codec(data, encoding), data


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig"])
def test_the_sample_is_the_one_of_the_whole_text(monkeypatch, codec):
    monkeypatch.setattr(sniffing, "SAMPLE_BYTES", 16)
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(["a", "ä", "€", "😀", ",", "\n", "\r", "\r\n", "x" * 20])
                       for _ in range(rng.randint(0, 40)))
        data = (codecs.BOM_UTF8 if codec == "utf-8-sig" and rng.random() < 0.5 else b"") + text.encode("utf-8")
        assert sniffing.sample_bytes(data, codec) == sniffing.sample_of(data.decode(codec)), data


def test_a_byte_that_is_not_utf8_far_below_the_sample_is_still_read_as_windows_1252(tmp_path):
    rows = "".join(f"{i},Köln\n" for i in range(20_000))
    path = tmp_path / "w.csv"
    path.write_bytes(("n,city\n" + rows).encode("utf-8") + "99,Besançon\n".encode("cp1252"))
    with pytest.raises(InputError, match=r"mixes two encodings"):
        load_table(path)
    path.write_bytes(("n,city\n" + rows + "99,Besançon\n").encode("cp1252"))
    loaded = load_table(path)
    assert loaded.details["encoding"] == "cp1252" and loaded.frame["city"].iloc[-1] == "Besançon"


def test_a_file_of_blanks_beyond_the_sample_is_empty(tmp_path, monkeypatch):
    monkeypatch.setattr(sniffing, "SAMPLE_BYTES", 16)
    path = tmp_path / "b.csv"
    path.write_bytes(" \u00a0\n".encode("utf-8") * 200)  # no-break spaces: blank as text, not as ASCII bytes
    with pytest.raises(InputError, match=r"b\.csv: the file is empty"):
        load_table(path)


def test_typing_a_list_of_columns_lets_go_of_each_column():
    columns: list[pa.ChunkedArray | None] = [pa.chunked_array([pa.array(["1", "2"])]),
                                             pa.chunked_array([pa.array(["a", None])])]
    frame, kinds = type_text_columns(columns, ["n", "s"], None, "t.csv")
    assert columns == [None, None]
    assert frame["n"].tolist() == [1, 2] and frame["s"].tolist()[0] == "a"
    assert {k: v.value for k, v in kinds.items()} == {"n": "numeric", "s": "categorical"}
