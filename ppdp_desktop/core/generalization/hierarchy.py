"""One quasi-identifier's generalization levels, as integer code arrays for full-domain generalization.

A :class:`Hierarchy` lists the attribute's values (their :func:`~ppdp_desktop.core.data.domain.label_text`)
and, for every level ``h = 0 .. H``, the code of each value's label at that level: level 0 is the value
itself, level ``H`` a single most general label (``"*"``). Generalizing a column is then one gather,
``level_codes[h][value_codes]``, whatever the number of records.

Missing values (None, NaN, ``""``) are one more value, ``""``, always the last one: at level 0 they stay
missing (an empty cell), at every level >= 1 they become the most general label, as a leaf directly under
the root would. So a missing value is never a class of its own above level 0, and every hierarchy can
encode any column whose other values it knows.

Levels must nest: two values that share a label at level ``h`` share one at ``h + 1`` (checked on every
build); this is what makes the generalization lattice monotone. Labels are compared as text, so equal
labels at one level are one class in the released table too.

The constructors live here; :mod:`~ppdp_desktop.core.generalization.sources` and
:mod:`~ppdp_desktop.core.generalization.intervals` turn taxonomies, ARX rows and numbers into label rows.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.errors import ParameterError, TaxonomyError
from ppdp_desktop.core.generalization.intervals import cut_rows, width_rows
from ppdp_desktop.core.generalization.sources import check_covered, pad_rows, read_arx_csv, taxonomy_rows
from ppdp_desktop.core.taxonomy.tree import Taxonomy, list_values

MISSING = ""
ROOT = "*"


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """The generalization levels ``0 .. height`` of one attribute (see the module docstring).

    Attributes
    ----------
    attribute : str
        The column the hierarchy generalizes.
    values : tuple of str
        The values (level-0 labels); the missing value ``""`` is always last.
    level_codes : tuple of numpy.ndarray
        ``level_codes[h][v]``: the code (an index into ``level_labels[h]``) of value ``v``'s label at level ``h``.
    level_labels : tuple of tuple of str
        The distinct labels of each level.
    """

    attribute: str
    values: tuple[str, ...]
    level_codes: tuple[np.ndarray, ...]
    level_labels: tuple[tuple[str, ...], ...]

    # --- constructors -------------------------------------------------------------------------

    @classmethod
    def from_rows(cls, attribute: str, rows: Sequence[Sequence[str]]) -> Hierarchy:
        """Build from one row per value: ``[value, label at level 1, ..., label at level H]``.

        Rows must have equal length (pad them first) and non-empty labels. If the last column has more
        than one label, a level ``"*"`` is added on top. Raises :class:`TaxonomyError` naming the
        attribute for a duplicate value or levels that do not nest.
        """
        where = f"Hierarchy of {attribute!r}"
        table = [list(row) for row in rows]
        if not table:
            raise TaxonomyError(f"{where}: has no values.")
        width = len(table[0])
        for row in table:
            if len(row) != width:
                raise TaxonomyError(f"{where}: the row of {row[0]!r} has {len(row)} labels, the first row {width}.")
            if not all(isinstance(cell, str) and cell.strip() for cell in row):
                raise TaxonomyError(f"{where}: the row of {row[0]!r} has an empty label; every level needs one.")
        columns = [np.array([row[h] for row in table], dtype=object) for h in range(width)]
        values, counts = np.unique(columns[0].astype(str), return_counts=True)
        if (counts > 1).any():
            raise TaxonomyError(f"{where}: " + list_values(values[counts > 1].tolist(), "values with more than one row"))
        if len(set(columns[-1].tolist())) > 1 or width == 1:
            columns.append(np.full(len(table), ROOT, dtype=object))
        top = columns[-1][0]
        if top in set(columns[0].tolist()):
            raise TaxonomyError(f"{where}: the value {top!r} is also the most general label; rename one of them.")
        columns = [np.append(col, MISSING if h == 0 else top) for h, col in enumerate(columns)]
        codes, labels = [], []
        for col in columns:
            level_codes, uniques = pd.factorize(col)
            codes.append(level_codes.astype(np.int32))
            labels.append(tuple(str(u) for u in uniques))
        _check_nested(attribute, columns, codes)
        return cls(attribute, tuple(columns[0].tolist()), tuple(codes), tuple(labels))

    @classmethod
    def from_taxonomy(cls, taxonomy: Taxonomy, values: Iterable[object] | None = None) -> Hierarchy:
        """Levels of a taxonomy tree: level ``h`` of a leaf is its ancestor ``h`` steps up, capped at the
        root; the height is the depth of the deepest leaf. ``values`` (the data column), if given, must
        all be leaves; else a :class:`TaxonomyError` names the column and the values to add."""
        rows = taxonomy_rows(taxonomy)
        if values is not None:
            check_covered(taxonomy.attribute, values, [r[0] for r in rows], inner=taxonomy)
        return cls.from_rows(taxonomy.attribute, rows)

    @classmethod
    def from_arx_rows(cls, attribute: str, rows: Iterable[Sequence[str]], values: Iterable[object] | None = None) -> Hierarchy:
        """ARX hierarchy rows (value, its label at level 1, 2, ...); short rows are padded with their last
        label. ``values`` (the data column), if given, must all have a row."""
        padded = pad_rows(attribute, rows)
        if values is not None:
            check_covered(attribute, values, [r[0] for r in padded])
        return cls.from_rows(attribute, padded)

    @classmethod
    def from_arx_csv(cls, path: str | os.PathLike[str], attribute: str, values: Iterable[object] | None = None) -> Hierarchy:
        """Read an ARX hierarchy CSV (``;``-separated, no header); see :meth:`from_arx_rows`."""
        rows, name = read_arx_csv(path)
        try:
            return cls.from_arx_rows(attribute, rows, values)
        except TaxonomyError as exc:
            raise TaxonomyError(f"{name}: {exc}") from None

    @classmethod
    def from_intervals(cls, attribute: str, values: Iterable[object], widths: Sequence[float]) -> Hierarchy:
        """Numeric levels of growing width above the values (``[lo, lo + w)`` bins aligned at 0, e.g.
        ``"20-24"``), then ``"*"``; see :func:`~ppdp_desktop.core.generalization.intervals.width_rows`."""
        return cls.from_rows(attribute, width_rows(attribute, values, widths))

    @classmethod
    def from_dates(cls, attribute: str, values: Iterable[object]) -> Hierarchy:
        """Dates, then their month, year and decade; see :func:`~ppdp_desktop.core.generalization.dates.date_rows`."""
        from ppdp_desktop.core.generalization.dates import date_rows

        return cls.from_rows(attribute, date_rows(attribute, values))

    @classmethod
    def from_cuts(cls, attribute: str, values: Iterable[object], levels: Sequence[Sequence[float]]) -> Hierarchy:
        """Numeric levels from explicit cut points per level, finest first (each level's cuts a subset of
        the level below); see :func:`~ppdp_desktop.core.generalization.intervals.cut_rows`."""
        return cls.from_rows(attribute, cut_rows(attribute, values, levels))

    # --- queries ------------------------------------------------------------------------------

    @property
    def height(self) -> int:
        """``H``: the number of generalization steps (level ``H`` is the single most general label)."""
        return len(self.level_codes) - 1

    def labels(self, level: int) -> tuple[str, ...]:
        """The distinct labels of ``level``; the codes of :meth:`generalize` index into them."""
        return self.level_labels[self._checked(level)]

    def label_array(self, level: int) -> np.ndarray:
        """:meth:`labels` as an object array, so that ``label_array(h)[generalize(codes, h)]`` is text."""
        return np.array(self.labels(level), dtype=object)

    def generalize(self, codes: np.ndarray, level: int) -> np.ndarray:
        """The level-``level`` label codes of value codes (from :meth:`encode`), vectorized."""
        return self.level_codes[self._checked(level)][codes]

    def level_map(self, source: int, target: int) -> np.ndarray:
        """For ``source <= target``: the level-``target`` code of each level-``source`` label (nesting
        makes it well defined), so that coarser levels can be computed from finer ones."""
        mapping = np.zeros(len(self.labels(source)), dtype=np.int32)
        mapping[self.level_codes[source]] = self.level_codes[self._checked(target)]
        return mapping

    def encode(self, column: Iterable[object]) -> np.ndarray:
        """The value code of every cell of ``column`` (compared as ``label_text``; missing -> ``""``).

        Raises :class:`TaxonomyError` naming the attribute and the values the hierarchy lacks.
        """
        series = column if isinstance(column, pd.Series) else pd.Series(list(column), dtype=object)
        cell_codes, uniques = pd.factorize(series, use_na_sentinel=True)
        texts = [label_text(u) for u in uniques]
        found = self._index.get_indexer(texts) if texts else np.zeros(0, dtype=np.intp)
        if (found < 0).any():
            unknown = [t for t, f in zip(texts, found) if f < 0]
            raise TaxonomyError(
                f"Column {self.attribute!r} has " + list_values(unknown, "values missing from its hierarchy")
                + "; add them to the hierarchy."
            )
        lookup = np.append(found, len(self.values) - 1).astype(np.int32)  # -1 (missing) -> ""
        return lookup[cell_codes]

    def chain(self, value: str) -> list[str]:
        """The labels of ``value`` (a level-0 label) from level 0 up to the top: what its generalization goes through."""
        at = self._index.get_loc(value)
        return [self.level_labels[h][self.level_codes[h][at]] for h in range(self.height + 1)]

    @property
    def example(self) -> str:
        """A value from the middle of the value list, to show what a level does (not data-driven)."""
        return self.values[(len(self.values) - 1) // 2] if len(self.values) > 1 else self.values[0]

    @cached_property
    def _index(self) -> pd.Index:
        return pd.Index(self.values, dtype=object)

    def _checked(self, level: int) -> int:
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= self.height:
            raise ParameterError(
                f"The level of {self.attribute!r} must be a whole number from 0 to {self.height}. Got {level!r} instead."
            )
        return int(level)


def _check_nested(attribute: str, columns: list[np.ndarray], codes: list[np.ndarray]) -> None:
    """Raise :class:`TaxonomyError` at the first level whose labels do not determine the next level's."""
    for level in range(len(codes) - 1):
        here, above = codes[level], codes[level + 1]
        parent = np.empty(here.max() + 1, dtype=np.int32)
        parent[here] = above
        bad = np.flatnonzero(parent[here] != above)
        if bad.size:
            i = bad[0]
            j = np.flatnonzero((here == here[i]) & (above == parent[here[i]]))[0]
            raise TaxonomyError(
                f"Hierarchy of {attribute!r} is not nested at level {level}: the label {columns[level][i]!r} "
                f"becomes {columns[level + 1][i]!r} at level {level + 1} for the value {columns[0][i]!r} but "
                f"{columns[level + 1][j]!r} for {columns[0][j]!r}; values that share a label must share the "
                "next level's label too."
            )
