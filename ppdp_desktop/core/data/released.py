"""A release read back from its folder or zip: ``release.json`` and the data file, every cell as text.

Below the report and release packages (both read releases) and the methods (each re-checks its own
part of a release), so none of them needs the package writer to read one.
"""
from __future__ import annotations

import atexit
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.bounded_json import read_json
from ppdp_desktop.core.data.checksums import DATA_FILES
from ppdp_desktop.core.data.domain import _indexer, label_text
from ppdp_desktop.core.data.release_zip import extract
from ppdp_desktop.core.errors import ReleaseError

#: format 2 (issue 18): perturbation matrices are published by their parameters (a retention per value or per
#: sub-table, ``matrix_form``), no longer as dense m x m arrays; format-1 releases are still read and verified
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
DATA_FILE = "release.csv"
README_FILE = "README.txt"
META_FILE = "release.json"
#: the largest release.json read (a 70,000-value domain's parameters take a few tens of MB)
MAX_META_BYTES = 512 * 1024 ** 2


@dataclass
class LoadedRelease:
    """A release read back: its metadata and its table with every cell as text."""

    folder: Path
    metadata: dict
    table: pd.DataFrame
    #: a release too large to hold is read back in part (``ppdp_desktop.core.streaming.readback``): the data
    #: file's columns and records, and whether its pseudonyms were found distinct while it was read
    file_columns: list[str] | None = None
    file_records: int | None = None
    distinct_pseudonyms: bool | None = None

    @property
    def column_names(self) -> list[str]:
        """The data file's columns (``table`` may hold only some of them)."""
        return list(self.file_columns) if self.file_columns is not None else [str(c) for c in self.table.columns]

    @property
    def n_rows(self) -> int:
        """The data file's records."""
        return int(self.file_records) if self.file_records is not None else len(self.table)

    def close(self) -> None:
        """Remove the private folder a zipped release was unpacked into (a folder release is left alone)."""
        if self.folder in _EXTRACTED:
            _EXTRACTED.remove(self.folder)
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LoadedRelease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sensitive_entry(self, attribute: str) -> dict:
        for entry in self.metadata.get("sensitive", []):
            if entry.get("attribute") == attribute:
                return entry
        names = [e.get("attribute") for e in self.metadata.get("sensitive", [])]
        raise ReleaseError(f"{attribute!r} is not a perturbed attribute of this release; it has: {', '.join(map(str, names))}.")

    def codes(self, entry: dict) -> np.ndarray:
        """The released column of ``entry`` as codes into its ``values`` (int64, or int32 for a categorical column
        of a large release read back in part); unknown cells are an error."""
        labels = [label_text(v) for v in entry["values"]]
        column = self.table[entry["attribute"]]
        codes = _indexer(pd.Index(labels), column)  # pyarrow's index_in: no Python object per record
        if (codes < 0).any():
            bad = column[codes < 0].iloc[0]
            raise ReleaseError(
                f"{DATA_FILE} holds value {bad!r} in column {entry['attribute']!r}, which is not in the published domain."
            )
        return codes if codes.dtype == np.int32 else codes.astype(np.int64)  # int32 from a categorical: 4 bytes


#: the fields every release.json has, and the JSON type each must be
SHAPE = {"format_version": int, "method": str, "n_records": int}
#: optional fields and their types
OPTIONAL_SHAPE = {"data_file": str, "format": str, "csv": dict, "attributes": dict, "sensitive": list,
                  "recoded": list, "randomized": list, "reidentification": dict, "pseudonym_column": str,
                  "parameters": dict, "signer": dict, "provenance": dict}


_KIND_WORDS = {int: "a whole number", str: "text", dict: "an object", list: "a list"}


def check_shape(metadata: object, name: str = META_FILE) -> None:
    """Refuse a release.json that is not an object with the fields (and JSON types) a release has."""
    if not isinstance(metadata, dict):
        raise ReleaseError(f"{name} is not a JSON object; the release is damaged or not a release.")
    for key, kind in SHAPE.items():
        value = metadata.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ReleaseError(f"{name}: field {key!r} is missing or not {_KIND_WORDS[kind]}; the release is damaged.")
    for key, kind in OPTIONAL_SHAPE.items():
        if key in metadata and metadata[key] is not None and not isinstance(metadata[key], kind):
            raise ReleaseError(f"{name}: field {key!r} is not {_KIND_WORDS[kind]}; the release is damaged.")
    data_file = metadata.get("data_file")
    if data_file is not None and data_file not in DATA_FILES:  # never a path: nothing outside the release is read
        shown = repr(data_file) if len(repr(data_file)) <= 80 else repr(data_file)[:77] + "..."
        raise ReleaseError(f"{name}: field 'data_file' is {shown}, not one of {', '.join(DATA_FILES)}; the release "
                           "is damaged or altered.")
    for key in ("sensitive", "recoded"):
        if any(not isinstance(entry, dict) for entry in metadata.get(key) or []):
            raise ReleaseError(f"{name}: an entry of {key!r} is not an object; the release is damaged.")
    if any(not isinstance(a, dict) for a in (metadata.get("attributes") or {}).values()):
        raise ReleaseError(f"{name}: an entry of 'attributes' is not an object; the release is damaged.")


def read_release(path: str | Path) -> LoadedRelease:
    """Read ``release.json`` and the data file (any format, or a ``.zip`` package), all cells as text."""
    folder = Path(path)
    if folder.is_file() and zipfile.is_zipfile(folder):
        folder = extract(folder)
        _EXTRACTED.append(folder)
    try:
        metadata = _read_metadata(folder, path)
    except BaseException:
        LoadedRelease(folder, {}, pd.DataFrame()).close()
        raise
    from ppdp_desktop.core.data.formats import read_table

    data_path = folder / metadata.get("data_file", DATA_FILE)
    sep = metadata.get("csv", {}).get("delimiter", ",")
    guarded = "formula_guard" in (metadata.get("csv") or {})  # releases before the guard hold raw cells
    try:
        table = read_table(data_path, metadata.get("format", "csv"), sep=sep, formula_guard=guarded)
    except BaseException:
        LoadedRelease(folder, metadata, pd.DataFrame()).close()
        raise
    return LoadedRelease(folder, metadata, table)


def _read_metadata(folder: Path, path: str | Path) -> dict:
    meta_path = folder / META_FILE
    if not meta_path.is_file():
        raise ReleaseError(f"{path} is not a release: {META_FILE} is missing.")
    metadata = read_json(meta_path, str(meta_path), error=ReleaseError, max_bytes=MAX_META_BYTES)
    check_shape(metadata, meta_path.name)
    if metadata.get("format_version") not in READABLE_VERSIONS:
        raise ReleaseError(f"{meta_path} has format_version {metadata.get('format_version')!r}; this app reads "
                           f"{' and '.join(map(str, READABLE_VERSIONS))}.")
    return metadata


#: the private folders zipped releases were unpacked into, removed when closed or when the process ends
_EXTRACTED: list[Path] = []


@atexit.register
def _remove_extracted() -> None:
    for folder in _EXTRACTED:
        shutil.rmtree(folder, ignore_errors=True)
