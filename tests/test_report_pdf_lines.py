"""The PDF's line breaking (:mod:`ppdp_desktop.core.report.pdf_lines`): lines that fit, the text kept whole but
for the spaces a break drops, each line as full as it can be, and the lines fpdf2 (the report's former layout
library) broke the same paragraph into."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.evaluation.fonts import font_file
from ppdp_desktop.core.report.pdf_lines import lines
from ppdp_desktop.core.report.truetype import load_font

FONT = load_font(str(font_file()))
K = 72 / 25.4


def advance(c: str) -> int:
    return FONT.width(FONT.glyph(ord(c)))


def width(text: str, size: float) -> float:
    return sum(advance(c) for c in text) * size / 1000 / K


TEXT = ("Someone who was at most 0.4 % to 27 % (depending on the value) sure that a given person has each protected "
        "value cannot become more than 1.1 % to 80 % sure by reading the release — Łódź, ρ₂ and "
        "identifier-like-words-with-hyphens-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.")


def test_the_lines_fpdf2_drew():
    """``FPDF.multi_cell(w, 4, TEXT, dry_run=True, output="LINES")`` in DejaVu Sans 9.5 pt, fpdf2 2.8.9 (its cell
    margins 1 mm each side)."""
    assert lines(TEXT, 60.0 - 2, 9.5, advance) == [
        'Someone who was at most 0.4 %', 'to 27 % (depending on the value)', 'sure that a given person has each',
        'protected value cannot become', 'more than 1.1 % to 80 % sure by', 'reading the release — Łódź, ρ₂', 'and',
        'identifier-like-words-with-hyphens', '-xxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'xxxxxxxxxx.']
    assert lines(TEXT, 25.0 - 2, 9.5, advance) == [
        'Someone', 'who was at', 'most 0.4 %', 'to 27 %', '(depending', 'on the value)', 'sure that a', 'given person',
        'has each', 'protected', 'value cannot', 'become', 'more than', '1.1 % to 80', '% sure by', 'reading the',
        'release —', 'Łódź, ρ₂ and', 'identifier-like', '-words-with-h', 'yphens-xxxx', 'xxxxxxxxxxx', 'xxxxxxxxxxx',
        'xxxxxxxxxxx', 'x.']


def test_line_feeds_and_soft_hyphens():
    assert lines("one\ntwo\r\nthree\rfour", 100, 9.5, advance) == ["one", "two", "three", "four"]
    assert lines("", 100, 9.5, advance) == [""] and lines("a\n\nb", 100, 9.5, advance) == ["a", "", "b"]
    assert lines("soft\u00adhyphen\ttab", 100, 9.5, advance) == ["softhyphen tab"]
    assert lines("W", 0.5, 9.5, advance) == ["W"]  # not even one character fits: one a line, never lost


WORDS = st.text(alphabet=st.sampled_from("abcxyzWMil.,-—ÆŁρ病 "), min_size=0, max_size=300)


@settings(max_examples=300, deadline=None)
@given(text=WORDS, room=st.floats(min_value=1.0, max_value=180.0), size=st.sampled_from([7.0, 8.5, 9.5, 14.0]))
def test_lines_fit_keep_the_text_and_are_full(text, room, size):
    out = lines(text, room, size, advance)
    pos = 0
    for k, line in enumerate(out):
        assert len(line) == 1 or width(line, size) <= room + 1e-6  # fits, or one character alone
        assert text.startswith(line, pos)
        pos += len(line)
        if k + 1 < len(out):
            following = out[k + 1]
            if pos < len(text) and text[pos] == " ":  # a break at a space drops that one space
                pos += 1
                word = text[pos:].split(" ")[0]
                assert width(f"{line} {word}", size) > room - 1e-6 or not word  # the next word did not fit
            elif following:
                assert width(line + following[0], size) > room - 1e-6  # a word cut where the room ended
    assert pos == len(text) or (pos == len(text) - 1 and text[-1] == " ")
