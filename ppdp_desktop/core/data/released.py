"""A release read back from its folder or zip: ``release.json`` and the data file, every cell as text.

Below the report and release packages (both read releases) and the methods (each re-checks its own
part of a release), so none of them needs the package writer to read one.
"""
from __future__ import annotations

import atexit
import re
import shutil
import struct
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.bounded_json import read_json
from ppdp_desktop.core.data.domain import _indexer, label_text
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
    for key in ("sensitive", "recoded"):
        if any(not isinstance(entry, dict) for entry in metadata.get(key) or []):
            raise ReleaseError(f"{name}: an entry of {key!r} is not an object; the release is damaged.")
    if any(not isinstance(a, dict) for a in (metadata.get("attributes") or {}).values()):
        raise ReleaseError(f"{name}: an entry of 'attributes' is not an object; the release is damaged.")


def read_release(path: str | Path) -> LoadedRelease:
    """Read ``release.json`` and the data file (any format, or a ``.zip`` package), all cells as text."""
    folder = Path(path)
    if folder.is_file() and zipfile.is_zipfile(folder):
        folder = _extract(folder)
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


#: a zipped release is unpacked only up to this size (a zip bomb stops here)
MAX_UNZIPPED_BYTES = 4 * 1024 ** 3
_EXTRACTED: list[Path] = []


def _extract(archive: Path) -> Path:
    """Unpack a zipped release into a private temporary folder (0700), refusing folders, hidden names,
    duplicate names (two tools could show two different files) and more than :data:`MAX_UNZIPPED_BYTES`.
    The folder is removed when the process ends (and at once on a refusal)."""
    target = Path(tempfile.mkdtemp(prefix="ppdp-release-"))
    try:
        with zipfile.ZipFile(archive) as zipped:
            infos = zipped.infolist()
            names = [info.filename for info in infos]
            for name in names:  # what this app writes; no folder, no name Windows would change (trailing dot, ':')
                if not _PLAIN_NAME.fullmatch(name) or name.endswith("."):
                    raise ReleaseError(f"{archive.name} holds {name!r}; a release zip holds plain files only.")
            for info in infos:
                if info.flag_bits & 0x1:
                    raise ReleaseError(f"{archive.name}: {info.filename} is encrypted; a release zip is not.")
            _check_layout(archive, zipped, infos)
            # two names that one file system keeps apart and another merges (case, Unicode composition) are
            # two files to one tool and one to the next: refused like exact duplicates
            folded = [unicodedata.normalize("NFC", n).casefold() for n in names]
            duplicate = next((n for n, f in zip(names, folded) if folded.count(f) > 1), None)
            if duplicate is not None:
                raise ReleaseError(f"{archive.name} holds {duplicate!r} twice; a release zip holds each file once.")
            declared = sum(info.file_size for info in infos)
            if declared > MAX_UNZIPPED_BYTES:  # said before anything is written (the count below is what binds)
                raise ReleaseError(f"{archive.name} unpacks to more than {_size(MAX_UNZIPPED_BYTES)}; "
                                   "it is not a release this app wrote.")
            total = 0
            for info in infos:
                with zipped.open(info) as source, (target / info.filename).open("wb") as sink:
                    while block := source.read(1 << 20):
                        total += len(block)
                        if total > MAX_UNZIPPED_BYTES:
                            raise ReleaseError(f"{archive.name} unpacks to more than {_size(MAX_UNZIPPED_BYTES)}; "
                                               "it is not a release this app wrote.")
                        sink.write(block)
    except (zipfile.BadZipFile, NotImplementedError, struct.error) as exc:  # NotImplementedError: a compression
        shutil.rmtree(target, ignore_errors=True)                           # method zipfile cannot read
        raise ReleaseError(f"{archive.name} is not a readable zip file: {exc}.") from exc
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    _EXTRACTED.append(target)
    return target


_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_DESCRIPTOR = b"PK\x07\x08"
#: a zip's local file header (APPNOTE 4.3.7) as :mod:`zipfile` reads it: 30 bytes; the lengths of the file's
#: name and of its extra field are its fields 10 and 11
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_NAME_LENGTH, _EXTRA_LENGTH = 10, 11


def _check_layout(archive: Path, zipped: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> None:
    """The files follow one another from the first byte to the central directory, nothing before, between
    or hidden: a tool that reads the local headers in turn (streaming) then sees exactly the files a tool
    that reads the central directory sees (two zips glued together, or a file hidden in a gap, are refused)."""
    position = 0
    with open(archive, "rb") as raw:
        for info in sorted(infos, key=lambda i: i.header_offset):
            if info.header_offset != position:
                break
            raw.seek(position)
            fields = _LOCAL_HEADER.unpack(raw.read(_LOCAL_HEADER.size))
            position += _LOCAL_HEADER.size + fields[_NAME_LENGTH] + fields[_EXTRA_LENGTH] + info.compress_size
            if info.flag_bits & 0x08:  # a data descriptor follows the data: [signature] crc, sizes
                raw.seek(position)
                position += 4 if raw.read(4) == _DESCRIPTOR else 0
                position += 20 if max(info.compress_size, info.file_size) >= 0xFFFFFFFF else 12
        else:
            if position == zipped.start_dir:
                return
    raise ReleaseError(f"{archive.name} holds bytes before, between or after its files that other tools could read "
                       "as other files; it is not a release this app wrote.")


def _size(n: int) -> str:
    return f"{n / 1024 ** 3:g} GiB" if n >= 1024 ** 3 else f"{n:,} bytes"


@atexit.register
def _remove_extracted() -> None:
    for folder in _EXTRACTED:
        shutil.rmtree(folder, ignore_errors=True)
