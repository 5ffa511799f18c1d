"""The input file cut into partitions that Dask workers read on their own, each typed as the streamed job types it.

A CSV file is cut into byte ranges that begin at a record: just after a line feed that is outside quotes. Where
the file has no quote character, any line feed is one; otherwise the quotes are counted from the first data
record (a line feed is outside quotes when an even number came before it), which is exact only when every
quoted field is quoted as RFC 4180 says, so that is checked first: an opening quote must start a field, a
closing quote must end it, ``""`` inside is one quote. A file that breaks that rule (or in an encoding whose
bytes could look like a line feed, UTF-16) stays one partition. Partition 0 starts at byte 0 and skips the
header lines, exactly as :class:`~ppdp_desktop.core.data.streamed.StreamedFile` does; every range is parsed
with the same options and each column typed with :func:`~ppdp_desktop.core.data.kinds.convert` and the
file's kinds. A Parquet file is cut between row groups.

Nothing here imports Dask: a layout is a small picklable value that a worker reads from (the workers must see
the file at the same path as the client).
"""
from __future__ import annotations

import math
import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.cell_limit import check_cells
from ppdp_desktop.core.data.kinds import convert, type_typed_frame
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.data.streamed import StreamedFile
from ppdp_desktop.core.errors import InputError, setting_ref

_BLOCK = 8 << 20  # bytes the CSV reader parses at a time (as StreamedFile)
_SCAN = 64 << 20  # bytes of the file looked at a time when counting quotes
_QUOTE, _LF, _CR = 0x22, 0x0A, 0x0D
_SPLITTABLE = ("utf-8", "ascii", "cp125", "iso8859")  # codecs whose ASCII bytes always mean ASCII characters


@dataclass(frozen=True)
class CsvLayout:
    """A CSV file as byte ranges ``bounds[k] .. bounds[k + 1]`` of whole records, and how to parse one."""

    path: str
    name: str
    bounds: tuple[int, ...]
    skip: int  # lines before the data (partition 0 only)
    n_fields: int
    positions: dict[str, int]  # column -> field number
    sep: str
    encoding: str
    decimal: str
    kinds: dict[str, Kind]

    @property
    def n_partitions(self) -> int:
        return len(self.bounds) - 1

    def frames(self, index: int, columns: list[str]) -> Iterator[pd.DataFrame]:
        """The records of partition ``index`` (``columns`` of them, typed by their kinds), a parsed block at a time."""
        import pyarrow.csv as pcsv

        first, last = self.bounds[index], self.bounds[index + 1]
        if last <= first:
            return
        names = [f"c{i}" for i in range(self.n_fields)]

        def blank_or_error(row) -> str:  # whitespace-only lines are skipped, as blank lines are
            return "skip" if row.text is not None and not row.text.strip() else "error"

        with pa.memory_map(self.path) as mapped:
            mapped.seek(first)
            data = mapped.read_buffer(last - first)
            try:
                reader = pcsv.open_csv(
                    pa.BufferReader(data),
                    read_options=pcsv.ReadOptions(column_names=names, skip_rows=self.skip if index == 0 else 0,
                                                  block_size=_BLOCK, encoding=self.encoding),
                    parse_options=pcsv.ParseOptions(delimiter=self.sep, newlines_in_values=True,
                                                    invalid_row_handler=blank_or_error),
                    convert_options=pcsv.ConvertOptions(
                        column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=True, null_values=[""],
                        quoted_strings_can_be_null=True, include_columns=[names[self.positions[c]] for c in columns]),
                )
            except pa.ArrowInvalid as exc:
                raise InputError(f"{self.name}: cannot be read as delimited text ({exc}); check the file.") from None
            seen = 0
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except pa.ArrowInvalid as exc:
                    raise InputError(f"{self.name}: in the part from byte {first:,}: {str(exc).splitlines()[0]}; fix "
                                     "that row (quote values that contain the delimiter) or check the delimiter "
                                     f"({setting_ref('sep')}).", setting="sep", file=self.name) from None
                for c in columns:  # a cell of millions of characters: refused, as when the file is read whole
                    check_cells(batch.column(names[self.positions[c]]), c, self.name, first_row=seen + 1,
                                where=f" of the part of the file from byte {first:,}")
                seen += batch.num_rows
                if batch.num_rows:
                    yield pd.DataFrame({c: self._typed(batch.column(names[self.positions[c]]), c, first)
                                        for c in columns}, columns=columns)

    def _typed(self, values: pa.Array, column: str, first: int) -> pd.Series:
        try:
            return convert(values, self.kinds[column], column, self.name, self.decimal).reset_index(drop=True)
        except InputError as exc:
            raise InputError(f"{exc.message} (in the part of the file from byte {first:,}; the kind was decided "
                             f"from the first records: set it with {setting_ref('kind', f'{column}=...')})",
                             setting="kind", file=self.name, column=column) from None


@dataclass(frozen=True)
class ParquetLayout:
    """A Parquet file as runs of row groups, ``groups[k]`` for partition ``k``."""

    path: str
    name: str
    groups: tuple[tuple[int, ...], ...]
    decimal: str
    kinds: dict[str, Kind]

    @property
    def n_partitions(self) -> int:
        return len(self.groups)

    def frames(self, index: int, columns: list[str]) -> Iterator[pd.DataFrame]:
        """The records of partition ``index`` (``columns`` of them, typed as StreamedFile types them)."""
        import pyarrow.parquet as pq

        if not self.groups[index]:
            return
        kinds = {c: self.kinds[c].value for c in columns}
        parquet = pq.ParquetFile(self.path)
        for batch in parquet.iter_batches(batch_size=65_536, row_groups=list(self.groups[index]), columns=columns):
            frame, _ = type_typed_frame(batch.to_pandas(), kinds, self.name, self.decimal)
            yield frame.reset_index(drop=True)


Layout = CsvLayout | ParquetLayout


def settled(frame: pd.DataFrame, kinds: dict[str, Kind], floats: set[str] | frozenset[str]) -> pd.DataFrame:
    """``frame`` with the numeric columns the first pass found fractional held as float64 (StreamedFile.settle)."""
    for name in frame.columns:
        if kinds.get(name) is Kind.NUMERIC and name in floats and frame[name].dtype != np.float64:
            frame[name] = frame[name].astype(np.float64)
    return frame


def layout_of(source: StreamedFile, parts: int) -> Layout:
    """``source`` cut into about ``parts`` partitions (fewer for a small file; one when it cannot be cut safely)."""
    details = source.preview.details
    kinds = source.kinds
    decimal = details.get("decimal", ".")
    if details.get("format") == "parquet":
        return ParquetLayout(str(source.source), source.name, _row_group_runs(source.source, parts), decimal, kinds)
    sep, codec = details["delimiter"], details["encoding"]
    header_row = int(details.get("header_row", 1))
    with source.source.open("rb") as handle:
        head = handle.read(sniffing.SAMPLE_BYTES * 4)
    text, _ = sniffing.decode(head, codec, source.name)
    found = sniffing.header_record(sniffing.sample_of(text), sep, header_row)
    if found is None:
        raise InputError(f"{source.name}: has no row {header_row} to take the column names from.")
    header, skip = found
    positions: dict[str, int] = {}
    for i, label in enumerate(header):
        label = label.lstrip("\ufeff").strip() if i == 0 else label.strip()
        if label in source.columns and label not in positions:
            positions[label] = i
    size = source.source.stat().st_size
    start = _after_lines(head, skip)
    bounds: tuple[int, ...] = (0, size)
    if sep.isascii() and codec.startswith(_SPLITTABLE) and start is not None and parts > 1:
        bounds = _record_bounds(source.source, start, size, parts, sep)
    encoding = "utf8" if codec in ("utf-8", "utf-8-sig") else codec
    return CsvLayout(str(source.source), source.name, bounds, skip, len(header), positions, sep, encoding, decimal,
                     kinds)


def _row_group_runs(path: Path, parts: int) -> tuple[tuple[int, ...], ...]:
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path).metadata
    rows = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    per_part = max(1, math.ceil(sum(rows) / max(1, parts)))
    runs: list[list[int]] = [[]]
    held = 0
    for i, n in enumerate(rows):
        if held >= per_part:
            runs.append([])
            held = 0
        runs[-1].append(i)
        held += n
    return tuple(tuple(run) for run in runs)


def _after_lines(head: bytes, lines: int) -> int | None:
    """The byte after the first ``lines`` physical lines of ``head`` (CR LF, CR or LF end one), None if beyond."""
    position = 0
    for _ in range(lines):
        lf, cr = head.find(b"\n", position), head.find(b"\r", position)
        ends = [p for p in (lf, cr) if p >= 0]
        if not ends:
            return None
        end = min(ends)
        position = end + (2 if head[end:end + 2] == b"\r\n" else 1)
    return position


def _record_bounds(path: Path, start: int, size: int, parts: int, sep: str) -> tuple[int, ...]:
    """Byte offsets ``0, b1, ..., size``: each ``b`` just after a line feed outside quotes, near an equal cut."""
    if size - start < parts:
        return 0, size
    targets = [start + (size - start) * j // parts for j in range(1, parts)]
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data.find(b'"', start) < 0:
            cuts = [data.find(b"\n", t) + 1 for t in targets]
        else:
            quoted = _quoted_cuts(data, start, size, targets, sep)
            if quoted is None:
                return 0, size
            cuts = quoted
    return tuple(sorted({0, size, *[c for c in cuts if start < c < size]}))


def _quoted_cuts(data: mmap.mmap, start: int, size: int, targets: list[int], sep: str) -> list[int] | None:
    """For each target, the byte after the first line feed at or beyond it with an even number of quotes before
    it (counted from ``start``, where a record begins); None when a quote does not open or close a field."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    beside = np.zeros(256, dtype=bool)  # what may stand before an opening quote and after a closing one
    beside[[ord(sep), _LF, _CR, _QUOTE]] = True  # a quote beside a quote: "" inside a quoted field
    cuts: list[int] = []
    pending = list(targets)
    quotes_before = 0
    for first in range(start, size, _SCAN):
        last = min(size, first + _SCAN)
        block = buffer[first:last]
        quotes = np.flatnonzero(block == _QUOTE) + first
        if len(quotes):
            opening = (quotes_before + np.arange(len(quotes))) % 2 == 0
            before = np.where(quotes > start, buffer[np.maximum(quotes - 1, 0)], _LF)
            after = np.where(quotes + 1 < size, buffer[np.minimum(quotes + 1, size - 1)], _LF)
            if not (beside[before[opening]].all() and beside[after[~opening]].all()):
                return None
        while pending and pending[0] < last:
            target = pending[0]
            feeds = np.flatnonzero(block[max(0, target - first):] == _LF) + max(first, target)
            outside = feeds[(quotes_before + np.searchsorted(quotes, feeds)) % 2 == 0]
            if not len(outside):
                break  # the record goes on into the next block
            cuts.append(int(outside[0]) + 1)
            pending = [t for t in pending[1:] if t > outside[0]]
        quotes_before += len(quotes)
    return cuts
