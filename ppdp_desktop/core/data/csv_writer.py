"""Writing a table as UTF-8 CSV with pyarrow's fast writer, directly or atomically (temporary file, rename).

The raw writer: every CSV the app writes goes through :func:`ppdp_desktop.core.data.formats.write_csv` (or its
``write_csv_atomic``), which puts the one formula guard in front of it.
"""
from __future__ import annotations

import codecs
import hashlib
import os
from collections.abc import Callable, Iterable
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
    write_csv_batches([pa.Table.from_pandas(table, preserve_index=False)], Path(path), sep, bom=bom)


class HashingFile:
    """A binary file that computes the SHA-256 of what is written to it (pyarrow's writer streams into it, so a
    data file's checksum costs no second read)."""

    def __init__(self, handle) -> None:
        self.handle, self.digest, self.closed = handle, hashlib.sha256(), False

    def write(self, data) -> int:
        data = bytes(data)
        self.digest.update(data)
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()

    def writable(self) -> bool:
        return True

    def close(self) -> None:  # pyarrow closes what it wraps; the caller owns the real file
        self.closed = True


def write_csv_batches(tables: Iterable[pa.Table], path: Path, sep: str, *, bom: bool = False,
                      after: Callable[[int], None] | None = None) -> tuple[str, int]:
    """Write ``tables`` in order as one CSV (header once, the byte-order mark first if ``bom``; as :func:`write_csv`
    writes one table); return its SHA-256, computed while writing, and the records written. ``after(records)`` is
    called after each table (progress, cancel). The in-memory job writes its one table so, the streamed job its
    sorted buckets."""
    written = 0
    with open(path, "wb") as handle:
        sink = HashingFile(handle)
        if bom:
            sink.write(codecs.BOM_UTF8)
        for i, table in enumerate(tables):
            options = pacsv.WriteOptions(delimiter=sep, quoting_style="needed", include_header=i == 0)
            pacsv.write_csv(table, sink, write_options=options)
            written += table.num_rows
            del table
            pa.default_memory_pool().release_unused()  # one table at a time: give its memory back
            if after is not None:
                after(written)
    return sink.digest.hexdigest(), written


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
