"""Reading a written release back in part, to re-check it as written when it is too large to hold.

Only the columns the checks read (the protected columns, sub-table ids, quasi-identifiers) are kept, as
categoricals of their text (as :func:`~ppdp_desktop.core.data.released.read_release` reads every cell); the
record count and column names come from the file itself, and the pseudonyms are checked distinct while the
file is read (each id decrypted to its record's index under the job's key, every index seen once).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ppdp_desktop.core.data.formats import unguard_formulas
from ppdp_desktop.core.data.released import DATA_FILE, LoadedRelease, _read_metadata
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey

READ_ROWS = 500_000


def columns_checked(metadata: dict) -> list[str]:
    """The data columns a release's checks read, from its ``release.json``."""
    names: list[str] = []
    for key in ("sensitive", "randomized", "recoded", "graded", "protected"):
        for entry in metadata.get(key) or []:
            if isinstance(entry, dict):
                names += [entry.get("attribute"), entry.get("subtable_column")]
    for name, attribute in (metadata.get("attributes") or {}).items():  # every protected and quasi-identifying column
        if isinstance(attribute, dict) and attribute.get("role") in ("sensitive", "quasi-identifier"):
            names.append(name)
    risk = metadata.get("reidentification") or {}
    names += list(risk.get("quasi_identifiers") or [])
    return [str(n) for n in dict.fromkeys(names) if n]


def _chunks(path: Path, sep: str, usecols: list[int]):
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig", skip_blank_lines=False,
                       usecols=usecols, chunksize=READ_ROWS)


def _distinct(path: Path, sep: str, column: int, hashes: np.ndarray | None) -> bool:
    """Whether the ids of ``column`` are distinct, from their 64-bit hashes (8 bytes a record); ids whose hashes
    collide are compared exactly in a second read."""
    if hashes is None:
        return True
    hashes.sort()
    same = hashes[1:] == hashes[:-1]
    if not same.any():
        return True
    colliding = set(hashes[1:][same].tolist())
    found: list[str] = []
    for chunk in _chunks(path, sep, [column]):
        ids = chunk.iloc[:, 0]
        found += ids[np.isin(pd.util.hash_array(ids.to_numpy(dtype=object)), list(colliding))].tolist()
    return len(found) == len(set(found))


def read_back(folder: Path, pseudonym_key: PseudonymKey | None, extra: list[str] = ()) -> LoadedRelease:
    """``folder``'s release with the checked columns (and ``extra``) held, the rest counted and named only; its
    pseudonyms checked distinct with the job's ``pseudonym_key`` (each decrypted to its record) or, for a recipient
    without it, by their hashes."""
    folder = Path(folder)
    metadata = _read_metadata(folder, folder)
    path = folder / metadata.get("data_file", DATA_FILE)
    sep = metadata.get("csv", {}).get("delimiter", ",")
    guarded = "formula_guard" in (metadata.get("csv") or {})
    header = pd.read_csv(path, sep=sep, dtype=str, nrows=0, encoding="utf-8-sig")
    columns = [str(c) for c in (unguard_formulas(header).columns if guarded else header.columns)]
    wanted = [c for c in dict.fromkeys([*columns_checked(metadata), *extra]) if c in columns]
    pseudonyms = metadata.get("pseudonym_column")
    positions = [columns.index(c) for c in wanted]
    read = sorted(set(positions + ([columns.index(pseudonyms)] if pseudonyms in columns else [])))
    parts: dict[str, list] = {c: [] for c in wanted}
    n = 0
    seen = None if pseudonym_key is None else np.zeros(int(metadata.get("n_records") or 0), dtype=bool)
    hashes: list[np.ndarray] = []
    distinct = True
    try:
        for chunk in _chunks(path, sep, read):
            chunk = chunk.set_axis([columns[i] for i in read], axis=1)
            if guarded:
                chunk = unguard_formulas(chunk)
            for c in wanted:
                parts[c].append(pd.Categorical(chunk[c]))
            if pseudonyms in chunk.columns:
                if seen is not None:
                    index = pseudonym_key.index_of(chunk[pseudonyms], len(seen))
                    if (index < 0).any() or seen[index].any() or len(np.unique(index)) != len(index):
                        distinct = False
                    else:
                        seen[index] = True
                else:
                    hashes.append(pd.util.hash_array(chunk[pseudonyms].to_numpy(dtype=object)))
            n += len(chunk)
        if seen is None and pseudonyms in columns:
            distinct = _distinct(path, sep, columns.index(pseudonyms), np.concatenate(hashes) if hashes else None)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise ReleaseError(f"{path.name} cannot be read back: {exc}.") from exc
    table = pd.DataFrame({c: (parts[c][0] if len(parts[c]) == 1 else union_categoricals(parts[c]))
                          for c in wanted if parts[c]}, index=pd.RangeIndex(n))
    return LoadedRelease(folder, metadata, table, file_columns=columns, file_records=n,
                         distinct_pseudonyms=distinct if pseudonyms in columns else None)


def too_large_to_hold(folder: Path) -> bool:
    """Whether a release folder's data file (CSV) is larger than a third of the free memory: read it back in part."""
    from ppdp_desktop.core.streaming.mode import choose_mode

    folder = Path(folder)
    if not folder.is_dir() or not (folder / "release.json").is_file():
        return False
    try:
        metadata = _read_metadata(folder, folder)
    except ReleaseError:
        return False
    data = folder / str(metadata.get("data_file", DATA_FILE))
    return metadata.get("format", "csv") == "csv" and data.is_file() and choose_mode(data).streaming
