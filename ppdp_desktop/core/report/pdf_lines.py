"""Flowing text on the PDF's pages: a paragraph broken into lines that fit a width, in one pass over its characters.

The rule (fpdf2's, which the report used before its own writer): a line ends before the character that would make
it wider than the room, at the line's last space, the space dropped; a word wider than the room alone is cut; a line
feed ends a line; a soft hyphen is not drawn.
"""
from __future__ import annotations

from collections.abc import Callable

TOLERANCE = 1e-9


def lines(text: str, room: float, size: float, advance: Callable[[str], int]) -> list[str]:
    """``text`` in lines no wider than ``room`` mm at ``size`` points, ``advance(c)`` a character's width in 1/1000
    em. An empty text is one empty line."""
    out: list[str] = []
    limit = room * 72 / 25.4 * 1000 / size  # the room in 1/1000 em
    for paragraph in text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00ad", "").split("\n"):
        out += _broken(paragraph.replace("\t", " "), limit, advance)
    return out


def _broken(text: str, limit: float, advance: Callable[[str], int]) -> list[str]:
    out: list[str] = []
    start, i, n = 0, 0, len(text)
    while i < n:
        total = 0
        space = -1
        while i < n:
            c = text[i]
            w = advance(c)
            if total + w - limit > TOLERANCE:
                if c == " ":  # a space that does not fit ends the line and is dropped
                    out.append(text[start:i])
                    i += 1
                elif space >= 0:  # back to the line's last space
                    out.append(text[start:space])
                    i = space + 1
                else:  # one word wider than the room: cut (at least one character a line)
                    i = max(i, start + 1)
                    out.append(text[start:i])
                    if i < n and text[i] == " ":  # a lone character cut before a space: the space ends the line
                        i += 1
                start = i
                break
            if c == " ":
                space = i
            total += w
            i += 1
        else:
            out.append(text[start:])
    return out or [""]
