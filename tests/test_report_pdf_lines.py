"""The PDF's flowing text (:mod:`ppdp_desktop.core.report.pdf_lines`): the lines fpdf2's ``multi_cell`` draws,
found in one pass, and the same PDF bytes."""
from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from fpdf import FPDF
from fpdf.enums import XPos, YPos

from ppdp_desktop.core.evaluation.fonts import font_file
from ppdp_desktop.core.report.pdf_lines import flow, lines

WORDS = ["the", "release", "records", "a", "posterior", "ρ₂", "Łódź", "—", "95 %", "x" * 60, "(smaller", "is)", "",
         "ﬁ", "€12,345.67", "interval;", "病院", "Überprüfung", "identifier-like-words-with-hyphens"]


def _pdf(bold: bool = False, size: float = 9.5) -> FPDF:
    pdf = FPDF(unit="mm", format="A4")
    pdf.add_font("D", "", str(font_file()))
    pdf.add_font("D", "B", str(font_file(bold=True)))
    pdf.set_creation_date(datetime(2026, 1, 2, tzinfo=UTC))
    pdf.set_margins(16, 15, 16)
    pdf.set_auto_page_break(True, margin=20)
    pdf.add_page()
    pdf.set_font("D", "B" if bold else "", size)
    return pdf


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 80))) for _ in range(count)]


@pytest.mark.parametrize(("bold", "size"), [(False, 9.5), (True, 14), (False, 7.5), (True, 8.5)])
def test_lines_are_multi_cells(bold, size):
    pdf = _pdf(bold, size)
    texts = _texts(int(size * 10) + bold, 150) + ["a  b   c" * 40, " leading and trailing ", "x" * 500, "word"]
    for width in (178.0, 172.0, 60.0, 9.0):
        for text in texts:
            expected = pdf.multi_cell(width, 4, text, align="L", dry_run=True, output="LINES")
            assert lines(pdf, text, width) == expected, (width, text)


def test_what_only_multi_cell_breaks_is_left_to_it():
    pdf = _pdf()
    for text in ("", "two\nlines", "soft\u00adhyphen", "tab\there", "thin\u2009space", "no\u200bwidth"):
        assert lines(pdf, text, 100) is None
    assert lines(pdf, "W", 1.0) is None  # not one character fits: multi_cell says so


def _draw(use_flow: bool) -> bytes:
    pdf = _pdf()
    for k, text in enumerate(_texts(7, 40) + ["", "two\nlines"]):
        pdf.set_font("D", "B" if k % 5 == 0 else "", 9.5 if k % 3 else 7.5)
        width = pdf.epw - 6 if k % 2 else 0
        if width:
            pdf.set_x(pdf.l_margin + 6)
        if use_flow:
            flow(pdf, width, 4.8, text)
        else:
            pdf.multi_cell(width, 4.8, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        pdf.ln(1.5)
    assert pdf.page_no() > 3  # the paragraphs cross pages
    return bytes(pdf.output())


def test_flow_draws_the_same_pdf_as_multi_cell():
    assert _draw(True) == _draw(False)
