"""The optimizer's progress and cancellation (issue 31: on 5,000 clinical records it sat at one figure for minutes
and ignored Cancel).

The optimizer evaluates the risk a few hundred times, each evaluation well under a second within
:mod:`~ppdp_desktop.core.methods.rr.limits`; :meth:`Pace.tick`, called before each one, checks the cancel token
(so Cancel lands within one evaluation) and reports the fraction done. The search runs in phases: those whose
number of evaluations is known (the bisections) move the fraction linearly and say how long they have left; the
open-ended one (SLSQP rounds) moves it as ``n / (n + typical)``, always forward, never reaching its end.
"""
from __future__ import annotations

import math
import time

from ppdp_desktop.core.progress import CancelToken, Progress, no_progress

#: the fraction of the search at which each phase starts (the last one ends at 1)
FIRST, SEARCH, LAST = 0.0, 0.25, 0.85
#: the phases' words (what the user sees beside the bar)
FIRST_WORDS = "Planning: a first choice of how often each value is kept"
SEARCH_WORDS = "Planning: improving how often each column keeps its value"
LAST_WORDS = "Planning: checking the bound on the risk"


class Pace:
    """Counts the optimizer's evaluations of the risk: checks ``cancel`` and reports ``progress`` at each."""

    def __init__(self, progress: Progress = no_progress, cancel: CancelToken | None = None) -> None:
        self.progress = progress
        self.cancel = cancel or CancelToken()
        self.started = time.monotonic()
        self.evaluations = 0
        self._phase = (FIRST, SEARCH, 1, True, FIRST_WORDS)  # (start, end, expected, known, words)
        self._in_phase = 0
        self.fraction = 0.0

    def phase(self, start: float, end: float, expected: int, known: bool, words: str) -> None:
        """The next phase: its part ``[start, end]`` of the search, how many evaluations it is expected to take
        (exactly when ``known``, typically otherwise) and what it does in words."""
        self._phase = (start, end, max(int(expected), 1), known, words)
        self._in_phase = 0
        self._report(start)

    def tick(self) -> None:
        """Before each evaluation of the risk: stop if cancelled, else report the fraction done."""
        self.cancel.check()
        start, end, expected, known, _words = self._phase
        share = min(self._in_phase / expected, 1.0) if known else self._in_phase / (self._in_phase + expected)
        self.evaluations += 1
        self._in_phase += 1
        self._report(start + (end - start) * share)

    def _report(self, fraction: float) -> None:
        self.fraction = max(self.fraction, min(fraction, 1.0))  # never backwards
        self.progress(self.fraction, self._words())

    def _words(self) -> str:
        """The phase in words, with the seconds it has left when its number of evaluations is known."""
        _start, _end, expected, known, words = self._phase
        if not known or self.evaluations < 3:
            return words
        each = (time.monotonic() - self.started) / self.evaluations
        left = each * max(expected - self._in_phase, 0)
        return f"{words} ({left_words(left)})"


def left_words(seconds: float) -> str:
    """``"about 40 s left"`` (to 5 s), ``"about 3 min left"``, ``"a few seconds left"``: coarse, so that a face
    printing each new stage once (the command line) prints few lines."""
    if not math.isfinite(seconds) or seconds < 5:
        return "a few seconds left"
    if seconds < 90:
        return f"about {max(5, 5 * round(seconds / 5))} s left"
    return f"about {round(seconds / 60)} min left"
