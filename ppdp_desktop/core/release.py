"""Writing and reading a release folder: ``release.csv`` + ``release.json`` (docs/release-format.md).

Writes are atomic: everything goes into a hidden temporary folder beside the target, which is
renamed into place only when complete. A failure leaves nothing behind, and an existing release
is never overwritten unless asked.
"""
from __future__ import annotations

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
from ppdp_desktop.core.anonymize import Anonymization
from ppdp_desktop.core.domain import label_text
from ppdp_desktop.core.errors import ReleaseError

FORMAT_VERSION = 1
DATA_FILE = "release.csv"
META_FILE = "release.json"

RECONSTRUCTION = (
    "Released values were drawn with the published matrix: matrix[j][i] = Pr[value i is released as value j]. "
    "Unbiased counts of the original values among any selection of records: solve matrix @ f = o, where o "
    "are the observed counts of each released value in the selection (ppdp estimate does this)."
)


def release_metadata(result: Anonymization, sep: str) -> dict[str, object]:
    """The ``release.json`` content: everything an analyst needs, nothing secret (no seed, no counts)."""
    plan, guarantee, schema = result.plan, result.guarantee, result.dataset.schema
    attributes = {
        name: {**attr.to_json(), "released": attr.role.value != "identifier"} for name, attr in schema.attributes.items()
    }
    requirement = plan.requirement
    values = plan.domain.json_values()
    return {
        "format_version": FORMAT_VERSION,
        "app": f"PPDP Desktop {__version__}",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "method": plan.method,
        "parameters": {k: (float(v) if isinstance(v, (np.floating, float)) else v) for k, v in plan.parameters.items()},
        "n_records": int(len(result.table)),
        "data_file": DATA_FILE,
        "csv": {"delimiter": sep, "encoding": "utf-8", "missing": ""},
        "attributes": attributes,
        "sensitive": [
            {
                "attribute": plan.attribute,
                "values": values,
                "retention": [float(p) for p in plan.retention],
                "matrix": plan.matrix.tolist(),
                "guarantee": {
                    "kind": "upward (rho1, rho2)-privacy per value (gamma-amplification)",
                    "pairs": requirement.pairs_json(values),
                    "gamma": [None if not np.isfinite(g) else float(g) for g in requirement.gamma],
                    "epsilon_ldp": guarantee.epsilon_ldp,
                    "downward_breaches": [b["value"] for b in guarantee.downward_breaches],
                    "verified": True,
                },
            }
        ],
        "reconstruction": RECONSTRUCTION,
    }


def write_release(result: Anonymization, out_dir: str | Path, *, overwrite: bool = False, sep: str = ",") -> Path:
    """Write the release folder atomically and return its path."""
    out = Path(out_dir)
    if out.exists() and not overwrite:
        raise ReleaseError(f"{out} already exists; choose another --out folder (or pass --overwrite).")
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} exists and is not a folder.")
    if len(sep) != 1 or sep in "\"\r\n":
        raise ReleaseError(f"The CSV separator must be one character other than a quote or newline; got {sep!r}.")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise ReleaseError(f"The folder {parent} does not exist; create it first or choose another --out.")
    metadata = release_metadata(result, sep)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=parent))
    try:
        write_csv(result.table, tmp / DATA_FILE, sep)
        (tmp / META_FILE).write_text(json.dumps(metadata, indent=2, allow_nan=False), encoding="utf-8")
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


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
    """UTF-8 CSV, quoting only where needed, missing values as empty cells (pyarrow's fast writer)."""
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    options = pacsv.WriteOptions(delimiter=sep, quoting_style="needed")
    pacsv.write_csv(arrow, str(path), write_options=options)


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
