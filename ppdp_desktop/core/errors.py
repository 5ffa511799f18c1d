"""The application's own small exception hierarchy.

Every error a user can cause is a :class:`PPDPError` whose message names the file, column, value
or parameter at fault and what to change. The CLI prints it as one line; the GUI shows it in a
dialog. Anything else escaping is a bug.

A message never spells a face's name for a setting: it refers to the setting by its key with
:func:`setting_ref` ("give {setting_ref('rho1', 'X')}"), and each face phrases the reference -- the
command line as its option (``--rho1 X``, :func:`cli_name`, also what ``str(error)`` shows), the window
as the control that sets it. The error also carries the structured facts (``setting``, ``value``,
``allowed``, ``file``, ``row``, ``column``) for a face that wants to show more than a sentence.
"""
from __future__ import annotations

import errno
import re
from collections.abc import Callable
from typing import Any

from ppdp_desktop.core.shell_words import shell_option

#: marks a reference to a setting inside a message (ASCII unit separators: never in a message otherwise)
_MARK = "\x1f"
_REFERENCE = re.compile("\x1f([^|\x1f]*)\\|([^\x1f]*)\x1f")

#: a face's name for a setting: ``(key, metavar) -> words``
Namer = Callable[[str, str], str]


def setting_ref(key: str, metavar: str = "") -> str:
    """A reference to setting ``key`` (its command-line option without the dashes: ``rho1``, ``k-anonymity``,
    ``sep``) inside a message, phrased by each face; ``metavar`` is what the command line writes after the
    option (``COLS``, ``FILE``, ``X``)."""
    return f"{_MARK}{key}|{metavar}{_MARK}"


def cli_name(key: str, metavar: str = "") -> str:
    """The command line's name for a setting: its option, with the metavar if one is given (quoted for a shell
    when it needs to be, e.g. a column name with spaces: :func:`~ppdp_desktop.core.shell_words.shell_option`)."""
    return shell_option(f"--{key}", metavar) if metavar else f"--{key}"


def phrase(text: str, name: Namer = cli_name) -> str:
    """``text`` with every :func:`setting_ref` replaced by ``name(key, metavar)``."""
    return _REFERENCE.sub(lambda m: name(m.group(1), m.group(2)), text)


def setting_keys(text: str) -> list[str]:
    """The keys of the settings ``text`` refers to, in order."""
    return [m.group(1) for m in _REFERENCE.finditer(text)]


_UNSET: Any = object()


class PPDPError(Exception):
    """Base class of every error a user can cause.

    ``str(error)`` is the command line's phrasing; :meth:`phrase` gives any face's. The keyword fields are the
    facts behind the sentence: the setting at fault (its key), the bad value, what is allowed, and where (file,
    row from 1, column).
    """

    def __init__(self, message: str = "", *, setting: str | None = None, value: Any = _UNSET,
                 allowed: str | None = None, file: str | None = None, row: int | None = None,
                 column: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.setting = setting
        self.value = value
        self.allowed = allowed
        self.file = file
        self.row = row
        self.column = column

    @property
    def has_value(self) -> bool:
        """Whether the error names a bad value (``None`` can be one)."""
        return self.value is not _UNSET

    def phrase(self, name: Namer = cli_name) -> str:
        """The message in a face's words (``name`` phrases each setting it refers to)."""
        return phrase(self.message, name)

    def __str__(self) -> str:
        return self.phrase(cli_name)

    def __reduce__(self):  # keyword fields survive pickling (the Dask engine, process pools)
        state = {k: v for k, v in self.__dict__.items() if not (k == "value" and v is _UNSET)}
        return (_rebuild, (type(self), self.message, state))


def _rebuild(cls: type[PPDPError], message: str, state: dict[str, Any]) -> PPDPError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.value = _UNSET
    error.__dict__.update(state)
    return error


class InputError(PPDPError):
    """A data file cannot be read or does not have the shape the job needs."""


class ParameterError(PPDPError, ValueError):
    """A parameter is out of range or inconsistent with the data."""


class PrivacyError(PPDPError):
    """A plan or release does not satisfy the privacy guarantee it claims (fail closed)."""


class ReleaseError(PPDPError):
    """A release package is missing, malformed or cannot be written."""


class Cancelled(PPDPError):
    """The user cancelled a running job."""


class KeyFileError(PPDPError):
    """A sealed key file cannot be opened: wrong passphrase, damaged, or for another release."""


class TaxonomyError(PPDPError):
    """A taxonomy is invalid or cannot be read; the message names the offending values."""


#: operating-system errors a user causes and can fix (a full disk, a read-only folder), with what to do
USER_ERRNOS = {
    errno.ENOSPC: "free some disk space or write elsewhere.",
    errno.EDQUOT: "free some of your disk quota or write elsewhere.",
    errno.EROFS: "the disk is read-only; write to another folder.",
    errno.EACCES: "you may not write there; choose a folder you may write to.",
    errno.EPERM: "you may not write there; choose a folder you may write to.",
    errno.ENOENT: "check that the folder exists.",
    errno.ENOTDIR: "a part of the path is a file, not a folder; check the path.",
    errno.EISDIR: "the path is a folder; give a file name.",
    errno.ENAMETOOLONG: "the path is too long; choose a shorter one.",
    errno.EFBIG: "the file is too large for this disk; write elsewhere.",
}


def os_error_message(exc: BaseException) -> str | None:
    """The one-line message for an operating-system error the user can fix; None for anything else."""
    if not isinstance(exc, OSError) or exc.errno not in USER_ERRNOS:
        return None
    where = f" {exc.filename}" if exc.filename else ""
    return (f"Cannot write or read{where}: {exc.strerror or exc}; {USER_ERRNOS[exc.errno]} "
            "Nothing was published.")
