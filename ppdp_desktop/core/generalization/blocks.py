"""A rollup's mixed-radix keys by table lookups over blocks of columns (issue 34: the sparse lattice search).

Rolling a class table up to a coarser node computes, per row, the key ``sum_i map_i[code_i] * M_i`` (``map_i``: the
quasi-identifier's level map, ``M_i``: the product of the node's label counts after ``i``). Done column by column that
is a gather, a multiply and an add per column over hundreds of thousands of rows for every node. Here a table's
columns are cut into contiguous blocks whose joint code space is small (at most :data:`BLOCK_SPACE` combinations);
each row's block codes are computed once per source table (from its key when it has one: one division each; for
the aggregated records, the most used source, kept as ``intp``, the index type ``numpy.take`` would otherwise convert
them to on every call; for the smaller rolled-up tables as int32, half the memory), and a
node's key is then one lookup per block (``T_b[block_code]``, ``T_b`` built over the block's code space) and one add
between blocks: two gathers for five quasi-identifiers instead of five gathers and eight arithmetic passes.

The keys are exactly those of :func:`~.table.mixed_key` for the same codes (the same sums), so tables, and every
answer built on them, are unchanged.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

BLOCK_SPACE = 1 << 16  # the largest joint code space of a block (its lookup table: 256 KiB of int32)


def block_plan(radixes: Sequence[int]) -> list[tuple[int, int]]:
    """Contiguous column ranges ``[start, stop)`` whose product of ``radixes`` is at most :data:`BLOCK_SPACE`
    (a single column of more labels is a block of its own)."""
    plan, start, space = [], 0, 1
    for i, radix in enumerate(radixes):
        if i > start and space * int(radix) > BLOCK_SPACE:
            plan.append((start, i))
            start, space = i, 1
        space *= int(radix)
    plan.append((start, len(radixes)))
    return plan


def block_codes(radixes: Sequence[int], plan: Sequence[tuple[int, int]], key: np.ndarray | None = None,
                codes: Sequence[np.ndarray] | None = None, dtype: type[np.integer] = np.intp) -> list[np.ndarray]:
    """Each row's code within each block of ``plan``: from the rows' exact mixed-radix ``key`` over ``radixes``
    (preferred: a division per block) or else from their per-column ``codes``; as ``dtype`` (``intp``, what
    ``numpy.take`` reads without converting; int32 for half the memory)."""
    out = []
    for start, stop in plan:
        space = math.prod(int(r) for r in radixes[start:stop])
        if key is not None:
            after = math.prod(int(r) for r in radixes[stop:])
            part = key // after if after > 1 else key
            if start > 0:
                part = part % space
            out.append(part.astype(dtype))
        else:
            assert codes is not None
            part = codes[start].astype(np.intp)
            for i in range(start + 1, stop):
                part *= int(radixes[i])
                part += codes[i]
            out.append(part.astype(dtype, copy=False))
    return out


def lookup_tables(maps: Sequence[np.ndarray], target: Sequence[int], plan: Sequence[tuple[int, int]],
                  dtype: type[np.integer]) -> list[np.ndarray]:
    """Per block of ``plan``, the part of the target key of each block code: ``maps[i]`` sends column ``i``'s source
    codes to its target codes, whose radixes are ``target``."""
    multipliers = [math.prod(int(r) for r in target[i + 1:]) for i in range(len(target))]
    tables = []
    for start, stop in plan:
        table = maps[start].astype(dtype) * dtype(multipliers[start])
        for i in range(start + 1, stop):
            part = maps[i].astype(dtype) * dtype(multipliers[i])
            table = np.add.outer(table, part).ravel()
        tables.append(table)
    return tables


def rolled_key(blocks: Sequence[np.ndarray], tables: Sequence[np.ndarray]) -> np.ndarray:
    """The target key of every row: the sum over blocks of the block table at the row's block code."""
    key = np.take(tables[0], blocks[0], mode="clip")  # codes are in range: "clip" only skips the bounds check
    for codes, table in zip(blocks[1:], tables[1:]):
        np.add(key, np.take(table, codes, mode="clip"), out=key)
    return key
