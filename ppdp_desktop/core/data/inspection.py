"""A first look at a data file before loading it: how it seems to be written, and what is uncertain.

The window loads a file straight away when everything is clear, and shows its import options (sheet,
delimiter, encoding, decimal mark, header row, column kinds, with a preview) when something is not:
several sheets, a delimiter that does not split every row alike, text that is not UTF-8, numbers with a
decimal comma, or a title above the column names. Only the start of the file is read.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ppdp_desktop.core.data import sniffing
from ppdp_desktop.core.data.encoding_guess import Candidate, EncodingUnclear, label
from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.data.loading import FORMATS, SUPPORTED, read_sheet, sheet_names
from ppdp_desktop.core.errors import InputError

HEAD_BYTES = 256 * 1024
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d+,\d+\s*$")
_PLAIN_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_NUMBER = re.compile(r"^\s*[+-]?(\d+([.,]\d*)?|[.,]\d+)\s*$")


@dataclass
class FileFacts:
    """What a first look found.

    format : the loader's format name (csv, xlsx, xls, sav, dta, parquet).
    options : suggested load options (only those that differ from the loader's defaults).
    sheets : the worksheets of a workbook, else empty.
    doubts : why the window should show the import options, one sentence each; empty when all is clear.
    encoding : the encoding a text file is read in (its codec name), or None when it cannot be told.
    encodings : the encodings to choose from when it cannot be told, best first (each with a word and a line
        of the file as it reads them); empty otherwise.
    """

    path: Path
    format: str
    options: dict[str, str | int] = field(default_factory=dict)
    sheets: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    encoding: str | None = None
    encodings: tuple[Candidate, ...] = ()

    @property
    def unsure(self) -> bool:
        return bool(self.doubts)


def inspect_file(path: str | Path) -> FileFacts:
    """Look at the start of ``path``; raise :class:`InputError` for a file the loader cannot read at all."""
    source = Path(path)
    fmt = FORMATS.get(source.suffix.lower())
    if fmt is None:
        raise InputError(f"{source.name}: unsupported file type {source.suffix or '(no extension)'!r}; "
                         f"use one of {SUPPORTED}.")
    if not source.exists():
        raise InputError(f"{source.name}: file not found ({source}); check the path.")
    check_regular(source, f"data file ({SUPPORTED})")  # a FIFO would hang the first look, a device never end
    facts = FileFacts(source, fmt)
    if fmt == "csv":
        _inspect_text(source, facts)
    elif fmt in ("xlsx", "xls"):
        _inspect_workbook(source, facts)
    return facts


def _inspect_text(source: Path, facts: FileFacts) -> None:
    with source.open("rb") as handle:
        data = handle.read(HEAD_BYTES)
        complete = not handle.read(1)
    if not complete:
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        data = data[: cut + 1] if cut > 0 else data
    try:
        text, codec = sniffing.decode(data, None, source.name, source)
    except EncodingUnclear as exc:
        facts.encodings = exc.candidates
        readings = ", ".join(f"{c.label} reads \"{c.word}\"" for c in exc.candidates)
        facts.doubts.append(f"The file is not UTF-8 text and its encoding cannot be told for sure: {readings}. "
                            "Choose its encoding.")
        text = data.decode(exc.candidates[0].codec, "replace")
    else:
        facts.encoding = codec
        if codec not in ("utf-8", "utf-8-sig", "utf-16"):
            facts.doubts.append(f"The file is not UTF-8 text; it is read as {label(codec)}. Check the accented "
                                "letters in the preview, or choose its encoding.")
    sample = sniffing.sample_of(text)
    sep = sniffing.sniff_delimiter(sample)
    if sep is None:
        return  # one column
    counts = sniffing.field_counts(sample, sep)
    if len(counts) < 2:
        return
    mode = Counter(counts[1:]).most_common(1)[0][0]
    if _title_row(counts, "field", "a title above the column names", facts):
        pass
    elif sum(c == mode for c in counts) < 0.9 * len(counts):
        facts.doubts.append(f"The delimiter {_sep_word(sep)} does not split every row into the same number of "
                            "fields; check the delimiter and the preview.")
    records = sniffing.first_records(sample, sep, count=sniffing.SAMPLE_RECORDS)
    start = int(facts.options.get("header_row", 1))
    if len(records) > start:
        _check_header_and_decimals(records[start - 1], records[start:], sep, facts)


def _check_header_and_decimals(header: list[str], rows: list[list[str]], sep: str, facts: FileFacts) -> None:
    if len(header) > 1 and all(_NUMBER.match(cell) for cell in header if cell.strip()):
        facts.doubts.append("The first row holds numbers, not names: it may be data. Choose the row that holds the "
                            "column names.")
    if sep == ",":
        return
    columns = pd.DataFrame([r for r in rows if len(r) == len(header)], dtype=object)
    for i, name in enumerate(header):
        if i not in columns:
            break
        cells = [str(v) for v in columns[i] if str(v).strip()]
        commas = [c for c in cells if _DECIMAL_COMMA.match(c)]
        if commas and all(_DECIMAL_COMMA.match(c) or _PLAIN_INTEGER.match(c) for c in cells):
            facts.options["decimal"] = ","
            facts.doubts.append(f"Column {name.strip()!r} holds numbers with a decimal comma (e.g. {commas[0].strip()}); "
                                "the decimal mark is set to comma.")
            return


def _inspect_workbook(source: Path, facts: FileFacts) -> None:
    facts.sheets = sheet_names(source)
    if len(facts.sheets) > 1:
        facts.doubts.append(f"The workbook has {len(facts.sheets)} sheets ({', '.join(facts.sheets)}); choose the one "
                            f"to load (the first, {facts.sheets[0]!r}, is chosen now).")
    try:
        head = read_sheet(source, 0, facts.format, 30)
    except Exception:  # the loader reports a damaged workbook by name
        return
    filled = head.dropna(how="all").notna().sum(axis=1).tolist()
    if len(filled) > 2:
        _title_row(filled, "filled cell", "a title", facts)


def _title_row(widths: list[int], unit: str, what: str, facts: FileFacts) -> bool:
    """If row 1 is narrower than most rows below it (a title), suggest the first full row as the header."""
    mode = Counter(widths[1:]).most_common(1)[0][0]
    if not (widths[0] < mode and mode > 1):
        return False
    header = next((i for i, c in enumerate(widths) if c == mode), 0) + 1
    facts.options["header_row"] = header
    facts.doubts.append(f"Row 1 has {widths[0]} {unit}{'s' * (widths[0] != 1)} but the rows below have {mode}: "
                        f"it looks like {what}, so row {header} is taken as the header.")
    return True


def _sep_word(sep: str) -> str:
    return {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}.get(sep, repr(sep))
