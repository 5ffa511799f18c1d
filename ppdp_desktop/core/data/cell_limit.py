"""The most text one cell may hold: 1,048,576 characters (1 Mi).

A data table's cell is a value, a code or a note; a cell of millions of characters is a damaged file (a quote never
closed swallows the lines after it) or a hostile one: released unchanged it became a 370 MB ``release.csv``, and
drawn in the report it overflowed the font rasteriser. So a longer cell is refused when the file is read, before
any work, naming its column and data row. The limit is generous (a long clinical note is some thousands of
characters) and counted in characters, as a person counts them.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.errors import InputError

__all__ = ["MAX_CELL_CHARS", "check_cells", "too_long_cell"]

MAX_CELL_CHARS = 1 << 20


def too_long_cell(values: pa.Array | pa.ChunkedArray) -> tuple[int, int] | None:
    """``(row, characters)`` of the first cell of ``values`` (text) longer than :data:`MAX_CELL_CHARS` (row from
    0), or None."""
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)) or len(values) == 0:
        return None
    if (pc.max(pc.binary_length(values)).as_py() or 0) <= MAX_CELL_CHARS:  # bytes >= characters: none is longer
        return None
    lengths = pc.utf8_length(values)
    if (pc.max(lengths).as_py() or 0) <= MAX_CELL_CHARS:
        return None
    row = int(pc.index(pc.greater(lengths, MAX_CELL_CHARS), True).as_py())
    return row, int(lengths[row].as_py())


def check_cells(values: pa.Array | pa.ChunkedArray, column: str, source: str, first_row: int = 1,
                where: str = "") -> None:
    """Refuse (:class:`InputError`) a cell of ``values`` longer than :data:`MAX_CELL_CHARS`, naming the file
    ``source``, the column and its data row (``first_row``: the number of ``values``' first row; ``where``: more
    about where in the file, e.g. a part's first byte)."""
    found = too_long_cell(values)
    if found is None:
        return
    row, length = found
    raise InputError(f"{source}: column {column!r}, data row {first_row + row:,}{where} holds a cell of {length:,} "
                     f"characters; a cell may hold at most {MAX_CELL_CHARS:,} (1 Mi). Shorten that value, or check "
                     "the file (a quote that is never closed takes in the lines after it).", file=source,
                     column=column, row=first_row + row)
