"""What a job produced, in memory: the applied plan (:class:`Applied`) and the whole outcome
(:class:`Anonymization`). Below the methods, so a method's report part can read an outcome without
importing the job that made it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.privacy.pseudonyms import PSEUDONYM_COLUMN, PseudonymKey
from ppdp_desktop.core.privacy.record_table import pseudonym_entry, record_batch
from ppdp_desktop.core.settings import AnonymizationSettings

if TYPE_CHECKING:
    from ppdp_desktop.core.evaluation.reidentification import Reidentification
    from ppdp_desktop.core.methods.base import Plan
    from ppdp_desktop.core.repeat.outcome import RepeatOutcome


@dataclass
class Applied:
    """What applying a plan produced, in the original row order.

    ``columns`` replace the released columns of the same name; ``dropped`` are removed from the
    release; ``codes`` keeps ``(true, released)`` codes of perturbed attributes for the utility
    report; ``record_secrets`` are per-record values only the sealed key may hold.
    """

    columns: dict[str, np.ndarray]
    dropped: list[str] = field(default_factory=list)
    codes: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    record_secrets: dict[str, np.ndarray] = field(default_factory=dict)
    #: per randomized column, each record's mechanism digest when its draws were persistent (issue 30): what the
    #: release ledger compares across releases (:mod:`ppdp_desktop.core.repeat`)
    mechanisms: dict[str, np.ndarray] = field(default_factory=dict)
    #: per record, True where a kept plan's later stage redrew what its persistent draw gave (partitioning's lowered
    #: retention): the released value may differ from an earlier release's, though it tells nothing more
    rederived: np.ndarray | None = None


@dataclass
class Anonymization:
    """The outcome of a job, in memory: the released table and what produced it.

    ``applied`` is aligned with the *original* row order (for reports); ``table`` is shuffled.
    ``seed``, ``pseudonym_key``, ``identities`` (each record's identifiers, in record order; shuffled beside the
    table's pseudonyms as :attr:`pseudonym_map` when asked, not held twice) and the plan's key entries are secret:
    they go only into the key. With ``pseudonym_key`` (record ``i``'s id is ``pseudonym_key.ids(i, i + 1)``), the key holds that
    key and the record table (:meth:`key_records`) instead of the id lists of ``pseudonym_map``.
    """

    dataset: Dataset
    settings: AnonymizationSettings
    plan: Plan
    guarantee: dict[str, Any]
    table: pd.DataFrame
    applied: Applied
    seed: int
    order: np.ndarray
    identities: pd.DataFrame | None = None
    reidentification: Reidentification | None = None  # the risk side (public figures)
    notes: list[str] = field(default_factory=list)  # what the job decided for the user (e.g. a column's role)
    pseudonym_column: str = PSEUDONYM_COLUMN  # a free name: never one of the data's columns
    pseudonym_key: PseudonymKey | None = None
    #: this release among the project's releases (issue 30): its ledger records and cumulative guarantee
    repeat: RepeatOutcome | None = None

    @property
    def has_pseudonyms(self) -> bool:
        """Whether the release has a pseudonym column (and the key a way back from it)."""
        return self.pseudonym_key is not None or self.identities is not None

    @property
    def pseudonym_map(self) -> pd.DataFrame | None:
        """Each released record's pseudonym and identifiers, in the release's (shuffled) order; made when asked
        (the key holds the pseudonym key and the record table instead), so a job does not hold a second copy."""
        if self.identities is None:
            return None
        mapping = self.identities.take(self.order).reset_index(drop=True)
        mapping.insert(0, self.pseudonym_column, self.table[self.pseudonym_column].reset_index(drop=True).array)
        return mapping

    def key_payload(self, n_records: int | None = None) -> dict[str, Any]:
        """Everything authorized reverse lookup needs (sealed by :mod:`ppdp_desktop.core.release.keyfile`)
        but the record table, which :meth:`key_records` gives. ``n_records``: the number of records released
        (default: the dataset's; a streamed job whose ``dataset`` is a sample gives the file's)."""
        payload: dict[str, Any] = {
            "method": self.plan.method,
            "seed": str(self.seed),
            "settings": {"sensitive": self.settings.sensitive, "identifiers": self.settings.identifiers},
            **self.plan.key_json(),
        }
        if self.pseudonym_key is not None:
            n = len(self.dataset.frame) if n_records is None else n_records
            payload["pseudonyms"] = pseudonym_entry(self.pseudonym_column, self.pseudonym_key, n,
                                                    self.dataset.schema.identifiers, self.applied.record_secrets)
        elif (mapping := self.pseudonym_map) is not None:  # format-1 style: every id and identifier as JSON lists
            payload["pseudonyms"] = {
                "column": self.pseudonym_column,
                "ids": _json_column(mapping[self.pseudonym_column]),
                "identifiers": {c: _json_column(mapping[c]) for c in mapping.columns[1:]},
                "records": {a: _json_column(pd.Series(v[self.order])) for a, v in self.applied.record_secrets.items()},
            }
        return payload

    def key_records(self) -> pa.Table | None:
        """The key's record table (``keyfile.seal(..., records=...)``): per original record, in record order, its
        identifiers and record secrets; None without a pseudonym key or without such columns."""
        if self.pseudonym_key is None or not (self.dataset.schema.identifiers or self.applied.record_secrets):
            return None
        frame = self.dataset.frame
        batch = record_batch(frame[self.dataset.schema.identifiers], self.applied.record_secrets)
        return pa.Table.from_batches([batch])


#: rows converted per step: each step holds the interpreter lock, so the window keeps running in between
JSON_ROWS = 100_000


def _json_column(column: pd.Series) -> list[object]:
    """A column as JSON scalars (missing as ``None``), vectorized through pandas, a block of rows at a time."""
    out: list[object] = []
    for start in range(0, len(column), JSON_ROWS):
        part = column.iloc[start:start + JSON_ROWS]
        out += part.astype(object).where(part.notna(), None).tolist()
    return out
