"""The count-query workload's records aggregated into cells: one cell per combination of condition values, with the
counts of each true and each released sensitive value among its records (:func:`cell_counts`), and each condition
column's marginal table (:class:`ColumnMarginals`).

The records are read a chunk at a time into a few reused buffers: a cell's key, its number and the (cell, value)
entries to count are never made for all records at once, and the dense table holds its counts in the smallest
unsigned type that the largest cell fits (one byte a count on 1M records in 71,870 cells). On this project's
machines the first touch of fresh memory costs ~2 ms a MB: the former full-size int64 keys, bincounts and their
int32 copy were ~100 MB of it on 1M records, most of the workload's time (issue 34).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: records read at a time (their buffers, 512 KB each, stay in the processor's cache and are reused)
CHUNK = 1 << 16

#: at most this many (cell, value) counts are held dense; more (a large domain) are held sparse
MAX_CELL_COUNTS = 20_000_000

Counts = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass
class Cells:
    """Records aggregated into cells: ``codes[i]`` the code of condition column ``i`` in each cell, and
    ``counts_of(index)`` the true and released counts (m each, int64) summed over the cells ``index``."""

    n_cells: int
    codes: list[np.ndarray]
    counts_of: Counts


def cell_counts(codes: list[np.ndarray], true_codes: np.ndarray, released_codes: np.ndarray, m: int) -> Cells | None:
    """The records (their condition ``codes``, one array a column) aggregated into cells with the counts of their
    true and released sensitive codes (0..m-1); None when the cells would be about as many as the records."""
    n = len(codes[0]) if codes else 0
    widths = [int(column.max()) + 1 if n else 1 for column in codes]
    if math.prod(widths) <= max(4 * n, 1 << 16):  # few possible cells: numbered by a table of the keys, no hashing
        numbered = _table_cells(codes, widths, n)
    else:
        numbered = _hashed_cells(codes, widths, n)
    if numbered is None:
        return None
    cell_of, population, cell_codes = numbered
    n_cells = len(population)
    if n_cells * m > MAX_CELL_COUNTS:  # a large domain (diagnosis codes): at most one entry a record
        cell = np.empty(n, dtype=np.intp)
        for start in range(0, n, CHUNK):
            cell[start:start + CHUNK] = cell_of(start)
        true_sparse = _sparse_counts(cell, true_codes, n_cells, m)
        released_sparse = _sparse_counts(cell, released_codes, n_cells, m)

        def sparse_counts_of(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return (np.asarray(true_sparse[index].sum(axis=0), dtype=np.int64).ravel(),
                    np.asarray(released_sparse[index].sum(axis=0), dtype=np.int64).ravel())
        return Cells(n_cells, cell_codes, sparse_counts_of)
    # each cell's true counts and released counts side by side in one row: one take and one sum a query
    largest = int(population.max()) if n_cells else 0
    both = np.zeros(n_cells * 2 * m, dtype=np.min_scalar_type(largest))  # no count exceeds its cell's records
    table = _count_pairs(both, cell_of, true_codes, released_codes, m)

    def counts_of(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        total = np.take(table, index, axis=0).sum(axis=0, dtype=np.int64)
        return total[:m], total[m:]
    return Cells(n_cells, cell_codes, counts_of)


def _count_pairs(flat: np.ndarray, row_of: Callable[[int], np.ndarray], true_codes: np.ndarray,
                 released_codes: np.ndarray, m: int) -> np.ndarray:
    """Count each record's true value and released value into ``flat`` (zeros, rows of 2m: the m true counts, then
    the m released ones), a chunk of records at a time; ``row_of(start)`` gives the rows of the chunk from ``start``
    (a buffer this overwrites). Returns ``flat`` as rows."""
    n = len(true_codes)
    one = np.ones((), dtype=flat.dtype)  # the dtype of the table: np.add.at's fast loop, no cast
    entry = np.empty(min(CHUNK, n), dtype=np.intp)
    for start in range(0, n, CHUNK):
        row = row_of(start)
        row *= 2 * m
        at = entry[: len(row)]
        np.add(row, true_codes[start:start + CHUNK], out=at)
        np.add.at(flat, at, one)
        np.add(row, released_codes[start:start + CHUNK], out=at)
        at += m
        np.add.at(flat, at, one)
    return flat.reshape(-1, 2 * m)


Numbered = tuple[Callable[[int], np.ndarray], np.ndarray, list[np.ndarray]]


def _table_cells(codes: list[np.ndarray], widths: list[int], n: int) -> Numbered | None:
    """Cells numbered in the order of their mixed-radix keys, from a table of the ``prod(widths)`` possible keys:
    ``(cell_of, population, cell codes)``, where ``cell_of(start)`` gives the cells of the chunk of records from
    ``start`` (in a reused buffer) and ``population`` the records of each cell."""
    count_dtype = np.int32 if n < 2**31 else np.int64
    key = np.empty(min(CHUNK, n), dtype=np.intp)
    cell = np.empty(min(CHUNK, n), dtype=count_dtype)

    def key_of(start: int) -> np.ndarray:
        out = key[: min(CHUNK, n - start)]
        np.copyto(out, codes[0][start:start + CHUNK])
        for column, width in zip(codes[1:], widths[1:]):
            out *= width
            out += column[start:start + CHUNK]
        return out

    per_key = np.zeros(math.prod(widths), dtype=count_dtype)
    one = np.ones((), dtype=count_dtype)
    for start in range(0, n, CHUNK):
        np.add.at(per_key, key_of(start), one)
    keys = np.flatnonzero(per_key)
    if len(keys) > n // 2:
        return None
    population = per_key[keys]
    number = per_key  # reused: each present key's cell number (the others are never looked up)
    number[keys] = np.arange(len(keys), dtype=count_dtype)
    strides = np.cumprod([1, *widths[:0:-1]])[::-1]
    cell_codes = [(keys // int(stride) % width).astype(column.dtype)
                  for column, width, stride in zip(codes, widths, strides)]

    def cell_of(start: int) -> np.ndarray:
        index = key_of(start)
        out = cell[: len(index)]
        np.take(number, index, out=out, mode="clip")  # "clip": no buffered copy (every key is in the table)
        return out
    return cell_of, population, cell_codes


def _hashed_cells(codes: list[np.ndarray], widths: list[int], n: int) -> Numbered | None:
    """Cells numbered by hashing each record's key (far more possible keys than records), as :func:`_table_cells`."""
    key = np.zeros(n, dtype=np.int64)
    size = 1
    for column, width in zip(codes, widths):
        if size * width > 2**62:
            key, uniques = pd.factorize(key)  # renumber before the mixed-radix key could overflow
            size = len(uniques)
        key *= width
        key += column
        size *= width
    cell, uniques = pd.factorize(key)
    del key
    if len(uniques) > n // 2:
        return None
    record = np.empty(len(uniques), dtype=np.intp)
    record[cell] = np.arange(n)  # one record of each cell (any: all its records have the cell's codes)
    buffer = np.empty(min(CHUNK, n), dtype=np.intp)

    def cell_of(start: int) -> np.ndarray:
        out = buffer[: min(CHUNK, n - start)]
        np.copyto(out, cell[start:start + CHUNK])
        return out
    return cell_of, np.bincount(cell, minlength=len(uniques)), [column[record] for column in codes]


def _sparse_counts(cell: np.ndarray, codes: np.ndarray, n_cells: int, m: int):
    """Records per (cell, value) as a CSR matrix (cells x values)."""
    from scipy import sparse

    counts = sparse.csr_array((np.ones(len(cell), dtype=np.int64), (cell, np.asarray(codes, dtype=np.int64))),
                              shape=(n_cells, m))
    counts.sum_duplicates()
    return counts


class ColumnMarginals:
    """The true and released counts of each value of the sensitive column among the records with one value of a
    condition column: that column's marginal table, counted from the codes (a chunk of records at a time) when a
    single-column condition first asks for it. The same integers as summing the condition's cells, without
    gathering half the cells for a condition such as "sex = F"."""

    def __init__(self, codes: list[np.ndarray], true_codes: np.ndarray, released_codes: np.ndarray, m: int) -> None:
        self.codes, self.true_codes, self.released_codes, self.m = codes, true_codes, released_codes, m
        self.tables: dict[int, np.ndarray] = {}

    def counts(self, column: int, value: int) -> tuple[np.ndarray, np.ndarray]:
        """``(true counts, released counts)`` over the m values among the records whose ``column`` has code ``value``."""
        if column not in self.tables:
            self.tables[column] = self._table(self.codes[column])
        row = self.tables[column][value]
        return row[: self.m], row[self.m:]

    def _table(self, codes: np.ndarray) -> np.ndarray:
        """Per value of ``codes``: its true counts and its released counts side by side (int64)."""
        n = len(codes)
        width = int(codes.max()) + 1 if n else 1
        buffer = np.empty(min(CHUNK, n), dtype=np.intp)

        def row_of(start: int) -> np.ndarray:
            out = buffer[: min(CHUNK, n - start)]
            np.copyto(out, codes[start:start + CHUNK])
            return out
        return _count_pairs(np.zeros(width * 2 * self.m, dtype=np.int64), row_of, self.true_codes,
                            self.released_codes, self.m)
