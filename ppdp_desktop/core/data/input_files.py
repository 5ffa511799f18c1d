"""Inputs are regular files: a device, a pipe or a socket given where a file is read is refused at once.

``/dev/zero`` and ``/dev/urandom`` never end (a read takes all memory, then fails a minute later), a FIFO blocks
until someone writes to it (a hang), a folder is not a file. :func:`check_regular` looks with ``stat``, which
neither opens nor blocks, and names what the path is and what to give instead. A table read from a pipe is spooled
to a regular file first by the command line (``-``: :mod:`ppdp_desktop.cli.streams`).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ppdp_desktop.core.errors import InputError

__all__ = ["check_regular", "file_kind"]

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str | None:
    """What a ``stat`` mode is when it is not a regular file (``"a named pipe (FIFO)"``); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular(path: str | os.PathLike[str], what: str = "data file") -> Path:
    """``path`` if it names a regular file (a link to one counts); else an :class:`InputError` naming what it is.

    A missing path is left to the reader (its own "not found" message); ``what`` says what was expected there.
    """
    source = Path(path)
    try:
        mode = os.stat(source).st_mode
    except (OSError, ValueError):  # missing, unreadable, or a NUL in the name: the reader says so in its words
        return source
    kind = file_kind(mode)
    if kind is not None:
        name = source.name or str(source)
        raise InputError(f"{name}: is {kind}, not a regular file; give the path of a {what}. A device or a pipe is "
                         "never read as an input: it could block or never end.", file=str(source))
    return source
