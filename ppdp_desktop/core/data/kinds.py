"""Deciding each column's kind from the text read, and turning the text into values of that kind.

Text files are read with every cell as text; here each column is either given a kind (the user's, from
the import options or ``--kind COL=KIND``) or has one guessed, vectorized with pyarrow:

* all values numbers -> **numeric**, unless the column is *code-like*, then **text**: a value with a
  leading zero (``02134``), a name that says it is a code (``zip``, ``postcode``, ``id``, ``code``,
  ``phone``, ``mrn``, ``nhs``, ``ssn``), or digits of one fixed width of five or more that are all
  different (record and telephone numbers);
* all values dates (``2024-03-01``, ``01.03.2024``, ``01/03/2024``) -> **date**;
* other text with a code-like name, or of 50 values or more all different (record ids, names) -> **text**;
* anything else -> **categorical**.

Categorical, date and text columns keep exactly the text that was read (so a release writes "02134",
never 2134); numeric columns become int64 (float64 with missing values or fractions). Typed inputs
(Excel, SPSS, Stata, Parquet) keep their numbers unless the column is code-like or the user says
otherwise.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.data.cell_limit import check_cells
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.data.schema import Attribute, Kind, Schema, parse_kind
from ppdp_desktop.core.data.source_rows import SourceRows
from ppdp_desktop.core.errors import InputError, setting_ref

#: words in a column name that mark a column of digits as a code, not a quantity
CODE_WORDS = frozenset({"id", "zip", "zipcode", "postcode", "postal", "plz", "code", "phone", "tel", "telephone",
                        "mrn", "nhs", "ssn", "icd", "ops", "npi"})
#: a code of digits of one width at least this long whose values all differ is an identifier
FIXED_WIDTH = 5
#: a text column of at least this many values, all different, is an identifier or free text
UNIQUE_TEXT = 50
_PROBE = 1_000  # values cast to int64 first, to learn cheaply that a column holds fractions
DATE_FORMATS = {  # pattern -> strptime formats tried in order (the first that reads every value wins)
    r"^\d{4}-\d{2}-\d{2}$": ("%Y-%m-%d",),
    r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$": ("ISO8601",),
    r"^\d{1,2}\.\d{1,2}\.\d{4}$": ("%d.%m.%Y",),
    r"^\d{1,2}/\d{1,2}/\d{4}$": ("%d/%m/%Y", "%m/%d/%Y"),
}
_WORD = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|\b|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")


def name_words(column: str) -> set[str]:
    """The lower-case words of a column name: ``"PatientID"`` -> {patient, id}, ``"zip_code"`` -> {zip, code}."""
    return {w.lower() for w in _WORD.findall(str(column))}


def _strings(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    return values


def _cast(values: pa.ChunkedArray, to: pa.DataType) -> pa.ChunkedArray | None:
    try:
        return pc.cast(values, to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _numbers(values: pa.ChunkedArray, decimal: str) -> pa.ChunkedArray | None:
    """The values as int64 (if all are whole numbers in integer form) or float64; None if any is not a
    finite number. ``values`` hold no nulls. A failing cast stops at the first bad value, so text
    columns cost little."""
    if decimal == ",":
        values = pc.replace_substring(values, ",", ".")
    # A cast that fails costs far more than one that succeeds (about 0.4 s a million values against 0.01 s):
    # a column whose first values are not all whole numbers goes straight to float64.
    numbers = _cast(values, pa.int64()) if _cast(values.slice(0, _PROBE), pa.int64()) is not None else None
    if numbers is None:
        numbers = _cast(values, pa.float64())
    if numbers is None:  # surrounding spaces, which the casts refuse
        trimmed = pc.utf8_trim_whitespace(values)
        numbers = _cast(trimmed, pa.int64())
        if numbers is None:
            numbers = _cast(trimmed, pa.float64())
    if numbers is None:
        return None
    if pa.types.is_floating(numbers.type) and pc.all(pc.is_finite(numbers)).as_py() is False:
        return None  # "nan", "inf" are words here, not numbers
    return numbers


def _code_like(values: pa.ChunkedArray, column: str, integers: bool) -> bool:
    """Digits that are a code: a leading zero, a code-like name, or a fixed-width identifier."""
    if not integers:
        return False
    if name_words(column) & CODE_WORDS:
        return True
    text = pc.utf8_trim_whitespace(values)
    leading_zero = pc.and_(pc.starts_with(text, "0"), pc.greater(pc.utf8_length(text), 1))
    if pc.any(leading_zero).as_py():
        return True
    lengths = pc.utf8_length(values)
    bounds = pc.min_max(lengths).as_py()
    return (bounds["min"] == bounds["max"] >= FIXED_WIDTH
            and pc.count_distinct(values).as_py() == len(values))


def date_format(values: pa.ChunkedArray | pd.Series) -> str | None:
    """The strptime format (or ``"ISO8601"``) that reads every value as a date; None if there is none."""
    if isinstance(values, pd.Series):
        values = pa.chunked_array([pa.array(values.dropna().astype(str).to_numpy(dtype=object), pa.string())])
    if len(values) == 0:
        return None
    distinct = pc.unique(values)
    for pattern, formats in DATE_FORMATS.items():
        if not pc.all(pc.match_substring_regex(distinct, pattern)).as_py():
            continue
        texts = pd.Series(distinct.to_pylist(), dtype=object)
        for fmt in formats:
            parsed = pd.to_datetime(texts, format=fmt, errors="coerce")
            if parsed.notna().all():
                return fmt
    return None


def guess_kind(values: pa.ChunkedArray | pa.Array, column: str, decimal: str = ".") -> Kind:
    """The kind of a column of text (nulls are missing cells), by the rules in the module docstring."""
    return _classify(pc.drop_null(_strings(values)), column, decimal)[0]


def _classify(present: pa.ChunkedArray, column: str, decimal: str) -> tuple[Kind, pa.ChunkedArray | None]:
    """The guessed kind of the non-missing values and, for numeric, the numbers."""
    if len(present) == 0:
        return Kind.CATEGORICAL, None
    numbers = _numbers(present, decimal)
    if numbers is not None:
        if _code_like(present, column, pa.types.is_integer(numbers.type)):
            return Kind.TEXT, None
        return Kind.NUMERIC, numbers
    if date_format(present) is not None:
        return Kind.DATE, None
    if name_words(column) & CODE_WORDS or (len(present) >= UNIQUE_TEXT
                                          and pc.count_distinct(present).as_py() == len(present)):
        return Kind.TEXT, None  # "P000123", names: a code or free text, one per record
    return Kind.CATEGORICAL, None


def _first_bad(values: pa.ChunkedArray, good: np.ndarray) -> tuple[int, str]:
    row = int(np.flatnonzero(~good)[0])
    return row, str(values[row].as_py())


def convert(values: pa.ChunkedArray | pa.Array, kind: Kind, column: str, source: str,
            decimal: str = ".", numbers: pa.ChunkedArray | None = None, rows: SourceRows | None = None) -> pd.Series:
    """The column as values of ``kind``: numbers for numeric (int64, or float64 with missing cells or
    fractions), the exact text otherwise.

    Raises
    ------
    InputError
        Naming the file, the column, the first value that is not a number (numeric) or not a date (date),
        or a cell longer than :data:`~.cell_limit.MAX_CELL_CHARS`, its row or line in the file (``rows``; else its
        data row), and what to change.
    """
    values = _strings(values)
    check_cells(values, column, source)
    if kind is Kind.NUMERIC:
        numbers = _numbers(pc.drop_null(values), decimal) if numbers is None else numbers
        if numbers is None:
            good = pc.or_(pc.is_null(values), pc.match_substring_regex(
                pc.utf8_trim_whitespace(values), r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?$")).to_numpy(
                zero_copy_only=False)
            row, bad = _first_bad(values, good) if not good.all() else (0, "")
            where = rows.words([int(rows.file_rows([row])[0])]) if rows is not None else f"data row {row + 1}"
            raise InputError(
                f"{source}: column {column!r} is set to numeric but {where} holds {bad!r}, which is not "
                "a number; set the column's kind to categorical or text, or fix the value.",
                file=source, row=int(rows.file_rows([row])[0]) if rows is not None else row + 1, column=column)
        if values.null_count:
            mask = pc.is_valid(values).to_numpy(zero_copy_only=False)
            out = np.full(len(values), np.nan)
            out[mask] = numbers.to_numpy().astype(np.float64)
            return pd.Series(out, name=column)
        return pd.Series(numbers.to_numpy(), name=column)
    if kind is Kind.DATE:
        present = pc.drop_null(values)
        if len(present) and date_format(present) is None:
            raise InputError(
                f"{source}: column {column!r} is set to date but not all its values are dates of one format "
                "(2024-03-01, 01.03.2024 or 01/03/2024); set its kind to categorical or text."
            )
    return values.to_pandas().rename(column).reset_index(drop=True)


def type_text_columns(table: pa.Table, names: list[str], kinds: Mapping[str, str] | None, source: str,
                      decimal: str = ".", rows: SourceRows | None = None) -> tuple[pd.DataFrame, dict[str, Kind]]:
    """A frame (columns named ``names``) from a table of text columns, each given or guessed its kind (``rows``:
    where the records sit in the file, for a message about one)."""
    kinds = dict(kinds or {})
    _check_known(kinds, names, source)
    columns, decided = {}, {}
    for i, name in enumerate(names):
        values = table.column(i)
        numbers = None
        if name in kinds:
            kind = parse_kind(kinds[name], name)
        else:
            kind, numbers = _classify(pc.drop_null(values), name, decimal)
        columns[i] = convert(values, kind, name, source, decimal, numbers, rows)
        decided[name] = kind
    frame = pd.DataFrame(columns, index=pd.RangeIndex(table.num_rows))
    frame.columns = names
    return frame, decided


def type_typed_frame(frame: pd.DataFrame, kinds: Mapping[str, str] | None, source: str,
                     decimal: str = ".", rows: SourceRows | None = None) -> tuple[pd.DataFrame, dict[str, Kind]]:
    """A frame read from a typed format (Excel, SPSS, Stata, Parquet) with each column's kind.

    Numbers stay numbers unless the column is code-like (then their text, "2134" for 2134.0); dates and
    times become ISO text; text columns are guessed as for a text file. A kind the user gives wins.
    """
    kinds = dict(kinds or {})
    names = [str(c) for c in frame.columns]
    _check_known(kinds, names, source)
    decided: dict[str, Kind] = {}
    frame = frame.copy(deep=False)
    for i, name in enumerate(names):
        series = frame.iloc[:, i]
        given = parse_kind(kinds[name], name) if name in kinds else None
        if pd.api.types.is_datetime64_any_dtype(series):
            series = _iso_dates(series)
        is_number = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        text = _text_array(series)
        if given is None:
            present = pc.drop_null(text)
            if is_number:
                whole = pd.api.types.is_integer_dtype(series) or bool(
                    np.all(np.mod(series.dropna().to_numpy(dtype=float), 1) == 0))
                given = Kind.TEXT if len(present) and _code_like(present, name, whole) else Kind.NUMERIC
            else:
                given = guess_kind(text, name, decimal)
        if given is Kind.NUMERIC and is_number:
            decided[name] = given
            continue
        frame.isetitem(i, convert(text, given, name, source, decimal, rows=rows).set_axis(frame.index))
        decided[name] = given
    return frame, decided


def retype(dataset: Dataset, column: str, kind: Kind) -> Dataset:
    """A copy of ``dataset`` with ``column`` converted to ``kind`` from the text of its values (for a table
    made in memory; a file is read again instead, which keeps its exact text)."""
    series = dataset.frame[column]
    converted = convert(_text_array(series), kind, column, dataset.label)
    frame = dataset.frame.copy(deep=False)
    frame[column] = converted.set_axis(frame.index)
    attributes = dict(dataset.schema.attributes)
    attributes[column] = Attribute(column, attributes[column].role, kind)
    return Dataset(frame, source=dataset.source, schema=Schema(attributes), details=dict(dataset.details),
                   labels=dataset.labels, source_rows=dataset.source_rows)


def _iso_dates(series: pd.Series) -> pd.Series:
    """Dates as ``YYYY-MM-DD`` (with the time when any value has one), missing as NaN."""
    times = pd.to_datetime(series)
    with_time = bool((times.dropna() != times.dropna().dt.normalize()).any())
    text = times.dt.strftime("%Y-%m-%d %H:%M:%S" if with_time else "%Y-%m-%d")
    return text.astype(object).where(times.notna(), None)


def _text_array(series: pd.Series) -> pa.ChunkedArray:
    """A column as text (whole floats without ".0"), missing cells as nulls."""
    missing = series.isna().to_numpy()
    text = text_column(series).to_numpy(dtype=object, copy=True)
    text[missing] = None
    return pa.chunked_array([pa.array(text, pa.string())])


def _check_known(kinds: Mapping[str, str], names: list[str], source: str) -> None:
    unknown = [c for c in kinds if c not in names]
    if unknown:
        raise InputError(f"{source}: a kind is given for column {unknown[0]!r} (with {setting_ref('kind')}, or as an "
                         f"identifier, read as text), which the file does not have; its columns are: "
                         f"{', '.join(names)}.")
