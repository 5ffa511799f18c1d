"""Tell the encoding of a text file that is not UTF-8, or say that it cannot be told.

UTF-8 (with or without a byte-order mark) and UTF-16 are decided by :func:`~ppdp_desktop.core.data.sniffing.decode`;
only a file that is not valid UTF-8 comes here. A bounded sample of it (:func:`sample`: the first MiB and, for a
larger file, a few blocks spread over it and the block around its first byte that is not UTF-8; never the whole
file) is given to charset-normalizer, restricted to the encodings desktop tables are written in
(:data:`SEARCHED`). Its candidates that decode the sample to the same text are one candidate (Windows-1252 and
Windows-1250 both read "Müller"). Candidates that give different letters are judged by the letters they give:
first the set of them over the whole sample, which must be written by one language of the candidate's code page
(:func:`~ppdp_desktop.core.data.alphabets.languages`; a French file read as Windows-1250 gives "é č ŕ ç ę ô",
no Central European language's letters), when some candidate's is; then, among the candidates left, the
share of the words spelt with the letters of one language (:data:`ALPHABETS`), the best-fitting language each.
"Plzeň, České Budějovice" is Czech through and through; "Plzeò, Èeské Budìjovice" is no language.
A candidate is chosen only when it is clearly ahead (:data:`FIT_MARGIN`, or, when no language knows the letters,
charset-normalizer's own mess measure by :data:`CHAOS_MARGIN`); otherwise :class:`EncodingUnclear` names the
candidates with a word decoded by each, and the user chooses.
"""
from __future__ import annotations

import codecs
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ppdp_desktop.core.data.alphabets import ALPHABETS, NO_LETTER, languages
from ppdp_desktop.core.errors import InputError, setting_ref

#: bytes read from the start of the file, and for a larger file, blocks of BLOCK bytes spread over it
SAMPLE_HEAD = 1 << 20
BLOCK = 64 << 10
BLOCKS = 4
#: the distinct words holding non-ASCII bytes given to the detector, at most (bytes)
FOCUS_BYTES = 64 << 10
#: distinct non-ASCII words judged, the most frequent first
WORDS = 2000
#: a candidate is chosen when the share of words spelt in one language is this much ahead of the next one's
FIT_MARGIN = 0.2
#: ... or, when no language knows the letters of either, its mess ratio is this much below the next one's
CHAOS_MARGIN = 0.1
#: a code page other than Windows-1252 / Latin-1 (what was read before) is chosen without asking only on at least
#: this many (6) non-ASCII bytes: two stray bytes that one code page happens to define ("\x81\x8d" reads "ЃЌ" in
#: Windows-1251 only) are no evidence of an alphabet
MIN_EVIDENCE = 6
WESTERN = ("cp1252", "iso8859_1")
#: a reading whose letters two languages write is kept beside one that a single language writes, unless that one
#: spells this many distinct non-ASCII letters or more (then it is clear; measured: 2 and 3 ask the same files)
CLEAR_LETTERS = 3
#: the encodings searched, in the order of preference between two that read a sample alike
SEARCHED = ("cp1252", "cp1250", "iso8859_1", "iso8859_15", "iso8859_2", "cp1257", "cp1254", "cp1251", "cp1253",
            "iso8859_5", "iso8859_7", "iso8859_9", "iso8859_13", "iso8859_16", "koi8_r", "koi8_u", "mac_roman",
            "mac_latin2", "cp437", "cp850", "cp852", "cp866", "cp932", "euc_jp", "gb18030", "big5", "cp949")
_LABELS = {
    "utf-8": "UTF-8", "utf-8-sig": "UTF-8 (with byte-order mark)", "utf-16": "UTF-16",
    "cp1252": "Windows-1252 (Western European)", "cp1250": "Windows-1250 (Central European)",
    "iso8859_1": "Latin-1 (ISO 8859-1, Western European)", "iso8859_15": "Latin-9 (ISO 8859-15, Western European)",
    "iso8859_2": "Latin-2 (ISO 8859-2, Central European)", "cp1257": "Windows-1257 (Baltic)",
    "cp1254": "Windows-1254 (Turkish)", "cp1251": "Windows-1251 (Cyrillic)", "cp1253": "Windows-1253 (Greek)",
    "iso8859_5": "ISO 8859-5 (Cyrillic)", "iso8859_7": "ISO 8859-7 (Greek)", "iso8859_9": "Latin-5 (ISO 8859-9, Turkish)",
    "iso8859_13": "Latin-7 (ISO 8859-13, Baltic)", "iso8859_16": "Latin-10 (ISO 8859-16, South-Eastern European)",
    "koi8_r": "KOI8-R (Russian)", "koi8_u": "KOI8-U (Ukrainian)", "mac_roman": "Mac Roman (Western European)",
    "mac_latin2": "Mac Central European", "cp437": "DOS 437 (US)", "cp850": "DOS 850 (Western European)",
    "cp852": "DOS 852 (Central European)", "cp866": "DOS 866 (Cyrillic)", "cp932": "Shift-JIS (Japanese)",
    "euc_jp": "EUC-JP (Japanese)", "gb18030": "GB18030 (Chinese)", "big5": "Big5 (Chinese, traditional)",
    "cp949": "Windows-949 (Korean)",
}
#: the encodings Windows and Unix write European and Cyrillic/Greek text in; the others are asked only when none
#: of these reads the words with a share of COMMON_FIT spelt in one language
COMMON = ("cp1252", "cp1250", "iso8859_1", "iso8859_15", "iso8859_2", "cp1251", "cp1253", "cp1254")
COMMON_FIT = 0.5
LABELS = {codecs.lookup(name).name: text for name, text in _LABELS.items()}

_ALPHABETS = {language: frozenset(letters) for language, letters in ALPHABETS.items()}
_NEUTRAL = [1.0] * len(_ALPHABETS)
#: languages written in Latin letters: a word may mix their letters with ASCII ones ("Plzeň"), not others' ("xБНy")
_LATIN = frozenset(language for language, letters in ALPHABETS.items() if all(ch < "\u0370" for ch in letters))
#: signs that may stand next to a letter in a word ("m²", "’s", "€uro", "¿Qué"); any other sign there is mojibake
_BESIDE_LETTERS = frozenset("’‘‚“”„«»‹›–—·°ºª²³µ€£¥®™…¿¡\xa0")
_WORD = re.compile(rb"[^\s,;|\"'()]*[\x80-\xff][^\s,;|\"'()]*")


@dataclass(frozen=True)
class Candidate:
    """An encoding the file may be in: its codec name, its name for people, and a word and a line of the file
    as it reads them."""

    codec: str
    label: str
    word: str = ""
    line: str = ""


@dataclass(frozen=True)
class Guess:
    """The encoding chosen (``codec``), or ``None`` when it cannot be told; ``candidates`` holds the chosen one
    alone, or the ones to choose from, best first."""

    codec: str | None
    candidates: tuple[Candidate, ...]

    @property
    def unclear(self) -> bool:
        return self.codec is None


class EncodingUnclear(InputError):
    """A file whose encoding cannot be told: the candidates read its letters differently (``candidates``)."""

    def __init__(self, message: str = "", *, candidates: tuple[Candidate, ...] = (), **fields) -> None:
        super().__init__(message, **fields)
        self.candidates = candidates


def label(codec: str) -> str:
    """The name people know an encoding by ("Windows-1250 (Central European)"); the codec name if none."""
    try:
        return LABELS.get(codecs.lookup(codec).name, codec)
    except LookupError:
        return codec


def sample(data: bytes, source: Path | None = None, first_error: int | None = None) -> bytes:
    """The bytes the encoding is told from: the first :data:`SAMPLE_HEAD` bytes; for a larger file, :data:`BLOCKS`
    blocks of :data:`BLOCK` bytes spread over it; and the block around ``first_error`` (the offset of the first byte
    that is not UTF-8) unless those hold it. Each piece is cut to whole lines. ``data`` is the start of the file
    (or all of it); the rest is read from ``source``."""
    size = max(len(data), source.stat().st_size if source is not None else 0)
    ranges = [(0, min(size, SAMPLE_HEAD))]
    if size > SAMPLE_HEAD:
        ranges += [(size * i // (BLOCKS + 1), BLOCK) for i in range(1, BLOCKS + 1)]
    if first_error is not None and not any(s <= first_error < s + n for s, n in ranges):
        ranges.append((max(0, first_error - BLOCK // 2), BLOCK))
    pieces = []
    for start, length in ranges:
        piece = data[start : start + length] if start + length <= len(data) or source is None else _read(source, start,
                                                                                                          length)
        if start > 0:
            piece = piece[piece.find(b"\n") + 1 :]
        if start + length < size:
            cut = piece.rfind(b"\n")
            piece = piece[: cut + 1] if cut >= 0 else piece
        pieces.append(piece)
    return b"\n".join(pieces)


def _read(source: Path, start: int, length: int) -> bytes:
    with source.open("rb") as handle:
        handle.seek(start)
        return handle.read(length)


def guess(data: bytes, source: Path | None = None, first_error: int | None = None) -> Guess:
    """The encoding of a file that is not UTF-8, told from its :func:`sample` (cached per file, size and time)."""
    if source is not None:
        try:
            stat = source.stat()
        except OSError:
            return guess_sample(sample(data, None, first_error))
        return _cached(str(source), stat.st_size, stat.st_mtime_ns, first_error, data[:SAMPLE_HEAD])
    return guess_sample(sample(data, None, first_error))


@lru_cache(maxsize=16)
def _cached(path: str, _size: int, _mtime: int, first_error: int | None, head: bytes) -> Guess:
    return guess_sample(sample(head, Path(path), first_error))


def guess_sample(sampled: bytes) -> Guess:
    """The encoding of ``sampled`` (not UTF-8): charset-normalizer's candidates, judged by the words they give."""
    from charset_normalizer import from_bytes

    words = Counter(_WORD.findall(sampled)).most_common(WORDS)
    focus = b"\n".join(word for word, _count in words)[:FOCUS_BYTES]
    if not focus:
        return _as_before()
    def detect(isolation: list[str], threshold: float = 0.2) -> list:
        return list(from_bytes(focus, steps=8, chunk_size=512, threshold=threshold, cp_isolation=isolation,
                               preemptive_behaviour=False, enable_fallback=False))

    matches = detect(list(SEARCHED))
    offered = {codecs.lookup(name).name for match in matches for name in match.could_be_from_charset}
    missing = [c for c in COMMON if codecs.lookup(c).name not in offered]
    if missing:  # a small sample ("Café, Thé, Pâté") looks messy to it in every encoding: the common ones are read
        matches += detect(missing, threshold=1.0)
    judged, readings, families, seen = [], {}, {}, {}
    for match in matches:
        codec = _preferred(match.could_be_from_charset or [match.encoding])
        spelt = None if codec is None else _spellings(words, codec)
        if codec is not None and spelt is not None:
            readings[codec], letters = spelt
            families[codec] = languages(letters, codec, most=2)
            seen[codec] = letters
            judged.append((codec not in COMMON, -_fit(words, readings[codec]), match.chaos, SEARCHED.index(codec),
                           codec))
    if judged and min(judged)[0] is False and -min(judged)[1] >= COMMON_FIT:
        judged = [j for j in judged if j[0] is False]  # a common encoding reads it well: the others are not asked
    judged = _plausible(judged, families, seen)
    if not judged:  # no candidate reads it: decoding as Windows-1252 names the byte at fault, as before
        return _as_before()
    judged.sort(key=lambda j: j[1:])
    best = judged[0][4]
    if judged[0][1] == 0:  # no reading spells a word in a language known here: charset-normalizer's mess alone
        if _evidence(words) >= MIN_EVIDENCE and all(j[2] - judged[0][2] >= CHAOS_MARGIN for j in judged[1:]):
            return Guess(_name(best), (Candidate(_name(best), label(best)),))
        return _as_before()  # read as before (Windows-1252), which names a byte it does not know
    rivals = [j[4] for j in judged[1:] if _margin(words, readings, best, j[4]) < FIT_MARGIN]
    if not rivals and (best in WESTERN or _evidence(words) >= MIN_EVIDENCE):
        return Guess(_name(best), (Candidate(_name(best), label(best)),))
    chosen = [best] + rivals[:2]
    word = _telling_word(words, chosen)
    line = next((ln for ln in sampled.splitlines() if word and word in ln), b"")
    return Guess(None, tuple(Candidate(_name(c), label(c), word.decode(c, "replace"), _short(line.decode(c, "replace")))
                             for c in chosen))


def _evidence(words: list[tuple[bytes, int]]) -> int:
    """The non-ASCII bytes of the sample's words (one loop over its distinct words, at most :data:`WORDS`)."""
    return sum(sum(1 for b in word if b >= 0x80) * count for word, count in words)


def _plausible(judged: list[tuple], families: dict[str, tuple[str, ...] | None],
               letters: dict[str, frozenset[str]]) -> list[tuple]:
    """The readings whose letters, over the whole sample, one language writes, when any does, and readings
    that two languages write too unless one of those gives :data:`CLEAR_LETTERS` letters or more."""
    def writers(j: tuple) -> float:  # how many languages write the reading's letters (none does: infinitely many)
        family = families[j[4]]
        return math.inf if family is None else len(family)

    single = [j for j in judged if writers(j) <= 1]
    if not single:
        return judged
    strong = max(len(letters[j[4]]) for j in single) >= CLEAR_LETTERS
    return [j for j in judged if writers(j) <= (1 if strong else 2)]


def _margin(words: list[tuple[bytes, int]], readings: dict[str, list[list[float]]], best: str, other: str) -> float:
    """How much better ``best`` spells the words that it and ``other`` read differently."""
    differ = [i for i, (word, _n) in enumerate(words) if word.decode(best, "replace") != word.decode(other, "replace")]
    return _fit(words, readings[best], differ) - _fit(words, readings[other], differ)


def _as_before() -> Guess:
    return Guess("cp1252", (Candidate("cp1252", label("cp1252")),))


def _name(codec: str) -> str:
    return codecs.lookup(codec).name


def _short(text: str, width: int = 160) -> str:
    text = text.strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def _preferred(names: list[str]) -> str | None:
    """The first of :data:`SEARCHED` among ``names`` (charset-normalizer's names for one reading)."""
    known = {codecs.lookup(n).name for n in names}
    return next((c for c in SEARCHED if codecs.lookup(c).name in known), None)


def _spellings(words: list[tuple[bytes, int]], codec: str) -> tuple[list[list[float]], frozenset[str]] | None:
    """For each word, how well each language of :data:`ALPHABETS` spells it as ``codec`` reads it (:func:`_weight`;
    1 for all when it holds no letters beyond ASCII: "25°", "€"), and the set of letters beyond ASCII the reading
    gives over all words (lower case; :data:`~ppdp_desktop.core.data.alphabets.NO_LETTER` for a word that no
    language writes: a sign among letters, a capital inside a word, Cyrillic or Greek letters beside Latin ones);
    None if ``codec`` reads a control character or a byte it does not know (no reading of a table)."""
    rows: list[list[float]] = []
    seen: set[str] = set()
    for word, _count in words:
        text = word.decode(codec, "replace")
        extra = [ch for ch in text if not ch.isascii()]
        if any(ch == "\ufffd" or unicodedata.category(ch) == "Cc" for ch in extra):
            return None
        letters = frozenset(ch.lower() for ch in extra if ch.isalpha())
        latin = any("a" <= ch <= "z" for ch in text.lower())
        if not letters:
            rows.append(_NEUTRAL)
            if _sign_inside(text):
                seen.add(NO_LETTER)
            continue
        if any(not ch.isalpha() and ch not in _BESIDE_LETTERS for ch in extra) or _capital_inside(text):
            letters = frozenset({NO_LETTER})  # a sign among letters, or a capital inside a word: no language
        seen |= {NO_LETTER} if latin and any("\u0370" <= ch < "\u0530" for ch in letters) else letters
        rows.append([_weight(letters, latin, language) for language in _ALPHABETS])
    return rows, frozenset(seen)


def _fit(words: list[tuple[bytes, int]], rows: list[list[float]], keep: list[int] | None = None) -> float:
    """How well a reading spells the words (``keep``: those at these indexes), from 0 to 1: the mean of the share
    of words (by count) spelt in one language (the one that spells most) and the share spelt in some language."""
    chosen = range(len(words)) if keep is None else keep
    total = sum(words[i][1] for i in chosen)
    if not total:
        return 0.0
    one = max(sum(words[i][1] * rows[i][lang] for i in chosen) for lang in range(len(_ALPHABETS)))
    some = sum(words[i][1] * max(rows[i]) for i in chosen)
    return (one + some) / (2 * total)


def _weight(letters: frozenset[str], latin: bool, language: str) -> float:
    """1 if ``language`` writes these letters (and, for a non-Latin alphabet, the word has no ASCII letters), else 0."""
    return float(letters <= _ALPHABETS[language] and (language in _LATIN or not latin))


def _sign_inside(text: str) -> bool:
    """Whether a sign beyond ASCII stands between two letters ("Th¸ringen"), other than :data:`_BESIDE_LETTERS`."""
    return any(a.isalpha() and c.isalpha() and not b.isascii() and not b.isalpha() and b not in _BESIDE_LETTERS
               for a, b, c in zip(text, text[1:], text[2:]))


def _capital_inside(text: str) -> bool:
    """Whether a capital beyond ASCII follows a small letter ("ThŁringen", "CafŽ"): no language writes that."""
    return any(b.isupper() and not b.isascii() and a.islower() for a, b in zip(text, text[1:]))


def _telling_word(words: list[tuple[bytes, int]], codecs_: list[str]) -> bytes:
    """The most frequent word that the candidates read differently."""
    for word, _count in words:
        if len({word.decode(c, "replace") for c in codecs_}) > 1:
            return word
    return words[0][0] if words else b""


def unclear_error(name: str, found: Guess) -> EncodingUnclear:
    """The one-line refusal for a file whose encoding cannot be told: the candidates, the word each reads, and
    how to choose."""
    readings = "; ".join(f"as {c.label} it reads \"{c.word}\"" for c in found.candidates)
    names = " or ".join(c.codec for c in found.candidates)
    return EncodingUnclear(
        f"{name}: its encoding cannot be told for sure: {readings}; say which it is with "
        f"{setting_ref('encoding', 'NAME')} ({names}).",
        candidates=found.candidates, setting="encoding", file=name, allowed=names)
