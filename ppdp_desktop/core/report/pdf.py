"""The PDF report, laid out by fpdf2: A4 throughout, flowing text, tables that split across pages with their
header repeated, figures at the page width, and on every page its number and the release's fingerprint.

Why fpdf2: a document layout library (plotting-library pages are plot-sized canvases with hand-placed text, which
is what made the old report slow and uneven) that is pure Python, small, already handles Unicode TrueType
fonts with subsetting, repeated table headings and page footers, and embeds the PNG figures the report
drew once. reportlab does the same but is a far larger dependency with a C extension for the same result.
The font is DejaVu Sans, shipped with the application (``resources/fonts``), so nothing is downloaded and every
script it covers prints.
"""
from __future__ import annotations

import io
import struct
from pathlib import Path

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from ppdp_desktop.core.evaluation.fonts import font_file
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.progress import Progress
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.outline import Block, Bullets, Heading, Image, Paragraph, Table, build_outline
from ppdp_desktop.core.report.pdf_lines import flow
from ppdp_desktop.core.visible import shortened

FONT = "DejaVu"
COLORS = {"ok": ((232, 244, 234), (46, 125, 50)), "warning": ((255, 244, 224), (199, 120, 0)),
          "danger": ((253, 236, 234), (198, 40, 40))}
HEADING_SIZES = {0: 17, 1: 14, 2: 12, 3: 10.5}


class ReportPDF(FPDF):
    """A4 pages whose footer names the report, the page ("page 3 of 12") and the release's fingerprint."""

    def __init__(self, context: ReportContext, blocks: list[Block] | None = None) -> None:
        """``blocks``: the text the pages will show, whose characters are the only ones the fonts map (see
        :func:`characters`); None maps every character of the fonts."""
        super().__init__(orientation="portrait", unit="mm", format="A4")
        self.context = context
        shown = None if blocks is None else sorted(characters(blocks, context))
        self.add_font(FONT, "", str(font_file()), unicode_range=shown)
        self.add_font(FONT, "B", str(font_file(bold=True)), unicode_range=shown)
        self.set_margins(16, 15, 16)
        self.set_auto_page_break(True, margin=20)
        self.alias_nb_pages()
        self.set_title(f"Privacy report: {context.data_label}")
        self.set_creator(context.app_version)
        self.set_font(FONT, size=9.5)

    def footer(self) -> None:
        self.set_y(-14)
        self.set_font(FONT, size=7)
        self.set_text_color(110, 110, 110)
        left = f"Privacy report: {self.context.data_label}"
        self.cell(0, 3.5, f"{left}  ·  page {self.page_no()} of {{nb}}", align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        if self.context.fingerprint:
            self.cell(0, 3.5, f"Release fingerprint {self.context.fingerprint}", align="L")
        self.set_text_color(0, 0, 0)


def render_pdf(reports: list[MethodReport], context: ReportContext, path: Path, progress: Progress) -> None:
    """Lay out the report's blocks on A4 pages and write the PDF to ``path``."""
    blocks = build_outline(reports, context)
    pdf = ReportPDF(context, blocks)
    lay_out(pdf, blocks, progress)
    pdf.output(str(path))


def lay_out(pdf: ReportPDF, blocks: list[Block], progress: Progress) -> None:
    """Draw ``blocks`` on ``pdf``'s pages, from a first page on; ``progress`` is told of each figure."""
    pdf.add_page()
    images = max(sum(isinstance(b, Image) for b in blocks), 1)
    done = 0
    for i, block in enumerate(blocks):
        if isinstance(block, Image):
            progress(done / images, f"Figure {done + 1} of {images}: {block.name}")
            done += 1
        elif isinstance(block, Heading) and block.level >= 2:
            _keep_with_figure(pdf, blocks[i + 1:i + 3])
        _draw(pdf, block)


#: characters the layout adds to the blocks' text: the footer's, bullets, the ellipsis of a shortened cell
ADDED = "·•…" + "".join(chr(c) for c in range(32, 127))  # printable ASCII holds the footer's digits and ": ."


def characters(blocks: list[Block], context: ReportContext) -> set[int]:
    """The code points of every text the PDF can draw: the blocks', the footer's and what the layout adds
    (:data:`ADDED`). fpdf2 reads a font's widths and glyph numbers only for these: for DejaVu's ~6,000 mapped
    characters that was half of the fonts' load (~0.04 s of the PDF's 0.17 s); the PDF is the same, byte for byte
    (tested), as long as nothing drawn is missing here."""
    texts = [ADDED, context.data_label, context.fingerprint]
    for block in blocks:
        if isinstance(block, (Heading, Paragraph)):
            texts.append(block.text)
        elif isinstance(block, Bullets):
            texts += block.items
        elif isinstance(block, Table):
            texts += block.header
            texts += ["".join(row) for row in block.rows]
        else:
            texts += [block.name, block.caption]
    return {ord(c) for c in set("".join(texts))}


def _keep_with_figure(pdf: ReportPDF, following: list[Block]) -> None:
    """A heading (and its one-line meaning) followed by a figure starts a page if the figure would not fit
    under it: never a heading alone at the foot of a page."""
    image = next((b for b in following if isinstance(b, Image)), None)
    if image is not None and pdf.get_y() + 25 + _image_size(pdf, image)[1] > pdf.page_break_trigger:
        pdf.add_page()


def _draw(pdf: ReportPDF, block: Block) -> None:
    if isinstance(block, Heading):
        _heading(pdf, block)
    elif isinstance(block, Paragraph):
        _paragraph(pdf, block)
    elif isinstance(block, Bullets):
        _bullets(pdf, block)
    elif isinstance(block, Table):
        _table(pdf, block)
    else:
        _image(pdf, block)


def _heading(pdf: ReportPDF, block: Heading) -> None:
    if block.level == 1 and pdf.get_y() > pdf.t_margin + 1:
        pdf.add_page()
    elif block.level >= 2 and pdf.get_y() > pdf.h - 50:  # never a heading alone at the foot of a page
        pdf.add_page()
    pdf.ln(2 if block.level else 0)
    pdf.set_font(FONT, "B", HEADING_SIZES.get(block.level, 10))
    flow(pdf, 0, HEADING_SIZES.get(block.level, 10) * 0.5, block.text)
    if block.level == 2:
        pdf.set_draw_color(200, 200, 200)
        pdf.line(pdf.l_margin, pdf.get_y() + 0.5, pdf.w - pdf.r_margin, pdf.get_y() + 0.5)
    pdf.ln(2)
    pdf.set_font(FONT, size=9.5)


def _paragraph(pdf: ReportPDF, block: Paragraph) -> None:
    if block.style in COLORS:
        fill, bar = COLORS[block.style]
        pdf.set_font(FONT, "B", 9.5)
        pdf.set_fill_color(*fill)
        y = pdf.get_y()
        page = pdf.page_no()
        pdf.set_x(pdf.l_margin + 2)
        pdf.multi_cell(pdf.epw - 2, 5, block.text, fill=True,
                       padding=(1.5, 2.5),  # type: ignore[arg-type]  # fpdf2 annotates ints; it takes (and documents) floats
                       align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        if pdf.page_no() == page:  # the coloured bar on the left, as in the HTML page
            pdf.set_fill_color(*bar)
            pdf.rect(pdf.l_margin, y, 1.6, pdf.get_y() - y, style="F")
        pdf.set_fill_color(255, 255, 255)  # the fill colour stays set: tables would take it
        pdf.ln(1.5)
    elif block.style == "meaning":
        pdf.set_font(FONT, size=8.5)  # grey, not italic: one font file less to load
        pdf.set_text_color(85, 85, 85)
        flow(pdf, 0, 4.2, block.text)
        pdf.set_text_color(0, 0, 0)
        pdf.ln(1.5)
    elif block.style == "small":
        pdf.set_font(FONT, size=7.5)
        pdf.set_text_color(100, 100, 100)
        flow(pdf, 0, 3.8, block.text)
        pdf.set_text_color(0, 0, 0)
        pdf.ln(2)
    else:
        pdf.set_font(FONT, size=9.5)
        flow(pdf, 0, 4.8, block.text)
        pdf.ln(1.5)
    pdf.set_font(FONT, size=9.5)


def _bullets(pdf: ReportPDF, block: Bullets) -> None:
    pdf.set_font(FONT, size=9.5)
    for item in block.items:
        pdf.set_x(pdf.l_margin + 2)
        pdf.cell(4, 4.8, "•")
        flow(pdf, pdf.epw - 6, 4.8, item)
        pdf.ln(0.6)
    pdf.ln(1.5)


#: a table cell of the PDF shows at most this many characters (a row must fit on a page; the HTML report and the
#: values CSV give the whole value)
MAX_CELL = 300


def _table(pdf: ReportPDF, block: Table) -> None:
    """A table drawn cell by cell: each cell's text wrapped to its column, a row never split, and the header
    drawn again at the top of every page the table reaches. (fpdf2's own table does the same with a general
    layout engine, several times slower on the report's long per-value tables.)"""
    size = 7 if len(block.header) > 4 else 8.5
    line = size * 0.42
    weights = block.widths or tuple(1.0 for _ in block.header)
    widths = [pdf.epw * w / sum(weights) for w in weights]
    right = [i >= block.numeric_from for i in range(len(block.header))]

    def draw(cells: tuple[str, ...], bold: bool) -> None:
        pdf.set_font(FONT, "B" if bold else "", size)
        wrapped = [_wrap(pdf, shortened(c, MAX_CELL), w - 1.6) for c, w in zip(cells, widths)]
        height = max(len(w) for w in wrapped) * line + 1.2
        if pdf.get_y() + height > pdf.page_break_trigger:
            pdf.add_page()
            if not bold:
                draw(block.header, True)
                pdf.set_font(FONT, size=size)
        y, x = pdf.get_y(), pdf.l_margin
        if bold:
            pdf.set_fill_color(232, 232, 232)
            pdf.rect(pdf.l_margin, y, pdf.epw, height, style="F")
            pdf.set_fill_color(255, 255, 255)
        for lines, w, align in zip(wrapped, widths, right):
            for k, text in enumerate(lines):
                pdf.set_xy(x + 0.8, y + 0.6 + k * line)
                pdf.cell(w - 1.6, line, text, align="R" if align else "L")
            x += w
        pdf.set_draw_color(210, 210, 210)
        pdf.line(pdf.l_margin, y + height, pdf.l_margin + pdf.epw, y + height)
        pdf.set_xy(pdf.l_margin, y + height)

    draw(block.header, True)
    for row in block.rows:
        draw(row, False)
    pdf.ln(3)
    pdf.set_font(FONT, size=9.5)


def _wrap(pdf: ReportPDF, text: str, width: float) -> list[str]:
    """``text`` in lines no wider than ``width`` (words kept whole unless one alone is too wide)."""
    if pdf.get_string_width(text) <= width:
        return [text]
    lines, current = [], ""
    for word in text.split(" "):
        trial = f"{current} {word}" if current else word
        if pdf.get_string_width(trial) <= width:
            current = trial
            continue
        if current:
            lines.append(current)
        while pdf.get_string_width(word) > width and len(word) > 1:  # a word wider than the column
            cut = max(1, int(len(word) * width / pdf.get_string_width(word)))
            lines.append(word[:cut])
            word = word[cut:]
        current = word
    return lines + [current] if current else lines


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG in pixels (from its IHDR chunk)."""
    return struct.unpack(">II", png[16:24])


def _image_size(pdf: ReportPDF, block: Image) -> tuple[float, float]:
    """Width and height (mm) of a figure: the page width, or narrower if it is taller than a page."""
    width_px, height_px = _png_size(block.report.image(block.name))
    width = pdf.epw
    height = width * height_px / width_px
    room = pdf.h - pdf.t_margin - pdf.b_margin - 40  # a page, less the caption and room for a heading above
    if height > room:  # a tall figure (many values) fits one page, narrower
        width, height = width * room / height, room
    return width, height


def _image(pdf: ReportPDF, block: Image) -> None:
    png = block.report.image(block.name)
    width, height = _image_size(pdf, block)
    if pdf.get_y() + height + 12 > pdf.h - pdf.b_margin:
        pdf.add_page()
    pdf.image(io.BytesIO(png), x=pdf.l_margin + (pdf.epw - width) / 2, w=width, h=height)
    pdf.set_font(FONT, size=8)
    pdf.set_text_color(85, 85, 85)
    flow(pdf, 0, 4, f"{block.name}. {block.caption}".strip())
    pdf.set_text_color(0, 0, 0)
    pdf.set_font(FONT, size=9.5)
    pdf.ln(3)
