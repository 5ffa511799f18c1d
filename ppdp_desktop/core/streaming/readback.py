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


def read_back(folder: Path, pseudonym_key: PseudonymKey | None, extra: list[str] = ()) -> LoadedRelease:
    """``folder``'s release with the checked columns (and ``extra``) held, the rest counted and named only."""
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
    distinct = True
    try:
        reader = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig",
                             skip_blank_lines=False, usecols=read, chunksize=READ_ROWS)
        for chunk in reader:
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
                elif chunk[pseudonyms].duplicated().any():
                    distinct = False
            n += len(chunk)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise ReleaseError(f"{path.name} cannot be read back: {exc}.") from exc
    if seen is None and pseudonyms in columns:
        distinct = False  # without the key, distinct ids across chunks are not checked here
    table = pd.DataFrame({c: (parts[c][0] if len(parts[c]) == 1 else union_categoricals(parts[c]))
                          for c in wanted if parts[c]}, index=pd.RangeIndex(n))
    return LoadedRelease(folder, metadata, table, file_columns=columns, file_records=n,
                         distinct_pseudonyms=distinct if pseudonyms in columns else None)
