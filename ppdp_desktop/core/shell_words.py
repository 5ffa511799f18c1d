"""The words of a command line the app shows the user (README.txt's examples, a message's ``--kind COL=...``),
quoted so that the line, copied into a shell, gives ``ppdp`` the intended arguments: ``--sensitive
Hauptdiagnose (ICD-10)`` unquoted is a syntax error in a POSIX shell.

One quoting for the three shells a custodian or a recipient types into -- POSIX shells (sh, bash, zsh), Windows'
cmd and PowerShell -- since a README cannot know which. A word of letters, digits and ``_ . / : + = -`` is left
as it is. Any other word is put in double quotes, which the three read alike for a word holding none of the
characters special inside them in one of them (``"``, ``$``, backquote, backslash, ``!``, ``%``, PowerShell's
typographic double quotes, control characters). Such a rare word gets POSIX single quotes (:func:`shlex.quote`),
right in POSIX shells only.
"""
from __future__ import annotations

import shlex

_SAFE = frozenset("_./:+=-")  # with letters and digits: plain in all three shells (not ',' for PowerShell, '@', '~')
_SPECIAL_IN_DOUBLE_QUOTES = frozenset('"$`\\!%\u201c\u201d\u201e')


def shell_word(text: str) -> str:
    """``text`` as one word of a command line: as it is, in double quotes, or (rarely) in POSIX single quotes."""
    if text and all(c.isalnum() or c in _SAFE for c in text):
        return text
    if not any(c in _SPECIAL_IN_DOUBLE_QUOTES or not c.isprintable() for c in text):
        return f'"{text}"'
    return shlex.quote(text)


def shell_option(flag: str, value: str) -> str:
    """``--flag VALUE`` with the value quoted; ``--flag=VALUE`` when the value starts with ``-``, which the
    argument parser would otherwise take for an option."""
    if value.startswith("-"):
        return shell_word(f"{flag}={value}")
    return f"{flag} {shell_word(value)}"
