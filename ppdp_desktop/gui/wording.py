"""The window speaks of its own controls: a message written for the command line ("give --rho1 X
--rho2 Y") is shown in the window's words ("choose 'The same requirement for every value' on step 3").

The core writes one message per error, naming the command-line option a script would change; the window
maps each option to the control that sets it. Unknown options are left as they are.
"""
from __future__ import annotations

import re

#: (pattern, replacement), most specific first; patterns match the core's own phrasing.
WINDOW_WORDS: list[tuple[str, str]] = [
    (r"give --rho1 X --rho2 Y, or --theta T", "choose a rule on step 3 (Sensitivity & choices)"),
    (r"give --rho1 X --rho2 Y", "choose 'The same requirement for every value' on step 3 (Sensitivity & choices)"),
    (r"--rho1 X --rho2 Y", "'The same requirement for every value' on step 3"),
    (r"--rho1/--rho2 or --theta", "one rule on step 3"),
    (r"Give both --rho1 and --rho2, or neither", "Give both rho1 and rho2 on step 3"),
    (r"explicit --rho1/--rho2", "'The same requirement for every value' on step 3"),
    (r"--theta T?", "the 'less frequent is more sensitive' rule on step 3"),
    (r"--pairs FILE|the pairs file", "the sensitivity table on step 3"),
    (r"give --quasi COLS", "tag them as Quasi-identifier on step 2"),
    (r"--quasi COLS", "the Quasi-identifier role on step 2"),
    (r"give --sensitive COL|--sensitive COL", "mark a column Sensitive on step 2"),
    (r"give --attributes COLS", "tick the columns to protect on the method page (step 4)"),
    (r"--l\b", "l on the method page (step 4)"),
    (r"--randomize", "'Randomize' on the method page"),
    (r"--epsilon", "epsilon on the method page"),
    (r"--k-anonymity", "k in 'Protect the quasi-identifiers' on the method page"),
    (r"--suppression", "'Suppress at most' on the method page"),
    (r"--threshold", "the risk threshold on the method page"),
    (r"--group-bound", "the group bound on the method page"),
    (r"--intervals \S+", "the interval widths of that column on the method page"),
    (r"--cuts \S+", "its cut points on the method page"),
    (r"--hierarchy \S+", "its taxonomy on step 2"),
    (r"--k\b", "k on the method page"),
    (r"--candidates", "the centroid candidates"),
    (r"--categories K|--categories", "'Number of categories' on the method page"),
    (r"--grading", "'Cut points' on the method page"),
    (r"--graded \S+", "tick it under 'Grade these numeric columns' on the method page"),
    (r"--domain \S+", "its domain (lo, hi) on the method page"),
    (r"--taxonomy \S+|--taxonomy", "the taxonomy editor on step 2"),
    (r"--key FILE", "a key file on the export page"),
    (r"give the right --sep", "choose the right delimiter in the import options (step 1)"),
    (r"give its encoding with --encoding \(e\.g\. --encoding latin-1\)", "choose its encoding in the import options "
     "(step 1)"),
    (r"--encoding\b", "the encoding in the import options (step 1)"),
    (r"--sep\b", "the delimiter in the import options (step 1)"),
    (r"--choice-column COL|--choice-column", "the choice column on step 3"),
    (r"--value-choices FILE|--value-choices", "the per-value choices on step 3"),
    (r"--default-choice", "the default choice on step 3"),
]
_COMPILED = [(re.compile(pattern), replacement) for pattern, replacement in WINDOW_WORDS]


def window_words(message: str) -> str:
    """``message`` with every command-line option replaced by the window control that sets it."""
    for pattern, replacement in _COMPILED:
        message = pattern.sub(replacement, message)
    return message
