"""A loaded table together with where it came from and its schema."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ppdp_desktop.core.data.digest import FileDigest
from ppdp_desktop.core.data.schema import Schema

if TYPE_CHECKING:
    from ppdp_desktop.core.data.blanks import BlankTreatment
    from ppdp_desktop.core.data.source_rows import SourceRows


@dataclass
class TableLabels:
    """SPSS/Stata labels of a table's columns, as read from the input file.

    variable_labels : column name -> its descriptive label.
    value_labels : column name -> {code: label}; the codes are the stored values (numbers as floats
        when read with pyreadstat), the labels what the loaded table shows instead.
    """

    variable_labels: dict[str, str] = field(default_factory=dict)
    value_labels: dict[str, dict[object, str]] = field(default_factory=dict)


@dataclass
class Dataset:
    """A table read from a file (or made in memory).

    Attributes
    ----------
    frame : the data; column names are strings.
    source : the file it was read from, if any (never written to).
    schema : each column's role and kind; roles start as insensitive.
    details : how it was read (format, delimiter, encoding, sheet), for messages and the report.
    labels : variable and value labels of an SPSS ``.sav`` / Stata ``.dta`` input, else None.
    digest : the name, size and SHA-256 of the file read whole (a release records them), else None.
    source_rows : each record's row (a worksheet) or line (a text file) in the file, for messages, else None.
    blank_cells : what was done with blank cells before a job (filled, or their records left out), column by column
        (:func:`~ppdp_desktop.core.data.blanks.treat_blanks`); empty for a table as it was read.
    """

    frame: pd.DataFrame
    source: Path | None = None
    schema: Schema = field(default_factory=Schema)
    details: dict[str, str] = field(default_factory=dict)
    labels: TableLabels | None = None
    digest: FileDigest | None = None
    source_rows: SourceRows | None = None
    blank_cells: tuple[BlankTreatment, ...] = ()

    def __post_init__(self) -> None:
        if not self.schema.attributes:
            self.schema = Schema.infer(self.frame)

    @property
    def n_records(self) -> int:
        return len(self.frame)

    @property
    def label(self) -> str:
        """The name to use in messages: the file's name, or "the data"."""
        return self.source.name if self.source is not None else "the data"
