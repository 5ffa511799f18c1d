"""Writing a table as UTF-8 CSV with pyarrow's fast writer, directly or atomically (temporary file, rename)."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ppdp_desktop.core.errors import ReleaseError


def write_csv(table: pd.DataFrame, path: Path, sep: str) -> None:
    """UTF-8 CSV with a header, text cells quoted, missing values as empty cells (pyarrow's fast writer)."""
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    options = pacsv.WriteOptions(delimiter=sep, quoting_style="needed")
    pacsv.write_csv(arrow, str(path), write_options=options)


def write_csv_atomic(table: pd.DataFrame, path: Path, sep: str = ",") -> None:
    """Write a CSV through a temporary file in the same folder, renamed into place when complete."""
    path = Path(path)
    if not path.resolve().parent.is_dir():
        raise ReleaseError(f"The folder {path.resolve().parent} does not exist.")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        write_csv(table, tmp, sep)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
