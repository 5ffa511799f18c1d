"""Text columns as dictionary codes (pandas categoricals): a column of 1M cells with 50 values held as 1M one-byte
codes and 50 texts, shuffled by its codes and written by Arrow as a dictionary (issue 34: the loaded table's text
columns from the parse on, :func:`text_series`, and the release table's from the take to the write). A column whose
values are mostly distinct (an identifier, the pseudonyms) stays as it is: codes would cost more than the texts.
"""
from __future__ import annotations

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


def _mostly_distinct_arrow(values: pa.ChunkedArray, sample: int = SAMPLE) -> bool:
    """:func:`mostly_distinct` of a column of Arrow text (nulls counted as one value, as ``nunique(dropna=False)``)."""
    head = values.slice(0, sample)
    return len(head) >= 64 and pc.count_distinct(head, mode="all").as_py() > 0.95 * len(head)


def text_series(values: pa.ChunkedArray, name: str) -> pd.Series:
    """A column of Arrow text as a pandas column: as codes over its sorted distinct texts (a categorical, as
    :func:`dictionary_encoded` makes) when its values repeat, else as pandas text; missing cells stay missing.

    Issue 34: a loaded column of 1M cells and 50 values is 1M one-byte codes, not 1M texts (the input frame a
    third of its size), and the job's shuffle takes codes."""
    if _mostly_distinct_arrow(values):
        return values.to_pandas().rename(name).reset_index(drop=True)
    categories = pc.unique(values)
    categories = pc.drop_null(categories) if categories.null_count else categories
    categories = categories.take(pc.array_sort_indices(categories))
    codes = pc.index_in(values, value_set=categories)
    codes = pc.fill_null(codes, -1).to_numpy() if codes.null_count else codes.to_numpy()
    index = pd.Index(pa.chunked_array([categories]).to_pandas())
    return pd.Series(pd.Categorical.from_codes(codes, categories=index), name=name)
