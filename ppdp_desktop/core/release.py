"""Writing and reading a release folder: ``release.csv`` + ``release.json`` (docs/release-format.md).

Writes are atomic: everything goes into a hidden temporary folder beside the target, which is
renamed into place only when complete. A failure leaves nothing behind, and an existing release
is never overwritten unless asked.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ppdp_desktop import __version__
from ppdp_desktop.core import keyfile
from ppdp_desktop.core.anonymize import Anonymization
from ppdp_desktop.core.domain import label_text
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.pseudonyms import PSEUDONYM_COLUMN

FORMAT_VERSION = 1
DATA_FILE = "release.csv"
META_FILE = "release.json"
CHECKSUMS_FILE = "SHA256SUMS"

RECONSTRUCTION = (
    "Released values were drawn with the published matrix: matrix[j][i] = Pr[value i is released as value j]. "
    "Unbiased counts of the original values among any selection of records: solve matrix @ f = o, where o "
    "are the observed counts of each released value in the selection (ppdp estimate does this)."
)


def release_metadata(result: Anonymization, sep: str) -> dict[str, object]:
    """The ``release.json`` content: everything an analyst needs, nothing secret (no seed, no counts)."""
    schema = result.dataset.schema
    attributes = {
        name: {**attr.to_json(), "released": attr.role.value != "identifier" and name in result.table.columns}
        for name, attr in schema.attributes.items()
    }
    metadata: dict[str, object] = {
        "format_version": FORMAT_VERSION,
        "app": f"PPDP Desktop {__version__}",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "method": result.plan.method,
        "n_records": int(len(result.table)),
        "data_file": DATA_FILE,
        "csv": {"delimiter": sep, "encoding": "utf-8", "missing": ""},
        "attributes": attributes,
    }
    if result.pseudonym_map is not None:
        metadata["pseudonym_column"] = PSEUDONYM_COLUMN
    metadata.update(result.plan.release_json())
    metadata.setdefault("reconstruction", RECONSTRUCTION)
    return metadata


def write_release(
    result: Anonymization,
    out_dir: str | Path,
    *,
    overwrite: bool = False,
    sep: str = ",",
    key_path: str | Path | None = None,
    passphrase: str | None = None,
) -> Path:
    """Write the release folder (and, if asked, its sealed key file) atomically; return the folder.

    The key goes beside the release, never inside it. If anything fails, neither is left behind.
    """
    out = Path(out_dir)
    check_destination(out, key_path, overwrite)
    if len(sep) != 1 or sep in "\"\r\n":
        raise ReleaseError(f"The CSV separator must be one character other than a quote or newline; got {sep!r}.")
    if key_path is not None and not passphrase:
        raise ReleaseError("A passphrase is needed to seal the key file.")
    parent = out.resolve().parent
    metadata = release_metadata(result, sep)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=parent))
    tmp_key = None
    try:
        write_csv(result.table, tmp / DATA_FILE, sep)
        (tmp / META_FILE).write_text(json.dumps(metadata, indent=2, allow_nan=False), encoding="utf-8")
        manifest = write_checksums(tmp)
        if key_path is not None:
            key = Path(key_path)
            tmp_key = key.with_name(f".{key.name}.{os.getpid()}.partial")
            keyfile.seal(result.key_payload(), passphrase, manifest, tmp_key)
        _replace_dir(tmp, out)
        if tmp_key is not None:
            try:
                os.replace(tmp_key, key_path)
            except BaseException:
                shutil.rmtree(out, ignore_errors=True)
                raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if tmp_key is not None:
            tmp_key.unlink(missing_ok=True)
        raise
    return out


def check_destination(out: Path, key_path: str | Path | None, overwrite: bool) -> None:
    """Refuse, before any work, an existing release or key, or a key inside the release folder."""
    if out.exists() and not overwrite:
        raise ReleaseError(f"{out} already exists; choose another --out folder (or pass --overwrite).")
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} exists and is not a folder.")
    if not out.resolve().parent.is_dir():
        raise ReleaseError(f"The folder {out.resolve().parent} does not exist; create it first or choose another --out.")
    if key_path is None:
        return
    key = Path(key_path).resolve()
    if out.resolve() == key or out.resolve() in key.parents:
        raise ReleaseError(
            f"The key file {key_path} would be inside the release folder {out}; the key must be kept apart "
            "from the release: choose a --key path outside it."
        )
    if key.exists() and not overwrite:
        raise ReleaseError(f"The key file {key_path} already exists; choose another --key path (or pass --overwrite).")
    if not key.parent.is_dir():
        raise ReleaseError(f"The folder {key.parent} for the key file does not exist; create it first.")


def write_checksums(folder: Path) -> str:
    """Write ``SHA256SUMS`` over every file of ``folder``; return the manifest hash (SHA-256 of it)."""
    lines = [f"{_sha256(folder / name)}  {name}\n" for name in sorted(p.name for p in folder.iterdir() if p.is_file())]
    data = "".join(lines).encode("utf-8")
    (folder / CHECKSUMS_FILE).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def manifest_sha256(folder: Path) -> str:
    """The manifest hash a key file binds to: the SHA-256 of the release's ``SHA256SUMS``."""
    path = Path(folder) / CHECKSUMS_FILE
    if not path.is_file():
        raise ReleaseError(f"{folder} has no {CHECKSUMS_FILE}; it is not a complete release.")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_checksums(folder: Path) -> None:
    """Every file listed in ``SHA256SUMS`` exists with that hash, and no other file is present."""
    folder = Path(folder)
    manifest_sha256(folder)
    listed = {}
    for line in (folder / CHECKSUMS_FILE).read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    for name, digest in listed.items():
        path = folder / name
        if not path.is_file():
            raise ReleaseError(f"{name} is listed in {CHECKSUMS_FILE} but missing from the release.")
        if _sha256(path) != digest:
            raise ReleaseError(f"{name} does not match its checksum in {CHECKSUMS_FILE}: the release was altered.")
    extra = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name not in listed and p.name != CHECKSUMS_FILE)
    if extra:
        raise ReleaseError(f"{extra[0]} is in the release folder but not in {CHECKSUMS_FILE}.")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _replace_dir(tmp: Path, out: Path) -> None:
    if not out.exists():
        os.replace(tmp, out)
        return
    backup = out.with_name(f".{out.name}.old-{os.getpid()}")
    os.replace(out, backup)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(backup, out)
        raise
    shutil.rmtree(backup, ignore_errors=True)


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


@dataclass
class LoadedRelease:
    """A release read back: its metadata and its table with every cell as text."""

    folder: Path
    metadata: dict
    table: pd.DataFrame

    def sensitive_entry(self, attribute: str) -> dict:
        for entry in self.metadata.get("sensitive", []):
            if entry.get("attribute") == attribute:
                return entry
        names = [e.get("attribute") for e in self.metadata.get("sensitive", [])]
        raise ReleaseError(f"{attribute!r} is not a perturbed attribute of this release; it has: {', '.join(map(str, names))}.")

    def codes(self, entry: dict) -> np.ndarray:
        """The released column of ``entry`` as codes into its ``values``; unknown cells are an error."""
        labels = [label_text(v) for v in entry["values"]]
        column = self.table[entry["attribute"]]
        codes = pd.Index(labels).get_indexer(column)
        if (codes < 0).any():
            bad = column[codes < 0].iloc[0]
            raise ReleaseError(
                f"{DATA_FILE} holds value {bad!r} in column {entry['attribute']!r}, which is not in the published domain."
            )
        return codes.astype(np.int64)


def read_release(folder: str | Path) -> LoadedRelease:
    """Read ``release.json`` and the data file, all cells as text (missing as "")."""
    folder = Path(folder)
    meta_path = folder / META_FILE
    if not meta_path.is_file():
        raise ReleaseError(f"{folder} is not a release folder: {META_FILE} is missing.")
    try:
        metadata = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReleaseError(f"{meta_path} cannot be read: {exc}.") from exc
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ReleaseError(f"{meta_path} has format_version {metadata.get('format_version')!r}; this app reads {FORMAT_VERSION}.")
    data_path = folder / metadata.get("data_file", DATA_FILE)
    sep = metadata.get("csv", {}).get("delimiter", ",")
    try:
        table = pd.read_csv(data_path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8")
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise ReleaseError(f"{data_path} cannot be read: {exc}.") from exc
    return LoadedRelease(folder, metadata, table)
