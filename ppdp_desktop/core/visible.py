"""Text taken from a release (or any file someone else wrote), made safe to show: every control character visible.

A forged ``release.json`` can hold a newline followed by ``OK signature: the manifest is signed by ...``, an ANSI
escape that rewrites the terminal's line, or a right-to-left override that reverses what follows. Printed raw, the
recipient would read a line the app never wrote. :func:`visible` spells each such character the way Python writes
it in a string (``\\n``, ``\\x1b``, ``\\u202e``), so the text stays on its line and shows what it holds. Every face
applies it to what it shows from a release: the command line to each line it prints, the window to each label.
"""
from __future__ import annotations

import re

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: C0 and C1 controls and DEL; the line and paragraph separators; the marks and overrides of bidirectional text,
#: the invisible separators and the byte-order mark (format characters that change how other text shows)
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\u061c\ufeff\ufff9-\ufffb]")


def _spell(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` (made a string) with every control, separator and bidirectional-format character spelt as an
    escape (``"a\\nb"`` -> ``"a\\\\nb"``); other text, accents and scripts included, unchanged."""
    return _HIDDEN.sub(_spell, str(text))


def visible_lines(text: object) -> str:
    """``text`` with its line breaks kept and every other hidden character spelt (for a message of several lines
    written by the app, each of which may quote a release)."""
    return "\n".join(visible(line) for line in str(text).split("\n"))


def shortened(text: object, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut said ("…"): a value of ten million characters cannot
    be drawn as a figure's label (the font rasterizer overflows) nor wrapped into a report's table cell."""
    text = str(text)
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"
