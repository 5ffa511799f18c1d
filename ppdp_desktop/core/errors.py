"""The application's own small exception hierarchy.

Every error a user can cause is a :class:`PPDPError` whose message names the file, column, value
or parameter at fault and what to change. The CLI prints it as one line; the GUI shows it in a
dialog. Anything else escaping is a bug.
"""
from __future__ import annotations

import errno


class PPDPError(Exception):
    """Base class of every error a user can cause."""


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
