"""How the command line reads a data file: the import options given (``--sep --encoding --sheet --decimal
--header-row --kind``) plus the window's first look at the file (:func:`~ppdp_desktop.core.data.inspection.inspect_file`).

What the look is sure of and the user did not choose (a title above the column names, a decimal comma) is applied
and said in one line on stderr, with the option that chooses otherwise; for what it is not sure of, the option to
give is suggested: in a note when the file reads, and in the error when it does not.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ppdp_desktop.core.errors import InputError, ParameterError, phrase

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.inspection import FileFacts, Finding
    from ppdp_desktop.core.data.streamed import StreamedFile


def load_options(args: argparse.Namespace) -> dict[str, object]:
    """How to read the input data (``--sep --encoding --sheet --decimal --header-row --kind``) as
    keyword arguments of :func:`~ppdp_desktop.core.data.loading.load_table`."""
    from ppdp_desktop.core.data.schema import parse_column_list, parse_kind_assignments
    from ppdp_desktop.core.data.sniffing import check_decimal, codec_name, normalize_sep

    try:  # the command line's values: a usage error (2) before any file is read
        if args.encoding is not None:
            codec_name(args.encoding, "--encoding")
        if args.sep is not None and getattr(args, "decimal", None):
            check_decimal(normalize_sep(args.sep, "--sep"), args.decimal, "--sep and --decimal")
    except InputError as exc:
        raise ParameterError(str(exc)) from None
    options = {"sep": args.sep, "encoding": args.encoding, "sheet": getattr(args, "sheet", None),
               "decimal": getattr(args, "decimal", None), "header_row": getattr(args, "header_row", None),
               "kinds": parse_kind_assignments(getattr(args, "kind", None)) or None}
    identifiers = parse_column_list(getattr(args, "identifier", None))
    if identifiers:  # identifiers are codes: read as text ("007" is not "7") unless a kind is given
        options["kinds"] = {**dict.fromkeys(identifiers, "text"), **(options["kinds"] or {})}
    return {k: v for k, v in options.items() if v is not None}


def load_data(args: argparse.Namespace, path: str | None = None) -> Dataset:
    """The data file ``path`` (default ``args.data``) read with :func:`looked_options`."""
    from ppdp_desktop.core.data.loading import load_table
    source = path if path is not None else args.data
    with looked_options(args, source) as options:
        return load_table(source, **options)


def open_data_streamed(args: argparse.Namespace, path: str) -> StreamedFile:
    """``path`` opened to be read in batches, with :func:`looked_options`."""
    from ppdp_desktop.core.data.streamed import open_streamed

    with looked_options(args, path) as options:
        return open_streamed(path, **options)


@contextmanager
def looked_options(args: argparse.Namespace, path: str) -> Iterator[dict[str, object]]:
    """:func:`load_options` plus what the first look at ``path`` is sure of (each said on stderr); an
    :class:`InputError` raised while reading is completed by the options the look suggests, and when the file
    reads they are printed as notes."""
    options = load_options(args)
    suggested: list[Finding] = []
    facts = _first_look(path, options)
    for finding in facts.findings if facts is not None else []:
        if finding.option in options:  # the user chose: nothing to apply or suggest
            continue
        if finding.sure and finding.value is not None:
            options[finding.option] = finding.value
            _note(path, finding)
        else:
            suggested.append(finding)
    try:
        yield options
    except InputError as exc:
        if suggested:
            exc.message = " ".join([exc.message, *(f.said for f in suggested)])
            exc.args = (exc.message,)
        raise
    for finding in suggested:
        _note(path, finding)


def _first_look(path: str, options: dict[str, object]) -> FileFacts | None:
    """The window's first look at ``path`` read as ``options`` say, or None when the loader will refuse it."""
    from ppdp_desktop.core.data.inspection import inspect_file

    header = options.get("header_row")
    try:
        return inspect_file(path, sep=options.get("sep"), encoding=options.get("encoding"),
                            sheet=options.get("sheet"), header_row=int(header) if header is not None else None)
    except InputError:  # a missing or unsupported file: the loader says so in its own words
        return None


def _note(path: str, finding: Finding) -> None:
    said = phrase(finding.said)
    print(f"ppdp: note: {Path(path).name}: {said[:1].lower()}{said[1:]}", file=sys.stderr)
