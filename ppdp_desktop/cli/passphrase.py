"""Where the CLI gets a passphrase: a file, the environment, or a prompt (never the command line,
where it would be seen in the process list and the shell history).

A passphrase that seals a key (:func:`read_new_passphrase`) must pass the core's rule
(:mod:`ppdp_desktop.core.release.passphrase_policy`, the window's too): rated at least ``MIN_SEALING_SCORE``
by zxcvbn, else refused in one line unless ``--allow-weak-passphrase`` is given.
"""
from __future__ import annotations

import argparse
import getpass
import os
import sys

from ppdp_desktop.core.errors import ParameterError, phrase
from ppdp_desktop.core.release.passphrase_policy import (
    ALLOW_WEAK_FLAG,
    MIN_SEALING_SCORE,
    SCORE_WORDS,
    assess,
    check_for_sealing,
    sealing_problem,
    user_inputs_for,
)

ENV_VAR = "PPDP_PASSPHRASE"
#: the most a passphrase file may hold (its first line is the passphrase)
PASSPHRASE_FILE_BYTES = 64 << 10
SIGNING_ENV_VAR = "PPDP_SIGNING_PASSPHRASE"


def read_passphrase(passphrase_file: str | None, *, confirm: bool, env_var: str = ENV_VAR,
                    what: str = "the key file") -> str:
    """``--passphrase-file`` (first line), else ``env_var`` (``PPDP_PASSPHRASE``), else a prompt (twice to seal)."""
    if passphrase_file:
        try:  # at most 64 KiB: /dev/zero or /dev/urandom given by mistake never ends (a pipe, <(...), is fine)
            with open(passphrase_file, "rb") as handle:
                raw = handle.read(PASSPHRASE_FILE_BYTES + 1)
            if len(raw) > PASSPHRASE_FILE_BYTES:
                raise ParameterError(f"The passphrase file {passphrase_file} is longer than {PASSPHRASE_FILE_BYTES >> 10} "
                                     "KiB; give a file whose first line is the passphrase.")
            lines = raw.decode("utf-8-sig").splitlines()  # Notepad's BOM
        except (OSError, UnicodeDecodeError) as exc:
            raise ParameterError(f"Cannot read the passphrase file {passphrase_file}: {exc}.") from exc
        if not lines or not lines[0]:
            raise ParameterError(f"The passphrase file {passphrase_file} is empty.")
        return lines[0]
    if os.environ.get(env_var):
        return os.environ[env_var]
    if not sys.stdin.isatty():
        raise ParameterError(f"A passphrase for {what} is needed: give its passphrase file or set {env_var}.")
    first = getpass.getpass(f"Passphrase for {what}: ")
    if confirm and getpass.getpass("Repeat the passphrase: ") != first:
        raise ParameterError("The two passphrases differ; nothing was written.")
    return first


#: attempts at the prompt before a weak passphrase is refused
PROMPT_ATTEMPTS = 3


def add_allow_weak_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--allow-weak-passphrase``, for every command that seals a key with a new passphrase."""
    parser.add_argument(ALLOW_WEAK_FLAG, action="store_true",
                        help=f"seal the key even though zxcvbn rates its passphrase below "
                             f"{SCORE_WORDS[MIN_SEALING_SCORE]} ({MIN_SEALING_SCORE} of 4); refused otherwise")


def read_new_passphrase(passphrase_file: str | None, *, allow_weak: bool, names: tuple[str | None, ...] = (),
                        env_var: str = ENV_VAR, what: str = "the key file") -> str:
    """A passphrase to seal a key, read as :func:`read_passphrase` does, that passes the sealing rule.

    Parameters
    ----------
    passphrase_file, env_var, what
        As for :func:`read_passphrase`.
    allow_weak : bool
        ``--allow-weak-passphrase``: a weak passphrase seals, with a warning on stderr.
    names : tuple of str or None
        The job's paths and names (data file, project, release folder, key file): their words count as weak.

    Raises
    ------
    ParameterError
        One line with zxcvbn's rating and feedback, for a weak passphrase without ``allow_weak`` (at the prompt
        after ``PROMPT_ATTEMPTS`` attempts) or one shorter than ``MIN_PASSPHRASE`` characters.
    """
    inputs = user_inputs_for(*names)
    prompted = not passphrase_file and not os.environ.get(env_var)
    for attempt in range(1, PROMPT_ATTEMPTS + 1 if prompted else 2):
        passphrase = read_passphrase(passphrase_file, confirm=True, env_var=env_var, what=what)
        found = assess(passphrase, inputs)
        problem = sealing_problem(found, allow_weak=allow_weak)
        if problem is None or not prompted or attempt == PROMPT_ATTEMPTS:
            break
        print(f"ppdp: {phrase(problem)} Try again ({PROMPT_ATTEMPTS - attempt} left).", file=sys.stderr)
    found = check_for_sealing(passphrase, inputs, allow_weak=allow_weak)
    if not found.strong_enough:
        print(f"ppdp: warning: {what} will be sealed with a passphrase rated {found.word} ({found.score} of 4) because "
              f"{ALLOW_WEAK_FLAG} was given; anyone who gets the file may guess it.", file=sys.stderr)
    return passphrase


def generate_passphrase(words: int = 5) -> str:
    """A random passphrase for the demo, e.g. ``"kavu-rime-tosa-nelo-pidu"`` (about 60 bits)."""
    import secrets

    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    return "-".join(
        "".join(secrets.choice(consonants) + secrets.choice(vowels) for _ in range(2)) for _ in range(words)
    )
