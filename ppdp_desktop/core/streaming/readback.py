"""Reading a written release back in part, to re-check it as written when it is too large to hold.

Only the columns the checks read (the protected columns, sub-table ids, quasi-identifiers) are kept, as
categoricals of their text (as :func:`~ppdp_desktop.core.data.released.read_release` reads every cell); the
record count and column names come from the file itself, and the pseudonyms are checked distinct while the
file is read (each id decrypted to its record's index under the job's key, every index seen once).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data.formats import FORMULA_GUARD, FORMULA_STARTS, _unguard_text, unguard_formulas
from ppdp_desktop.core.data.released import DATA_FILE, LoadedRelease, _read_metadata
from ppdp_desktop.core.data.text_table import MAX_ROW_BYTES
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey


def columns_checked(metadata: dict) -> list[str]:
    """The data columns a release's checks read, from its ``release.json``."""
    names: list[str | None] = []
    for key in ("sensitive", "randomized", "recoded", "graded", "protected"):
        for entry in metadata.get(key) or []:
            if isinstance(entry, dict):
                names += [entry.get("attribute"), entry.get("subtable_column")]
    for name, attribute in (metadata.get("attributes") or {}).items():  # every protected and quasi-identifying column
        if isinstance(attribute, dict) and attribute.get("role") in ("sensitive", "quasi-identifier"):
            names.append(name)
    risk = metadata.get("reidentification") or {}
    names += list(risk.get("quasi_identifiers") or [])
    groups = metadata.get("group_disclosure")  # its sensitive column may have no role (dp-microagg's --sensitive)
    names += [groups.get("sensitive")] if isinstance(groups, dict) and isinstance(groups.get("sensitive"), str) else []
    return [str(n) for n in dict.fromkeys(names) if n]


#: bytes of CSV per batch of the read-back, tried in turn: pyarrow's streaming reader reads up to 32 blocks ahead on
#: its I/O thread (Arrow's pool held 36 MB at 1 MiB blocks, 9 MB at 256 KiB, at the same speed: issue 34's memory); a
#: record longer than a block ("straddling object": a cell of a million characters) is read again with larger ones,
#: up to the loader's limit of a record
READ_BLOCKS = (1 << 18, 1 << 20, MAX_ROW_BYTES)


def _batches(path: Path, sep: str, names: list[str], read: list[str], block: int = READ_BLOCKS[1]):
    """Record batches of the columns ``read`` of the CSV ``path`` (header ``names``), every cell as text and an
    empty cell as "" (as :func:`~ppdp_desktop.core.data.released.read_release` reads it), by pyarrow's reader."""
    import pyarrow.csv as pacsv

    reader = pacsv.open_csv(
        str(path), read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=block),
        parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(read, pa.string()), include_columns=read,
                                             strings_can_be_null=False, null_values=[]))
    yield from reader


#: distinct values up to which a read-back column is unified batch by batch into codes of 1 or 2 bytes a record
#: (Arrow's batches hold 4, every column's until the end: ~36 MB at 1M records x 9 columns; issue 34's memory)
COMPACT_VALUES = 1 << 15


class _Column:
    """One read-back column's batches, dictionary-encoded. While it has at most :data:`COMPACT_VALUES` distinct
    values, each batch is unified with the values seen so far (Arrow's unification: the values in the order they
    first appear) and kept as int8/int16 codes; past that, its batches are kept as Arrow's and unified at the end, as
    they all were before. The same categories and codes either way."""

    __slots__ = ("chunks", "codes", "known")

    def __init__(self) -> None:
        self.known: pa.Array | None = None  # the values seen so far, in the order they first appeared
        self.codes: list[np.ndarray] = []
        self.chunks: list[pa.DictionaryArray] = []  # past COMPACT_VALUES values: Arrow's batches

    def add(self, encoded: pa.DictionaryArray) -> None:
        """Keep one batch (a dictionary-encoded text column)."""
        if self.chunks:
            self.chunks.append(encoded)
            return
        if self.known is None:
            known, indices = encoded.dictionary, encoded.indices
        else:
            seen = pa.DictionaryArray.from_arrays(pa.array([], type=encoded.indices.type), self.known)
            unified = pa.chunked_array([seen, encoded]).unify_dictionaries()
            known, indices = unified.chunk(0).dictionary, unified.chunk(1).indices
        if len(known) > COMPACT_VALUES:  # many distinct values: Arrow's batches, unified at the end
            if self.known is not None and self.codes:
                codes = pa.array(np.concatenate(self.codes).astype(np.int32))
                self.chunks.append(pa.DictionaryArray.from_arrays(codes, self.known))
            self.chunks.append(encoded)
            self.known, self.codes = None, []
            return
        self.known = known
        self.codes.append(indices.to_numpy(zero_copy_only=False).astype(np.int8 if len(known) <= 127 else np.int16))

    def categorical(self, guarded: bool) -> pd.Categorical:
        """The column as one categorical, the formula guard undone on the categories, not on every cell."""
        if self.chunks:
            unified = pa.chunked_array(self.chunks).unify_dictionaries()
            return _categorical(unified.chunk(0).dictionary.to_pylist(),
                                np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in unified.chunks]),
                                guarded)
        if self.known is None:
            return pd.Categorical(np.array([], dtype=object))
        return _categorical(self.known.to_pylist(), np.concatenate(self.codes), guarded)


def _categorical(values: list, codes: np.ndarray, guarded: bool) -> pd.Categorical:
    """A column of text as one categorical from its values in order and each record's code, the formula guard
    undone on the categories."""
    categories = pd.Index(values, dtype=object)
    if guarded:
        categories = pd.Index([_unguard_text(c) for c in categories], dtype=object)
    if categories.has_duplicates:  # never from our writer; the values as they are
        return pd.Categorical(categories.to_numpy()[codes])
    return pd.Categorical.from_codes(codes, categories=categories)


def _distinct(path: Path, sep: str, names: list[str], column: str, hashes: np.ndarray | None,
              block: int = READ_BLOCKS[0]) -> bool:
    """Whether the ids of ``column`` are distinct, from their 64-bit hashes (8 bytes a record); ids whose hashes
    collide are compared exactly in a second read."""
    if hashes is None:
        return True
    hashes.sort()
    same = hashes[1:] == hashes[:-1]
    if not same.any():
        return True
    colliding = np.unique(hashes[1:][same])
    found: list[str] = []
    for batch in _batches(path, sep, names, [column], block):
        ids = batch.column(0).to_numpy(zero_copy_only=False)
        found += ids[np.isin(pd.util.hash_array(ids), colliding)].tolist()
    return len(found) == len(set(found))


def _all_new(seen: np.ndarray, index: np.ndarray) -> bool:
    """Whether the record indices ``index`` are valid, distinct and not ``seen`` before (then mark them)."""
    if len(index) == 0:
        return True
    if (index < 0).any() or seen[index].any():
        return False
    ordered = np.sort(index)
    if (ordered[1:] == ordered[:-1]).any():
        return False
    seen[index] = True
    return True


def read_back(folder: Path, pseudonym_key: PseudonymKey | None, extra: Sequence[str] = (), *,
              every: bool = False) -> LoadedRelease:
    """``folder``'s release with the checked columns (and ``extra``; ``every``: every column) held, the rest counted
    and named only; its pseudonyms checked distinct with the job's ``pseudonym_key`` (each decrypted to its record)
    or, for a recipient without it, by their hashes.

    The columns are held as categoricals of their text, in the file's order; with ``every`` the pseudonyms too, as
    Arrow text (a million distinct ids make no good categories). The in-memory job reads its release back so
    (``every``): pyarrow's reader, and the pseudonym check of the streamed job, instead of every cell as a Python
    string and a hash table of the ids.
    """
    folder = Path(folder)
    metadata = _read_metadata(folder, folder)
    path = folder / metadata.get("data_file", DATA_FILE)
    sep = metadata.get("csv", {}).get("delimiter", ",")
    guarded = "formula_guard" in (metadata.get("csv") or {})
    header = pd.read_csv(path, sep=sep, dtype=str, nrows=0, encoding="utf-8-sig")
    names = [f"c{i}" for i in range(header.shape[1])]  # the file's own header may hold guarded names
    columns = [str(c) for c in (unguard_formulas(header).columns if guarded else header.columns)]
    pseudonyms = metadata.get("pseudonym_column")
    asked = {*columns_checked(metadata), *extra}
    wanted = list(dict.fromkeys(c for c in columns if c in asked or (every and c != pseudonyms)))
    read = [names[i] for i in sorted({columns.index(c) for c in wanted}
                                     | ({columns.index(pseudonyms)} if pseudonyms in columns else set()))]
    for block in READ_BLOCKS:
        try:
            parts, ids_read, n, distinct = _read(path, sep, names, read, block, wanted, columns, pseudonyms,
                                                 pseudonym_key, int(metadata.get("n_records") or 0), every)
            break
        except pa.ArrowInvalid as exc:
            if "straddl" not in str(exc) or block == READ_BLOCKS[-1]:
                raise ReleaseError(f"{path.name} cannot be read back: {exc}.") from exc
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise ReleaseError(f"{path.name} cannot be read back: {exc}.") from exc
    held = {c: parts.pop(c).categorical(guarded) for c in wanted}  # each column's batches freed once it is made
    if every and pseudonyms in columns:
        held[pseudonyms] = _text(pa.chunked_array(ids_read, pa.string()), guarded)
    table = pd.DataFrame({c: held[c] for c in columns if c in held}, index=pd.RangeIndex(n))
    return LoadedRelease(folder, metadata, table, file_columns=columns, file_records=n,
                         distinct_pseudonyms=distinct if pseudonyms in columns else None)


def _read(path: Path, sep: str, names: list[str], read: list[str], block: int, wanted: list[str], columns: list[str],
          pseudonyms: str | None, pseudonym_key: PseudonymKey | None, n_records: int, every: bool
          ) -> tuple[dict[str, _Column], list[pa.Array], int, bool]:
    """:func:`read_back`'s one pass over the file in blocks of ``block`` bytes: the ``wanted`` columns' batches, the
    pseudonyms' (with ``every``), the records read and whether the pseudonyms are distinct."""
    parts = {c: _Column() for c in wanted}
    ids_read: list[pa.Array] = []
    n = 0
    seen = None if pseudonym_key is None else np.zeros(n_records, dtype=bool)
    hashes: list[np.ndarray] = []
    distinct = True
    for batch in _batches(path, sep, names, read, block):
        for c in wanted:
            parts[c].add(batch.column(names[columns.index(c)]).dictionary_encode())
        if pseudonyms in columns:
            ids = batch.column(names[columns.index(pseudonyms)])
            if every:
                ids_read.append(ids)
            if seen is not None and pseudonym_key is not None:  # seen is held exactly when the key is given
                distinct = _all_new(seen, pseudonym_key.index_of(ids, len(seen))) and distinct
            else:
                hashes.append(pd.util.hash_array(ids.to_numpy(zero_copy_only=False)))
        n += batch.num_rows
    if seen is None and pseudonyms in columns:
        distinct = _distinct(path, sep, names, names[columns.index(pseudonyms)],
                             np.concatenate(hashes) if hashes else None, block)
    return parts, ids_read, n, distinct


def _text(ids: pa.ChunkedArray, guarded: bool) -> pd.arrays.ArrowStringArray:
    """A column of distinct texts (the pseudonyms) as Arrow text, the formula guard undone."""
    import pyarrow.compute as pc

    if guarded and pc.any(pc.starts_with(ids, FORMULA_GUARD)).as_py():  # the job's ids never start so: mostly one cheap pass
        ids = pc.replace_substring_regex(ids, pattern=_GUARDED, replacement=r"\1")
    return pd.arrays.ArrowStringArray(ids)


#: a guarded cell: the guard, then a character that starts a formula (or the guard itself)
_GUARDED = "^" + re.escape(FORMULA_GUARD) + "([" + re.escape("".join((*FORMULA_STARTS, FORMULA_GUARD))) + "])"


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
