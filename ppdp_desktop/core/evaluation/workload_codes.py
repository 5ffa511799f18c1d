"""A condition column numbered as ``pd.factorize(column, use_na_sentinel=False)`` numbers it (codes in order of first
appearance, a missing value a code of its own), in the smallest integer type and without a full-size temporary.

The count-query workload (:mod:`.workload`) numbers a few columns of every record. ``pd.factorize`` hashes each into an
8-byte code per record: 8 MB of fresh memory a column on 1M records, whose first-touch page faults cost more than
the hashing on this project's machines (issue 34). A categorical column already holds small codes and a column of
integers in a short range is its own table index, so both are renumbered here through a lookup table, a chunk of
records at a time in one reused buffer, into codes of one byte where the column has fewer than 128 values. Any
other column (text, floats, extension types) goes to ``pd.factorize``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: records renumbered at a time: the chunk's buffers stay in the processor's cache and are reused
CHUNK = 1 << 16

#: an integer column spanning more values than this goes to ``pd.factorize`` (its lookup table would be large)
MAX_SPAN = 1 << 16


def factorized(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(column, use_na_sentinel=False)``: the same codes (as a smaller integer type where the column is
    categorical, boolean or integer in a span of at most :data:`MAX_SPAN` values) and its values in code order."""
    source = _table_source(column)
    if source is None:
        return pd.factorize(column, use_na_sentinel=False)
    values, offset, span = source
    n = len(values)
    dtype = np.min_scalar_type(-span)  # signed: the codes' comparisons and sums never mix signed and unsigned
    codes = np.empty(n, dtype=dtype)
    code_of = np.full(span, -1, dtype=dtype)  # each table index's code, -1 until it is first seen
    buffer = np.empty(min(CHUNK, n), dtype=np.intp)
    firsts: list[np.ndarray] = []  # the records where the codes first appear, in code order
    n_codes = 0
    for start in range(0, n, CHUNK):
        index = buffer[: min(CHUNK, n - start)]
        np.copyto(index, values[start:start + CHUNK])
        index += offset
        out = codes[start:start + len(index)]
        np.take(code_of, index, out=out, mode="clip")  # "clip": no buffered copy (every index is in the table)
        if out.min() < 0:  # values seen for the first time: numbered in the order of their first records
            unseen = np.flatnonzero(out < 0)
            first = np.full(span, len(index), dtype=np.intp)  # each value's first record in the chunk
            np.minimum.at(first, index[unseen], unseen)
            new = np.flatnonzero(first < len(index))
            new = new[np.argsort(first[new], kind="stable")]
            code_of[new] = np.arange(n_codes, n_codes + len(new))
            n_codes += len(new)
            firsts.append(start + first[new])
            np.take(code_of, index, out=out, mode="clip")
    at = np.concatenate(firsts) if firsts else np.zeros(0, dtype=np.intp)
    return codes, pd.Index(column.take(at), name=None)


def _table_source(column: pd.Series) -> tuple[np.ndarray, int, int] | None:
    """``(values, offset, span)`` such that ``values + offset`` indexes a table of ``span`` entries, one per possible
    value of ``column``; None where the column is not one of the kinds :func:`factorized` renumbers itself."""
    if len(column) == 0:
        return None
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(column.cat.codes)  # -1 for a missing value, which pandas numbers as a value of its own
        return codes, 1, len(dtype.categories) + 1
    if not isinstance(dtype, np.dtype) or dtype.kind not in "biu":
        return None
    values = column.to_numpy(copy=False)
    if dtype.kind == "b":
        return values, 0, 2
    low, high = int(values.min()), int(values.max())
    if high - low >= MAX_SPAN or low < np.iinfo(np.intp).min // 2 or high > np.iinfo(np.intp).max // 2:
        return None
    return values, -low, high - low + 1
