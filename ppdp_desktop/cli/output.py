"""What a command prints, under the global ``--quiet`` / ``--verbose`` and a command's ``--json``.

The commands print their sentences with plain ``print``; :func:`console` decides where those go for the
command's whole run, so that every line (also one added later) obeys the options:

* ``--quiet``: stdout is dropped and stderr is held back: only the one-line error of a failure is shown (and
  the held lines of a command that reports its own failure, such as ``selftest``), nothing on success.
* ``--json``: the sentences go to stderr, and stdout carries exactly one JSON document (:func:`emit_json`).

Documents and data meant for stdout (``--json``, an output file given as ``-``) are written to the stream
saved by ``main`` before the redirection (:func:`stdout_of`), so ``--quiet`` never swallows them.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, TextIO

import numpy as np

#: attribute of the parsed arguments holding the stdout that documents and data go to
STDOUT_ATTR = "_stdout"


class _Discard(io.TextIOBase):
    """A text stream that keeps nothing (stdout under ``--quiet``)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


@contextmanager
def console(args: argparse.Namespace) -> Iterator[io.StringIO | None]:
    """Redirect the command's own printing for ``--quiet`` / ``--json``; yields the held-back stderr
    (``--quiet``) or None. The real stdout is saved in ``args`` first (:func:`stdout_of`)."""
    setattr(args, STDOUT_ATTR, sys.stdout)
    if getattr(args, "quiet", False):
        held = io.StringIO()
        with redirect_stdout(_Discard()), redirect_stderr(held):
            yield held
    elif getattr(args, "json", False):
        with redirect_stdout(sys.stderr):
            yield None
    else:
        yield None


def stdout_of(args: argparse.Namespace) -> TextIO:
    """The stdout that documents and data go to (the process's, when a command runs outside ``main``)."""
    return getattr(args, STDOUT_ATTR, None) or sys.stdout


def binary_stdout_of(args: argparse.Namespace):
    """The binary side of :func:`stdout_of` (for an output file given as ``-``)."""
    stream = stdout_of(args)
    stream.flush()
    return getattr(stream, "buffer", stream)


def to_plain(value: Any) -> Any:
    """``value`` as JSON values: numbers as numbers (a NaN or infinity as null), tuples and arrays as lists,
    dataclasses and objects with ``to_json()`` as objects, paths as text."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        return [to_plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if hasattr(value, "to_json"):
        return to_plain(value.to_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not f.name.startswith("_") and f.repr}
    return str(value)


def emit_json(args: argparse.Namespace, document: Any) -> None:
    """Print ``document`` as the one JSON document on stdout (indented, keys in the order given)."""
    stream = stdout_of(args)
    stream.write(json.dumps(to_plain(document), indent=2, allow_nan=False) + "\n")
    stream.flush()


def wants_json(args: argparse.Namespace) -> bool:
    """True when the command was given ``--json``."""
    return bool(getattr(args, "json", False))
