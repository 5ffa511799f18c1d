"""Reading a data file in record batches, for a release larger than memory (:mod:`ppdp_desktop.core.streaming`).

CSV/TSV/TXT (pyarrow's streaming CSV reader, with the delimiter, encoding and header found as
:func:`~ppdp_desktop.core.data.loading.load_table` finds them) and Parquet (row groups read a batch at a time).
Each column's kind is decided once, from the first :data:`PREVIEW_ROWS` records (or given), and every batch is
typed with it, so a value that does not fit is an :class:`InputError` naming its record. A numeric column is
int64 unless some batch needs floats (a fraction or a missing cell), as the whole file read at once would be:
:meth:`StreamedFile.settle` fixes that after the first pass.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.cell_limit import check_cells
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.digest import FileDigest, HashingReader
from ppdp_desktop.core.data.kinds import convert, type_typed_frame
from ppdp_desktop.core.data.loading import FORMATS, load_table
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import InputError, setting_ref

#: records read to decide each column's kind (and to show the user the data) before streaming
PREVIEW_ROWS = 100_000
#: formats read in batches
STREAMED_FORMATS = ("csv", "parquet")
_BLOCK = 8 << 20  # bytes of text the CSV reader parses at a time


@dataclass
class StreamedFile:
    """A data file read batch by batch: its first records (``preview``, with the kinds and how it was read)
    and :meth:`batches`. Numeric columns are int64 or float64 as :meth:`settle` decided."""

    source: Path
    preview: Dataset
    options: dict = field(default_factory=dict)
    floats: set[str] = field(default_factory=set)  # numeric columns held as float64
    settled: bool = False
    #: the file's name, size and SHA-256, computed while a CSV file is first read whole (pass 1); None before that
    #: and for a Parquet file, whose reader does not read the file from start to end
    digest: FileDigest | None = None

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def hashes_while_reading(self) -> bool:
        """Whether reading every batch sets :attr:`digest` (a CSV file read here, from its start to its end)."""
        return self.preview.details.get("format") == "csv"

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.preview.frame.columns]

    @property
    def kinds(self) -> dict[str, Kind]:
        return {name: attr.kind for name, attr in self.preview.schema.attributes.items()}

    @property
    def estimated_records(self) -> int:
        """About how many records the file holds (its size over the bytes a record takes at its start), for
        progress; a Parquet file says exactly."""
        if self.preview.details.get("format") == "parquet":
            import pyarrow.parquet as pq

            with self.source.open("rb") as parquet:  # a handle: pyarrow would read "file:x.parquet" as a URI
                return pq.ParquetFile(parquet).metadata.num_rows
        with self.source.open("rb") as handle:
            head = handle.read(1 << 20)
        lines = max(1, head.count(b"\n"))
        return max(1, int(self.source.stat().st_size / (len(head) / lines)))

    def settle(self, floats: set[str]) -> None:
        """Fix the numeric columns held as float64 (those for which some batch needed floats)."""
        self.floats = set(floats)
        self.settled = True

    def batches(self, size: int, columns: list[str] | None = None) -> Iterator[tuple[int, pd.DataFrame]]:
        """``(start, frame)`` of ``size`` records at a time (the last may be shorter), ``start`` the index of the
        batch's first record, holding ``columns`` (all when None) typed by their kinds."""
        if size < 1:
            raise InputError(f"The chunk size must be at least 1 record; got {size}.")
        wanted = self.columns if columns is None else list(columns)
        unknown = [c for c in wanted if c not in self.columns]
        if unknown:
            raise InputError(f"{self.name}: has no column {unknown[0]!r}.")
        fmt = self.preview.details.get("format")
        reader = self._csv_tables(wanted) if fmt == "csv" else self._parquet_tables(wanted)
        start = 0
        for frame in _rebatch(reader, size):
            yield start, self._settled(frame)
            start += len(frame)
        if start == 0:
            raise InputError(f"{self.name}: has no data rows; it needs at least one row of data.")

    def _settled(self, frame: pd.DataFrame) -> pd.DataFrame:
        if not self.settled:
            return frame
        for name in frame.columns:
            if self.kinds.get(name) is Kind.NUMERIC and name in self.floats and frame[name].dtype != np.float64:
                frame[name] = frame[name].astype(np.float64)
        return frame

    # --- CSV -----------------------------------------------------------------------------------------------
    def _csv_tables(self, wanted: list[str]) -> Iterator[pd.DataFrame]:
        hashing = HashingReader(self.source) if self.digest is None else None  # the first pass hashes the file
        try:
            yield from self._csv_frames(wanted, hashing)
            if hashing is not None:
                self.digest = hashing.digest()
        finally:
            if hashing is not None:
                hashing.close()

    def _csv_frames(self, wanted: list[str], hashing: HashingReader | None) -> Iterator[pd.DataFrame]:
        import pyarrow.csv as pcsv

        details = self.preview.details
        sep, codec = details["delimiter"], details["encoding"]
        header_row = int(details.get("header_row", 1))
        decimal = details.get("decimal", ".")
        with self.source.open("rb") as handle:
            head = handle.read(sniffing.SAMPLE_BYTES * 4)
        text, _ = sniffing.decode(head, codec, self.name)
        found = sniffing.header_record(sniffing.sample_of(text), sep, header_row)
        if found is None:
            raise InputError(f"{self.name}: has no row {header_row} to take the column names from.")
        header, skip = found
        names = [f"c{i}" for i in range(len(header))]
        positions = {}
        for i, label in enumerate(header):
            label = label.lstrip("\ufeff").strip() if i == 0 else label.strip()
            if label in wanted and label not in positions:
                positions[label] = i

        def blank_or_error(row) -> str:  # whitespace-only lines are skipped, as blank lines are
            return "skip" if row.text is not None and not row.text.strip() else "error"

        encoding = "utf8" if codec in ("utf-8", "utf-8-sig") else codec
        try:
            reader = pcsv.open_csv(
                hashing if hashing is not None else str(self.source),
                read_options=pcsv.ReadOptions(column_names=names, skip_rows=skip, block_size=_BLOCK,
                                              encoding=encoding),
                parse_options=pcsv.ParseOptions(delimiter=sep, newlines_in_values=True,
                                                invalid_row_handler=blank_or_error),
                convert_options=pcsv.ConvertOptions(
                    column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=True, null_values=[""],
                    quoted_strings_can_be_null=True, include_columns=[names[positions[c]] for c in wanted]),
            )
        except pa.ArrowInvalid as exc:
            raise InputError(f"{self.name}: cannot be read as delimited text ({exc}); check the file.") from None
        kinds = self.kinds
        first = 0
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except pa.ArrowInvalid as exc:
                raise InputError(f"{self.name}: after data row {first:,}: {str(exc).splitlines()[0]}; fix that row "
                                 "(quote values that contain the delimiter) or check the delimiter "
                                 f"({setting_ref('sep')}).", setting="sep", file=self.name, row=first) from None
            if batch.num_rows == 0:
                continue
            columns = {}
            for c in wanted:
                values = batch.column(names[positions[c]])
                check_cells(values, c, self.name, first_row=first + 1)  # a cell of millions of characters: refused
                try:
                    columns[c] = convert(values, kinds[c], c, self.name, decimal).reset_index(drop=True)
                except InputError as exc:
                    raise InputError(f"{exc.message} (in the batch of records from {first + 1:,}; the kind was "
                                     f"decided from the first {PREVIEW_ROWS:,} records: set it with "
                                     f"{setting_ref('kind', f'{c}=...')})", setting="kind", file=self.name,
                                     column=c) from None
            frame = pd.DataFrame(columns, columns=wanted)
            first += batch.num_rows
            yield frame

    # --- Parquet -------------------------------------------------------------------------------------------
    def _parquet_tables(self, wanted: list[str]) -> Iterator[pd.DataFrame]:
        import pyarrow.parquet as pq

        kinds = {c: self.kinds[c].value for c in wanted}
        decimal = self.preview.details.get("decimal", ".")
        with self.source.open("rb") as handle:  # a handle: pyarrow would read "file:x.parquet" as a URI
            for batch in pq.ParquetFile(handle).iter_batches(batch_size=65_536, columns=wanted):
                frame = batch.to_pandas()
                frame, _ = type_typed_frame(frame, kinds, self.name, decimal)
                yield frame.reset_index(drop=True)


def _rebatch(frames: Iterator[pd.DataFrame], size: int) -> Iterator[pd.DataFrame]:
    """The records of ``frames`` again, ``size`` at a time."""
    pending: list[pd.DataFrame] = []
    held = 0
    for frame in frames:
        pending.append(frame)
        held += len(frame)
        while held >= size:
            joined = pending[0] if len(pending) == 1 else pd.concat(pending, ignore_index=True)
            yield joined.iloc[:size].reset_index(drop=True)
            rest = joined.iloc[size:]
            pending, held = ([rest] if len(rest) else []), len(rest)
    if held:
        yield pending[0].reset_index(drop=True) if len(pending) == 1 else pd.concat(pending, ignore_index=True)


def open_streamed(path: str | Path, kinds: Mapping[str, str] | None = None, **options) -> StreamedFile:
    """The file at ``path`` ready to be read in batches: its format must be CSV or Parquet; the kinds of the
    columns come from ``kinds`` or from the first :data:`PREVIEW_ROWS` records."""
    source = Path(path)
    fmt = FORMATS.get(source.suffix.lower())
    if fmt not in STREAMED_FORMATS:
        raise InputError(f"{source.name}: a {fmt or source.suffix or 'file without extension'} file cannot be read in "
                         "batches; streaming reads CSV/TSV/TXT or Parquet (save the table as one of them).")
    preview = load_table(source, kinds=kinds, rows=PREVIEW_ROWS, **options)
    given = {**{c: a.kind.value for c, a in preview.schema.attributes.items()}, **dict(kinds or {})}
    return StreamedFile(source, preview, {**options, "kinds": given})
