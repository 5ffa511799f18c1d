"""Flowing text on the PDF's pages: fpdf2's ``multi_cell`` line breaking in one pass, each line drawn by ``cell``.

Why: fpdf2's line breaker measures the whole line again at every character it adds (each width a sum over the
line's characters), which made the report's paragraphs about a third of the PDF's CPU time. :func:`lines` breaks
the same text at the same places from one running sum of the font's widths (fpdf2's rule: a line ends before the
character that would make it wider than the cell less its margins, at the line's last space, the space dropped;
a word wider than the cell is cut), and :func:`flow` draws them as ``multi_cell`` does: the same pages, the same
bytes (tested). Text with what only fpdf2's breaker handles (line feeds, soft hyphens, other breaking spaces) is
left to ``multi_cell``.
"""
from __future__ import annotations

from fpdf import FPDF
from fpdf.enums import XPos, YPos
from fpdf.fonts import TTFFont

#: characters fpdf2's breaker treats specially (besides the plain space): such text goes to ``multi_cell``
SPECIAL = frozenset("\n\r\f\u00ad\t\u200b\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a\u205f\u3000")
TOLERANCE = 1e-9  # fpdf2's FloatTolerance


def lines(pdf: FPDF, text: str, width: float) -> list[str] | None:
    """``text`` broken into the lines ``pdf.multi_cell(width, h, text)`` draws in the current font (``width`` > 0,
    no padding); None where only ``multi_cell`` can tell (see :data:`SPECIAL`, an empty text, a symbol font)."""
    font = pdf.current_font
    if not isinstance(font, TTFFont) or font.is_symbol or not text or not SPECIAL.isdisjoint(text) \
            or pdf.char_spacing or pdf.font_stretching != 100 or pdf.text_shaping:
        return None
    widths = font.cw  # the font's widths in 1/1000 em, as fpdf2 reads them (a missing character: the default)
    size, k = pdf.font_size_pt, pdf.k
    room = width - pdf.c_margin - pdf.c_margin  # as fpdf2 takes the margins off, in the same order
    out: list[str] = []
    start, i, n = 0, 0, len(text)
    while i < n:
        total: float = 0  # the line's width in font units: fpdf2 sums the same integers, then scales
        space = -1
        while i < n:
            c = text[i]
            w = widths[ord(c)]
            if (total * size * 0.001 / k + w * size * 0.001 / k) - room > TOLERANCE:  # fpdf2's arithmetic
                if c == " ":  # a space that does not fit ends the line and is dropped
                    out.append(text[start:i])
                    i += 1
                elif space >= 0:  # back to the line's last space
                    out.append(text[start:space])
                    i = space + 1
                elif i > start:  # one word wider than the cell: cut
                    out.append(text[start:i])
                else:  # not even one character fits
                    return None
                start = i
                break
            if c == " ":
                space = i
            total += w
            i += 1
        else:
            out.append(text[start:])
    return out


def flow(pdf: FPDF, width: float, height: float, text: str) -> None:
    """``pdf.multi_cell(width, height, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)`` (``width`` 0: to the
    right margin), drawn line by line with ``cell``."""
    w = width or pdf.w - pdf.r_margin - pdf.x
    broken = lines(pdf, text, w)
    if broken is None:
        pdf.multi_cell(width, height, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        return
    x = pdf.x
    for k, line in enumerate(broken):
        last = k == len(broken) - 1
        pdf.x = x
        pdf.cell(w, height, line, align="L", new_x=XPos.LMARGIN if last else XPos.LEFT, new_y=YPos.NEXT)
