"""Encoding a categorical column as integer codes over its ordered domain.

Missing values are one more category, listed last and shown as ``None`` in ``release.json`` and
as an empty cell in CSV: in clinical data a missing diagnosis is itself information, and treating
it as a category keeps every record in the release and under the same guarantee (see
``docs/release-format.md``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.data.labels import label_text as label_text  # re-exported: its home before issue 34
from ppdp_desktop.core.errors import InputError


def text_column(column: pd.Series) -> pd.Series:
    """:func:`label_text` of every cell, computed once per distinct value (vectorized)."""
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    labels = np.array([label_text(u) for u in uniques] + [""], dtype=object)
    return pd.Series(labels[codes], index=column.index, dtype=object)


def json_label(value: object) -> object:
    """A domain value as a JSON scalar (numpy scalars unwrapped, missing as ``None``)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


@dataclass(frozen=True)
class CategoricalDomain:
    """The ordered values of one attribute and their frequencies.

    ``values`` are sorted (numbers numerically, text alphabetically), missing last.
    """

    attribute: str
    values: tuple[object, ...]
    counts: np.ndarray

    @property
    def m(self) -> int:
        return len(self.values)

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def prior(self) -> np.ndarray:
        """Relative frequencies: the adversary's prior of SPEC 1.1."""
        return self.counts / self.counts.sum()

    def json_values(self) -> list[object]:
        return [json_label(v) for v in self.values]

    def encode(self, column: pd.Series) -> np.ndarray:
        """Codes of ``column``'s values in this domain (for applying a plan to new rows or chunks)."""
        has_missing = json_label(self.values[-1]) is None
        known = pd.Index(self.values[:-1] if has_missing else self.values)
        codes = _indexer(known, column)
        missing = column.isna().to_numpy()
        if has_missing:
            codes[missing] = self.m - 1
        unknown = (codes < 0) & ~missing if has_missing else codes < 0
        if unknown.any():
            bad = column[unknown].iloc[0]
            raise InputError(f"Value {label_text(bad)!r} of {self.attribute!r} is not in the planned domain.")
        return codes.astype(np.int32)

    def categorical(self, codes: np.ndarray) -> pd.Categorical:
        """Codes as a pandas Categorical (missing as NaN): no Python object per record, so building
        and writing a large release never holds the interpreter for long."""
        has_missing = json_label(self.values[-1]) is None
        categories = list(self.values[:-1] if has_missing else self.values)
        codes = np.asarray(codes)
        if has_missing:
            codes = np.where(codes == self.m - 1, -1, codes)
        return pd.Categorical.from_codes(codes, categories=categories)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Map codes back to values (an object array; missing becomes ``None``)."""
        lookup = np.empty(self.m, dtype=object)
        lookup[:] = [None if json_label(v) is None else v for v in self.values]
        return lookup[codes]


def encode_column(column: pd.Series, attribute: str, source: str = "the data") -> tuple[CategoricalDomain, np.ndarray]:
    """Return the domain of ``column`` and each record's code (``int32``), vectorized.

    Raises :class:`InputError` if the column is empty or has a single value (nothing to protect by
    randomization: every released value would reveal it).
    """
    if isinstance(column.dtype, pd.CategoricalDtype):  # a streamed job's plan column: from its small codes
        values, codes = _categorical_codes(column)
    else:
        codes, uniques = pd.factorize(column, sort=True, use_na_sentinel=True)
        values = list(uniques)
        codes = codes.astype(np.int32, copy=False)
        missing = codes < 0
        if missing.any():
            codes = np.where(missing, len(values), codes).astype(np.int32)
            values.append(None)
    if len(codes) == 0:
        raise InputError(f"Column {attribute!r} of {source} has no records.")
    if len(values) < 2:
        only = label_text(values[0]) if values else ""
        raise InputError(
            f"Sensitive column {attribute!r} of {source} has a single value ({only!r}); "
            f"randomization needs at least two values: choose another sensitive column."
        )
    counts = count_codes(codes, len(values))
    return CategoricalDomain(attribute, tuple(values), counts), codes


_BLOCK = 1 << 24  # records counted at a time (np.bincount widens its input to 8 bytes a record)


def count_codes(codes: np.ndarray, m: int) -> np.ndarray:
    """``np.bincount(codes, minlength=m)`` a block at a time: no 8-byte copy of a 100M-record column."""
    counts = np.zeros(m, dtype=np.int64)
    for start in range(0, len(codes), _BLOCK):
        counts += np.bincount(codes[start:start + _BLOCK], minlength=m)[:m]
    return counts


def _categorical_codes(column: pd.Series) -> tuple[list, np.ndarray]:
    """What ``pd.factorize(column, sort=True)`` gives (the values present, sorted, then None for missing cells,
    and int32 codes), from a categorical's own codes: no object per record, no 8-byte temporary."""
    raw = column.array.codes  # int8/int16/int32, -1 for a missing cell
    categories = column.array.categories
    present = count_codes(raw.astype(np.int32) + 1, len(categories) + 1) if len(raw) <= _BLOCK else _blockcount_codes(
        raw, len(categories))
    used = [int(i) for i in categories.argsort() if present[i + 1] > 0]
    remap = np.full(len(categories) + 1, -1, dtype=np.int32)  # the last place stands for code -1 (missing)
    remap[used] = np.arange(len(used), dtype=np.int32)
    values = [categories[i] for i in used]
    if present[0] > 0:
        remap[-1] = len(values)
        values.append(None)
    return values, remap[raw]


def _blockcount_codes(raw: np.ndarray, k: int) -> np.ndarray:
    counts = np.zeros(k + 1, dtype=np.int64)
    for start in range(0, len(raw), _BLOCK):
        counts += np.bincount(raw[start:start + _BLOCK].astype(np.int32) + 1, minlength=k + 1)
    return counts


def _indexer(known: pd.Index, column: pd.Series) -> np.ndarray:
    """``known.get_indexer(column)``; for a text column held by pyarrow, pyarrow's ``index_in``, which gives
    the same codes without making a Python object per record (faster, and it lets the window run); for a
    categorical (a large release read back in part), each category is looked up once."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        table = np.append(known.get_indexer(column.array.categories), -1).astype(np.int32)  # last: code -1
        return table[column.array.codes]
    if isinstance(column.dtype, pd.StringDtype) and all(isinstance(v, str) for v in known):
        try:
            array = pa.array(column, from_pandas=True)  # the column's own arrow data (chunked or not), no copy
            if len(column) and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
                found = pc.index_in(array, value_set=pa.array(list(known), type=array.type))
                return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
        except (pa.ArrowException, TypeError, ValueError):
            pass
    return known.get_indexer(column)
