"""Text columns as dictionary codes (pandas categoricals): a column of 1M cells with 50 values held as 1M one-byte
codes and 50 texts, shuffled by its codes and written by Arrow as a dictionary (issue 34: the loaded table's text
columns from the parse on, :func:`text_series`, and the release table's from the take to the write). A column whose
values are mostly distinct (an identifier, the pseudonyms) stays as it is: codes would cost more than the texts.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

#: cells looked at to tell a column of mostly distinct values (an identifier) from one that repeats
SAMPLE = 4096


def is_text(column: pd.Series) -> bool:
    """Whether ``column`` holds text (object or string dtype; not numbers, dates, flags or categoricals)."""
    return pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype)


def mostly_distinct(column: pd.Series, sample: int = SAMPLE) -> bool:
    """Whether a text column's first ``sample`` cells are mostly distinct (over 95 %: an identifier, a free text).
    A domain of 9,000 postcodes repeats ~20 % within 4,096 cells; numbers, dates and flags are never "mostly
    distinct" here (they are not text)."""
    if not is_text(column):
        return False
    head = column.iloc[:sample]
    return len(head) >= 64 and head.nunique(dropna=False) > 0.95 * len(head)


def dictionary_encoded(frame: pd.DataFrame, skip: tuple[str, ...] = ()) -> pd.DataFrame:
    """``frame`` with each text column that repeats (not :func:`mostly_distinct`, not in ``skip``) as a categorical
    of its values (missing cells stay missing); the other columns as they are (no copy)."""
    out = frame.copy(deep=False)
    for i, name in enumerate(frame.columns):
        column = frame.iloc[:, i]
        if name not in skip and is_text(column) and not mostly_distinct(column):
            out.isetitem(i, pd.Categorical(column))
    return out


def text_mostly_distinct(values: pa.Array | pa.ChunkedArray, sample: int = SAMPLE) -> bool:
    """:func:`mostly_distinct` of a column of Arrow text, plain or dictionary-encoded (nulls counted as one value,
    as ``nunique(dropna=False)`` counts them)."""
    head = decoded(values.slice(0, sample))
    return len(head) >= 64 and pc.count_distinct(head, mode="all").as_py() > 0.95 * len(head)


def decoded(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Dictionary-encoded text as plain text of its value type (other columns as they are)."""
    return values.cast(values.type.value_type) if pa.types.is_dictionary(values.type) else values


def text_series(values: pa.ChunkedArray, name: str) -> pd.Series:
    """A column of Arrow text (plain or dictionary-encoded) as a pandas column: as codes over its sorted distinct
    texts (a categorical, the same as :func:`dictionary_encoded` makes) when its values repeat, else as pandas text;
    missing cells stay missing.

    Issue 34: a loaded column of 1M cells and 50 values is 1M one-byte codes, not 1M texts (the input frame a
    third of its size), and the job's shuffle takes codes."""
    if text_mostly_distinct(values):
        return decoded(values).to_pandas().rename(name).reset_index(drop=True)
    if pa.types.is_dictionary(values.type):
        codes, categories = _sorted_codes(values)
    else:
        categories = pc.unique(values)
        categories = pc.drop_null(categories) if categories.null_count else categories
        categories = categories.take(pc.array_sort_indices(categories))
        found = pc.index_in(values, value_set=categories)
        codes = pc.fill_null(found, -1).to_numpy() if found.null_count else found.to_numpy()
    index = pd.Index(pa.chunked_array([categories], categories.type).to_pandas())
    return pd.Series(pd.Categorical.from_codes(codes, categories=index), name=name)


def _sorted_codes(values: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """The codes (-1 where missing) of a dictionary-encoded column over its sorted distinct values, and those values:
    the chunks' dictionaries unified, the values no cell holds (a sliced chunk's) left out."""
    if values.num_chunks == 0:
        return np.empty(0, dtype=np.int32), pa.array([], values.type.value_type)
    unified = values.unify_dictionaries()
    dictionary = unified.chunk(0).dictionary
    found = pa.chunked_array([c.indices for c in unified.chunks], values.type.index_type)
    indices = (pc.fill_null(found, -1) if found.null_count else found).to_numpy()
    used = np.zeros(len(dictionary) + 1, dtype=bool)
    used[indices] = True  # -1 (missing) marks the last, left out below
    kept = np.flatnonzero(used[:-1])
    order = kept[pc.array_sort_indices(dictionary.take(kept)).to_numpy()]
    rank = np.full(len(dictionary) + 1, -1, dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[indices], dictionary.take(order)
