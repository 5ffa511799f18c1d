"""Label rows (``[value, level 1, ..., level H]``) from a taxonomy tree or ARX hierarchy rows.

These feed :meth:`Hierarchy.from_rows <ppdp_desktop.core.generalization.hierarchy.Hierarchy.from_rows>`.
Loops here run over the hierarchy's values (hundreds), never over records.
"""
from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.sniffing import decode_unset
from ppdp_desktop.core.errors import InputError, TaxonomyError
from ppdp_desktop.core.taxonomy.tree import Taxonomy, data_labels, list_values


def taxonomy_rows(taxonomy: Taxonomy) -> list[list[str]]:
    """One row per leaf: the leaf, then its ancestor ``h`` steps up at level ``h``, capped at the root.

    The height is the depth of the deepest leaf (at least 1, so that level 1 is the root for a flat tree).
    """
    height = max(taxonomy.depth, 1)
    rows = []
    for leaf in taxonomy.leaves():
        path = [node.label for node in leaf.path()]
        rows.append([path[min(h, len(path) - 1)] for h in range(height + 1)])
    if not rows:
        raise TaxonomyError(f"Taxonomy of {taxonomy.attribute!r} has no values; add the column's values under its root.")
    return rows


def pad_rows(attribute: str, rows: Iterable[Sequence[str]]) -> list[list[str]]:
    """ARX rows as lists of equal length: a short row is padded with its own last label (so its value
    reaches that label early and keeps it above)."""
    table = [[cell if isinstance(cell, str) else label_text(cell) for cell in row] for row in rows]
    table = [row for row in table if any(cell.strip() for cell in row)]
    if not table:
        raise TaxonomyError(f"Hierarchy of {attribute!r} has no rows; an ARX hierarchy has one row per value.")
    width = max(len(row) for row in table)
    return [row + [row[-1]] * (width - len(row)) for row in table]


def check_covered(attribute: str, values: Iterable[object], known: Sequence[str], inner: Taxonomy | None = None) -> None:
    """Raise :class:`TaxonomyError` naming the column and the data values (as ``label_text``; missing
    ones need nothing) that are not among ``known``; ``inner`` tells generalizations from absent values."""
    have = set(known)
    absent = [v for v in data_labels(values) if v not in have]
    if not absent:
        return
    generalizations = [v for v in absent if inner is not None and v in inner]
    if generalizations:
        raise TaxonomyError(
            f"Column {attribute!r} has " + list_values(generalizations, "values that are generalizations in its taxonomy")
            + "; a data value must be a leaf: add it under one of them."
        )
    raise TaxonomyError(
        f"Column {attribute!r} has " + list_values(absent, "values missing from its hierarchy") + "; add them to the hierarchy."
    )


def read_arx_csv(path: str | os.PathLike[str]) -> tuple[list[list[str]], str]:
    """The rows of an ARX hierarchy file and its name (``;``-separated, ``,`` if there is no ``;``;
    UTF-8, UTF-16 or UTF-8 with BOM, else the encoding told from its letters, refused when it cannot be told;
    a trailing separator on every row is ignored)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TaxonomyError(f"Cannot read the hierarchy file {str(path)!r}: {exc.strerror or exc}.") from None
    text = _decode(data, path.name)
    sep = ";" if ";" in text else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    try:
        rows = [row for row in reader if any(cell.strip() for cell in row)]
    except csv.Error as exc:
        raise TaxonomyError(f"{path.name}, line {reader.line_num}: {exc}.") from None
    if rows and all(len(row) > 1 and row[-1] == "" for row in rows):
        rows = [row[:-1] for row in rows]
    return rows, path.name


def _decode(data: bytes, name: str) -> str:
    """The text of a hierarchy file, its encoding sniffed as a data file's is (refused when it cannot be told)."""
    try:
        return decode_unset(data, name)
    except InputError as exc:
        raise TaxonomyError(exc.message, file=exc.file, allowed=exc.allowed) from None
