"""What the sealed key holds for each record, as Arrow: its removed identifiers and its record secrets.

The key's payload says how to read the table (:func:`pseudonym_entry`): the pseudonym key (record ``i``'s id
is :meth:`PseudonymKey.ids`), the number of records, the identifier columns and the record-secret
attributes. The record table has one row per original record, in record order (record index = row number);
its columns are the identifiers, then the secrets, in the order the entry lists them (they are read by
position: a secret column is named ``"__original__" + attribute``). The ids themselves are not stored: they
are recomputed from the key, and a released id leads back to its row through :meth:`PseudonymKey.index_of`. Stable
pseudonyms (issue 30) are the exception: their key stays with the custodian secret, so each record's id is stored
as the record secret :data:`~ppdp_desktop.core.privacy.pseudonyms.STABLE_RECORD` and the entry says ``"stable"``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey

__all__ = ["SECRET_PREFIX", "arrow_column", "pseudonym_entry", "record_batch"]

SECRET_PREFIX = "__original__"


def pseudonym_entry(column: str, key: PseudonymKey, n: int, identifiers: Iterable[str],
                    secrets: Iterable[str]) -> dict[str, Any]:
    """The key payload's ``"pseudonyms"`` entry (JSON): the release's pseudonym ``column``, the key in hex (stable
    pseudonyms: ``"stable": true`` instead, their ids kept in the record table as the record secret
    :data:`~ppdp_desktop.core.privacy.pseudonyms.STABLE_RECORD`), the number of records ``n`` and the names of the
    record table's columns (identifiers, then record secrets)."""
    keyed: dict[str, Any] = {"stable": True} if key.stable else {"key": key.hex()}
    return {"column": column, **keyed, "n": int(n), "identifiers": list(identifiers), "records": list(secrets)}


def record_batch(identifiers: pd.DataFrame, secrets: Mapping[str, np.ndarray | pd.Series] | None = None,
                 schema: pa.Schema | None = None) -> pa.RecordBatch:
    """Records ``start ..`` of the record table: their identifier columns, then their record secrets.

    Parameters
    ----------
    identifiers : pandas.DataFrame
        The removed identifier columns of the records, in record order.
    secrets : mapping of str to array, optional
        ``Applied.record_secrets`` of the same records (text or None per record).
    schema : pyarrow.Schema, optional
        The column types to use (e.g. the first chunk's ``batch.schema``, so that every chunk of a streamed
        release has the same); by default, what the values hold (secrets as text).

    Returns
    -------
    pyarrow.RecordBatch
    """
    secrets = secrets or {}
    names = [str(c) for c in identifiers.columns] + [SECRET_PREFIX + a for a in secrets]
    arrays = [arrow_column(identifiers.iloc[:, i]) for i in range(identifiers.shape[1])]
    arrays += [arrow_column(pd.Series(np.asarray(values, dtype=object)), text=True) for values in secrets.values()]
    if schema is not None:
        arrays = [array.cast(field.type) for array, field in zip(arrays, schema)]
        return pa.RecordBatch.from_arrays(arrays, schema=schema)
    return pa.RecordBatch.from_arrays(arrays, names=names)


def arrow_column(values: pd.Series, text: bool = False) -> pa.Array:
    """One column as Arrow: as text if ``text``, else in the values' own type; as text where that fails (mixed
    types)."""
    if text:
        try:
            return pa.array(values, type=pa.string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    else:
        try:
            array = pa.array(values, from_pandas=True)
            return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            pass
    return pa.array(values.astype("string"), type=pa.string(), from_pandas=True)
