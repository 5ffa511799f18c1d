"""Reading JSON someone else may have written, within bounds: every JSON file the app reads goes through here.

A project file, ``release.json``, ``SIGNATURE``, a taxonomy or a key file's header can come from anyone. Python's
``json`` module would read a 5,000-digit number (and then fail converting it), recurse until the interpreter
gives up on deep nesting, accept ``NaN`` (which is not JSON) and read a file of any size, even a device that never
ends. Here a file must be a regular file of at most ``max_bytes``, UTF-8 (a byte-order mark is skipped), nested at
most :data:`MAX_DEPTH` levels, with numbers of at most :data:`MAX_NUMBER_CHARS` characters; anything else is the
caller's own error class with one sentence naming the file and what is wrong.
"""
from __future__ import annotations

import codecs
import json
import os
import stat
from pathlib import Path
from typing import Any

from ppdp_desktop.core.errors import InputError, PPDPError

#: the deepest nesting of objects and lists accepted (a taxonomy of 100 levels is nested about 200 deep)
MAX_DEPTH = 256
#: the longest number accepted, in characters (a float's 17 digits and exponent need about 25)
MAX_NUMBER_CHARS = 100
#: the default size limit of a JSON file
DEFAULT_MAX_BYTES = 64 * 1024 ** 2


class _Refused(ValueError):
    """A limit crossed while parsing (raised from the parser's hooks, turned into the caller's error)."""


def _number(kind: type) -> Any:
    def parse(text: str) -> Any:
        if len(text) > MAX_NUMBER_CHARS:
            raise _Refused(f"holds a number of {len(text):,} characters (at most {MAX_NUMBER_CHARS} are accepted)")
        return kind(text)
    return parse


def _constant(name: str) -> Any:
    raise _Refused(f"holds {name}, which is not a JSON value")


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects and lists more than ``limit`` levels deep (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def parse_json(data: str | bytes, source: str, *, error: type[PPDPError] = InputError, hint: str = "",
               max_bytes: int | None = DEFAULT_MAX_BYTES, constants: bool = False) -> Any:
    """The JSON value of ``data`` (text, or UTF-8 bytes with or without a byte-order mark), within the bounds of
    the module docstring; ``error(f"{source} ...{hint}")`` naming the first bound crossed. ``hint`` says what to
    do (e.g. " Save the project again from the window."); ``max_bytes`` None: no size limit (a payload whose size
    is bounded already); ``constants``: ``NaN`` and ``Infinity`` are read (Python's own JSON, as the release
    ledger writes an unbounded epsilon)."""
    size = len(data)
    if max_bytes is not None and size > max_bytes:
        raise error(f"{source}: {size:,} bytes, more than the {max_bytes:,} a file of its kind may have.{hint}")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"{source}: not UTF-8 text (byte offset {exc.start}).{hint}") from None
    elif data.startswith("\ufeff"):
        data = data[1:]
    try:
        value = json.loads(data, parse_int=_number(int), parse_float=_number(float),
                           parse_constant=float if constants else _constant)
    except _Refused as exc:
        raise error(f"{source}: {exc}.{hint}") from None
    except RecursionError:
        raise error(f"{source}: nested more than {MAX_DEPTH} levels deep.{hint}") from None
    except ValueError as exc:  # json.JSONDecodeError: says where
        raise error(f"{source}: not valid JSON ({str(exc)[:200]}).{hint}") from None
    if _depth_over(value, MAX_DEPTH):
        raise error(f"{source}: nested more than {MAX_DEPTH} levels deep.{hint}")
    return value


def read_json(path: str | os.PathLike[str], source: str | None = None, *, error: type[PPDPError] = InputError,
              hint: str = "", max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The JSON value of the file ``path`` (see :func:`parse_json`): only a regular file is read (a device or a
    pipe could never end), and never more than ``max_bytes`` of it. ``source`` names it in messages (default: the
    file's name)."""
    path = Path(path)
    source = source or path.name
    check_path_text(str(path), source, error)
    try:  # opened without blocking (a pipe would wait for a writer), then refused unless a regular file
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise error(f"{source}: not a regular file (a folder, device or pipe); give a JSON file.{hint}")
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"{source}: cannot be read ({exc.strerror or exc}).{hint}") from None
    return parse_json(data, source, error=error, hint=hint, max_bytes=max_bytes)


def check_path_text(text: str, where: str, error: type[PPDPError] = InputError) -> None:
    """Refuse a path holding a NUL character (no file system has one; the operating system would refuse to open
    it), naming where it was found."""
    if "\x00" in text:
        shown = text.replace("\x00", "\\0")
        raise error(f"{where}: the path '{shown}' holds a NUL character, which no file name can hold; correct the "
                    "path.")
