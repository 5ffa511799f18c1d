"""Authorized reverse lookup: a release + its sealed key + the passphrase decode aliases, graded
values and pseudonyms (seed 004's trusted-server lookup, SPEC 7).

The key opens only with its own release (it is bound to the release's manifest hash) and only
after the release's checksums are confirmed.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.personalized.grading import Grading
from ppdp_desktop.core.data.checksums import check_checksums, manifest_sha256
from ppdp_desktop.core.data.released import LoadedRelease, read_release

ONE_OF = " | "


@dataclass
class KeyRing:
    """An opened key together with its release."""

    release: LoadedRelease
    payload: dict[str, Any]

    @classmethod
    def open(cls, release_dir: str | Path, key_path: str | Path, passphrase: str) -> "KeyRing":
        release = read_release(release_dir)
        check_checksums(release.folder)
        payload = keyfile.open_key(key_path, passphrase, manifest_sha256(release.folder))
        return cls(release, payload)

    # --- pieces of the payload ---------------------------------------------------------------
    @property
    def pseudonym_column(self) -> str | None:
        return self.payload.get("pseudonyms", {}).get("column")

    def _aliases(self, attribute: str) -> tuple[dict[str, list[str]], dict[str, str]] | None:
        entry = self.payload.get("aliases", {}).get(attribute)
        return (entry["alias1"], entry["alias2"]) if entry else None

    def _grading(self, attribute: str) -> Grading | None:
        entry = self.payload.get("graded", {}).get(attribute)
        return Grading.from_key_json(attribute, entry) if entry else None

    def _pseudonym_frame(self) -> pd.DataFrame:
        block = self.payload.get("pseudonyms")
        if not block:
            raise ParameterError("This release has no pseudonyms (it had no identifier columns).")
        frame = pd.DataFrame({block["column"]: block["ids"], **block["identifiers"]})
        for attribute, values in block.get("records", {}).items():
            frame[f"__original__{attribute}"] = values
        return frame

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

    def lookup_pseudonym(self, pseudonym: str) -> dict[str, object]:
        """The removed identifiers and the decoded released row of one pseudonymous record."""
        column = self.pseudonym_column
        table = self.release.table
        rows = table.index[table[column] == pseudonym] if column in table.columns else []
        if len(rows) == 0:
            raise ParameterError(f"Pseudonym {pseudonym!r} is not in this release.")
        decoded = self.decode_table(table.loc[rows])
        return decoded.iloc[0].to_dict()

    def decode_table(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Decode every alias, graded value and pseudonym found in a results table (vectorized)."""
        out = frame.copy()
        block = self.payload.get("pseudonyms")
        keyed = None
        if block and block["column"] in out.columns:
            keyed = self._pseudonym_frame().set_index(block["column"])
            known = out[block["column"]].isin(keyed.index)
            ids = out[block["column"]].where(known)
            position = list(out.columns).index(block["column"]) + 1
            for offset, name in enumerate(block["identifiers"]):
                out.insert(position + offset, name if name not in out.columns else f"{name}_identifier",
                           ids.map(keyed[name]).where(known, None))
        for attribute in self.payload.get("aliases", {}):
            if attribute not in out.columns:
                continue
            alias1, alias2 = self._aliases(attribute)
            text = out[attribute].astype(object).where(out[attribute].notna(), "").astype(str)
            decoded = text.map(alias2)
            decoded = decoded.fillna(text.map({k: ONE_OF.join(v) for k, v in alias1.items()}))
            if keyed is not None and f"__original__{attribute}" in keyed.columns:
                exact = out[block["column"]].map(keyed[f"__original__{attribute}"])
                decoded = exact.where(exact.notna(), decoded)
            out[attribute] = decoded.fillna(text)
        for attribute in self.payload.get("graded", {}):
            if attribute in out.columns:
                grading = self._grading(attribute)
                numbers = pd.to_numeric(out[attribute], errors="coerce")
                valid = numbers.notna()
                values = out[attribute].astype(object).copy()
                values[valid] = grading.ungrade(numbers[valid].to_numpy())
                if grading.integer:
                    values[valid] = values[valid].astype(float).astype(np.int64)
                out[attribute] = values
        return out


def _format(value: float, integer: bool) -> str:
    return str(int(value)) if integer else repr(float(value))
