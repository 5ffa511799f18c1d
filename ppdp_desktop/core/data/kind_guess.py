"""The rules that guess a text column's kind, vectorized with pyarrow (the rules themselves are described in
:mod:`ppdp_desktop.core.data.kinds`).

Each rule asks something of *every* value (all numbers, all dates of one format, all different), so a sample that
fails a rule proves the column fails it: the first :data:`SAMPLE` values are asked first, and the whole column
only when they pass (issue 34: a 1M-row column of words no longer pays for four failing number casts over a
million values, nor a date pattern over a million distinct identifiers). The answer is exactly the one a check
of the whole column gives.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.data.dictionary import decoded
from ppdp_desktop.core.data.schema import Kind

#: words in a column name that mark a column of digits as a code, not a quantity
CODE_WORDS = frozenset({"id", "zip", "zipcode", "postcode", "postal", "plz", "code", "phone", "tel", "telephone",
                        "mrn", "nhs", "ssn", "icd", "ops", "npi"})
#: a code of digits of one width at least this long whose values all differ is an identifier
FIXED_WIDTH = 5
#: a text column of at least this many values, all different, is an identifier or free text
UNIQUE_TEXT = 50
#: values asked first: a column whose first values fail a rule (numbers, dates, all different) fails it
SAMPLE = 1_000
DATE_FORMATS = {  # pattern -> strptime formats tried in order (the first that reads every value wins)
    r"^\d{4}-\d{2}-\d{2}$": ("%Y-%m-%d",),
    r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$": ("ISO8601",),
    r"^\d{1,2}\.\d{1,2}\.\d{4}$": ("%d.%m.%Y",),
    r"^\d{1,2}/\d{1,2}/\d{4}$": ("%d/%m/%Y", "%m/%d/%Y"),
}
_WORD = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|\b|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+|\d+")


@dataclass(frozen=True)
class Guess:
    """A column's guessed kind and what the guess already computed: the numbers of a numeric column, and whether
    its values were found to be dates of one format (so that converting it need not ask again)."""

    kind: Kind
    numbers: pa.ChunkedArray | None = None
    dates_checked: bool = False


def name_words(column: str) -> set[str]:
    """The lower-case words of a column name: ``"PatientID"`` -> {patient, id}, ``"zip_code"`` -> {zip, code}."""
    return {w.lower() for w in _WORD.findall(str(column))}


def strings(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    """``values`` as a chunked array."""
    return pa.chunked_array([values]) if isinstance(values, pa.Array) else values


def present(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """The values that are not missing (``values`` itself when none is)."""
    return pc.drop_null(values) if values.null_count else values


def _cast(values: pa.ChunkedArray, to: pa.DataType) -> pa.ChunkedArray | None:
    try:
        return pc.cast(values, to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _parsed(values: pa.ChunkedArray, decimal: str) -> tuple[pa.ChunkedArray | None, bool]:
    """The values as numbers (see :func:`numbers`) and whether they had to be trimmed of spaces first."""
    if decimal == ",":
        values = pc.replace_substring(values, ",", ".")
    # A cast that fails costs far more than one that succeeds: a column whose first values are not all whole
    # numbers goes straight to float64.
    numbers = _cast(values, pa.int64()) if _cast(values.slice(0, SAMPLE), pa.int64()) is not None else None
    if numbers is None:
        numbers = _cast(values, pa.float64())
    trimmed = False
    if numbers is None:  # surrounding spaces, which the casts refuse
        trimmed = True
        text = pc.utf8_trim_whitespace(values)
        numbers = _cast(text, pa.int64())
        if numbers is None:
            numbers = _cast(text, pa.float64())
    if numbers is None:
        return None, trimmed
    if pa.types.is_floating(numbers.type) and pc.all(pc.is_finite(numbers)).as_py() is False:
        return None, trimmed  # "nan", "inf" are words here, not numbers
    return numbers, trimmed


def numbers(values: pa.ChunkedArray, decimal: str) -> pa.ChunkedArray | None:
    """The values as int64 (if all are whole numbers in integer form) or float64; None if any is not a
    finite number. ``values`` hold no nulls."""
    return _parsed(values, decimal)[0]


def code_like(values: pa.ChunkedArray, column: str, integers: bool, trimmed: bool = True,
              records: int | None = None) -> bool:
    """Digits that are a code: a leading zero, a code-like name, or a fixed-width identifier (``trimmed``: whether
    a value may have spaces around it; when none has, the values are looked at as they are; ``records``: how many
    values ``values`` stands for when it holds their distinct values only, each once)."""
    if not integers:
        return False
    if name_words(column) & CODE_WORDS:
        return True
    text = pc.utf8_trim_whitespace(values) if trimmed else values
    zero = pc.starts_with(text, "0")
    if pc.any(zero).as_py() and pc.any(pc.and_(zero, pc.greater(pc.utf8_length(text), 1))).as_py():
        return True
    lengths = pc.utf8_length(values)
    bounds = pc.min_max(lengths).as_py()
    return (bounds["min"] == bounds["max"] >= FIXED_WIDTH
            and pc.count_distinct(values).as_py() == (len(values) if records is None else records))


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


def _all_different(values: pa.ChunkedArray) -> bool:
    return pc.count_distinct(values).as_py() == len(values)


def classify(values: pa.ChunkedArray, column: str, decimal: str) -> Guess:
    """The guessed kind of the non-missing ``values`` (no nulls), each rule asked of a sample first. Dictionary-encoded
    ``values`` are decoded only when a rule asks the whole column (the sample passed it)."""
    if len(values) == 0:
        return Guess(Kind.CATEGORICAL)
    head = decoded(values.slice(0, SAMPLE)) if len(values) > SAMPLE else None
    text: list[pa.ChunkedArray] = []

    def whole() -> pa.ChunkedArray:
        if not text:
            text.append(decoded(values))
        return text[0]

    if head is not None and pa.types.is_dictionary(values.type) and numbers(head, decimal) is not None:
        distinct, indices = _distinct(values)  # every rule of numbers asked of each distinct value once
        found, trimmed = _parsed(distinct, decimal)
        if found is not None:
            if code_like(distinct, column, pa.types.is_integer(found.type), trimmed, records=len(values)):
                return Guess(Kind.TEXT)
            return Guess(Kind.NUMERIC, numbers=found.take(indices))
    elif head is None or numbers(head, decimal) is not None:
        found, trimmed = _parsed(whole(), decimal)
        if found is not None:
            if code_like(whole(), column, pa.types.is_integer(found.type), trimmed):
                return Guess(Kind.TEXT)
            return Guess(Kind.NUMERIC, numbers=found)
    if (head is None or date_format(head) is not None) and date_format(whole()) is not None:
        return Guess(Kind.DATE, dates_checked=True)
    if name_words(column) & CODE_WORDS or (len(values) >= UNIQUE_TEXT and (head is None or _all_different(head))
                                          and _all_different(whole())):
        return Guess(Kind.TEXT)  # "P000123", names: a code or free text, one per record
    return Guess(Kind.CATEGORICAL)


def _distinct(values: pa.ChunkedArray) -> tuple[pa.ChunkedArray, np.ndarray]:
    """The distinct values a dictionary-encoded column without nulls holds (its chunks' dictionaries unified, the
    values no cell holds left out) and each cell's position among them."""
    unified = values.unify_dictionaries()
    dictionary = unified.chunk(0).dictionary
    indices = pa.chunked_array([c.indices for c in unified.chunks], values.type.index_type).to_numpy()
    used = np.zeros(len(dictionary), dtype=bool)
    used[indices] = True
    if not used.all():  # a sliced chunk's dictionary holds values of the cells cut off
        kept = np.flatnonzero(used)
        rank = np.zeros(len(dictionary), dtype=indices.dtype)
        rank[kept] = np.arange(len(kept), dtype=indices.dtype)
        dictionary, indices = dictionary.take(kept), rank[indices]
    return pa.chunked_array([dictionary]), indices


def guess_kind(values: pa.ChunkedArray | pa.Array, column: str, decimal: str = ".") -> Kind:
    """The kind of a column of text (nulls are missing cells), by the rules in :mod:`.kinds`' docstring."""
    return classify(present(strings(values)), column, decimal).kind
