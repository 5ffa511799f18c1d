"""Read a table from a file into a :class:`~ppdp_desktop.core.data.dataset.Dataset`.

Supported: delimited text (``.csv .tsv .txt``, encoding and delimiter sniffed, every cell read as text by
pyarrow and then typed by :mod:`~ppdp_desktop.core.data.kinds`: :mod:`~ppdp_desktop.core.data.text_table`), Excel
``.xlsx`` (openpyxl) and ``.xls`` (calamine), SPSS ``.sav``/``.zsav`` and Stata ``.dta`` (value labels applied) and
Parquet ``.parquet``/``.pq``. Every problem a user can cause is an :class:`~ppdp_desktop.core.errors.InputError`
naming the file (and line) and what to change. The input file is only ever opened for reading.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data.dataset import Dataset, TableLabels
from ppdp_desktop.core.data.digest import digest_file
from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.data.kinds import type_typed_frame
from ppdp_desktop.core.data.memory_pool import return_freed_memory
from ppdp_desktop.core.data.schema import Attribute, Role, Schema
from ppdp_desktop.core.data.source_rows import SourceRows
from ppdp_desktop.core.data.text_table import MAX_ROW_BYTES, check_names, library_error, read_text
from ppdp_desktop.core.errors import InputError

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
__all__ = ["FORMATS", "MAX_HEADER_ROW", "MAX_ROW_BYTES", "SUPPORTED", "TEXT_EXTENSIONS", "LoadOptions", "load_table",
           "read_sheet", "sheet_names"]
MAX_HEADER_ROW = 10_000  # title rows above the column names: a declared limit, checked first




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
    return_freed_memory()  # the job's tables, freed, go back to the system at once (its peak memory)
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
            frame, details, decided, digest, source_rows = read_text(source, name, sep, encoding, mark, first, kinds,
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
        raise library_error(name, f"an {'.xls' if fmt == 'xls' else '.xlsx'} workbook", exc) from None


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
        raise library_error(name, f"an {'.xls' if fmt == 'xls' else '.xlsx'} workbook", exc) from None
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
        raise library_error(name, what, exc) from None
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
        raise library_error(name, "a Parquet file", exc) from None
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
        raise library_error(name, "a Parquet file", exc) from None
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
    check_names(names, keep, name)
    if len(frame) == 0:
        raise InputError(f"{name}: has no data rows; it needs at least one row of data.")
    return frame.iloc[:, keep].reset_index(drop=True)
