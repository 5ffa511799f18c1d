"""A first look at a data file before loading it: how it seems to be written, and what is uncertain.

The window loads a file straight away when everything is clear, and shows its import options (sheet,
delimiter, encoding, decimal mark, header row, column kinds, with a preview) when something is not:
several sheets, a delimiter that does not split every row alike, text that is not UTF-8, numbers with a
decimal comma, or a title above the column names. Only the start of the file is read.

Each finding is also kept as a :class:`Finding` (the option it concerns, the value it suggests, and whether
the look is sure of it), so that a face that cannot ask -- the command line -- applies what is sure, says so,
and suggests the option for the rest.
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
from ppdp_desktop.core.errors import InputError, setting_ref

HEAD_BYTES = 256 * 1024
_DECIMAL_COMMA = re.compile(r"^\s*[+-]?\d+,\d+\s*$")
_PLAIN_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_NUMBER = re.compile(r"^\s*[+-]?(\d+([.,]\d*)?|[.,]\d+)\s*$")
_THOUSANDS = re.compile(r"^\s*[+-]?\d{1,3},\d{3}\s*$")  # "1,234": a decimal comma or a thousands separator


@dataclass(frozen=True)
class Finding:
    """One finding of a first look, for a face that cannot show the import options.

    option : the load option it concerns (``header_row``, ``decimal``, ``sheet``, ``encoding``, ``sep``).
    value : the value the look suggests for it (also in :attr:`FileFacts.options`), or None.
    sure : whether it is sure enough to apply without asking (and say so); else it is only suggested.
    said : one sentence, applied or suggested, naming the option with :func:`~ppdp_desktop.core.errors.setting_ref`.
    """

    option: str
    value: str | int | None
    sure: bool
    said: str


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
    findings : the doubts as :class:`Finding` objects (those the loader's own error covers are left out).
    """

    path: Path
    format: str
    options: dict[str, str | int] = field(default_factory=dict)
    sheets: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    encoding: str | None = None
    encodings: tuple[Candidate, ...] = ()
    findings: list[Finding] = field(default_factory=list)

    @property
    def unsure(self) -> bool:
        return bool(self.doubts)

    def sure_options(self) -> dict[str, str | int]:
        """The options the look is sure of: a face that cannot ask applies them (and says so)."""
        return {f.option: f.value for f in self.findings if f.sure and f.value is not None}


def inspect_file(path: str | Path, *, sep: str | None = None, encoding: str | None = None,
                 sheet: str | int | None = None, header_row: int | None = None) -> FileFacts:
    """Look at the start of ``path``; raise :class:`InputError` for a file the loader cannot read at all.

    ``sep``, ``encoding``, ``sheet`` and ``header_row`` are what the user already chose (the command line's
    ``--sep``, ``--encoding``, ``--sheet``, ``--header-row``): the look reads the file as the loader will, and
    looks for a title only when no header row was chosen.
    """
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
        _inspect_text(source, facts, sep, encoding, header_row)
    elif fmt in ("xlsx", "xls"):
        _inspect_workbook(source, facts, sheet, header_row)
    return facts


def _inspect_text(source: Path, facts: FileFacts, given_sep: str | None, given_encoding: str | None,
                  given_header: int | None) -> None:
    with source.open("rb") as handle:
        data = handle.read(HEAD_BYTES)
        complete = not handle.read(1)
    if not complete:
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        data = data[: cut + 1] if cut > 0 else data
    try:
        text, codec = sniffing.decode(data, given_encoding, source.name, source)
    except EncodingUnclear as exc:  # the loader refuses it with its own message naming the option
        facts.encodings = exc.candidates
        readings = ", ".join(f"{c.label} reads \"{c.word}\"" for c in exc.candidates)
        facts.doubts.append(f"The file is not UTF-8 text and its encoding cannot be told for sure: {readings}. "
                            "Choose its encoding.")
        text = data.decode(exc.candidates[0].codec, "replace")
    except InputError:  # an encoding the user named that cannot read it: the loader says so
        return
    else:
        facts.encoding = codec
        if codec not in ("utf-8", "utf-8-sig", "utf-16") and given_encoding is None:
            facts.doubts.append(f"The file is not UTF-8 text; it is read as {label(codec)}. Check the accented "
                                "letters in the preview, or choose its encoding.")
            facts.findings.append(Finding("encoding", None, False, f"The file is not UTF-8 text; it is read as "
                                          f"{label(codec)}: if accented letters look wrong, give "
                                          f"{setting_ref('encoding', 'NAME')}."))
    sample = sniffing.sample_of(text)
    try:
        sep = sniffing.normalize_sep(given_sep, source.name) if given_sep else sniffing.sniff_delimiter(sample)
    except InputError:
        return
    if sep is None:
        return  # one column
    counts = sniffing.field_counts(sample, sep)
    if len(counts) < 2:
        return
    records = sniffing.first_records(sample, sep, count=sniffing.SAMPLE_RECORDS)
    filled = [sum(1 for cell in record if cell.strip()) for record in records]
    mode = Counter(counts[1:]).most_common(1)[0][0]
    if given_header is not None:
        pass
    elif _title_row(counts, "field", "a title above the column names", facts):
        pass
    elif len(filled) > 2 and counts[0] > 1 and filled[0] == 1 and _title_row(filled, "filled field", "a title", facts):
        pass  # a title followed by empty fields ("Export;;;;"), as a spreadsheet saves one
    elif sum(c == mode for c in counts) < 0.9 * len(counts) and given_sep is None:
        facts.doubts.append(f"The delimiter {_sep_word(sep)} does not split every row into the same number of "
                            "fields; check the delimiter and the preview.")
        facts.findings.append(Finding("sep", None, False, f"The delimiter {_sep_word(sep)} does not split every row "
                                      f"into the same number of fields; if it is another, give {setting_ref('sep', 'C')}."))
    start = given_header or int(facts.options.get("header_row", 1))
    if len(records) > start:
        _check_header_and_decimals(records[start - 1], records[start:], sep, facts)


def _check_header_and_decimals(header: list[str], rows: list[list[str]], sep: str, facts: FileFacts) -> None:
    if len(header) > 1 and all(_NUMBER.match(cell) for cell in header if cell.strip()):
        facts.doubts.append("The first row holds numbers, not names: it may be data. Choose the row that holds the "
                            "column names.")
        facts.findings.append(Finding("header_row", None, False, "The row read as the header holds numbers, not "
                                      "names: it may be data. The file needs a row of column names; give "
                                      f"{setting_ref('header-row', 'N')} if they are in a lower row."))
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
            facts.findings.append(_decimal_finding(name.strip(), commas))
            return


def _decimal_finding(name: str, commas: list[str]) -> Finding:
    """Sure when a value cannot be a thousands separator ("70,5"); else ("1,234" only) the option is suggested."""
    example = next((c.strip() for c in commas if not _THOUSANDS.match(c)), None)
    if example is not None:
        return Finding("decimal", ",", True, f"Reading numbers with a decimal comma (column {name!r} holds {example}); "
                       f"give {setting_ref('decimal', '.')} to keep such values as written.")
    return Finding("decimal", ",", False, f"Column {name!r} holds values such as {commas[0].strip()}: if the comma is a "
                   f"decimal mark, give {setting_ref('decimal', ',')} to read them as numbers.")


def _inspect_workbook(source: Path, facts: FileFacts, given_sheet: str | int | None, given_header: int | None) -> None:
    facts.sheets = sheet_names(source)
    sheet: str | int = 0
    if given_sheet not in (None, ""):
        chosen = str(given_sheet)
        if chosen in facts.sheets:
            sheet = chosen
        elif chosen.isdigit() and int(chosen) < len(facts.sheets):
            sheet = int(chosen)
        else:
            return  # the loader names the sheets
    elif len(facts.sheets) > 1:
        facts.doubts.append(f"The workbook has {len(facts.sheets)} sheets ({', '.join(facts.sheets)}); choose the one "
                            f"to load (the first, {facts.sheets[0]!r}, is chosen now).")
        facts.findings.append(Finding("sheet", None, False, f"The workbook has {len(facts.sheets)} sheets "
                                      f"({', '.join(facts.sheets)}); the first, {facts.sheets[0]!r}, is read: give "
                                      f"{setting_ref('sheet', 'NAME')} to read another."))
    if given_header is not None:
        return
    try:
        head = read_sheet(source, sheet, facts.format, 30)
    except Exception:  # the loader reports a damaged workbook by name
        return
    filled = head.dropna(how="all").notna().sum(axis=1).tolist()
    if len(filled) > 2:
        _title_row(filled, "filled cell", "a title", facts)


def _title_row(widths: list[int], unit: str, what: str, facts: FileFacts) -> bool:
    """If row 1 is narrower than most rows below it (a title), suggest the first row below it that is as wide as
    most (the header). Sure when every row above that one holds a single cell: titles, not a header with names
    missing."""
    mode = Counter(widths[1:]).most_common(1)[0][0]
    if not (widths[0] < mode and mode > 1):
        return False
    header = next(i for i, c in enumerate(widths) if i > 0 and c >= mode) + 1
    facts.options["header_row"] = header
    facts.doubts.append(f"Row 1 has {widths[0]} {unit}{'s' * (widths[0] != 1)} but the rows below have {mode}: "
                        f"it looks like {what}, so row {header} is taken as the header.")
    if all(w == 1 for w in widths[: header - 1]):
        rows = "row 1 holds a title" if header == 2 else f"rows 1 to {header - 1} hold a title"
        facts.findings.append(Finding("header_row", header, True, f"Reading the column names from row {header} "
                                      f"({rows}); give {setting_ref('header-row', 'N')} to choose another row."))
    else:
        facts.findings.append(Finding("header_row", header, False, f"Row 1 has {widths[0]} {unit}"
                                      f"{'s' * (widths[0] != 1)} but most rows have {mode}: if it is a title, give "
                                      f"{setting_ref('header-row', 'N')} with the row that holds the column names "
                                      f"(row {header} is the first that fills as many)."))
    return True


def _sep_word(sep: str) -> str:
    return {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}.get(sep, repr(sep))
