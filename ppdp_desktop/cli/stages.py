"""Stage lines on stderr for long jobs: ``ppdp:  40 % Applying the plan`` once per stage, only after the
job has run for :data:`AFTER_SECONDS` (a quick job stays silent), never with ``--quiet``; with ``--verbose``
every stage at once, with the seconds since the job started (``ppdp: [  1.2 s]  40% Applying the plan``)."""
from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from ppdp_desktop.core.progress import Progress, subrange

AFTER_SECONDS = 2.0


class StageLines:
    """A progress callback that prints each new stage once, after the first two seconds."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None, after: float = AFTER_SECONDS,
                 verbose: bool = False) -> None:
        self.quiet, self.stream, self.verbose = quiet, stream, verbose and not quiet
        self.after = 0.0 if self.verbose else after
        self.start = time.perf_counter()
        self.last = ""

    def __call__(self, fraction: float, message: str = "") -> None:
        if self.quiet or not message or message == self.last:
            return
        self.last = message
        elapsed = time.perf_counter() - self.start
        if elapsed >= self.after:
            timing = f"[{elapsed:5.1f} s] " if self.verbose else ""
            print(f"ppdp: {timing}{fraction:4.0%} {message}", file=self.stream or sys.stderr, flush=True)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> StageLines:
        """The stage lines the global ``--quiet`` / ``--verbose`` ask for."""
        return cls(quiet=getattr(args, "quiet", False), verbose=getattr(args, "verbose", False))

    def part(self, low: float, high: float) -> Progress:
        """The callback for one part of the job (its fractions mapped into ``[low, high]``)."""
        return subrange(self, low, high)
