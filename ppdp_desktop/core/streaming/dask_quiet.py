"""Dask says nothing of its own during a job: a failure is one line, as everywhere else in the app.

Left alone, Dask prints in the user's terminal: each worker process catches the Ctrl+C meant for ``ppdp`` and prints
its own traceback (four for two workers), and a worker whose task fails logs "Compute Failed" with the task's
traceback before the error reaches ``ppdp`` (18 lines on a full disk). So, for the length of a job:

* the worker processes of a LocalCluster are started with their standard error on the null device
  (:func:`workers_speak_nowhere`): a Ctrl+C ends them without a word, and ``ppdp`` says it in one line, cancels the
  job and closes the cluster. (Ignoring SIGINT in them would need this process to ignore it while they start, and
  a Ctrl+C in those seconds would be lost; blocking it does not survive their start.);
* distributed's loggers (and tornado's, which it uses) in this process and in the LocalCluster's workers are set to
  CRITICAL (:func:`quiet_loggers`);
* an error that is Dask's own (a worker lost, a connection closed) becomes a :class:`ReleaseError` naming it
  (:func:`as_app_error`); a task's own error (a full disk, a value that does not fit) reaches the caller as raised.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ppdp_desktop.core.errors import PPDPError, ReleaseError

__all__ = ["LOGGERS", "as_app_error", "quiet_loggers", "workers_speak_nowhere"]

#: the loggers silenced while a job runs
LOGGERS = ("distributed", "tornado", "asyncio")


@contextmanager
def quiet_loggers(level: int = logging.CRITICAL) -> Iterator[None]:
    """Set :data:`LOGGERS` to ``level`` while the block runs, then back as they were."""
    loggers = [logging.getLogger(name) for name in LOGGERS]
    before = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(level)
    try:
        yield
    finally:
        for logger, old in zip(loggers, before):
            logger.setLevel(old)


@contextmanager
def workers_speak_nowhere() -> Iterator[None]:
    """Processes started while the block runs write their standard error to the null device: a worker process of
    a LocalCluster that a Ctrl+C in the terminal reaches (the terminal sends it to every process of the job) then
    ends without printing its traceback. This process's own standard error is the null device only while the
    block runs (starting the cluster, when it prints nothing); the interrupt itself reaches ``ppdp`` as usual,
    which says it in one line and closes the cluster."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no standard error to redirect (a window without a console)
        yield
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)
        yield
    finally:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def as_app_error(exc: BaseException) -> BaseException:
    """``exc`` as the app's own error when it is Dask's (a worker died, a connection closed, a task was lost), else
    ``exc`` itself (the task's own error, e.g. an OSError of a full disk, keeps its type and message)."""
    if isinstance(exc, (PPDPError, OSError, MemoryError)) or not isinstance(exc, Exception):
        return exc
    module = type(exc).__module__ or ""
    if not module.startswith(("distributed", "tornado", "asyncio", "concurrent")):
        return exc
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ReleaseError(f"The Dask cluster failed while it ran the job ({type(exc).__name__}: {detail[:200]}); "
                        "nothing was published.")
