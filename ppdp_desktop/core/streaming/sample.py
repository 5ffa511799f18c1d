"""The report's records of a streamed release: a uniform random sample gathered during pass 2.

A record is in the sample when its keyed sort key is below ``2**64 * size / n``: the keys are uniform and
secret, so these are a simple random sample (about ``size`` records; every record when the file holds fewer),
and they are the records that come first in the release's order. The report is built from the sample's
outcome (:class:`SampledAnonymization`) exactly as in memory, and says that its per-value and utility figures
are measured on a sample; the guarantee, the estimates from the release files and the re-identification
figures cover every record.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ppdp_desktop.core.anonymize import JobPlan, ReleasedChunk
from ppdp_desktop.core.data.blanks import treat_frame
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.outcome import Anonymization, Applied

#: records of a streamed release the report is measured on
REPORT_SAMPLE = 200_000


@dataclass
class SampledAnonymization(Anonymization):
    """A job's outcome holding a random sample of its records (``table``, ``applied``) of ``n_released``."""

    n_released: int = 0


def _join(parts: list[Any]) -> np.ndarray | pd.api.extensions.ExtensionArray:
    if isinstance(parts[0], pd.Categorical) or isinstance(getattr(parts[0], "dtype", None), pd.CategoricalDtype):
        return union_categoricals([pd.Categorical(p) for p in parts])
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    return pd.concat([pd.Series(p) for p in parts], ignore_index=True).array


def _take(values: object, mask: np.ndarray) -> np.ndarray | pd.api.extensions.ExtensionArray:
    if isinstance(values, np.ndarray):
        return values[mask]
    return pd.Series(values)[mask].array


class ReportSample:
    """Gathers the sample's original records, released records and applied codes, chunk by chunk."""

    def __init__(self, n_records: int, size: int | None = None) -> None:
        size = REPORT_SAMPLE if size is None else size
        self.n_records = n_records
        self.limit = None if n_records <= size else np.uint64(min(2**64 - 1, (2**64 * size) // n_records))
        self.parts: list[_Part] = []

    def add(self, chunk: pd.DataFrame, released: ReleasedChunk, keys: np.ndarray) -> None:
        """Keep the chunk's sampled records (only those: the rest of the chunk is not held)."""
        mask = np.ones(len(keys), dtype=bool) if self.limit is None else keys < self.limit
        if mask.any():
            self.parts.append(_Part.of(chunk, released, keys, mask))

    def outcome(self, job: JobPlan, dataset: Dataset, reidentification) -> SampledAnonymization:
        """The sample as a job outcome (its table in the release's order), for the report builders."""
        parts = self.parts
        original = pd.concat([p.original for p in parts], ignore_index=True)
        rows = pd.concat([p.rows for p in parts], ignore_index=True)
        first = parts[0].applied
        columns = {name: _join([p.applied.columns[name] for p in parts]) for name in first.columns}
        codes = {name: (np.concatenate([p.applied.codes[name][0] for p in parts]),
                        np.concatenate([p.applied.codes[name][1] for p in parts])) for name in first.codes}
        secrets = {name: np.concatenate([p.applied.record_secrets[name] for p in parts]) for name in first.record_secrets}
        applied = Applied(columns, list(first.dropped), codes, secrets)
        order = np.argsort(np.concatenate([p.keys for p in parts]), kind="stable")
        table = rows.take(order).reset_index(drop=True)
        identities = None  # the identifiers in record order (the pseudonyms are the table's)
        if job.needs_pseudonyms:
            identities = pd.concat([p.identifiers.drop(columns=[job.pseudonym_column]) for p in parts],
                                   ignore_index=True)
        if dataset.blank_cells:  # as the job saw them: blank cells filled as chosen (none left out when streamed)
            original = treat_frame(original, list(dataset.blank_cells))[0]
        sample = replace(dataset, frame=original, schema=job.schema)
        return SampledAnonymization(sample, job.settings, job.plan, job.guarantee, table, applied, job.seed, order,
                                    identities, reidentification, job.notes, job.pseudonym_column,
                                    pseudonym_key=job.pseudonym_key if job.needs_pseudonyms else None,
                                    n_released=self.n_records)


@dataclass
class _Part:
    """One chunk's sampled records: original, released, applied codes, identifiers and sort keys."""

    original: pd.DataFrame
    rows: pd.DataFrame
    applied: Applied
    identifiers: pd.DataFrame
    keys: np.ndarray

    @classmethod
    def of(cls, chunk: pd.DataFrame, released: ReleasedChunk, keys: np.ndarray, mask: np.ndarray) -> _Part:
        a = released.applied
        applied = Applied({name: _take(values, mask) for name, values in a.columns.items()}, list(a.dropped),
                          {name: (np.asarray(t)[mask], np.asarray(r)[mask]) for name, (t, r) in a.codes.items()},
                          {name: np.asarray(v, dtype=object)[mask] for name, v in a.record_secrets.items()})
        identifiers = released.identifiers[mask].reset_index(drop=True) if len(released.identifiers.columns) \
            else pd.DataFrame()
        return cls(chunk.reset_index(drop=True)[mask].reset_index(drop=True),
                   released.rows[mask].reset_index(drop=True), applied, identifiers, keys[mask])
