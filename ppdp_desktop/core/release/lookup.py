"""Authorized reverse lookup: a release + its sealed key + the passphrase decode aliases, graded
values and pseudonyms (seed 004's trusted-server lookup, SPEC 7).

The key opens only with its own release (it is bound to the release's manifest hash) and only
after the release's checksums are confirmed. A released pseudonym leads to its record through the
pseudonym key (:meth:`~ppdp_desktop.core.privacy.pseudonyms.PseudonymKey.index_of`: decrypting gives the
record's index, the row of the key's record table); a format-1 key lists every id instead, and a key of stable
pseudonyms keeps each record's id in its row of the record table.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data.checksums import check_checksums, manifest_sha256
from ppdp_desktop.core.data.released import LoadedRelease, read_release
from ppdp_desktop.core.errors import KeyFileError, ParameterError, PPDPError, ReleaseError
from ppdp_desktop.core.methods import GradeDecoder, Method, get_method
from ppdp_desktop.core.privacy.pseudonyms import STABLE_RECORD, PseudonymKey
from ppdp_desktop.core.privacy.record_table import arrow_column
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.lookup_marks import (
    IDENTIFIER,
    NOT_FOUND,
    ONE_OF_CELL,
    SUPPRESSED_CELL,
    Decoded,
    Mark,
    column_marks,
    suppressed_cells,
)
from ppdp_desktop.core.release.provenance import KEY as PROVENANCE
from ppdp_desktop.core.release.provenance import Provenance, current_provenance
from ppdp_desktop.core.release.provenance_compare import differences

ONE_OF = " | "


@dataclass
class KeyRecords:
    """The way from a released pseudonym to its record's identifiers and secrets.

    ``table`` has one row per record, the identifier columns then the secret columns (read by position);
    ``rows`` gives the row of each pseudonym, -1 for one that is not in the key.
    """

    identifiers: list[str]
    secrets: list[str]
    table: pa.Table
    key: PseudonymKey | None = None
    n: int = 0  # the number of records (ids decrypting to an index below it are the release's)
    _ids: pd.Index | None = field(default=None, repr=False)  # format 1 and stable pseudonyms: the ids, row by row

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> KeyRecords:
        """From an opened key's payload (its ``"pseudonyms"`` entry and record table); KeyFileError if they
        disagree."""
        block = payload["pseudonyms"]
        if "ids" in block:  # format 1: JSON lists in the release's order
            by_identifier, by_secret = dict(block["identifiers"]), dict(block.get("records", {}))
            table = pa.table({f"c{i}": arrow_column(pd.Series(values, dtype=object))
                              for i, values in enumerate([*by_identifier.values(), *by_secret.values()])})
            return cls(list(by_identifier), list(by_secret), table, _ids=pd.Index(block["ids"]))
        stable = block.get("stable") is True  # stable pseudonyms (issue 30): each record's id is in its row
        try:
            key, n = None if stable else PseudonymKey.from_hex(block["key"]), int(block["n"])
            identifiers, secrets = [str(c) for c in block["identifiers"]], [str(c) for c in block["records"]]
        except (KeyError, TypeError, ValueError, ParameterError):
            raise KeyFileError("The key's pseudonym entry is damaged") from None
        table = payload.get(keyfile.RECORDS)
        if table is None and not identifiers and not secrets:  # nothing per record: the ids alone
            table = pa.table({})
        elif table is None or table.num_rows != n or table.num_columns != len(identifiers) + len(secrets):
            raise KeyFileError("The key's record table does not match its pseudonym entry")
        if not stable:
            return cls(identifiers, secrets, table, key, n)
        if STABLE_RECORD not in secrets:
            raise KeyFileError("The key's pseudonym entry is damaged")
        ids = table.column(len(identifiers) + secrets.index(STABLE_RECORD)).to_pandas()
        return cls(identifiers, secrets, table, None, n, _ids=pd.Index(ids, dtype=object))

    def rows(self, ids: pd.Series | list[str]) -> np.ndarray:
        """The record table's row of each pseudonym (vectorized), -1 where it is not one of this key's."""
        if self._ids is not None:
            return self._ids.get_indexer(pd.Series(ids, dtype=object)).astype(np.int64)
        if self.key is None:  # from_payload gives a format-2 key its pseudonym key
            raise KeyFileError("The key's pseudonym entry is damaged")
        return self.key.index_of(ids, n=self.n)

    def values(self, position: int, rows: np.ndarray) -> np.ndarray:
        """Column ``position`` of the table at ``rows`` (objects; None where the row is -1 or the value missing)."""
        known = rows >= 0
        if not len(rows):
            return np.empty(0, dtype=object)
        taken = self.table.column(position).take(pa.array(np.where(known, rows, 0), mask=~known))
        series = taken.to_pandas(integer_object_nulls=True, date_as_object=True).astype(object)
        return series.where(series.notna(), None).to_numpy()

    def secret(self, attribute: str, rows: np.ndarray) -> np.ndarray | None:
        """The record secrets of ``attribute`` at ``rows`` (see :meth:`values`); None if the key has none."""
        if attribute not in self.secrets:
            return None
        return self.values(len(self.identifiers) + self.secrets.index(attribute), rows)


@dataclass
class KeyRing:
    """An opened key together with its release."""

    release: LoadedRelease
    payload: dict[str, Any]
    _records: KeyRecords | None = field(default=None, repr=False)

    @classmethod
    def open(cls, release_dir: str | Path, key_path: str | Path, passphrase: str) -> KeyRing:
        release = read_release(release_dir)
        check_checksums(release.folder)
        payload = keyfile.open_key(key_path, passphrase, manifest_sha256(release.folder))
        return cls(release, payload)

    # --- pieces of the payload ---------------------------------------------------------------
    @property
    def provenance(self) -> Provenance | None:
        """What the key's release was made with (None: a key written before provenance was recorded)."""
        block = self.payload.get(PROVENANCE)
        return None if block is None else Provenance.from_json(block, "the key")

    def provenance_notes(self) -> list[str]:
        """What differs between the app that made the key's release and this one, in sentences (the same seed
        may not give the same release); empty for a key that records none (an older version) or if none does."""
        try:
            recorded = self.provenance
        except ReleaseError as exc:
            return [str(exc)]
        if recorded is None:
            return []
        return differences(recorded, current_provenance(), recorded="this release")

    @property
    def pseudonym_column(self) -> str | None:
        return self.payload.get("pseudonyms", {}).get("column")

    @property
    def records(self) -> KeyRecords:
        """The key's way from pseudonyms to records (ParameterError if the release has no pseudonyms)."""
        if self._records is None:
            if not self.payload.get("pseudonyms"):
                raise ParameterError("This release has no pseudonyms (it had no identifier columns).")
            self._records = KeyRecords.from_payload(self.payload)
        return self._records

    def _aliases(self, attribute: str) -> tuple[dict[str, list[str]], dict[str, str]] | None:
        entry = self.payload.get("aliases", {}).get(attribute)
        return (entry["alias1"], entry["alias2"]) if entry else None

    @property
    def method(self) -> Method:
        """The method that made the release (it decodes what it published, e.g. grades)."""
        name = str(self.release.metadata.get("method", ""))
        try:
            return get_method(name)
        except PPDPError:
            raise ReleaseError(f"release.json names method {name!r}, which this app does not know.") from None

    def _grading(self, attribute: str) -> GradeDecoder | None:
        entry = self.payload.get("graded", {}).get(attribute)
        return self.method.key_grading(attribute, entry) if entry else None

    # --- lookups -----------------------------------------------------------------------------
    def decode_value(self, attribute: str, text: str) -> list[str]:
        """What a published value of ``attribute`` stands for (several values for a shared alias1)."""
        aliases, grading = self._aliases(attribute), self._grading(attribute)
        if grading is not None:
            try:
                return [_format(grading.ungrade(np.array([float(text)]))[0], grading.integer)]
            except ValueError as exc:
                raise ParameterError(f"{text!r} is not a graded value of {attribute!r}.") from exc
        if aliases is None:
            raise ParameterError(f"{attribute!r} is not recoded in this release; nothing to decode.")
        alias1, alias2 = aliases
        if text in alias2:
            return [alias2[text]]
        if text in alias1:
            return list(alias1[text])
        leaves = {v for values in alias1.values() for v in values}
        if text in leaves:
            return [text]  # published as is (choice 1)
        raise ParameterError(f"{text!r} is neither a value nor an alias of {attribute!r}.")

    def lookup_pseudonym(self, pseudonym: str) -> LookedUp:
        """The removed identifiers and the decoded released row of one pseudonymous record, each value with its
        mark (:attr:`LookedUp.marks`): the patient's own value, or the release's (randomized, noised, ...)."""
        column = self.pseudonym_column
        table = self.release.table
        if column is None or column not in table.columns:
            raise ParameterError("This release has no pseudonym column: its rows cannot be traced back to records.")
        rows = table.index[table[column] == pseudonym]
        if len(rows) == 0:
            raise ParameterError(f"Pseudonym {pseudonym!r} is not in this release.")
        decoded = self.decode_marked(table.loc[rows[:1]])
        return LookedUp(decoded.table.iloc[0].to_dict(), marks=decoded.cell_marks(0))

    def decode_table(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Decode every alias, graded value and pseudonym found in a results table (vectorized). The values
        only: :meth:`decode_marked` says which of them are the patients' own."""
        return self._decode(frame)[0]

    def decode_marked(self, frame: pd.DataFrame) -> Decoded:
        """:meth:`decode_table` with what each column (and each cell that differs from its column) is."""
        out, added, ambiguous, unknown = self._decode(frame)
        marks = column_marks(self.release.metadata, list(out.columns))
        keyed = {"recoded": self.payload.get("aliases", {}), "graded": self.payload.get("graded", {})}
        for entry, entries in keyed.items():  # published as aliases or grades the key cannot decode
            for attribute in [e.get("attribute") for e in self.release.metadata.get(entry) or [] if isinstance(e, dict)]:
                if attribute in marks and attribute not in entries:
                    marks[attribute] = Mark("unknown", False, f"published as {'an alias' if entry == 'recoded' else 'a grade'}"
                                                              " that this key cannot decode: not the patient's value")
        cells: dict[str, list[tuple[np.ndarray, Mark]]] = {}
        for name, rows in suppressed_cells(self.release.metadata, out).items():
            cells.setdefault(name, []).append((rows, SUPPRESSED_CELL))
        for name, rows in ambiguous.items():
            cells.setdefault(name, []).append((rows, ONE_OF_CELL))
        for name in added:
            marks[name] = IDENTIFIER
            cells.setdefault(name, []).append((unknown, NOT_FOUND))
        return Decoded(out, marks, cells)

    def _decode(self, frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str], dict[str, np.ndarray], np.ndarray]:
        """The decoded table, the identifier columns added, the cells of each recoded column left as "one of"
        several values, and the rows whose pseudonym is not in the key."""
        out = frame.copy()
        column = self.pseudonym_column
        records, rows = None, None
        added: list[str] = []
        ambiguous: dict[str, np.ndarray] = {}
        unknown = np.zeros(len(out), dtype=bool)
        if column is not None and column in out.columns:
            records = self.records
            rows = records.rows(out[column])
            unknown = rows < 0
            position = list(out.columns).index(column) + 1
            for offset, name in enumerate(records.identifiers):
                added.append(name if name not in out.columns else f"{name}_identifier")
                out.insert(position + offset, added[-1], records.values(offset, rows))
        for attribute in self.payload.get("aliases", {}):
            if attribute not in out.columns:
                continue
            aliases = self._aliases(attribute)
            if aliases is None:  # an empty entry
                raise KeyFileError(f"The key's aliases of {attribute!r} are damaged")
            alias1, alias2 = aliases
            text = out[attribute].astype(object).where(out[attribute].notna(), "").astype(str)
            decoded = text.map(alias2)
            shared = {k: ONE_OF.join(v) for k, v in alias1.items()}
            several = text.isin([k for k, v in alias1.items() if len(v) > 1]) & decoded.isna()
            decoded = decoded.fillna(text.map(shared))
            exact = records.secret(attribute, rows) if records is not None and rows is not None else None
            if exact is not None:
                exact = pd.Series(exact, index=out.index, dtype=object)
                decoded = exact.where(exact.notna(), decoded)
                several &= exact.isna()
            ambiguous[attribute] = several.to_numpy(dtype=bool)
            out[attribute] = decoded.fillna(text)
        for attribute in self.payload.get("graded", {}):
            if attribute in out.columns:
                grading = self._grading(attribute)
                if grading is None:  # an empty entry
                    raise KeyFileError(f"The key's grades of {attribute!r} are damaged")
                numbers = pd.to_numeric(out[attribute], errors="coerce")
                valid = numbers.notna()
                values = out[attribute].astype(object).copy()
                values[valid] = grading.ungrade(numbers[valid].to_numpy())
                if grading.integer:
                    values[valid] = values[valid].astype(float).astype(np.int64)
                out[attribute] = values
        return out, added, ambiguous, unknown


class LookedUp(dict):
    """One record's values by column (a ``dict``), and :attr:`marks`: what each value is (None for a column the
    release does not have)."""

    def __init__(self, values: dict[str, object], marks: dict[str, Mark | None]) -> None:
        super().__init__(values)
        self.marks = marks

    def not_original(self) -> list[str]:
        """The columns whose shown value is not the patient's own (randomized, noised, generalized, ...)."""
        return [name for name, mark in self.marks.items() if mark is not None and not mark.is_original
                and mark.status != "pseudonym"]


def _format(value: float, integer: bool) -> str:
    return str(int(value)) if integer else repr(float(value))
