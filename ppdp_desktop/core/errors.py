"""The application's own small exception hierarchy.

Every error a user can cause is a :class:`PPDPError` whose message names the file, column, value
or parameter at fault and what to change. The CLI prints it as one line; the GUI shows it in a
dialog. Anything else escaping is a bug.
"""
from __future__ import annotations


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
