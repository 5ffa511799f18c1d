"""Writing a table as UTF-8 CSV with pyarrow's fast writer, directly or atomically (temporary file, rename).

The raw writer: every CSV the app writes goes through :func:`ppdp_desktop.core.data.formats.write_csv` (or its
``write_csv_atomic``), which puts the one formula guard in front of it.
"""
from __future__ import annotations

import codecs
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ppdp_desktop.core.errors import ReleaseError

#: The encoding name a reader passes to read back what :func:`write_csv` wrote with ``bom=True``.
ENCODING_WITH_BOM = "utf-8-sig"


def csv_encoding(bom: bool) -> str:
    """The name of the encoding :func:`write_csv` writes (``"utf-8-sig"`` with a byte-order mark)."""
    return ENCODING_WITH_BOM if bom else "utf-8"


def write_csv(table: pd.DataFrame, path: Path, sep: str, *, bom: bool = False) -> None:
    """UTF-8 CSV with a header, text cells quoted, missing values as empty cells (pyarrow's fast writer).

    With ``bom`` the file starts with the UTF-8 byte-order mark (``EF BB BF``), which Excel needs to
    read the file as UTF-8 (else "Besançon" shows as "BesanÃ§on"). The mark goes into the same
    output stream before the writer streams the rows, so the file is written once.
    """
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    options = pacsv.WriteOptions(delimiter=sep, quoting_style="needed")
    with pa.OSFile(str(path), "wb") as sink:
        if bom:
            sink.write(codecs.BOM_UTF8)
        pacsv.write_csv(arrow, sink, write_options=options)


def write_csv_atomic(table: pd.DataFrame, path: Path, sep: str = ",", *, bom: bool = False) -> None:
    """Write a CSV through a temporary file in the same folder, renamed into place when complete."""
    path = Path(path)
    if not path.resolve().parent.is_dir():
        raise ReleaseError(f"The folder {path.resolve().parent} does not exist.")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        write_csv(table, tmp, sep, bom=bom)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
