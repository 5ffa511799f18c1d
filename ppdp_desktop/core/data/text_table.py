"""Reading a delimited text file into typed columns, for :func:`~ppdp_desktop.core.data.loading.load_table`.

Every cell is read as text by pyarrow's CSV parser (encoding and delimiter sniffed, the header found below any title
rows), then each column is typed (:mod:`~ppdp_desktop.core.data.kinds`). A whole UTF-8 file is parsed as it is read
(:mod:`~ppdp_desktop.core.data.tapped`: hashed, counted and validated on the way, never held whole beside its table);
any other file, a preview, or a file that path cannot read is read whole and decoded first, and what is wrong with
it is named by file, line and value. The file is only ever opened for reading.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.dictionary import text_mostly_distinct
from ppdp_desktop.core.data.digest import FileDigest, digest_of_bytes
from ppdp_desktop.core.data.in_pieces import count_bytes
from ppdp_desktop.core.data.kinds import type_text_columns
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.data.source_rows import SourceRows, text_rows
from ppdp_desktop.core.data.tapped import TappedReader, utf8_valid, whole_characters
from ppdp_desktop.core.errors import InputError, setting_ref

MAX_ROW_BYTES = 256 << 20  # one row of text: a declared limit (the parser's block grows to it at most)
_ROW_NUMBER = re.compile(r"Row #\d+: ")
_EMPTY = "{name}: the file is empty; it needs a header line and at least one data row."


def library_error(name: str, what: str, exc: Exception) -> InputError:
    """The error of a file a reading library refused (its first line of detail), asking to check the file."""
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(f"{name}: cannot be read as {what} ({detail}); check that the file is not damaged.")


def read_text(
    source: Path, name: str, sep: str | None, encoding: str | None, decimal: str, header_row: int,
    kinds: Mapping[str, str] | None, rows: int | None,
) -> tuple[pd.DataFrame, dict[str, str], dict, FileDigest | None, SourceRows | None]:
    """Every cell read as text by pyarrow's CSV parser, then typed column by column (:mod:`.kinds`); the digest
    of the bytes read when the whole file was (``rows`` None), and the line each record starts on.

    A whole UTF-8 file is parsed as it is read (:func:`_stream_text`); any other file, or one that path cannot
    read, is read whole and decoded first, which names what is wrong with it."""
    if rows is None and header_row < 50:
        streamed = _stream_text(source, name, sep, encoding, decimal, header_row, kinds)
        if streamed is not None:
            return streamed
    data = source.read_bytes() if rows is None else _head_bytes(source, rows + header_row)
    if not data or data.isspace():
        raise InputError(_EMPTY.format(name=name))
    text: str | None = None  # the whole text, made only when needed: UTF-8 is validated and parsed as bytes
    codec = sniffing.valid_utf8(data, encoding, name)
    if codec is None:
        text, codec = sniffing.decode(data, encoding, name, source)
        sample = sniffing.sample_of(text)
    else:
        sample = sniffing.sample_bytes(data, codec) or ""
        if not sample.strip():  # all blank so far: is the whole file?
            text = data.decode(codec)
    if text is not None and (not text or text.isspace()):
        raise InputError(_EMPTY.format(name=name))
    if header_row >= 50 and text is None:
        text = data.decode(codec)
    delimiter, header, skip = _layout(sample, text, source, sep, decimal, header_row)
    payload = data if codec in ("utf-8", "utf-8-sig") else (text or "").encode("utf-8")
    text = None  # let go of: the bytes to parse are UTF-8
    digest = digest_of_bytes(source, data) if rows is None else None  # the bytes read, hashed
    table = _parse(payload, name, delimiter, len(header), skip, data, codec)
    lines = _record_lines(payload, skip, table.num_rows, delimiter)
    if rows is None:
        _check_quotes(payload, delimiter, name)
    else:
        table = table.slice(0, rows)
        lines = lines.head(rows) if lines is not None else None
    del data, payload  # the file's bytes are not needed to type the columns: let go of before (peak memory)
    if table.num_rows == 0:
        read = _head_size(rows + header_row) if rows is not None else None
        if read is not None and source.stat().st_size > read:  # the preview stopped inside the first record
            raise InputError(f"{name}: the record after the header (line {skip + 1}) is longer than the "
                             f"{read / 1024 ** 2:,.0f} MiB read to preview the file; a table's record is not that long. "
                             "Check that the file is a table with one record per line (its separator, its quotes).")
    handed = [table]
    del table  # held by _typed alone from here
    frame, decided = _typed(handed, header, name, kinds, decimal, lines)
    return frame, {"format": "csv", "delimiter": delimiter, "encoding": codec}, decided, digest, lines


def _layout(sample: str, text: str | None, source: Path, sep: str | None, decimal: str,
            header_row: int) -> tuple[str, list[str], int]:
    """The delimiter (given or sniffed from ``sample``), the header's fields and the physical lines up to the
    header's end (``text``: the whole text, for a header row beyond the sample's 50 records)."""
    name = source.name or str(source)
    if sep is not None:
        delimiter = sniffing.normalize_sep(sep, name)
    else:
        below_title = sniffing.lines_from(sample, header_row) if header_row > 1 else sample
        delimiter = sniffing.sniff_delimiter(below_title) or ("\t" if source.suffix.lower() == ".tsv" else ",")
    found = sniffing.header_record(sample if header_row < 50 else text or "", delimiter, header_row)
    if found is None:
        raise InputError(f"{name}: has no row {header_row} to take the column names from; choose a smaller header row.")
    header, skip = found
    if sep is not None:  # the user's separator (a sniffed ',' with quoted "1,5" numbers is a file's own choice)
        sniffing.check_given_sep(sample, delimiter, header, name)
        sniffing.check_decimal(delimiter, decimal, name)
    return delimiter, header, skip


def _typed(handed: list[pa.Table], header: list[str], name: str, kinds: Mapping[str, str] | None, decimal: str,
           lines: SourceRows | None) -> tuple[pd.DataFrame, dict[str, Kind]]:
    """The parsed table's named columns, typed. The table is handed over in a list that is emptied (the caller
    keeping no reference), so that each column's text is let go of as soon as it is typed."""
    table = handed.pop()
    if table.num_rows == 0:
        raise InputError(f"{name}: has a header line but no data rows; add at least one row of data.")
    names = _finish_names([c.strip() for c in header], table, name)
    named = [(i, n) for i, n in enumerate(names) if n is not None]
    columns: list[pa.ChunkedArray | None] = [table.column(i) for i, _ in named]
    del table
    return type_text_columns(columns, [n for _, n in named], kinds, name, decimal, lines)


#: bytes read first from a whole file parsed as it is read: the sniffing sample is taken from them
STREAM_HEAD = 16 * sniffing.SAMPLE_BYTES


def _stream_text(
    source: Path, name: str, sep: str | None, encoding: str | None, decimal: str, header_row: int,
    kinds: Mapping[str, str] | None,
) -> tuple[pd.DataFrame, dict[str, str], dict, FileDigest | None, SourceRows | None] | None:
    """:func:`_read_text` of a whole UTF-8 file without holding it in memory beside its table (issue 34): the
    sample from its first bytes, then pyarrow parsing it as :class:`~.tapped.TappedReader` reads it, which hashes,
    counts and validates it on the way. None when the file needs the whole-bytes path: not UTF-8, NUL bytes,
    blank at its start, a header or first line beyond the head, or a file the parser refuses (that path then
    says why)."""
    with source.open("rb") as handle:
        head = handle.read(STREAM_HEAD)
        whole = len(head) < STREAM_HEAD
        checked = head if whole else head[: whole_characters(head)]  # the last character may be cut
        codec = sniffing.utf8_codec(head, encoding, name)
        if codec is None or not head or head.isspace() or not utf8_valid(checked):
            return None
        sample = sniffing.sample_bytes(head, codec, partial=not whole)
        if sample is None or not sample.strip():
            return None
        delimiter, header, skip = _layout(sample, None, source, sep, decimal, header_row)
        reader = TappedReader(source, head, handle)
        try:
            table = _parse_csv(reader, delimiter, len(header), skip, None)
        except pa.ArrowInvalid:
            return None
    if not reader.ended or not reader.utf8 or (reader.nul and codec == "utf-8" and encoding is None):
        return None
    offset = _offset_after(head, skip)
    ends_with_break = reader.size > offset and reader.last in (b"\n", b"\r")
    if reader.breaks(head[:offset]) + (0 if ends_with_break else 1) == table.num_rows:
        lines: SourceRows | None = SourceRows("line", skip + 1)
    else:  # blank lines or values spanning lines: the csv module reads the file again to tell the lines
        lines = _record_lines(source.read_bytes(), skip, table.num_rows, delimiter)
    if reader.quotes % 2:
        _check_quotes(source.read_bytes(), delimiter, name)
    handed = [table]
    del table  # held by _typed alone from here
    frame, decided = _typed(handed, header, name, kinds, decimal, lines)
    return frame, {"format": "csv", "delimiter": delimiter, "encoding": codec}, decided, reader.digest(), lines


def _record_lines(payload: bytes, skip: int, records: int, sep: str) -> SourceRows | None:
    """The line each record starts on: the line after the header's and on, when every line below the header is a
    record (counted, not parsed: the usual case); else read with the csv module (blank lines, values spanning lines)."""
    offset = _offset_after(payload, skip)
    data = memoryview(payload)[offset:]
    breaks = count_bytes(payload, b"\n", offset) or count_bytes(payload, b"\r", offset)
    ends_with_break = len(data) > 0 and payload[-1:] in (b"\n", b"\r")
    if breaks + (0 if ends_with_break else 1) == records:
        return SourceRows("line", skip + 1)
    starts = text_rows(bytes(data).decode("utf-8", errors="replace"), sep, skip + 1, records)
    return SourceRows.of(starts, "line") if starts is not None else None


def _head_size(records: int) -> int:
    """How many bytes a preview of ``records`` lines reads."""
    return max(sniffing.SAMPLE_BYTES, 512 * records)


def _head_bytes(source: Path, records: int) -> bytes:
    """The start of a file for a preview: about ``records`` lines (at least 64 KiB), cut after a line break."""
    with source.open("rb") as handle:
        data = handle.read(_head_size(records))
        more = handle.read(1)
    if not more:
        return data
    cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
    return data[: cut + 1] if cut > 0 else data


def _parse_csv(stream, sep: str, width: int, skip: int, block_size: int | None) -> pa.Table:
    """The records after the ``skip`` physical lines of ``stream`` (UTF-8 bytes: a buffer reader or a file) as a table
    of ``width`` text columns (``large_string``, pandas' own: nulls for empty cells), whitespace-only lines skipped.

    Parsed a block at a time: a column whose first values repeat is dictionary-encoded block by block, so that the
    file's text is never held whole as strings (issue 34: the load's peak memory); a column of mostly distinct values
    (an identifier) is kept as text. The values are the same either way (:func:`~.kinds.convert` reads both)."""
    reader = _open_csv(stream, sep, width, skip, block_size)
    chunks: list[list[pa.Array]] = [[] for _ in range(width)]
    coded: list[bool] | None = None
    for batch in reader:
        if coded is None:
            coded = [not text_mostly_distinct(batch.column(i)) for i in range(width)]
        for i in range(width):
            column = batch.column(i)
            chunks[i].append(column.dictionary_encode() if coded[i] else column)
        del batch, column
    if coded is None:
        return reader.schema.empty_table()
    return pa.table({f"c{i}": pa.chunked_array(chunks[i]) for i in range(width)})


def _open_csv(stream, sep: str, width: int, skip: int, block_size: int | None):
    """pyarrow's streaming CSV reader of ``stream`` with the options of :func:`_parse_csv`."""
    import pyarrow.csv as pcsv

    names = [f"c{i}" for i in range(width)]

    def blank_or_error(row) -> str:  # whitespace-only lines are skipped, as blank lines are
        return "skip" if row.text is not None and not row.text.strip() else "error"

    return pcsv.open_csv(
        stream,
        # one thread: the parser's blocks are then allocated where the columns are typed, which reuses their
        # memory (in the pool's threads, 0.8 bytes per input byte more stayed held), for about the same CPU
        read_options=pcsv.ReadOptions(column_names=names, skip_rows=skip, use_threads=False,
                                      **({"block_size": block_size} if block_size else {})),
        parse_options=pcsv.ParseOptions(delimiter=sep, newlines_in_values=True, invalid_row_handler=blank_or_error),
        convert_options=pcsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.large_string()), strings_can_be_null=True, null_values=[""],
            quoted_strings_can_be_null=True, check_utf8=False,  # the bytes are UTF-8: validated or encoded
        ),
    )


def _parse(payload: bytes, name: str, sep: str, width: int, skip: int, data: bytes, codec: str) -> pa.Table:
    """The records after the header as a table of ``width`` text columns (nulls for empty cells)."""

    def parse(block_size: int | None) -> pa.Table:
        return _parse_csv(pa.BufferReader(payload), sep, width, skip, block_size)

    try:
        try:
            return parse(None)
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc):
                raise
            try:  # a row longer than the parser's block (1 MiB): once more with the largest block we allow
                return parse(MAX_ROW_BYTES)
            except pa.ArrowInvalid as again:
                if "straddl" in str(again):
                    raise InputError(f"{name}: a row is longer than {MAX_ROW_BYTES >> 20} MiB, far longer than a "
                                     "row of a data table; check the file (a missing line break, or a quote that "
                                     "is never closed).") from None
                raise
    except pa.ArrowInvalid as exc:
        if not payload[_offset_after(payload, skip):].strip():
            raise InputError(f"{name}: has a header line but no data rows; add at least one row of data.") from None
        ragged = sniffing.find_ragged(data, codec, sep, width)
        if ragged is not None:
            raise _ragged_error(name, *ragged, width) from None
        # the parser's "Row #N" counts the records it read, not the file's lines: left out, not to mislead
        raise library_error(name, "delimited text", pa.ArrowInvalid(_ROW_NUMBER.sub("", str(exc)))) from None


def _offset_after(payload: bytes, lines: int) -> int:
    """The byte offset just after the first ``lines`` physical lines (CR, LF or CRLF)."""
    offset = 0
    for _ in range(lines):
        cuts = [i for i in (payload.find(b"\n", offset), payload.find(b"\r", offset)) if i >= 0]
        if not cuts:
            return len(payload)
        offset = min(cuts) + 1
        if payload[offset - 1 : offset + 1] == b"\r\n":
            offset += 1
    return offset


def _check_quotes(payload: bytes, sep: str, name: str) -> None:
    """A quoted value that is never closed swallows the rest of the file: refuse it by line (``payload``: UTF-8)."""
    if count_bytes(payload, b'"') % 2 == 0:
        return
    line = sniffing.unclosed_quote_line(payload.decode("utf-8"), sep)
    if line is not None:
        raise InputError(f"{name}: a quoted value starting on line {line} is never closed; add the missing '\"'.")


def _finish_names(header: list[str], table: pa.Table, name: str) -> list[str | None]:
    """The header's names, checked as :func:`_finish` does; None for an unnamed column without data."""
    names: list[str | None] = list(header)
    if header:
        names[0] = header[0].lstrip("\ufeff").strip()
    for i, column in enumerate(names):
        if not column and table.column(i).null_count == table.num_rows:
            names[i] = None
    check_names([n or "" for n in names], [i for i, n in enumerate(names) if n is not None], name)
    return names


def _ragged_error(name: str, line: int, fields: int, expected: int) -> InputError:
    return InputError(
        f"{name}: line {line} has {fields} field{'s' * (fields != 1)} but the header has {expected}; "
        f"fix that row (quote values that contain the delimiter) or check the delimiter ({setting_ref('sep')}).",
        setting="sep", file=name, row=line)


def check_names(names: list[str], keep: list[int], name: str) -> None:
    """Refuse a file without columns, a kept column without a name, or two columns of one name."""
    if not keep:
        raise InputError(f"{name}: has no columns; it needs a header row naming each column.")
    unnamed = [str(i + 1) for i in keep if not names[i]]
    if unnamed:
        raise InputError(
            f"{name}: column{'s' * (len(unnamed) > 1)} {', '.join(unnamed)} (counting from 1) "
            f"ha{'ve' if len(unnamed) > 1 else 's'} no name in the header; give every column a name."
        )
    seen: dict[str, int] = {}
    for index in keep:
        if names[index] in seen:
            raise InputError(
                f"{name}: columns {seen[names[index]]} and {index + 1} are both named {names[index]!r}; "
                "give every column a different name."
            )
        seen[names[index]] = index + 1
