"""Work out how a delimited text file is written: its encoding, delimiter, header and bad rows.

Everything here reads bytes or text that :mod:`ppdp_desktop.core.data.loading` has already read; no
function opens or writes a file. Line numbers are 1-based physical lines, as a text editor shows.
"""
from __future__ import annotations

import codecs
import csv
import io
import re
from collections import Counter
from pathlib import Path
from typing import Literal

import numpy as np

from ppdp_desktop.core.data import encoding_guess, in_pieces, tapped
from ppdp_desktop.core.errors import InputError, setting_ref

CANDIDATES = (",", ";", "\t", "|")
SAMPLE_BYTES = 64 * 1024
SAMPLE_RECORDS = 50
_CHUNK_BYTES = 16 * 1024 * 1024
_BOM_UTF8 = codecs.BOM_UTF8
_READABLE = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "utf-16": "UTF-16", "cp1252": "Windows-1252"}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SEP_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}
# Codecs in which every ASCII byte always means its ASCII character (no multi-byte tricks).
_ASCII_SAFE = ("utf-8", "ascii", "cp125", "iso8859")


def normalize_sep(sep: str, name: str) -> str:
    """The one-character delimiter meant by ``sep`` (``"tab"`` or ``"\\t"`` mean a tab).

    Raises
    ------
    InputError
        If ``sep`` is not a single character or a known name.
    """
    value = _SEP_NAMES.get(sep.lower(), sep) if sep.strip() else sep
    if len(value) != 1 or value in "\"\r\n":
        raise InputError(
            f"{name}: the delimiter {sep!r} is not usable; give one character such as ',', ';', '|' or 'tab'."
        )
    return value


#: codecs Python counts as text encodings that do not read a file's bytes as its characters: domain-name and
#: escape codecs (their errors are not decoding errors) and the codec that refuses everything
NOT_FILE_ENCODINGS = frozenset({"punycode", "idna", "unicode-escape", "raw-unicode-escape", "undefined"})


def codec_name(encoding: str, name: str) -> str:
    """Python's canonical name of ``encoding`` (``"latin1"`` -> ``"iso8859-1"``); a codec that is not a text
    encoding of files (rot13, base64, punycode, idna, ...) or a name with a NUL is refused like an unknown one."""
    try:
        info = codecs.lookup(encoding)
        if not getattr(info, "_is_text_encoding", True):  # rot13, hex, base64: codecs, but not text encodings
            raise LookupError(encoding)
        if info.name.replace("_", "-") in NOT_FILE_ENCODINGS:
            raise LookupError(encoding)
        return info.name
    except (LookupError, ValueError, TypeError):  # ValueError: a NUL in the name
        raise InputError(
            f"{name}: {encoding!r} is not a known text encoding; try utf-8, cp1252 or latin-1."
        ) from None


def decode(data: bytes, encoding: str | None, name: str, source: Path | None = None) -> tuple[str, str]:
    """Decode ``data``, sniffing the encoding unless one is given.

    Sniffing tries UTF-8 with a byte-order mark (when the file starts with one), UTF-16 (BOM), UTF-8,
    then, for text that is not UTF-8, the encoding told by :mod:`~ppdp_desktop.core.data.encoding_guess`
    from a sample of ``data`` (the start of the file ``source``, or all of it, when ``source`` is None).

    Returns
    -------
    tuple of str
        The decoded text and the codec name to give pandas.

    Raises
    ------
    InputError
        If the bytes are not valid in the given or any sniffed encoding, or look binary;
        :class:`~ppdp_desktop.core.data.encoding_guess.EncodingUnclear` if the encoding cannot be told.
    """
    if encoding is not None:
        codec = codec_name(encoding, name)
        if codec == "utf-8" and data.startswith(codecs.BOM_UTF8):
            codec = "utf-8-sig"
        candidates = [codec]
    else:
        boms = {codecs.BOM_UTF8: "utf-8-sig", codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}
        candidates = [c for bom, c in boms.items() if data.startswith(bom)][:1] or ["utf-8", "cp1252"]
        if candidates[0] == "utf-8" and b"\x00" in data:  # one rule for the whole file
            raise InputError(
                f"{name}: contains NUL bytes, so it is not a text table; "
                "if it is a spreadsheet, give it its real extension (.xlsx, .sav, .dta, .parquet)."
            )
    error: UnicodeDecodeError | None = None
    for index, codec in enumerate(candidates):
        if encoding is None and index == 1 and error is not None:  # not UTF-8: which encoding, if it can be told
            codec = candidates[index] = _not_utf8(data, source, error.start, name)
        try:
            text = in_pieces.decode(data, codec)  # the reading worker lets the window paint meanwhile
        except UnicodeDecodeError as exc:
            error = exc
            continue
        if index == 1:
            _refuse_mixed(data, name)
        return text, codec
    assert error is not None  # every candidate failed to decode
    tried = " or ".join(_READABLE.get(c, encoding_guess.label(c)) for c in candidates)
    line = data.count(b"\n", 0, error.start) + 1
    raise InputError(
        f"{name}: byte 0x{data[error.start]:02X} at offset {error.start} (line {line}) is not valid {tried} "
        f"text; save the file as UTF-8 or set its encoding (for example latin-1) with {setting_ref('encoding')}.",
        setting="encoding", file=name, row=line)


def utf8_codec(data: bytes, encoding: str | None, name: str) -> str | None:
    """The codec ("utf-8", or "utf-8-sig" after a byte-order mark) that :func:`decode` would try first and alone
    for ``data`` (the file, or its start) when it is UTF-8; None when decode would try another or refuse the bytes
    (UTF-16, NUL bytes without a UTF-8 byte-order mark). The bytes are not validated here."""
    given = codec_name(encoding, name) if encoding is not None else None
    if given is not None and given not in ("utf-8", "utf-8-sig"):
        return None
    if given is None and (data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
                          or (not data.startswith(codecs.BOM_UTF8) and b"\x00" in data)):
        return None
    return "utf-8-sig" if given == "utf-8-sig" or data.startswith(codecs.BOM_UTF8) else "utf-8"


def valid_utf8(data: bytes, encoding: str | None, name: str) -> str | None:
    """The codec (:func:`utf8_codec`) when :func:`decode` would read ``data`` as UTF-8 and every byte of it is valid
    UTF-8, told by pyarrow's validator without making the text (issue 34: a 50 MB file is then not held twice, as
    bytes and as text); None otherwise, and :func:`decode` then reads or refuses the file as it does."""
    codec = utf8_codec(data, encoding, name)
    return codec if codec is not None and tapped.utf8_valid(data) else None


def sample_bytes(data: bytes, codec: str, partial: bool = False) -> str | None:
    """``sample_of(data.decode(codec))``, decoding only the start of ``data`` (all of it when the first line is
    longer than what was decoded). ``partial``: ``data`` is only the start of the file, and None is returned when
    it is too short to tell the file's sample."""
    size = 4 * SAMPLE_BYTES  # at least SAMPLE_BYTES characters whatever their width
    while len(data) > size:
        head = codecs.getincrementaldecoder(codec)().decode(data[:size], final=False)
        if len(head) > SAMPLE_BYTES:
            cut = max(head.rfind("\n", 0, SAMPLE_BYTES), head.rfind("\r", 0, SAMPLE_BYTES))
            if cut > 0:
                return sample_of(head)
            end = _LINE_BREAK.search(head, SAMPLE_BYTES)
            if end is not None and end.end() < len(head):  # a CR at the very end could be half of a CRLF
                return head[: end.end()]
        size *= 4
    return None if partial else sample_of(data.decode(codec))


def decode_unset(data: bytes, name: str, source: Path | None = None) -> str:
    """Decode a small text file whose encoding the user has no setting for (a hierarchy file) as :func:`decode`
    sniffs it: a byte-order mark, else UTF-8, else the encoding :mod:`~ppdp_desktop.core.data.encoding_guess`
    tells from the whole of ``data``.

    Raises
    ------
    InputError
        Naming the file, and asking for UTF-8: when its encoding cannot be told (with the word each candidate
        reads), when it mixes UTF-8 and another encoding, or when a byte is not valid in the encoding found.
    """
    boms = {codecs.BOM_UTF8: "utf-8-sig", codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}
    codec = next((c for bom, c in boms.items() if data.startswith(bom)), None)
    if codec is None:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            found = encoding_guess.guess(data, source, exc.start)
        _refuse_mixed(data, name)
        if found.codec is None:
            readings = "; ".join(f"as {c.label} it reads \"{c.word}\"" for c in found.candidates)
            raise encoding_guess.EncodingUnclear(
                f"{name}: its encoding cannot be told for sure: {readings}; save it as UTF-8.",
                candidates=found.candidates, file=name, allowed=" or ".join(c.codec for c in found.candidates))
        codec = found.codec
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        tried = _READABLE.get(codec, encoding_guess.label(codec))
        raise InputError(f"{name}: byte offset {exc.start} is not valid "
                         f"{'' if codec.startswith('utf') else 'UTF-8 or '}{tried} text; save it as UTF-8.",
                         file=name) from None


def _not_utf8(data: bytes, source: Path | None, first_error: int, name: str) -> str:
    """The encoding of text that is not UTF-8; refused when it cannot be told (unless it mixes encodings)."""
    found = encoding_guess.guess(data, source, first_error)
    if found.codec is None:
        _refuse_mixed(data, name)
        raise encoding_guess.unclear_error(name, found)
    return found.codec


def _refuse_mixed(data: bytes, name: str) -> None:
    """A file that is partly UTF-8 and partly Windows-1252 would be decoded wrongly either way
    ("HypertensiÃ³n"): name lines of each kind so the user can fix the file."""
    utf8, other = [], []
    for number, line in enumerate(data.splitlines(), start=1):
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            other.append(number)
        else:
            utf8.append(number)
        if len(utf8) >= 3 and len(other) >= 3:
            break
    if utf8 and other:
        show = lambda lines: ", ".join(map(str, lines[:3]))  # noqa: E731
        raise InputError(
            f"{name}: mixes two encodings: line{'s' * (len(utf8) > 1)} {show(utf8)} {'are' if len(utf8) > 1 else 'is'} "
            f"UTF-8 but line{'s' * (len(other) > 1)} {show(other)} {'are' if len(other) > 1 else 'is'} not (Windows-1252?); "
            "save the whole file in one encoding (UTF-8) and load it again."
        )


def sample_of(text: str) -> str:
    """The first ~64 KiB of ``text``, cut after its last complete line; at least the whole first line (a header
    of 100,000 columns is longer than the sample, and cut short it would be counted as fewer columns)."""
    if len(text) <= SAMPLE_BYTES:
        return text
    sample = text[:SAMPLE_BYTES]
    cut = max(sample.rfind("\n"), sample.rfind("\r"))
    if cut > 0:
        return sample[: cut + 1]
    end = _LINE_BREAK.search(text, SAMPLE_BYTES)
    return text if end is None else text[: end.end()]


def _record_counts(sample: str) -> list[dict[str, int]]:
    """Per non-empty record of ``sample``, how often each candidate occurs outside quotes."""
    records: list[dict[str, int]] = []
    current = dict.fromkeys(CANDIDATES, 0)
    in_quotes = False
    for line in _LINE_BREAK.split(sample):
        if not in_quotes and '"' not in line:
            if line.strip():
                records.append({c: line.count(c) for c in CANDIDATES})
        else:
            for char in line:
                if char == '"':
                    in_quotes = not in_quotes
                elif not in_quotes and char in current:
                    current[char] += 1
            if not in_quotes:
                records.append(current)
                current = dict.fromkeys(CANDIDATES, 0)
        if len(records) >= SAMPLE_RECORDS:
            break
    return records


def check_given_sep(sample: str, delimiter: str, header: list[str], name: str) -> None:
    """Refuse a delimiter given by the user under which the header is one column while another delimiter splits
    the file into consistent records: the file is separated by that one (else every later message would speak of
    a column 'a,b,c' that the file "lacks")."""
    if len(header) != 1:
        return
    found = sniff_delimiter(sample)
    if found is None or found == delimiter or found not in header[0]:
        return
    shown = header[0] if len(header[0]) <= 60 else header[0][:57] + "..."
    raise InputError(f"{name}: split by {delimiter!r}, the header is one column ({shown!r}); the file is separated by "
                     f"{found!r}. Give {setting_ref('sep', repr(found))}, or leave the separator out to detect it.",
                     setting="sep", value=delimiter)


def check_decimal(delimiter: str, decimal: str, name: str) -> None:
    """Refuse a decimal mark that is also the separator ("1,5" would be two fields, never one and a half)."""
    if decimal == delimiter:
        raise InputError(f"{name}: the decimal mark {decimal!r} is also the separator between fields; a number "
                         f"'1{decimal}5' would be two fields. Give another {setting_ref('sep')} (the file's real one) or "
                         f"{setting_ref('decimal', repr('.'))}.", setting="decimal", value=decimal)


def sniff_delimiter(sample: str) -> str | None:
    """The delimiter among ``, ; TAB |`` that splits ``sample`` into consistent records.

    A candidate is consistent when the header and most records hold the same non-zero count of it
    outside quotes; the consistent candidate with the most fields wins (ties: share of records
    agreeing, then the order above). With none consistent, the best partial candidate is used so
    that the bad row can be reported; ``None`` means no candidate occurs (a one-column file).
    """
    records = _record_counts(sample)
    if not records:
        return None
    header = records[0]
    best: tuple | None = None
    choice: str | None = None
    for order, cand in enumerate(CANDIDATES):
        counts = [r[cand] for r in records]
        if not any(counts):
            continue
        mode, hits = max(Counter(counts).items(), key=lambda kv: (kv[1], kv[0]))
        share = hits / len(counts)
        consistent = mode > 0 and header[cand] == mode and share >= 0.5
        key = (consistent, header[cand] > 0, mode if consistent else 0, mode > 0, share, -order)
        if best is None or key > best:
            best, choice = key, cand
    return choice


def lines_from(sample: str, record: int) -> str:
    """``sample`` from its ``record``-th non-blank line on (1-based): what lies below a title."""
    lines = _LINE_BREAK.split(sample)
    seen = 0
    for index, line in enumerate(lines):
        if line.strip():
            seen += 1
            if seen == record:
                return "\n".join(lines[index:])
    return ""


def field_counts(sample: str, sep: str) -> list[int]:
    """Fields per non-blank record of ``sample`` with ``sep`` (quotes respected), header first."""
    return [r[sep] + 1 for r in _record_counts(sample)] if sep in CANDIDATES else [
        len(row) for _line, row in _records(sample, sep)][:SAMPLE_RECORDS]


def _is_blank(row: list[str]) -> bool:
    """Empty or whitespace-only lines, which pandas skips (a lone ``""`` is a row to pandas)."""
    return not row or (len(row) == 1 and row[0] != "" and not row[0].strip())


def first_records(sample: str, sep: str, count: int = 2) -> list[list[str]]:
    """The first ``count`` non-blank records of ``sample`` (the header and first data row)."""
    records: list[list[str]] = []
    try:
        for _line, row in _records(sample, sep):
            records.append(row)
            if len(records) == count:
                break
    except csv.Error:
        pass
    return records


def header_record(sample: str, sep: str, header_row: int = 1) -> tuple[list[str], int] | None:
    """The ``header_row``-th non-blank record of ``sample`` (1-based) and how many physical lines end with it
    (the rows a parser skips to reach the data); None if the sample has fewer records."""
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=sep)
    count = 0
    try:
        for row in reader:
            if _is_blank(row):
                continue
            count += 1
            if count == header_row:
                return row, reader.line_num
    except csv.Error:
        return None
    return None


def unclosed_quote_line(text: str, sep: str) -> int | None:
    """The first line of a quoted value that is never closed (the parser would read to the end of the file)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    previous = 0
    try:
        for _row in reader:
            previous = reader.line_num
    except csv.Error:
        return previous + 1
    return None


def _ascii_safe(codec: str, sep: str) -> bool:
    return sep.isascii() and codec.startswith(_ASCII_SAFE)


def _chunk_end(data: bytes, start: int, newline: bytes) -> int:
    """End of a chunk of ~16 MiB: just after a line break that is outside quotes."""
    end, quotes = start + _CHUNK_BYTES, 0
    previous = start
    while end < len(data):
        found = data.find(newline, end)
        if found < 0:
            return len(data)
        end = found + 1
        quotes += data.count(b'"', previous, end)
        if quotes % 2 == 0:
            return end
        previous = end
    return len(data)


def _ragged_in_bytes(data: bytes, sep: str, expected: int) -> tuple[int, int] | None | Literal[False]:
    """Vectorised field count per record, in chunks of whole records.

    A quote toggles "inside quotes" (a doubled quote toggles twice), which is exact as long as
    every opening quote starts a field or follows a quote (``""`` escapes); otherwise ``False``
    asks for the csv module instead.
    """
    newline = b"\n" if b"\n" in data else b"\r"
    arr = np.frombuffer(data, dtype=np.uint8)
    code, blank = ord(sep), b" \r\n" + (b"" if sep == "\t" else b"\t")
    lines_before, start = 0, 0
    while start < len(arr):
        end = _chunk_end(data, start, newline)
        chunk = arr[start:end]
        is_break, is_sep, is_quote = chunk == newline[0], chunk == code, chunk == 34
        breaks = np.flatnonzero(is_break)
        ends = breaks
        if is_quote.any():
            outside = (np.cumsum(is_quote, dtype=np.uint8) & 1) == 0  # parity survives the wrap-around
            opening = np.flatnonzero(is_quote & ~outside)
            before = chunk[np.maximum(opening - 1, 0)]
            field_start = np.isin(before, [code, 10, 13, 34]) | (opening == 0)  # 34: an escaped ""
            if start == 0 and data.startswith(_BOM_UTF8):
                field_start |= opening == len(_BOM_UTF8)
            if not field_start.all():
                return False
            ends = np.flatnonzero(is_break & outside)
            is_sep &= outside
        seps = np.flatnonzero(is_sep)
        if chunk[-1] != newline[0]:
            ends = np.append(ends, len(chunk))
        bounds = np.concatenate(([-1], ends))
        fields = np.diff(np.searchsorted(seps, bounds)) + 1
        for index in np.flatnonzero(fields != expected):
            first, last = int(bounds[index]) + 1, int(bounds[index + 1])
            if data[start + first : start + last].strip(blank):
                return lines_before + int(np.searchsorted(breaks, first)) + 1, int(fields[index])
        lines_before += len(breaks)
        start = end
    return None


def _records(text: str, sep: str):
    """Yield ``(first line, fields)`` for each non-blank record, using the csv module."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    previous = 0
    for row in reader:
        if not _is_blank(row) or reader.line_num > previous + 1:
            yield previous + 1, row
        previous = reader.line_num


def find_ragged(data: bytes, codec: str, sep: str, expected: int) -> tuple[int, int] | None:
    """The first record whose field count differs from ``expected``, as ``(line, fields)``.

    Files in an ASCII-compatible encoding are counted with numpy on the bytes (quoted fields may
    hold delimiters and line breaks); files in other encodings, or with quotes inside unquoted
    fields, are walked with the csv module. Blank lines are skipped, as pandas does. ``None`` if
    every record fits.
    """
    if _ascii_safe(codec, sep):
        found = _ragged_in_bytes(data, sep, expected)
        if found is not False:
            return found
    try:
        for line, row in _records(data.decode(codec), sep):
            if len(row) != expected:
                return line, len(row)
    except csv.Error:
        return None
    return None


def last_record_line(data: bytes, codec: str, sep: str) -> int | None:
    """The first line of the last record (where an unclosed quote swallows the rest of the file)."""
    last = None
    try:
        for line, _row in _records(data.decode(codec), sep):
            last = line
    except csv.Error:
        return None
    return last
