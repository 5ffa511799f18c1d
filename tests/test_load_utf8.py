"""The load's UTF-8 fast path (issue 34): a file is validated as UTF-8 in C and parsed as bytes, its text decoded
only as far as the sniffing sample reaches; the codec, the sample and every message are those of decoding it all."""
from __future__ import annotations

import codecs
import hashlib
import io
import random

import pyarrow as pa
import pytest

from ppdp_desktop.core.data import sniffing, text_table
from ppdp_desktop.core.data.kinds import type_text_columns
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.tapped import TappedReader
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
    rows = "".join(f"{i},Köln\n" for i in range(200_000))  # 2.4 MB: beyond the first bytes sniffed
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


def test_the_tapped_reader_tells_what_the_whole_bytes_tell(tmp_path):
    rng = random.Random(35)
    pieces = [b"a", b",", b"\n", b"\r", b'"', b"\xc3\xa4", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xc3", b"\x80",
              b"\xed\xa0\x80", b"\x00", b"\xff"]
    path = tmp_path / "t.bin"
    for _ in range(2000):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        cut = rng.randint(0, len(data))
        reader = TappedReader(path, data[:cut], io.BytesIO(data[cut:]))
        while reader.read(rng.randint(1, 5)):
            pass
        assert reader.ended and reader.utf8 == _decodes(data) and reader.nul == (b"\x00" in data), data
        assert (reader.quotes, reader.last, reader.size) == (data.count(b'"'), data[-1:], len(data))
        head = data[: rng.randint(0, len(data))]
        assert reader.breaks(head) == (data.count(b"\n") - head.count(b"\n") or data.count(b"\r") - head.count(b"\r"))
        assert reader.digest().sha256 == hashlib.sha256(data).hexdigest()


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.fixture
def big(tmp_path):
    """A file longer than the bytes sniffed first, written with ``tail`` after 200,000 plain records."""
    def write(tail: bytes, name: str = "big.csv"):
        path = tmp_path / name
        path.write_bytes(b"n,city,w\n" + "".join(f"{i},Köln,{i % 9}\n" for i in range(200_000)).encode() + tail)
        assert path.stat().st_size > text_table.STREAM_HEAD
        return path
    return write


def test_a_long_file_read_as_it_is_parsed_names_its_lines_and_its_digest(big):
    path = big(b"\n\n7,Bonn,x\n")  # two blank lines, then a value that is not a number
    with pytest.raises(InputError, match=r"column 'w' is set to numeric but line 200,004 holds 'x'"):
        load_table(path, kinds={"w": "numeric"})
    loaded = load_table(big(b"7,Bonn,3\n", "ok.csv"))
    assert loaded.digest.sha256 == hashlib.sha256(loaded.source.read_bytes()).hexdigest()
    assert loaded.source_rows is not None and loaded.source_rows.words([int(loaded.source_rows.file_rows([200_000])[0])]) \
        == "line 200,002"


def test_a_long_file_with_a_nul_or_an_unclosed_quote_beyond_the_start_is_refused(big):
    with pytest.raises(InputError, match=r"contains NUL bytes"):
        load_table(big(b"7,Bo\x00nn,3\n"))
    with pytest.raises(InputError, match=r"a quoted value starting on line 200002 is never closed"):
        load_table(big(b'7,Bonn,"3\n8,Ulm,4\n'))
