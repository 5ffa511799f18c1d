"""Stage lines on stderr for long jobs: ``ppdp:  40 % Applying the plan`` once per stage, only after the
job has run for :data:`AFTER_SECONDS` (a quick job stays silent), never with ``--quiet``."""
from __future__ import annotations

import sys
import time
from typing import TextIO

from ppdp_desktop.core.progress import Progress, subrange

AFTER_SECONDS = 2.0


class StageLines:
    """A progress callback that prints each new stage once, after the first two seconds."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None, after: float = AFTER_SECONDS) -> None:
        self.quiet, self.stream, self.after = quiet, stream, after
        self.start = time.perf_counter()
        self.last = ""

    def __call__(self, fraction: float, message: str = "") -> None:
        if self.quiet or not message or message == self.last:
            return
        self.last = message
        if time.perf_counter() - self.start >= self.after:
            print(f"ppdp: {fraction:4.0%} {message}", file=self.stream or sys.stderr, flush=True)

    def part(self, low: float, high: float) -> Progress:
        """The callback for one part of the job (its fractions mapped into ``[low, high]``)."""
        return subrange(self, low, high)
