"""How strong a passphrase must be to seal a key file, one rule for the CLI and the window.

A key file is only as safe as its passphrase: scrypt slows each guess, but a passphrase from a
cracking list ("Password123!") falls in the first few thousand guesses. The strength is zxcvbn's
score (Dropbox's estimator, the Python port; its frequency lists of common passwords, names and
words ship inside the package, so nothing is downloaded): 0 (too guessable) to 4 (very
unguessable), with its feedback in words (a warning and suggestions).

Sealing needs :data:`MIN_SEALING_SCORE` (3: "safely unguessable", about 10^8 guesses or more, out
of reach of an offline attack on a slow hash such as ours) and :data:`MIN_PASSPHRASE`
characters. A weaker passphrase is refused unless the user overrides it explicitly (the window's
"Use this weak passphrase anyway", the CLI's ``--allow-weak-passphrase``); the length is never
waived. Words of the job (the data file's name, the project's, the release folder's, the login
name) are given to zxcvbn as *user inputs*, so a passphrase made of them counts as weak.
"""
from __future__ import annotations

import getpass
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from ppdp_desktop.core.errors import ParameterError, setting_ref

#: the fewest characters a sealing passphrase may have, even with the override (``keyfile.seal`` checks it too)
MIN_PASSPHRASE = 8
#: the lowest zxcvbn score (0..4) that seals a key without the explicit override
MIN_SEALING_SCORE = 3
#: a word for each zxcvbn score
SCORE_WORDS = ("very weak", "weak", "fair", "good", "strong")
#: zxcvbn refuses longer input (its matching is quadratic); a longer passphrase is rated by this many first
#: characters, which can only under-rate it
MAX_RATED = 72
#: words every user of this app might build a passphrase from
APP_WORDS = ("ppdp", "ppdpkey", "ppdp desktop", "patient", "patients", "anonymize", "release", "passphrase")
#: the CLI's override flag, and how a message tells the user to give it (each face phrases the reference)
ALLOW_WEAK_FLAG = "--allow-weak-passphrase"
CLI_OVERRIDE = f"set {setting_ref('allow-weak-passphrase')} to use it anyway"

_lock = threading.Lock()  # zxcvbn keeps the user inputs in a module-level dictionary
_PARTS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class PassphraseAssessment:
    """What zxcvbn makes of a passphrase.

    Attributes
    ----------
    score : int
        0 (too guessable) .. 4 (very unguessable); 0 for an empty passphrase.
    warning : str
        zxcvbn's warning ("This is similar to a commonly used password."), or "".
    suggestions : tuple of str
        zxcvbn's suggestions ("Add another word or two. Uncommon words are better.").
    length : int
        Number of characters.
    """

    score: int
    warning: str
    suggestions: tuple[str, ...]
    length: int

    @property
    def word(self) -> str:
        """The score in a word ("too short" below the minimum length)."""
        return "too short" if self.too_short else SCORE_WORDS[self.score]

    @property
    def too_short(self) -> bool:
        """Shorter than ``MIN_PASSPHRASE`` characters (refused even with the override)."""
        return self.length < MIN_PASSPHRASE

    @property
    def strong_enough(self) -> bool:
        """Long enough and scored at least :data:`MIN_SEALING_SCORE`: seals without the override."""
        return not self.too_short and self.score >= MIN_SEALING_SCORE

    def feedback(self) -> str:
        """zxcvbn's warning and suggestions as one sentence or more ("" when it has none)."""
        parts = [self.warning] if self.warning else []
        parts += list(self.suggestions)
        return " ".join(p if p.endswith((".", "!", "?")) else p + "." for p in parts)

    def summary(self) -> str:
        """E.g. ``"weak (1 of 4): This is similar to a commonly used password. Add another word or two."``"""
        rating = f"{self.word} ({self.score} of 4)"
        feedback = self.feedback()
        return f"{rating}: {feedback}" if feedback else rating


def user_inputs_for(*names: str | PurePath | None) -> tuple[str, ...]:
    """Words of the job for zxcvbn: each name, its file name, stem and word parts, the app's words, the login name.

    Parameters
    ----------
    *names
        File or folder paths and plain names (the data file, the project file, the release folder, the
        key file, a project name); None is skipped.
    """
    words: list[str] = list(APP_WORDS)
    try:
        words.append(getpass.getuser())
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        pass
    for name in names:
        if not name:
            continue
        path = PurePath(str(name))
        for text in (path.name, path.stem, path.parent.name):
            if text:
                words.append(text)
                words += [p for p in _PARTS.findall(text) if len(p) >= 3]
    return tuple(dict.fromkeys(w.lower() for w in words if w))


def assess(passphrase: str, user_inputs: Iterable[str] = ()) -> PassphraseAssessment:
    """Rate ``passphrase`` with zxcvbn, counting ``user_inputs`` (see :func:`user_inputs_for`) as guessable."""
    if not passphrase:
        return PassphraseAssessment(0, "", (), 0)
    from zxcvbn import zxcvbn  # 40 ms on first use: its frequency lists are Python modules

    with _lock:
        result = zxcvbn(passphrase[:MAX_RATED], user_inputs=[str(u) for u in user_inputs])
    feedback = result.get("feedback") or {}
    return PassphraseAssessment(int(result["score"]), feedback.get("warning") or "",
                                tuple(feedback.get("suggestions") or ()), len(passphrase))


def sealing_problem(found: PassphraseAssessment, *, allow_weak: bool = False, override: str = CLI_OVERRIDE,
                    with_feedback: bool = True) -> str | None:
    """Why ``found`` may not seal a key (one line), or None: the rule itself, shared by the CLI and the window.

    Parameters
    ----------
    found : PassphraseAssessment
        The passphrase's assessment (:func:`assess`).
    allow_weak : bool
        The user's explicit override: a score below :data:`MIN_SEALING_SCORE` is accepted (never a
        passphrase shorter than ``MIN_PASSPHRASE``).
    override : str
        How to give the override, as the end of a sentence (the CLI's flag, the window's checkbox).
    with_feedback : bool
        Include zxcvbn's warning and suggestions (the window shows them on their own line).
    """
    if found.too_short:
        return f"The passphrase must have at least {MIN_PASSPHRASE} characters (it has {found.length})."
    if found.strong_enough or allow_weak:
        return None
    said = found.summary() if with_feedback else f"{found.word} ({found.score} of 4)"
    said = said if said.endswith(".") else said + "."
    return (f"The passphrase is {said} A key needs a passphrase rated at least {SCORE_WORDS[MIN_SEALING_SCORE]} "
            f"({MIN_SEALING_SCORE} of 4): choose a longer one (four or five uncommon words), or {override}.")


def check_for_sealing(passphrase: str, user_inputs: Iterable[str] = (), *, allow_weak: bool = False,
                      override: str = CLI_OVERRIDE) -> PassphraseAssessment:
    """The assessment if ``passphrase`` may seal a key, else :class:`ParameterError` in one line.

    Parameters
    ----------
    passphrase : str
        The new passphrase.
    user_inputs : iterable of str
        Words of the job (see :func:`user_inputs_for`).
    allow_weak, override
        As for :func:`sealing_problem`.
    """
    found = assess(passphrase, user_inputs)
    problem = sealing_problem(found, allow_weak=allow_weak, override=override)
    if problem is not None:
        raise ParameterError(f"{problem[:-1]}; nothing was written.")
    return found
