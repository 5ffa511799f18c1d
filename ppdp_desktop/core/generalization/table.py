"""Equivalence classes of generalized quasi-identifier combinations, computed without per-record loops.

The records are aggregated once to their distinct level-0 combinations with counts
(:func:`aggregate_records`); every lattice node is then a :class:`ClassTable` rolled up from a finer node's
table (:meth:`ClassTable.rollup`), which only gets smaller as levels rise. Combinations are grouped by
a mixed-radix int64 key (:func:`group`): one weighted ``bincount`` over the key when its range is small
(the usual case), ``pandas.factorize`` otherwise; the codes of each class are decoded from its key.

Speed (issue 34, sparse data: most nodes are rolled up from tables of hundreds of thousands of rows): a key whose
range fits in int32 is built and counted in int32 (half the memory traffic of int64), decoded codes take the smallest
integer type their labels fit, a rollup's keys are looked up over blocks of columns (:mod:`.blocks`; a table rolled up
with its key decodes its codes only when they are read), and a table used as a source keeps its counts as float64
weights (``bincount`` would convert them on every rollup).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import InputError, ParameterError
from ppdp_desktop.core.generalization.blocks import block_codes, block_plan, lookup_tables, rolled_key
from ppdp_desktop.core.generalization.hierarchy import Hierarchy

_KEY_LIMIT = 1 << 62  # a mixed-radix key beyond this is compressed first (int64 must not overflow)
_INT32_LIMIT = 1 << 31  # a key whose whole range is below this is built in int32


def checked_qis(frame: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> list[str]:
    """The quasi-identifiers in order; raises naming a missing column or a hierarchy of another column."""
    if not isinstance(hierarchies, Mapping) or not hierarchies:
        raise ParameterError("Give a hierarchy for at least one quasi-identifier (a dict column -> Hierarchy).")
    for name, hierarchy in hierarchies.items():
        if not isinstance(hierarchy, Hierarchy):
            raise ParameterError(f"The hierarchy of {name!r} must be a Hierarchy. Got {type(hierarchy).__name__} instead.")
        if name not in frame.columns:
            raise InputError(f"The table has no column {name!r} (its columns: {', '.join(map(str, frame.columns))}).")
    return list(hierarchies)


def encode_frame(frame: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> list[np.ndarray]:
    """The value codes of each quasi-identifier column (:meth:`Hierarchy.encode`)."""
    return [hierarchy.encode(frame[name]) for name, hierarchy in hierarchies.items()]


def mixed_key(columns: Sequence[np.ndarray], radixes: Sequence[int]) -> tuple[np.ndarray, int, bool]:
    """One int64 key per row equal exactly when all codes are (codes below ``radixes``), the key range,
    and whether the key can be decoded (False if it had to be compressed to avoid overflow)."""
    small = math.prod(int(r) for r in radixes) < _INT32_LIMIT
    key = columns[0].astype(np.int32 if small else np.int64)
    space, exact = int(radixes[0]), True
    for column, radix in zip(columns[1:], radixes[1:]):
        if space * radix >= _KEY_LIMIT:
            key, uniques = pd.factorize(key)
            key, space, exact = key.astype(np.int64), max(len(uniques), 1), False
        np.multiply(key, radix, out=key)
        np.add(key, column, out=key)
        space *= int(radix)
    return key, space, exact


def _small(space: int, rows: int) -> bool:
    return space <= max(4 * rows, 1 << 16)


def group(columns: Sequence[np.ndarray], radixes: Sequence[int],
          weights: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct rows of ``columns`` (codes per column) and their total ``weights`` (default 1 each)."""
    keys, codes, counts = _group(columns, radixes, weights)
    return (_decode(keys, radixes) if keys is not None else codes), counts  # type: ignore[return-value]


def _group(columns: Sequence[np.ndarray], radixes: Sequence[int],
           weights: np.ndarray | None) -> tuple[np.ndarray | None, list[np.ndarray] | None, np.ndarray]:
    """:func:`group` with the distinct rows as their exact mixed-radix keys, not yet decoded (None when the key
    had to be compressed: then their codes)."""
    key, space, exact = mixed_key(columns, radixes)
    return _count(key, space, exact, weights, columns)


def _count(key: np.ndarray, space: int, exact: bool, weights: np.ndarray | None,
           columns: Sequence[np.ndarray] | None) -> tuple[np.ndarray | None, list[np.ndarray] | None, np.ndarray]:
    """:func:`_group` from the rows' mixed-radix ``key`` over ``space`` (``columns``: the codes, read only when the key
    is not ``exact``)."""
    if exact and _small(space, len(key)):
        sizes = np.bincount(key, weights=weights, minlength=space)
        keys = np.flatnonzero(sizes > 0)  # on a bool mask: about 3x faster than on the float sizes
        if space < _INT32_LIMIT:
            keys = keys.astype(np.int32)
        return keys, None, sizes[keys].astype(np.int64)
    number, uniques = pd.factorize(key)
    counts = np.bincount(number, weights=weights, minlength=len(uniques)).astype(np.int64)
    if exact:
        return uniques, None, counts
    first = np.empty(len(uniques), dtype=np.int64)
    first[number] = np.arange(len(number))  # any row of a class has the class's codes
    assert columns is not None
    return None, [column[first] for column in columns], counts


def row_class_sizes(columns: Sequence[np.ndarray], radixes: Sequence[int]) -> np.ndarray:
    """For each row, the number of rows with the same codes in every column."""
    key, space, exact = mixed_key(columns, radixes)
    if exact and _small(space, len(key)):
        return np.bincount(key, minlength=space)[key]
    number, uniques = pd.factorize(key)
    return np.bincount(number, minlength=len(uniques))[number]


def code_dtype(radix: int) -> type[np.integer]:
    """The smallest integer type that holds codes below ``radix``."""
    return np.uint8 if radix <= 1 << 8 else (np.uint16 if radix <= 1 << 16 else np.int32)


def _decode(keys: np.ndarray, radixes: Sequence[int]) -> list[np.ndarray]:
    codes = []
    for radix in reversed(radixes):
        keys, code = np.divmod(keys, radix)
        codes.append(code.astype(code_dtype(int(radix))))
    return codes[::-1]


class ClassTable:
    """The equivalence classes at one lattice node.

    Attributes
    ----------
    levels : tuple of int
        The node: one level per quasi-identifier.
    codes : tuple of numpy.ndarray
        Per quasi-identifier, the label code (at its level) of each class.
    counts : numpy.ndarray
        The number of records of each class (int64).
    key : numpy.ndarray or None
        The exact mixed-radix key of each class (radixes: the label counts at ``levels``), when known. A table
        rolled up with its key decodes ``codes`` only when they are read: most nodes of a search are only counted.
    """

    def __init__(self, levels: tuple[int, ...], codes: tuple[np.ndarray, ...] | None, counts: np.ndarray,
                 key: np.ndarray | None = None, radixes: Sequence[int] | None = None) -> None:
        if codes is None and (key is None or radixes is None):
            raise ValueError("a class table needs its codes or its keys and radixes")
        self.levels, self._counts, self.key = levels, counts, key
        self._codes, self._radixes = codes, radixes
        self._weights: np.ndarray | None = None
        self._blocks: tuple[list[tuple[int, int]], list[np.ndarray]] | None = None  # see :meth:`_block_codes`

    @property
    def codes(self) -> tuple[np.ndarray, ...]:
        if self._codes is None:
            assert self.key is not None and self._radixes is not None
            self._codes = tuple(_decode(self.key, self._radixes))
        return self._codes

    @property
    def counts(self) -> np.ndarray:
        """The number of records of each class (int64; made again from the compact counts of a cached table)."""
        counts = self._counts
        return counts if counts.dtype == np.int64 else counts.astype(np.int64)

    def compact(self) -> None:
        """Keep :attr:`counts` in the smallest unsigned type that holds them, and forget what a rollup from this table
        keeps to be reused (:attr:`weights`, the block codes): what a cached table needs (issue 34: a search's cache then
        holds its keys and counts in 5 to 8 bytes a class instead of 28). Every figure is the same; reading
        :attr:`counts` or rolling the table up again costs one conversion."""
        counts = self._counts
        if counts.dtype == np.int64 and len(counts):
            top = int(counts.max())
            small = next((t for t in (np.uint8, np.uint16, np.uint32) if top <= np.iinfo(t).max), None)
            if small is not None and int(counts.min()) >= 0:
                self._counts = counts.astype(small)
        self._weights = self._blocks = None

    @property
    def weights(self) -> np.ndarray:
        """:attr:`counts` as float64 (what ``bincount`` weighs with), kept: a table is often rolled up many times."""
        if self._weights is None:
            self._weights = self._counts.astype(np.float64)
        return self._weights

    def __len__(self) -> int:
        return len(self._counts)

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    def generalized(self, i: int, level: int, hierarchy: Hierarchy) -> np.ndarray:
        """The codes of quasi-identifier ``i`` of every class at ``level`` (>= this table's level)."""
        if level == self.levels[i]:
            return self.codes[i]
        mapping = hierarchy.level_map(self.levels[i], level)
        return np.take(mapping.astype(code_dtype(len(mapping) and int(mapping.max()) + 1), copy=False), self.codes[i])

    def _block_codes(self, hierarchies: Sequence[Hierarchy]) -> tuple[list[tuple[int, int]], list[np.ndarray]]:
        """This table's block plan and each row's block codes (:mod:`.blocks`), kept: a source is rolled up often (a
        rolled-up table's as int32, the aggregated records' as intp: see :mod:`.blocks`)."""
        if self._blocks is None:
            radixes = [len(hierarchy.labels(h)) for hierarchy, h in zip(hierarchies, self.levels)]
            plan = block_plan(radixes)
            exact = self.key is not None and self._radixes is not None and list(self._radixes) == radixes
            self._blocks = plan, block_codes(radixes, plan, key=self.key if exact else None,
                                             codes=None if exact else self.codes,
                                             dtype=np.int32 if exact and max(radixes) < _INT32_LIMIT else np.intp)
        return self._blocks

    def suppressed(self, k: int) -> int:
        """Records in classes smaller than ``k`` (those that suppression removes): a dot product with the mask, several
        times faster than a masked sum (issue 34: most nodes of a search are only counted)."""
        return int(np.dot(self.counts, self.counts < k))

    def rollup(self, levels: Sequence[int], hierarchies: Sequence[Hierarchy],
               columns: Sequence[np.ndarray] | None = None) -> ClassTable:
        """The table of a generalization ``levels`` (every level >= this table's) of this node.

        ``columns``, if given, are this table's codes already generalized to ``levels`` (a cache). Without them the
        keys are computed by lookups over blocks of columns (:mod:`.blocks`), whenever the node's key fits int64.
        """
        radixes = [len(hierarchy.labels(h)) for hierarchy, h in zip(hierarchies, levels)]
        space = math.prod(radixes)
        if columns is None and space < _KEY_LIMIT and len(levels) == len(self.levels):  # (fewer levels: a projection)
            plan, blocks = self._block_codes(hierarchies)
            maps = [hierarchy.level_map(lv, h) for hierarchy, lv, h in zip(hierarchies, self.levels, levels)]
            tables = lookup_tables(maps, radixes, plan, np.intp)  # intp: the index type bincount would convert to
            keys, codes, counts = _count(rolled_key(blocks, tables), space, True, self.weights, None)
        else:
            if columns is None:
                columns = [self.generalized(i, h, hierarchies[i]) for i, h in enumerate(levels)]
            keys, codes, counts = _group(columns, radixes, self.weights)
        return ClassTable(tuple(int(h) for h in levels), tuple(codes) if codes is not None else None, counts, keys, radixes)


def aggregate_records(frame: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> ClassTable:
    """The distinct level-0 quasi-identifier combinations of ``frame`` with their record counts."""
    codes = encode_frame(frame, hierarchies)
    radixes = [len(hierarchy.values) for hierarchy in hierarchies.values()]
    classes, counts = group(codes, radixes)
    return ClassTable((0,) * len(codes), tuple(classes), counts)
