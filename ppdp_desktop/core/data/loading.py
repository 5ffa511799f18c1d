"""Read a table from a file into a :class:`~ppdp_desktop.core.data.dataset.Dataset`.

Supported: delimited text (``.csv .tsv .txt``, encoding and delimiter sniffed, every cell read as text by
pyarrow and then typed by :mod:`~ppdp_desktop.core.data.kinds`), Excel ``.xlsx`` (openpyxl) and ``.xls``
(calamine), SPSS ``.sav``/``.zsav`` and Stata ``.dta`` (value labels applied) and Parquet ``.parquet``/``.pq``.
Every problem a user can cause is an :class:`~ppdp_desktop.core.errors.InputError` naming the
file (and line) and what to change. The input file is only ever opened for reading.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.dataset import Dataset, TableLabels
from ppdp_desktop.core.data.digest import FileDigest, digest_file, digest_of_bytes
from ppdp_desktop.core.data.in_pieces import count_bytes
from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.data.kinds import type_text_columns, type_typed_frame
from ppdp_desktop.core.data.schema import Attribute, Kind, Role, Schema
from ppdp_desktop.core.data.source_rows import SourceRows, text_rows
from ppdp_desktop.core.data.tapped import TappedReader, utf8_valid, whole_characters
from ppdp_desktop.core.errors import InputError, setting_ref

TEXT_EXTENSIONS = (".csv", ".tsv", ".txt")
FORMATS = {
    **dict.fromkeys(TEXT_EXTENSIONS, "csv"),
    ".xlsx": "xlsx",
    ".xls": "xls",
    ".sav": "sav",
    ".zsav": "sav",
    ".dta": "dta",
    ".parquet": "parquet",
    ".pq": "parquet",
}
SUPPORTED = ", ".join(FORMATS)
MAX_ROW_BYTES = 256 << 20  # one row of text: a declared limit (the parser's block grows to it at most)
MAX_HEADER_ROW = 10_000  # title rows above the column names: a declared limit, checked first
_ROW_NUMBER = re.compile(r"Row #\d+: ")
_EMPTY = "{name}: the file is empty; it needs a header line and at least one data row."


class LoadOptions(TypedDict, total=False):
    """:func:`load_table`'s keyword arguments, as the import dialog and a project keep them."""

    sep: str | None
    encoding: str | None
    sheet: str | int | None
    decimal: str | None
    header_row: int | str | None
    kinds: Mapping[str, str] | None
    rows: int | None


def load_table(
    path: str | Path, *, sep: str | None = None, encoding: str | None = None, sheet: str | int | None = None,
    decimal: str | None = None, header_row: int | str | None = None, kinds: Mapping[str, str] | None = None,
    rows: int | None = None,
) -> Dataset:
    """Read a data file into a :class:`Dataset`, each column of its given or guessed kind.

    Parameters
    ----------
    path : str or Path
        The file; its extension (any case) picks the format.
    sep : str, optional
        Delimiter of a text file (``"tab"`` or ``"\\t"`` for a tab); sniffed when omitted.
    encoding : str, optional
        Encoding of a text file; sniffed (UTF-8 with/without BOM, then Windows-1252) when omitted.
    sheet : str or int, optional
        Worksheet name or 0-based index of an Excel workbook; the first sheet when omitted.
    decimal : {".", ","}, optional
        The decimal mark of numbers written as text ("1,5" with ``","``); ``"."`` when omitted.
    header_row : int, optional
        Which row (from 1, blank lines not counted) holds the column names; rows above it are skipped
        (titles). 1 when omitted.
    kinds : mapping, optional
        Column -> kind (``categorical``, ``numeric``, ``date``, ``text``); other columns' kinds are
        guessed (:mod:`ppdp_desktop.core.data.kinds`). Categorical, date and text columns keep the exact
        text read, so "02134" stays "02134".
    rows : int, optional
        Read at most this many data rows (a preview); the whole file when omitted.

    Returns
    -------
    Dataset
        With ``source=Path(path)``, the schema's kinds, and string ``details`` (format, and
        delimiter/encoding/sheet/decimal/header row).

    Raises
    ------
    InputError
        If the file is missing, of an unsupported type, unreadable, empty, has no data rows,
        ragged rows, empty or duplicate column names, or a value that does not fit its column's kind.
    """
    source = Path(path)
    name = source.name or str(source)
    suffix = source.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"{name}: unsupported file type {suffix or '(no extension)'!r}; use one of {SUPPORTED}.")
    if not source.exists():
        raise InputError(f"{name}: file not found ({source}); check the path.")
    check_regular(source, f"data file ({SUPPORTED})")  # a folder, a device or a FIFO (which would hang) is refused
    fmt = FORMATS[suffix]
    mark = _decimal_mark(decimal, name)
    first = _header_row(header_row, name)
    if rows is not None and rows < 1:
        raise InputError(f"{name}: a preview needs at least one row; got {rows}.")
    labels = None
    try:
        source_rows: SourceRows | None = None  # each record's row or line in the file (text files, workbooks)
        if fmt == "csv":
            frame, details, decided, digest, source_rows = _read_text(source, name, sep, encoding, mark, first, kinds,
                                                                      rows)
        else:
            digest = None
            if fmt in ("xlsx", "xls"):
                frame, details, source_rows = _read_excel(source, name, sheet, first, rows, fmt)
            elif fmt == "parquet":
                frame, details = _read_parquet(source, name, rows)
            else:
                frame, details, labels = _read_stat(source, name, fmt, rows)
            frame = _finish(frame, name)
            frame, decided = type_typed_frame(frame, kinds, name, mark, source_rows)
    except PermissionError:
        raise InputError(f"{name}: permission denied; check that you may read the file.") from None
    if mark != ".":
        details["decimal"] = mark
    if first != 1:
        details["header_row"] = str(first)
    schema = Schema({c: Attribute(c, Role.INSENSITIVE, decided[c]) for c in frame.columns})
    if rows is None and digest is None:  # other formats' libraries read the file their own way: hashed apart
        digest = digest_file(source)
    return Dataset(frame, source=source, schema=schema, details=details, labels=labels, digest=digest,
                   source_rows=source_rows)


def _decimal_mark(decimal: str | None, name: str) -> str:
    mark = "." if decimal in (None, "") else str(decimal).strip()
    if mark in ("comma", "decimal-comma"):
        mark = ","
    elif mark in ("point", "dot"):
        mark = "."
    if mark not in (".", ","):
        raise InputError(f"{name}: the decimal mark {decimal!r} is not usable; give '.' or ','.")
    return mark


def _header_row(header_row: int | str | None, name: str) -> int:
    if header_row in (None, ""):
        return 1
    try:
        row = int(header_row)
    except (TypeError, ValueError):
        row = 0
    if not 1 <= row <= MAX_HEADER_ROW:
        raise InputError(f"{name}: the header row {header_row!r} is not usable; give the row number (from 1 to "
                         f"{MAX_HEADER_ROW:,}) that holds the column names.")
    return row


def _library_error(name: str, what: str, exc: Exception) -> InputError:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(f"{name}: cannot be read as {what} ({detail}); check that the file is not damaged.")


def _read_text(
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
    frame, decided = _typed(table, header, name, kinds, decimal, lines)
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


def _typed(table: pa.Table, header: list[str], name: str, kinds: Mapping[str, str] | None, decimal: str,
           lines: SourceRows | None) -> tuple[pd.DataFrame, dict[str, Kind]]:
    """The parsed table's named columns, typed (each column's text let go of as soon as it is typed)."""
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
    frame, decided = _typed(table, header, name, kinds, decimal, lines)
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
    of ``width`` text columns (``large_string``, pandas' own: nulls for empty cells), whitespace-only lines skipped."""
    import pyarrow.csv as pcsv

    names = [f"c{i}" for i in range(width)]

    def blank_or_error(row) -> str:  # whitespace-only lines are skipped, as blank lines are
        return "skip" if row.text is not None and not row.text.strip() else "error"

    return pcsv.read_csv(
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
        raise _library_error(name, "delimited text", pa.ArrowInvalid(_ROW_NUMBER.sub("", str(exc)))) from None


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
    _check_names([n or "" for n in names], [i for i, n in enumerate(names) if n is not None], name)
    return names


def _ragged_error(name: str, line: int, fields: int, expected: int) -> InputError:
    return InputError(
        f"{name}: line {line} has {fields} field{'s' * (fields != 1)} but the header has {expected}; "
        f"fix that row (quote values that contain the delimiter) or check the delimiter ({setting_ref('sep')}).",
        setting="sep", file=name, row=line)


def _sheet_names(source: Path, name: str, fmt: str) -> list[str]:
    try:
        if fmt == "xls":
            from python_calamine import CalamineWorkbook

            return list(CalamineWorkbook.from_path(str(source)).sheet_names)
        from openpyxl import load_workbook

        book = load_workbook(source, read_only=True)
        try:
            return list(book.sheetnames)
        finally:
            book.close()
    except ImportError:
        raise InputError(
            f"{name}: old Excel .xls workbooks need the python-calamine package, which is not installed; open it in "
            "Excel or LibreOffice and save it as .xlsx (or export it as CSV)."
        ) from None
    except Exception as exc:  # openpyxl/calamine raise zipfile, KeyError, XML, BIFF and their own errors
        raise _library_error(name, f"an {'.xls' if fmt == 'xls' else '.xlsx'} workbook", exc) from None


def sheet_names(path: str | Path) -> list[str]:
    """The worksheets of an Excel workbook (.xlsx or .xls), in order; an empty list for other files."""
    source = Path(path)
    fmt = FORMATS.get(source.suffix.lower())
    return _sheet_names(source, source.name, fmt) if fmt in ("xlsx", "xls") else []


def read_sheet(source: Path, sheet: str | int, fmt: str, nrows: int | None) -> pd.DataFrame:
    """The cells of one worksheet (no header taken), empty cells missing: openpyxl for .xlsx, calamine for
    .xls; the index is each row's number in the sheet, from 0. Library errors propagate."""
    if fmt == "xls":
        from python_calamine import CalamineWorkbook

        book = CalamineWorkbook.from_path(str(source))
        chosen = book.get_sheet_by_index(sheet) if isinstance(sheet, int) else book.get_sheet_by_name(sheet)
        cells = chosen.to_python(nrows=nrows) if nrows is not None else chosen.to_python()
        frame = pd.DataFrame(cells, dtype=object).replace("", None).infer_objects()
        start = getattr(chosen, "start", None)  # (row, column) of the first used cell: calamine starts there
        top = int(start[0]) if start else 0
        return frame.set_axis(pd.RangeIndex(top, top + len(frame)))
    with open(source, "rb") as handle:  # a handle: pandas would open a path such as "file:x.xlsx" as a URL
        return pd.read_excel(handle, sheet_name=sheet, header=None, engine="openpyxl", keep_default_na=False,
                             na_values=[""], nrows=nrows)


def _read_excel(
    source: Path, name: str, sheet: str | int | None, header_row: int, rows: int | None, fmt: str
) -> tuple[pd.DataFrame, dict[str, str], SourceRows]:
    sheets = _sheet_names(source, name, fmt)
    if sheet is None or sheet == "":
        chosen = sheets[0]
    elif isinstance(sheet, int) or (sheet not in sheets and str(sheet).isdigit()):
        index = int(sheet)
        if not 0 <= index < len(sheets):
            raise InputError(f"{name}: has no sheet number {index}; sheets (from 0): {', '.join(sheets)}.")
        chosen = sheets[index]
    elif sheet in sheets:
        chosen = sheet
    else:
        raise InputError(f"{name}: has no sheet {sheet!r}; its sheets are: {', '.join(sheets)}.")
    try:
        raw = read_sheet(source, chosen, fmt, None if rows is None else header_row + rows)
    except Exception as exc:
        raise _library_error(name, f"an {'.xls' if fmt == 'xls' else '.xlsx'} workbook", exc) from None
    raw = raw.dropna(how="all")  # blank rows, as in a text file
    sheet_rows = raw.index.to_numpy(dtype=np.int64) + 1  # each row's number in the sheet (read_sheet's index + 1)
    raw = raw.reset_index(drop=True)
    if raw.empty:
        raise InputError(f"{name}: sheet {chosen!r} is empty; it needs a header row and at least one data row.")
    if len(raw) < header_row:
        raise InputError(f"{name}: sheet {chosen!r} has no row {header_row} to take the column names from; "
                         "choose a smaller header row.")
    header = ["" if pd.isna(v) else str(v) for v in raw.iloc[header_row - 1]]
    frame = raw.iloc[header_row:].reset_index(drop=True)
    frame.columns = header
    if len(frame) == 0:
        raise InputError(f"{name}: sheet {chosen!r} has a header row but no data rows; add at least one row.")
    return frame.infer_objects(), {"format": fmt, "sheet": str(chosen)}, SourceRows.of(sheet_rows[header_row:], "row",
                                                                                      str(chosen))


def _read_stat(
    source: Path, name: str, kind: str, rows: int | None
) -> tuple[pd.DataFrame, dict[str, str], TableLabels]:
    import pyreadstat

    reader, what = (pyreadstat.read_sav, "an SPSS file") if kind == "sav" else (pyreadstat.read_dta, "a Stata file")
    try:
        frame, meta = reader(str(source), apply_value_formats=True, formats_as_category=False, row_limit=rows or 0)
    except Exception as exc:  # pyreadstat raises ReadstatError / PyreadstatError
        raise _library_error(name, what, exc) from None
    _integral_to_int(frame)
    labels = TableLabels(
        variable_labels={str(k): str(v) for k, v in (meta.column_names_to_labels or {}).items() if v},
        value_labels={str(k): {code: label for code, label in v.items()}
                      for k, v in (meta.variable_value_labels or {}).items() if v},
    )
    return frame.infer_objects(), {"format": kind}, labels


def _integral_to_int(frame: pd.DataFrame) -> None:
    """Turn float columns holding only whole numbers (no missing values) into int64, in place."""
    for column in frame.columns:
        values = frame[column].to_numpy()
        if values.dtype != np.float64 or values.size == 0 or not np.isfinite(values).all():
            continue
        if np.array_equal(values, np.round(values)) and np.abs(values).max() < 2**53:
            frame[column] = values.astype(np.int64)


def _parquet_frame(source: Path) -> pd.DataFrame:
    """The whole Parquet file, read from an open handle (pandas would open "file:x.parquet" or "http:..." as a URL)."""
    with open(source, "rb") as handle:
        return pd.read_parquet(handle, engine="pyarrow")


def _read_parquet(source: Path, name: str, rows: int | None) -> tuple[pd.DataFrame, dict[str, str]]:
    import pyarrow.parquet as pq

    try:
        with open(source, "rb") as handle:  # a handle: pyarrow would read "file:x.parquet" as a URI
            schema = pq.read_schema(handle)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError and others
        raise _library_error(name, "a Parquet file", exc) from None
    for field in schema:
        if pa.types.is_nested(field.type):
            raise InputError(f"{name}: column {field.name!r} holds nested values ({field.type}); a data table needs "
                             "one plain value per cell: flatten or drop that column before loading.")
    try:
        if rows is None:
            frame = _parquet_frame(source)
        else:
            import pyarrow.parquet as pq

            with open(source, "rb") as handle:
                batch = next(pq.ParquetFile(handle).iter_batches(batch_size=rows), None)
            frame = batch.to_pandas() if batch is not None else _parquet_frame(source)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError and others
        raise _library_error(name, "a Parquet file", exc) from None
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    return frame, {"format": "parquet"}


def _finish(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """String, stripped, unique, non-empty column names; unnamed columns without data dropped."""
    names = [str(c).strip() for c in frame.columns]
    if names:
        names[0] = names[0].lstrip("\ufeff").strip()
    frame = frame.set_axis(names, axis=1)
    keep = [i for i, n in enumerate(names) if n or frame.iloc[:, i].notna().any()]
    _check_names(names, keep, name)
    if len(frame) == 0:
        raise InputError(f"{name}: has no data rows; it needs at least one row of data.")
    return frame.iloc[:, keep].reset_index(drop=True)


def _check_names(names: list[str], keep: list[int], name: str) -> None:
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
