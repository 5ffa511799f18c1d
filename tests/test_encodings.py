"""Issue 29, point 7: Central/Eastern European text files are read with their own letters, and a file whose
encoding cannot be told asks instead of being misread (core, command line, streamed path)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data import encoding_guess
from ppdp_desktop.core.data.encoding_guess import EncodingUnclear
from ppdp_desktop.core.data.inspection import inspect_file
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.streamed import open_streamed

#: a small Czech clinic table (with a Polish city): Windows-1250 and Windows-1252 read it differently
CLINIC = ("pacient;věk;město;diagnóza\n"
          "1;34;Plzeň;chřipka\n2;51;České Budějovice;astma\n3;47;Třebíč;dna\n4;29;Přerov;chřipka\n"
          "5;62;Kroměříž;astma\n6;38;Ústí nad Labem;dna\n7;44;Łódź;chřipka\n8;55;Plzeň;astma\n")
CITIES = ["Plzeň", "České Budějovice", "Třebíč", "Přerov", "Kroměříž", "Ústí nad Labem", "Łódź", "Plzeň"]
#: a Hungarian table whose only letter read differently is ő (Windows-1252 reads õ, as Portuguese writes it)
GYOR = "beteg;kor;varos\n1;34;Győr\n2;51;Debrecen\n3;47;Pécs\n4;29;Szeged\n5;62;Győr\n"


def _write(tmp_path: Path, name: str, text: str, encoding: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_a_windows_1250_file_loads_with_its_letters(tmp_path: Path) -> None:
    data = load_table(_write(tmp_path, "klinika.csv", CLINIC, "cp1250"))
    assert data.details["encoding"] == "cp1250"
    assert list(data.frame.columns) == ["pacient", "věk", "město", "diagnóza"]
    assert data.frame["město"].tolist() == CITIES
    preview = load_table(tmp_path / "klinika.csv", rows=3)  # the preview makes the same choice
    assert preview.details["encoding"] == "cp1250" and preview.frame["město"].tolist() == CITIES[:3]
    facts = inspect_file(tmp_path / "klinika.csv")
    assert facts.encoding == "cp1250" and not facts.encodings
    assert any("Windows-1250 (Central European)" in d for d in facts.doubts)


def test_latin_2_polish_file_is_not_read_as_windows_1250(tmp_path: Path) -> None:
    text = "miasto;województwo\nŁódź;łódzkie\nKraków;małopolskie\nWrocław;dolnośląskie\nGdańsk;pomorskie\n" \
           "Poznań;wielkopolskie\nŚwiętochłowice;śląskie\n"
    data = load_table(_write(tmp_path, "pl.csv", text, "iso8859-2"))
    assert data.details["encoding"] == "iso8859-2"
    assert data.frame["województwo"].tolist()[2] == "dolnośląskie"


def test_a_file_whose_encoding_cannot_be_told_is_refused_naming_the_candidates(tmp_path: Path) -> None:
    path = _write(tmp_path, "gyor.csv", GYOR, "cp1250")
    with pytest.raises(EncodingUnclear) as caught:
        load_table(path)
    error = caught.value
    assert error.setting == "encoding" and error.file == "gyor.csv"
    readings = {c.codec: c.word for c in error.candidates}
    assert readings == {"cp1250": "Győr", "cp1252": "Gyõr"}
    assert "\n" not in str(error) and "--encoding NAME" in str(error)
    assert load_table(path, encoding="cp1250").frame["varos"].tolist()[0] == "Győr"  # the user's choice wins
    facts = inspect_file(path)
    assert facts.encoding is None and [c.codec for c in facts.encodings] == ["cp1252", "cp1250"]
    assert any("cannot be told" in d for d in facts.doubts)


def test_the_command_line_reads_windows_1250_and_asks_when_it_cannot_tell(tmp_path: Path, capsys) -> None:
    clinic = _write(tmp_path, "klinika.csv", CLINIC, "cp1250")
    assert main(["risk", str(clinic), "--quasi", "věk,město"]) == 0  # "vìk" would be no column
    assert "věk, město" in capsys.readouterr().out
    gyor = _write(tmp_path, "gyor.csv", GYOR, "cp1250")
    assert main(["risk", str(gyor), "--quasi", "kor,varos"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "gyor.csv" in err and '"Győr"' in err and '"Gyõr"' in err and "--encoding" in err
    assert main(["risk", str(gyor), "--quasi", "kor,varos", "--encoding", "cp1250"]) == 0


def test_western_files_read_as_before(tmp_path: Path) -> None:
    ascii_ = load_table(_write(tmp_path, "a.csv", "name,city\nSmith,Boston\n", "cp1250"))
    assert ascii_.details["encoding"] == "utf-8"  # plain ASCII is UTF-8: never asked
    for encoding in ("utf-8", "utf-8-sig"):
        data = load_table(_write(tmp_path, f"{encoding}.csv", CLINIC, encoding))
        assert data.details["encoding"] == encoding and data.frame["město"].tolist() == CITIES
    western = "name;city\nMüller;Köln\nJosé;Málaga\nZoë;Besançon\nFrançois;Zürich\n"
    data = load_table(_write(tmp_path, "w.csv", western, "cp1252"))
    assert data.details["encoding"] == "cp1252"
    assert data.frame["city"].tolist() == ["Köln", "Málaga", "Besançon", "Zürich"]


def test_the_streamed_path_makes_the_same_choice(tmp_path: Path) -> None:
    path = _write(tmp_path, "klinika.csv", CLINIC * 3, "cp1250")
    streamed = open_streamed(path)
    assert streamed.preview.details["encoding"] == "cp1250"
    cities = [c for _start, frame in streamed.batches(5) for c in frame["město"].tolist()]
    assert cities[:8] == CITIES and "vìk" not in streamed.columns
    with pytest.raises(EncodingUnclear):
        open_streamed(_write(tmp_path, "gyor.csv", GYOR, "cp1250"))


def test_a_big_file_is_told_from_a_bounded_sample_holding_its_first_foreign_letters(tmp_path: Path) -> None:
    rows = "".join(f"{i};{20 + i % 60};Praha;astma\n" for i in range(60_000))  # ~1.4 MB of ASCII
    path = _write(tmp_path, "big.csv", "pacient;vek;mesto;diagnoza\n" + rows + CLINIC.split("\n", 1)[1] + rows, "cp1250")
    data = path.read_bytes()
    first = data.index(b"\xf2")  # the first byte that is not UTF-8 (ň), far beyond the first MiB
    sampled = encoding_guess.sample(data[:200_000], path, first)
    assert len(sampled) <= encoding_guess.SAMPLE_HEAD + (encoding_guess.BLOCKS + 1) * encoding_guess.BLOCK
    assert b"Plze\xf2" in sampled
    loaded = load_table(path)
    assert loaded.details["encoding"] == "cp1250" and "Kroměříž" in set(loaded.frame["mesto"])
