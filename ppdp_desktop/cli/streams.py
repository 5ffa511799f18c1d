"""``-`` on the command line: a data file read from stdin, a single-file output written to stdout.

The core reads and writes paths (a loader sniffs, seeks and may read a file twice), so stdin is spooled to a
file in a private temporary folder (``mkdtemp``: readable by this user only) that is removed when the command
ends; an output to stdout is written to such a file first and copied to stdout only once it is complete, so a
failed job never sends half a file down a pipe. A release package is a folder and a key file is a secret:
``-`` there is refused in one line.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ppdp_desktop.core.errors import InputError, ParameterError

STDIO = "-"
#: ``--input-format`` choices: the suffix the spooled file gets, so the core reads it as that format
INPUT_FORMATS = ("csv", "tsv", "txt", "xlsx", "xls", "sav", "dta", "parquet")
#: leading bytes of the binary formats a pipe may carry; anything else is read as delimited text
_MAGIC = ((b"PK\x03\x04", "xlsx"), (b"PAR1", "parquet"), (b"$FL2", "sav"), (b"$FL3", "sav"),
          (b"\xd0\xcf\x11\xe0", "xls"), (b"<stata_dta>", "dta"))


def is_stdio(value: object) -> bool:
    """True for the ``-`` that stands for stdin or stdout."""
    return value == STDIO


def sniff_format(head: bytes) -> str:
    """The format of a file from its first bytes: a binary format by its signature, else ``csv``."""
    for magic, fmt in _MAGIC:
        if head.startswith(magic):
            return fmt
    return "csv"


def refuse_stdio(value: object, flag: str, why: str) -> None:
    """Raise a one-line usage error when ``value`` is ``-`` where only a path makes sense."""
    if is_stdio(value):
        raise ParameterError(f"{flag} cannot be '-': {why}; give a path.")


@contextmanager
def input_path(value: str, fmt: str | None = None, stdin: BinaryIO | None = None,
               verbose: bool = False) -> Iterator[str]:
    """``value`` itself, or for ``-`` the path of stdin spooled to a private temporary file.

    ``fmt`` (``--input-format``) names the format; without it the first bytes decide (:func:`sniff_format`).
    The file is named ``stdin.<format>``, which is the label the data gets in summaries and reports.
    """
    if not is_stdio(value):
        yield value
        return
    source = stdin or sys.stdin.buffer
    if source.isatty():
        raise InputError("'-' reads the data from stdin, but stdin is a terminal; pipe a file in "
                         "(ppdp ... - < data.csv) or give its path.")
    folder = Path(tempfile.mkdtemp(prefix="ppdp-stdin-"))
    try:
        head = source.read(64)
        if not head:
            raise InputError("stdin: no data came in; pipe a file in (ppdp ... - < data.csv) or give its path.")
        path = folder / f"stdin.{fmt or sniff_format(head)}"
        with path.open("wb") as spool:
            spool.write(head)
            shutil.copyfileobj(source, spool, 1 << 20)
        if verbose:
            print(f"ppdp: read {path.stat().st_size:,} bytes from stdin as {path.suffix[1:]} "
                  "(spooled to a private temporary file)", file=sys.stderr)
        yield str(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def output_path(value: str, suffix: str = ".out", stdout: BinaryIO | None = None) -> Iterator[Path]:
    """``value`` as a path, or for ``-`` a private temporary file (ending in ``suffix``, for writers that go by
    it) whose bytes go to ``stdout`` (default: this process's) once the block has finished without error."""
    if not is_stdio(value):
        yield Path(value)
        return
    folder = Path(tempfile.mkdtemp(prefix="ppdp-stdout-"))
    try:
        path = folder / f"stdout{suffix}"
        yield path
        target = stdout or sys.stdout.buffer
        with path.open("rb") as written:
            shutil.copyfileobj(written, target, 1 << 20)
        target.flush()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
