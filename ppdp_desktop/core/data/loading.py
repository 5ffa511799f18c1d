"""Read a table from a file into a :class:`~ppdp_desktop.core.data.dataset.Dataset`.

Supported: delimited text (``.csv .tsv .txt``, encoding and delimiter sniffed), Excel ``.xlsx``,
SPSS ``.sav``/``.zsav`` and Stata ``.dta`` (value labels applied) and Parquet ``.parquet``/``.pq``.
Every problem a user can cause is an :class:`~ppdp_desktop.core.errors.InputError` naming the
file (and line) and what to change. The input file is only ever opened for reading.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.dataset import Dataset, TableLabels
from ppdp_desktop.core.errors import InputError

TEXT_EXTENSIONS = (".csv", ".tsv", ".txt")
FORMATS = {
    **dict.fromkeys(TEXT_EXTENSIONS, "csv"),
    ".xlsx": "xlsx",
    ".sav": "sav",
    ".zsav": "sav",
    ".dta": "dta",
    ".parquet": "parquet",
    ".pq": "parquet",
}
SUPPORTED = ", ".join(FORMATS)
_EMPTY = "{name}: the file is empty; it needs a header line and at least one data row."
_EXPECTED = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def load_table(
    path: str | Path, *, sep: str | None = None, encoding: str | None = None, sheet: str | int | None = None
) -> Dataset:
    """Read a data file into a :class:`Dataset` whose schema is inferred from the dtypes.

    Parameters
    ----------
    path : str or Path
        The file; its extension (any case) picks the format.
    sep : str, optional
        Delimiter of a text file (``"tab"`` or ``"\\t"`` for a tab); sniffed when omitted.
    encoding : str, optional
        Encoding of a text file; sniffed (UTF-8 with/without BOM, then Windows-1252) when omitted.
    sheet : str or int, optional
        Worksheet name or 0-based index of an ``.xlsx`` workbook; the first sheet when omitted.

    Returns
    -------
    Dataset
        With ``source=Path(path)`` and string ``details`` (format, and delimiter/encoding/sheet).

    Raises
    ------
    InputError
        If the file is missing, of an unsupported type, unreadable, empty, has no data rows,
        ragged rows, or empty or duplicate column names.
    """
    source = Path(path)
    name = source.name or str(source)
    suffix = source.suffix.lower()
    if suffix == ".xls":
        raise InputError(
            f"{name}: old Excel .xls workbooks are not supported; open it in Excel or LibreOffice "
            "and save it as .xlsx (or export it as CSV)."
        )
    if suffix not in FORMATS:
        raise InputError(f"{name}: unsupported file type {suffix or '(no extension)'!r}; use one of {SUPPORTED}.")
    if not source.exists():
        raise InputError(f"{name}: file not found ({source}); check the path.")
    if not source.is_file():
        raise InputError(f"{name}: is a folder, not a data file; give the path of a file ({SUPPORTED}).")
    kind = FORMATS[suffix]
    labels = None
    try:
        if kind == "csv":
            frame, details = _read_text(source, name, sep, encoding)
        elif kind == "xlsx":
            frame, details = _read_xlsx(source, name, sheet)
        elif kind == "parquet":
            frame, details = _read_parquet(source, name)
        else:
            frame, details, labels = _read_stat(source, name, kind)
    except PermissionError:
        raise InputError(f"{name}: permission denied; check that you may read the file.") from None
    return Dataset(_finish(frame, name), source=source, details=details, labels=labels)


def _library_error(name: str, what: str, exc: Exception) -> InputError:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(f"{name}: cannot be read as {what} ({detail}); check that the file is not damaged.")


def _read_text(source: Path, name: str, sep: str | None, encoding: str | None) -> tuple[pd.DataFrame, dict[str, str]]:
    data = source.read_bytes()
    if not data or data.isspace():
        raise InputError(_EMPTY.format(name=name))
    text, codec = sniffing.decode(data, encoding, name)
    if not text or text.isspace():
        raise InputError(_EMPTY.format(name=name))
    sample = sniffing.sample_of(text)
    del text
    if sep is not None:
        delimiter = sniffing.normalize_sep(sep, name)
    else:
        delimiter = sniffing.sniff_delimiter(sample) or ("\t" if source.suffix.lower() == ".tsv" else ",")
    header, *first_row = sniffing.first_records(sample, delimiter) or [[]]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = pd.read_csv(
                source, sep=delimiter, encoding=codec, engine="c", keep_default_na=False,
                na_values=[""], index_col=False, low_memory=False,
            )
    except pd.errors.EmptyDataError:
        raise InputError(_EMPTY.format(name=name)) from None
    except pd.errors.ParserError as exc:
        raise _parser_error(exc, data, codec, delimiter, len(header), name) from None
    # pandas pads short rows with NaN and, with index_col=False, silently drops one extra field on
    # every row when the first data row has one, so count the fields per record in those cases.
    if caught or any(len(row) != len(header) for row in first_row) or frame.iloc[:, -1].isna().any():
        ragged = sniffing.find_ragged(data, codec, delimiter, len(header))
        if ragged is not None:
            raise _ragged_error(name, *ragged, len(header))
    if len(header) == len(frame.columns):
        frame.columns = header  # pandas renames duplicates ("a.1") and empty names ("Unnamed: 1")
    if len(frame) == 0:
        raise InputError(f"{name}: has a header line but no data rows; add at least one row of data.")
    return frame, {"format": "csv", "delimiter": delimiter, "encoding": codec}


def _ragged_error(name: str, line: int, fields: int, expected: int) -> InputError:
    return InputError(
        f"{name}: line {line} has {fields} field{'s' * (fields != 1)} but the header has {expected}; "
        "fix that row (quote values that contain the delimiter) or give the right --sep."
    )


def _parser_error(exc: Exception, data: bytes, codec: str, sep: str, expected: int, name: str) -> InputError:
    message = str(exc)
    if "EOF inside string" in message:
        line = sniffing.last_record_line(data, codec, sep)
        where = f" on line {line}" if line else ""
        return InputError(f"{name}: a quoted value starting{where} is never closed; add the missing '\"'.")
    ragged = sniffing.find_ragged(data, codec, sep, expected) if expected else None
    if ragged is not None:
        return _ragged_error(name, *ragged, expected)
    match = _EXPECTED.search(message)
    if match:
        want, line, saw = (int(g) for g in match.groups())
        return _ragged_error(name, line, saw, want)
    return _library_error(name, "delimited text", exc)


def _read_xlsx(source: Path, name: str, sheet: str | int | None) -> tuple[pd.DataFrame, dict[str, str]]:
    from openpyxl import load_workbook

    try:
        book = load_workbook(source, read_only=True)
        sheets = list(book.sheetnames)
        book.close()
    except Exception as exc:  # openpyxl raises zipfile, KeyError, XML and own errors
        raise _library_error(name, "an .xlsx workbook", exc) from None
    if sheet is None:
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
        raw = pd.read_excel(
            source, sheet_name=chosen, header=None, engine="openpyxl", keep_default_na=False, na_values=[""]
        )
    except Exception as exc:
        raise _library_error(name, "an .xlsx workbook", exc) from None
    if raw.empty:
        raise InputError(f"{name}: sheet {chosen!r} is empty; it needs a header row and at least one data row.")
    header = ["" if pd.isna(v) else str(v) for v in raw.iloc[0]]
    frame = raw.iloc[1:].reset_index(drop=True)
    frame.columns = header
    if len(frame) == 0:
        raise InputError(f"{name}: sheet {chosen!r} has a header row but no data rows; add at least one row.")
    return frame.infer_objects(), {"format": "xlsx", "sheet": str(chosen)}


def _read_stat(source: Path, name: str, kind: str) -> tuple[pd.DataFrame, dict[str, str], TableLabels]:
    import pyreadstat

    reader, what = (pyreadstat.read_sav, "an SPSS file") if kind == "sav" else (pyreadstat.read_dta, "a Stata file")
    try:
        frame, meta = reader(str(source), apply_value_formats=True, formats_as_category=False)
    except Exception as exc:  # pyreadstat raises ReadstatError / PyreadstatError
        raise _library_error(name, what, exc) from None
    _integral_to_int(frame)
    labels = TableLabels(
        variable_labels={str(k): str(v) for k, v in (meta.column_names_to_labels or {}).items() if v},
        value_labels={str(k): dict(v) for k, v in (meta.variable_value_labels or {}).items() if v},
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


def _read_parquet(source: Path, name: str) -> tuple[pd.DataFrame, dict[str, str]]:
    try:
        frame = pd.read_parquet(source, engine="pyarrow")
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
    if len(frame) == 0:
        raise InputError(f"{name}: has no data rows; it needs at least one row of data.")
    return frame.iloc[:, keep].reset_index(drop=True)
