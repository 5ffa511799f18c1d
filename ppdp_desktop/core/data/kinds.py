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
never 2134), as dictionary codes (a pandas categorical) when their values repeat; numeric columns become int64
(float64 with missing values or fractions). Typed inputs (Excel, SPSS, Stata, Parquet) keep their numbers unless
the column is code-like or the user says otherwise.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.data.cell_limit import MAX_CELL_CHARS, check_cells
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.dictionary import decoded, text_series
from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.data.freed_memory import return_freed
from ppdp_desktop.core.data.kind_guess import (
    CODE_WORDS,
    DATE_FORMATS,
    FIXED_WIDTH,
    UNIQUE_TEXT,
    classify,
    code_like,
    date_format,
    guess_kind,
    name_words,
    strings,
)
from ppdp_desktop.core.data.kind_guess import numbers as parse_numbers
from ppdp_desktop.core.data.kind_guess import present as present_values
from ppdp_desktop.core.data.schema import Attribute, Kind, Schema, parse_kind
from ppdp_desktop.core.data.source_rows import SourceRows
from ppdp_desktop.core.errors import InputError, setting_ref

__all__ = ["CODE_WORDS", "DATE_FORMATS", "FIXED_WIDTH", "UNIQUE_TEXT", "convert", "date_format", "guess_kind",
           "name_words", "retype", "type_text_columns", "type_typed_frame"]


def _may_hold_long_cells(values: pa.ChunkedArray) -> bool:
    """Whether a cell of ``values`` may be longer than :data:`~.cell_limit.MAX_CELL_CHARS`: not when no chunk holds
    that many bytes of text (a character is at least a byte), as the parser's 1 MiB blocks do not."""
    if pa.types.is_dictionary(values.type):  # every cell's text is in its chunk's dictionary
        if not (pa.types.is_string(values.type.value_type) or pa.types.is_large_string(values.type.value_type)):
            return True
        texts = [chunk.dictionary for chunk in values.chunks]
    elif pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        texts = values.chunks
    else:
        return True
    return any(text.buffers()[2] is not None and text.buffers()[2].size > MAX_CELL_CHARS for text in texts)


def _first_bad(values: pa.ChunkedArray, good: np.ndarray) -> tuple[int, str]:
    row = int(np.flatnonzero(~good)[0])
    return row, str(values[row].as_py())


def convert(values: pa.ChunkedArray | pa.Array, kind: Kind, column: str, source: str,
            decimal: str = ".", numbers: pa.ChunkedArray | None = None, rows: SourceRows | None = None,
            dates_checked: bool = False, coded: pa.ChunkedArray | None = None) -> pd.Series:
    """The column as values of ``kind``: numbers for numeric (int64, or float64 with missing cells or
    fractions), the exact text otherwise, as codes of a categorical when its values repeat
    (:func:`~.dictionary.text_series`). ``values`` may be dictionary-encoded (or ``coded``: the same column so,
    beside its text); ``numbers``: the non-missing values as numbers, when the kind's guess made them;
    ``dates_checked``: the guess found them dates of one format.

    Raises
    ------
    InputError
        Naming the file, the column, the first value that is not a number (numeric) or not a date (date),
        or a cell longer than :data:`~.cell_limit.MAX_CELL_CHARS`, its row or line in the file (``rows``; else its
        data row), and what to change.
    """
    values = strings(values)
    if coded is None:  # the column as read: dictionary codes of a column of repeating text (text_table)
        coded = values
    if _may_hold_long_cells(coded):
        values = decoded(values)
        check_cells(values, column, source)
    if (kind is Kind.NUMERIC and numbers is None) or (kind is Kind.DATE and not dates_checked):
        values = decoded(values)  # the text itself only where it is read (dictionary codes: text_series)
    if kind is Kind.NUMERIC:
        numbers = parse_numbers(present_values(values), decimal) if numbers is None else numbers
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
    if kind is Kind.DATE and not dates_checked:
        present = present_values(values)
        if len(present) and date_format(present) is None:
            raise InputError(
                f"{source}: column {column!r} is set to date but not all its values are dates of one format "
                "(2024-03-01, 01.03.2024 or 01/03/2024); set its kind to categorical or text."
            )
    return text_series(coded, column)


#: bytes of parsed text typed between two trims of the heap (:func:`~.freed_memory.return_freed`): the columns'
#: freed text stayed resident under the typed frame, the load's peak at 1M records (issue 34), for ~5 ms a trim
TRIM_BYTES = 16 << 20


def type_text_columns(table: pa.Table | list[pa.ChunkedArray | None], names: list[str],
                      kinds: Mapping[str, str] | None, source: str, decimal: str = ".",
                      rows: SourceRows | None = None) -> tuple[pd.DataFrame, dict[str, Kind]]:
    """A frame (columns named ``names``) from a table of text columns, each given or guessed its kind (``rows``:
    where the records sit in the file, for a message about one).

    Given a list of columns rather than a table, each entry is let go (set to None) once its column is typed, so
    that a column's text and its typed values are not both held for every column at once (issue 34: the load's
    peak memory). The frame is not consolidated: each column keeps the array it was made with, uncopied.
    """
    kinds = dict(kinds or {})
    _check_known(kinds, names, source)
    columns: list[pa.ChunkedArray | None] = table if isinstance(table, list) else list(table.columns)
    length = len(columns[0]) if columns and columns[0] is not None else 0
    typed, decided = {}, {}
    let_go = 0  # bytes of parsed text let go of since the heap was last trimmed
    for i, name in enumerate(names):
        values = columns[i]
        assert values is not None  # each column is typed once
        columns[i] = None
        let_go += values.nbytes
        if name in kinds:  # a column of repeating text comes as dictionary codes (text_table._parse_csv)
            kind, guess = parse_kind(kinds[name], name), None
        else:
            guess = classify(present_values(values), name, decimal)
            kind = guess.kind
        typed[i] = convert(values, kind, name, source, decimal, guess.numbers if guess else None, rows,
                           dates_checked=bool(guess and guess.dates_checked))
        decided[name] = kind
        del values, guess
        if let_go >= TRIM_BYTES:  # the parsed text of the columns typed so far, handed back (a few ms)
            return_freed()
            let_go = 0
    frame = pd.DataFrame(typed, index=pd.RangeIndex(length), copy=False)
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
                given = Kind.TEXT if len(present) and code_like(present, name, whole) else Kind.NUMERIC
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
