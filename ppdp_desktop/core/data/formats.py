"""Writing and reading the released table in every supported format: CSV, Excel, SPSS and Parquet.

``write_table`` writes one file; the caller writes into a temporary folder renamed into place when
complete (``release.write_release``), so a failure never leaves a partial release. Every library
error becomes a :class:`ReleaseError` naming the file.

``read_table`` reads a written file back with every cell as text (missing as ""). The round trip
holds for every format: ``read_table(path, fmt)`` equals ``as_text(table)`` after
``write_table(table, path, fmt)`` (same columns, rows and order), where ``as_text`` renders cells
exactly as the CSV writer does (pyarrow's casts: ints without ".0", floats in shortest form such as
``1``, ``0.1`` or ``1e+20``, booleans as ``true``/``false``, Categoricals as their values).

Per format:

* **csv**: UTF-8, header, fields quoted where needed; a text cell or header that a spreadsheet would run
  as a formula (starting ``= + - @``, tab or CR) gets a leading ``'`` (OWASP's CSV-injection advice;
  ``read_table`` removes it again), ``sep`` of one character (pyarrow's writer,
  ``write_csv``); with ``bom`` the file starts with the UTF-8 byte-order mark that Excel needs to
  show accents (``csv_encoding(bom)`` names the encoding: ``utf-8-sig``). Reading skips a mark.
* **xlsx**: one sheet ``release``, header row. Numeric columns are written as numbers, every other
  column as text cells (so text starting with ``=`` stays text, never a formula). Excel's limits
  (1,048,576 rows including the header, 16,384 columns, 32,767 characters per cell) are a
  ``ReleaseError`` suggesting CSV or Parquet.
* **sav** (SPSS): numeric columns as numeric variables, every other column as a string variable.
  Column names must be valid SPSS names (a letter first; then letters, digits, ``_ . @ # $``; at most
  64 bytes; no reserved word such as ``AND``; unique ignoring case): an invalid name is a
  ``ReleaseError`` naming the column (names are never changed silently). With ``labels``,
  variable labels are written, and a column whose released (non-missing) values are all labels of
  one numeric code each is written as those codes with its value labels, so SPSS shows the labels
  and ``read_table`` gives them back. SPSS drops trailing spaces of text values.
* **parquet**: pyarrow, no index; Categoricals are kept as dictionary columns.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.data import csv_writer
from ppdp_desktop.core.data.csv_writer import csv_encoding  # noqa: F401 - re-exported
from ppdp_desktop.core.data.dataset import TableLabels
from ppdp_desktop.core.data.freed_memory import return_freed
from ppdp_desktop.core.data.schema import Kind, infer_kind
from ppdp_desktop.core.errors import ReleaseError

__all__ = ["FORMATS", "TableLabels", "as_text", "csv_encoding", "read_table", "write_table"]

FORMATS = {"csv": ".csv", "xlsx": ".xlsx", "sav": ".sav", "parquet": ".parquet"}
_NAMES = {"csv": "CSV", "xlsx": "an Excel workbook", "sav": "an SPSS file", "parquet": "a Parquet file"}

EXCEL_MAX_ROWS = 1_048_576  # rows of a worksheet, the header row included
EXCEL_MAX_COLUMNS = 16_384
EXCEL_MAX_CELL_CHARS = 32_767
EXCEL_SHEET = "release"

SPSS_MAX_NAME_BYTES = 64
SPSS_RESERVED = frozenset({"ALL", "AND", "BY", "EQ", "GE", "GT", "LE", "LT", "NE", "NOT", "OR", "TO", "WITH"})


# --- text view ---------------------------------------------------------------------------------


def as_text(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every cell as text the way the CSV writer renders it; missing cells as ""."""
    columns = [_text_column(table.iloc[:, i]) for i in range(table.shape[1])]
    frame = pd.DataFrame(dict(enumerate(columns)), index=pd.RangeIndex(len(table)))
    frame.columns = [str(c) for c in table.columns]
    return frame


def _text_column(series: pd.Series) -> pd.Series:
    try:
        array = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        return pd.Series([_cell_text(v) for v in series.to_numpy(dtype=object)], dtype="str")
    if isinstance(array, pa.Array):
        array = pa.chunked_array([array], type=array.type)
    return pd.Series(_arrow_text(array).to_pandas(), dtype="str").reset_index(drop=True)


def _arrow_text(array: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        array = pc.cast(array, pa.large_string())
    return pc.fill_null(array, "")


def _cell_text(value: object) -> str:
    """One cell of a column of mixed Python values, rendered like the column casts above."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (float, np.floating)) and np.isnan(value):
        return ""
    try:
        return pa.scalar(value).cast(pa.string()).as_py()
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError):
        return str(value)


# --- spreadsheet formulas ------------------------------------------------------------------------

#: a CSV cell starting with one of these is run as a formula by Excel, LibreOffice and Google Sheets
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_GUARD = "'"  # OWASP's advice for CSV: a leading apostrophe makes the cell text


def _guard_text(value: str) -> str:
    """``value`` with the guard in front if a spreadsheet would read it as a formula (or if it already
    starts with the guard before such a character, so that :func:`_unguard_text` is exact)."""
    if value.startswith(FORMULA_STARTS) or (value.startswith(FORMULA_GUARD) and value[1:2] in (*FORMULA_STARTS,
                                                                                             FORMULA_GUARD)):
        return FORMULA_GUARD + value
    return value


def _unguard_text(value: str) -> str:
    if value.startswith(FORMULA_GUARD) and value[1:2] in (*FORMULA_STARTS, FORMULA_GUARD):
        return value[1:]
    return value


#: one cell's guard and its removal (a taxonomy's ARX CSV is written cell by cell)
guard_text, unguard_text = _guard_text, _unguard_text

_STARTS = np.zeros(256, dtype=bool)
_STARTS[[ord(c) for c in FORMULA_STARTS]] = True
_AFTER_GUARD = _STARTS.copy()
_AFTER_GUARD[ord(FORMULA_GUARD)] = True


def _byte_at(array: pa.Array, position: int) -> np.ndarray:
    """Each string's byte at ``position`` (a UTF-8 code unit), 0 where the string is shorter or missing: read
    from the array's offsets and data buffers, with no string made (and no index array wider than the offsets':
    1M pseudonyms are 4 bytes an offset, issue 34's memory)."""
    offsets_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    _, offsets_buffer, data_buffer = array.buffers()
    offsets: np.ndarray = np.frombuffer(offsets_buffer, dtype=offsets_type)[array.offset:array.offset + len(array) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    present = np.diff(offsets) > position
    if array.null_count:
        present &= array.is_valid().to_numpy(zero_copy_only=False)
    out = np.zeros(len(array), dtype=np.uint8)
    at = offsets[:-1][present]  # start + position < end <= the offsets' largest value: no overflow
    if position:
        at += position
    out[present] = data[at]
    return out


def _needs_guard(text: pd.Series) -> np.ndarray:
    """Which cells :func:`_guard_text` changes, vectorized: the first two bytes of each cell looked up in a table
    (the formula characters and the guard are ASCII, which no other UTF-8 character's bytes can be)."""
    try:
        values = pa.array(text, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        values = None
    if values is not None:
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        if all(pa.types.is_string(c.type) or pa.types.is_large_string(c.type) for c in chunks):
            first = np.concatenate([_byte_at(c, 0) for c in chunks]) if chunks else np.zeros(0, np.uint8)
            risky = _STARTS[first]
            guarded = first == ord(FORMULA_GUARD)
            if guarded.any():
                second = np.concatenate([_byte_at(c, 1) for c in chunks])
                risky |= guarded & _AFTER_GUARD[second]
            return risky
    starts = np.array(text.str.startswith(FORMULA_STARTS).fillna(False), dtype=bool)  # a writable copy
    guarded = text.str.startswith(FORMULA_GUARD).fillna(False).to_numpy(dtype=bool)
    if guarded.any():
        second = text.str.slice(1, 2).isin([*FORMULA_STARTS, FORMULA_GUARD]).to_numpy(dtype=bool)
        starts |= guarded & second
    return starts


def write_csv(table: pd.DataFrame, path: Path, sep: str, *, bom: bool = False, guarded: bool = False) -> None:
    """Every CSV the app writes: UTF-8 with a header (:func:`~ppdp_desktop.core.data.csv_writer.write_csv`), and no
    cell a spreadsheet would run as a formula (:func:`guard_formulas`, here unless ``guarded``: the caller guarded
    the table to record which columns changed, as the release's ``csv.formula_guard`` does)."""
    csv_writer.write_csv(table if guarded else guard_formulas(table)[0], path, sep, bom=bom)


def write_csv_release(table: pd.DataFrame, path: Path, sep: str, *, bom: bool = False
                      ) -> tuple[str, tuple[int, list[str], list[str]]]:
    """A release's data as CSV, as :func:`write_table` writes it, formulas guarded once: its SHA-256 (computed while
    writing, by the streamed job's writer) and ``(records, columns, columns whose formulas were guarded)`` for
    ``release.json``. Raises :class:`ReleaseError` naming the file for any failure of the writer."""
    if len(sep) != 1 or sep in "\"\r\n":
        raise ReleaseError(f"The CSV separator must be one character other than a quote or newline; got {sep!r}.")
    return_freed()  # what the job freed last (its pseudonyms' temporaries) before the guard's (issue 34's memory)
    guarded, changed = guard_formulas(table)
    return_freed()  # the guard's temporaries (~18 MB at 1M records) before the writer's
    try:
        arrow = pa.Table.from_pandas(_arrow_ready(guarded), preserve_index=False)
        digest, _ = csv_writer.write_csv_batches([arrow], Path(path), sep, bom=bom)
    except Exception as exc:  # pyarrow raises its own errors (and OSError)
        raise ReleaseError(f"{Path(path).name} cannot be written as {_NAMES['csv']}: {_detail(exc)}.") from exc
    return digest, (len(table), [str(c) for c in table.columns], changed)


def write_csv_atomic(table: pd.DataFrame, path: Path, sep: str = ",", *, bom: bool = False,
                     guarded: bool = False) -> None:
    """:func:`write_csv` through a temporary file in the same folder, renamed into place when complete."""
    csv_writer.write_csv_atomic(table if guarded else guard_formulas(table)[0], path, sep, bom=bom)


def guard_formulas(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The table with every text cell and header that a spreadsheet would run as a formula prefixed with
    ``'``; the names of the columns where that happened. Numeric columns stay numbers ("-3.5" is a number).
    Vectorized with pyarrow's string kernels."""
    changed, columns = [], {}
    for i in range(table.shape[1]):
        series = table.iloc[:, i]
        if _is_number(series):
            continue
        if isinstance(series.dtype, pd.CategoricalDtype):  # dictionary codes: the categories guarded, not each cell
            guarded_codes = _guard_categories(series)
            if guarded_codes is not None:
                columns[i] = guarded_codes
                changed.append(str(table.columns[i]))
            continue
        text = _text_column(series)
        risky = _needs_guard(text)
        if risky.any():
            guarded = text.where(~risky, FORMULA_GUARD + text)
            columns[i] = guarded.where(series.notna().to_numpy(), None).to_numpy(dtype=object)
            changed.append(str(table.columns[i]))
    names = [_guard_text(str(c)) for c in table.columns]
    if not columns and names == [str(c) for c in table.columns]:
        return table, changed
    out = table.copy(deep=False)
    for i, values in columns.items():
        out.isetitem(i, values)
    if names != [str(c) for c in table.columns]:
        changed += [str(c) for c, n in zip(table.columns, names) if str(c) != n and str(c) not in changed]
        out.columns = names
    return out, changed


def _guard_categories(series: pd.Series) -> pd.Categorical | None:
    """A categorical column with each category a spreadsheet would run as a formula guarded (the cells keep their
    codes; the guard is one-to-one, so no two categories merge), or None when no category needs it."""
    categories = _text_column(pd.Series(series.cat.categories))
    risky = _needs_guard(categories)
    if not risky.any():
        return None
    guarded = categories.where(~risky, FORMULA_GUARD + categories)
    return pd.Categorical.from_codes(series.cat.codes.to_numpy(), categories=pd.Index(guarded.to_numpy(dtype=object)))


def unguard_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Undo :func:`guard_formulas` on a table read back as text (cells and headers)."""
    frame = frame.copy(deep=False)
    for i in range(frame.shape[1]):
        column = frame.iloc[:, i]
        if column.str.startswith(FORMULA_GUARD).any():
            frame.isetitem(i, column.map(_unguard_text))
    frame.columns = [_unguard_text(str(c)) for c in frame.columns]
    return frame


# --- writing -----------------------------------------------------------------------------------


def _check_format(fmt: str) -> str:
    key = str(fmt).lower().lstrip(".")
    if key not in FORMATS:
        raise ReleaseError(f"Unknown release format {fmt!r}; the formats are: {', '.join(FORMATS)}.")
    return key


def write_table(
    table: pd.DataFrame, path: Path, fmt: str, *, sep: str = ",", labels: TableLabels | None = None,
    bom: bool = False,
) -> None:
    """Write ``table`` to ``path`` as ``fmt`` (a key of :data:`FORMATS`).

    ``sep`` is the CSV delimiter and ``bom`` whether the CSV starts with the UTF-8 byte-order mark
    (CSV only); ``labels`` the SPSS variable/value labels (SAV only).
    Raises :class:`ReleaseError` for an unknown format, a table the format cannot hold, or any
    failure of the writing library (naming the file).
    """
    fmt = _check_format(fmt)
    path = Path(path)
    if fmt == "csv":
        write_csv_release(table, path, sep, bom=bom)
        return
    try:
        if fmt == "xlsx":
            _write_xlsx(table, path)
        elif fmt == "sav":
            _write_sav(table, path, labels)
        else:
            _arrow_ready(table).to_parquet(path, index=False, engine="pyarrow")
    except ReleaseError:
        raise
    except Exception as exc:  # each library raises its own errors (and OSError)
        raise ReleaseError(f"{path.name} cannot be written as {_NAMES[fmt]}: {_detail(exc)}.") from exc


def _arrow_ready(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every object column pyarrow cannot convert (mixed types) replaced by its text."""
    mixed = []
    for i in range(table.shape[1]):
        if pd.api.types.is_object_dtype(table.dtypes.iloc[i]):
            try:
                pa.array(table.iloc[:, i], from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
                mixed.append(i)
    if not mixed:
        return table
    table = table.copy(deep=False)
    for i in mixed:
        table.isetitem(i, _text_column(table.iloc[:, i]).to_numpy(dtype=object))
    return table


def _detail(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _is_number(series: pd.Series) -> bool:
    return infer_kind(series) is Kind.NUMERIC


def _write_xlsx(table: pd.DataFrame, path: Path) -> None:
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    rows, cols = table.shape
    if rows + 1 > EXCEL_MAX_ROWS:
        raise ReleaseError(
            f"{path.name}: the table has {rows:,} rows but an Excel worksheet holds at most {EXCEL_MAX_ROWS:,} "
            f"rows (header included); release it as CSV or Parquet instead."
        )
    if cols > EXCEL_MAX_COLUMNS:
        raise ReleaseError(
            f"{path.name}: the table has {cols:,} columns but an Excel worksheet holds at most "
            f"{EXCEL_MAX_COLUMNS:,}; release it as CSV or Parquet instead."
        )
    book = Workbook(write_only=True)
    sheet = book.create_sheet(EXCEL_SHEET)

    def text_cell(value: str) -> object:
        if not value.startswith("="):
            return value
        cell = WriteOnlyCell(sheet, value)
        cell.data_type = "s"  # openpyxl would take it for a formula
        return cell

    columns = []
    for name in table.columns:
        series = table[name]
        if _is_number(series):
            values = series.astype(object).where(series.notna(), None).tolist()
        else:
            text = _text_column(series)
            longest = int(text.str.len().max()) if len(text) else 0
            if longest > EXCEL_MAX_CELL_CHARS:
                raise ReleaseError(
                    f"{path.name}: column {name!r} holds a value of {longest:,} characters but an Excel cell "
                    f"holds at most {EXCEL_MAX_CELL_CHARS:,}; release it as CSV or Parquet instead."
                )
            values = [text_cell(v) if v else None for v in text.tolist()]
        columns.append(values)
    sheet.append([text_cell(str(name)) for name in table.columns])
    for row in zip(*columns):
        sheet.append(row)
    book.save(path)


def spss_name_problem(name: str, seen: set[str] | None = None) -> str | None:
    """Why ``name`` is not a valid SPSS variable name (None when it is)."""
    if not name:
        return "it is empty"
    if not name[0].isalpha():
        return "it must start with a letter"
    bad = sorted({c for c in name if not (c.isalnum() or c in "_.@#$")})
    if bad:
        return f"it contains {''.join(bad)!r} (only letters, digits and _ . @ # $ are allowed)"
    if len(name.encode("utf-8")) > SPSS_MAX_NAME_BYTES:
        return f"it is longer than {SPSS_MAX_NAME_BYTES} bytes"
    if name.upper() in SPSS_RESERVED:
        return "it is a reserved word in SPSS"
    if seen is not None and name.upper() in seen:
        return "another column has the same name ignoring case"
    return None


def _spss_suggestion(name: str) -> str:
    fixed = re.sub(r"[^\w.@#$]", "_", name.strip())
    if not fixed or not fixed[0].isalpha():
        fixed = "v" + fixed
    return fixed[:SPSS_MAX_NAME_BYTES]


def _check_spss_names(path: Path, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        problem = spss_name_problem(name, seen)
        if problem is not None:
            raise ReleaseError(
                f"{path.name}: column {name!r} is not a valid SPSS variable name ({problem}); rename it "
                f"(for example to {_spss_suggestion(name)!r}) or release as CSV, Excel or Parquet."
            )
        seen.add(name.upper())


def _coded(series: pd.Series, value_labels: dict[object, str] | None) -> tuple[np.ndarray, dict[float, str]] | None:
    """The numeric codes of a column whose released values are all labels, with the labels; else None."""
    if not value_labels:
        return None
    codes: dict[str, float] = {}
    for code, label in value_labels.items():
        if isinstance(code, (bool, np.bool_)) or not isinstance(code, (int, float, np.integer, np.floating)):
            return None  # string codes: the column is written as its text
        if str(label) in codes or not np.isfinite(float(code)):
            return None  # one label for two codes: ambiguous
        codes[str(label)] = float(code)
    text = _text_column(series)
    present = set(text.unique()) - {""}
    if not present <= codes.keys():
        return None
    mapped = text.map(codes).to_numpy(dtype=np.float64, na_value=np.nan)
    return mapped, {code: label for label, code in codes.items()}


def _write_sav(table: pd.DataFrame, path: Path, labels: TableLabels | None) -> None:
    import pyreadstat

    names = [str(c) for c in table.columns]
    _check_spss_names(path, names)
    data: dict[str, object] = {}
    value_labels: dict[str, dict[float, str]] = {}
    variable_format: dict[str, str] = {}
    for i, name in enumerate(names):
        series = table.iloc[:, i]
        coded = _coded(series, labels.value_labels.get(name)) if labels is not None else None
        if coded is not None:
            data[name], value_labels[name] = coded
        elif _is_number(series):
            data[name] = series.to_numpy(dtype=np.float64, na_value=np.nan)
            if pd.api.types.is_integer_dtype(series.dtype):  # SPSS numbers are doubles: mark integers
                width = int(_text_column(series).str.len().max()) if len(series) else 1
                variable_format[name] = f"F{min(max(width, 1), 40)}.0"
        else:
            data[name] = _text_column(series)
    frame = pd.DataFrame(data, index=pd.RangeIndex(len(table)))
    column_labels: dict[str, str | None] | None = None
    if labels is not None:
        column_labels = {n: str(labels.variable_labels[n]) for n in names if labels.variable_labels.get(n)}
    pyreadstat.write_sav(
        frame, str(path), column_labels=column_labels or None, variable_value_labels=value_labels or None,
        variable_format=variable_format or None,
    )


# --- reading -----------------------------------------------------------------------------------


def read_table(path: Path, fmt: str, *, sep: str = ",", formula_guard: bool = True) -> pd.DataFrame:
    """Read a table written by :func:`write_table` with every cell as text (missing as "").

    A CSV's formula guard (see :func:`guard_formulas`) is undone unless ``formula_guard`` is false (a CSV
    written before the guard existed).
    A CSV may start with the UTF-8 byte-order mark (it is skipped). SPSS value labels are applied
    (the text is the label). Raises :class:`ReleaseError` when the file cannot be read.
    """
    fmt = _check_format(fmt)
    path = Path(path)
    if not path.is_file():
        raise ReleaseError(f"{path.name} cannot be read: no such file ({path}).")
    try:
        if fmt == "csv":
            frame = pd.read_csv(
                path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig", skip_blank_lines=False
            )
            return unguard_formulas(frame) if formula_guard else frame
        if fmt == "xlsx":
            frame = _read_xlsx(path)
        elif fmt == "sav":
            import pyreadstat

            frame, meta = pyreadstat.read_sav(str(path), apply_value_formats=True, formats_as_category=False)
            frame = as_text(_spss_integers(frame, meta.original_variable_types or {}))
        else:
            frame = as_text(pd.read_parquet(path, engine="pyarrow"))
        return frame
    except ReleaseError:
        raise
    except Exception as exc:
        raise ReleaseError(f"{path.name} cannot be read as {_NAMES[fmt]}: {_detail(exc)}.") from exc


_SPSS_INTEGER_FORMAT = re.compile(r"^F\d+(\.0)?$")


def _spss_integers(frame: pd.DataFrame, formats: dict[str, str | None]) -> pd.DataFrame:
    """Numeric variables with a no-decimals format (how integer columns are written) as integers."""
    for name, spss_format in formats.items():
        column = frame.get(name)
        if column is None or column.dtype != np.float64 or not _SPSS_INTEGER_FORMAT.match(spss_format or ""):
            continue
        values = column.to_numpy()
        finite = values[~np.isnan(values)]
        if np.array_equal(finite, np.round(finite)) and (np.abs(finite) < 2**63).all():
            frame[name] = pd.array(np.where(np.isnan(values), 0, values).astype(np.int64), dtype="Int64")
            frame.loc[np.isnan(values), name] = pd.NA
    return frame


def _read_xlsx(path: Path) -> pd.DataFrame:
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True, data_only=True)
    try:
        rows = book.worksheets[0].iter_rows(values_only=True)
        header = next(rows, ())
        width = len(header)
        columns: list[list[object]] = [[] for _ in range(width)]
        for row in rows:
            for i in range(width):
                columns[i].append(row[i] if i < len(row) else None)
    finally:
        book.close()
    text = []
    for values in columns:
        if all(v is None or isinstance(v, str) for v in values):
            text.append(pd.Series(["" if v is None else v for v in values], dtype="str"))
        else:
            text.append(_text_column(pd.Series(values, dtype=object).infer_objects()))
    frame = pd.DataFrame(dict(enumerate(text)), index=pd.RangeIndex(len(columns[0]) if columns else 0))
    frame.columns = ["" if h is None else str(h) for h in header]
    return frame
