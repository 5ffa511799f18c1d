"""The two passes of a streamed job over its input file.

Pass 1 (:func:`gather_plan_columns`) keeps of every record only the columns the plan reads, compactly (a
categorical's codes for text, the numbers for a numeric column) — the statistics every plan is computed from
— and learns which numeric columns need floats. Pass 2 (:func:`release_chunks`) applies the verified plan a
chunk at a time with :func:`~ppdp_desktop.core.anonymize.release_chunk`, the function the in-memory job uses.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from ppdp_desktop.core.anonymize import Bound, JobPlan, ReleasedChunk, release_chunk
from ppdp_desktop.core.data.freed_memory import return_freed
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.data.streamed import StreamedFile
from ppdp_desktop.core.progress import CancelToken, Progress


def _compact(series: pd.Series, numeric: bool) -> pd.Categorical | np.ndarray:
    if numeric:
        return series.to_numpy()
    return pd.Categorical(series)


def _joined(parts: list, numeric: bool, floats: bool) -> pd.Series:
    if numeric:
        values = np.concatenate(parts)
        return pd.Series(values.astype(np.float64) if floats else values)
    return pd.Series(parts[0] if len(parts) == 1 else union_categoricals(parts, sort_categories=True))


def gather_plan_columns(source: StreamedFile, columns: list[str], chunk_size: int, progress: Progress,
                        cancel: CancelToken) -> pd.DataFrame:
    """Pass 1: ``columns`` of every record (compact), in record order; settles ``source``'s numeric types."""
    numeric = [c for c in source.columns if source.kinds.get(c) is Kind.NUMERIC]
    read = list(dict.fromkeys([*columns, *numeric]))
    parts: dict[str, list] = {c: [] for c in columns}
    floats: set[str] = set()
    seen = 0
    for _start, chunk in source.batches(chunk_size, read):
        for c in numeric:
            if chunk[c].dtype == np.float64:
                floats.add(c)
        for c in columns:
            parts[c].append(_compact(chunk[c], c in numeric))
        seen += len(chunk)
        del chunk
        return_freed()  # the chunk's text and temporaries, before the next chunk's (glibc's heap: issue 34)
        progress(min(0.99, seen / max(seen + 1, source.estimated_records)), f"Read {seen:,} records (pass 1)")
        cancel.check()
    source.settle(floats)
    frame = pd.DataFrame({c: _joined(parts[c], c in numeric, c in floats) for c in columns}, index=pd.RangeIndex(seen))
    return frame


def compact_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s columns as categoricals (a chunk's released quasi-identifiers, kept for every record)."""
    return pd.DataFrame({c: pd.Categorical(frame[c]) for c in frame.columns}, index=frame.index)


def join_compact(parts: list[pd.DataFrame], n: int) -> pd.DataFrame:
    """The chunks of :func:`compact_frame` as one frame of ``n`` records (categories united, never as objects)."""
    if not parts:
        return pd.DataFrame(index=pd.RangeIndex(n))
    return pd.DataFrame({c: pd.Series(union_categoricals([p[c].array for p in parts]) if len(parts) > 1
                                      else parts[0][c].array) for c in parts[0].columns}, index=pd.RangeIndex(n))


def release_chunks(source: StreamedFile, job: JobPlan, bound: Bound, chunk_size: int
                   ) -> Iterator[tuple[pd.DataFrame, ReleasedChunk]]:
    """Pass 2: every chunk of records, and the same records as released (original order within the chunk)."""
    for start, chunk in source.batches(chunk_size):
        yield chunk, release_chunk(job, bound, chunk, start)
