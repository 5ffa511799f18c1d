"""The exit statuses of ``ppdp``, in one place: what each means and which error gives it.

A script can tell "the release failed its checks" (1) from "I typed the command wrong" (2), "a file could not
be read" (3) and "it was interrupted" (4) without reading the message. :data:`EPILOG` is the table shown by
``ppdp --help``; the README's CLI section and docs/cli.md repeat it.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import IntEnum

from ppdp_desktop.core.errors import Cancelled, ParameterError, PPDPError, PrivacyError, ReleaseError


class ExitCode(IntEnum):
    """Exit statuses of every ``ppdp`` command."""

    OK = 0
    #: the guarantee does not hold, a verification failed, a release was altered or its signature is wrong,
    #: the selftest failed
    FAILED = 1
    #: the command line is wrong: an unknown or malformed flag (argparse's own), a missing or contradictory
    #: option, a value out of range
    USAGE = 2
    #: an input or output file cannot be used: a missing or unreadable file, a value that does not fit its
    #: column, no release at the path given, a key file that does not open (wrong passphrase), an output that
    #: already exists, a disk that is full or read-only
    INPUT = 3
    #: cancelled or interrupted (Ctrl+C); nothing was written
    CANCELLED = 4
    #: a bug: an unexpected error (run again with --debug and report it)
    INTERNAL = 70


EPILOG = """exit status:
  0   success
  1   failed check: the guarantee does not hold, verification failed, the release was altered
      or its signature is wrong, the selftest failed
  2   usage: unknown or malformed flag, missing or contradictory option, value out of range
  3   input/output: missing or unreadable file, bad value in the data, no release at that
      path, wrong passphrase, output already exists, full or read-only disk
  4   cancelled or interrupted (Ctrl+C); nothing was written
  70  internal error (a bug: run again with --debug and report it)

'-' reads a data file from stdin (ppdp anonymize - --out DIR < data.csv; the format is
--input-format, else sniffed, else CSV) or writes a single-file output to stdout
(ppdp report data.csv REL --out -). See docs/cli.md."""


class CheckFailed(PPDPError):
    """A check the user asked for did not pass (``ppdp verify``, the checksums before ``ppdp estimate``)."""


@contextmanager
def checking() -> Iterator[None]:
    """Around a verification: a release that is malformed, altered or wrongly signed *failed* the check (exit 1),
    rather than being an unreadable input (exit 3). A bad parameter stays a usage error, and a key file that
    does not open (wrong passphrase, another release's key) an input error."""
    try:
        yield
    except (ParameterError, CheckFailed):
        raise
    except (ReleaseError, PrivacyError) as exc:
        raise CheckFailed(str(exc)) from exc


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit status of an error a user can cause (:class:`PPDPError`, or Ctrl+C)."""
    if isinstance(exc, (CheckFailed, PrivacyError)):
        return ExitCode.FAILED
    if isinstance(exc, (Cancelled, KeyboardInterrupt)):
        return ExitCode.CANCELLED
    if isinstance(exc, ParameterError):
        return ExitCode.USAGE
    if isinstance(exc, (PPDPError, OSError)):
        return ExitCode.INPUT
    return ExitCode.INTERNAL
