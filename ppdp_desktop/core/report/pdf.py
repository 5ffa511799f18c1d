"""The PDF report's layout: A4 throughout, flowing text, tables that split across pages with their header
repeated, figures at the page width, and on every page its number and the release's fingerprint.

The blocks of :func:`~ppdp_desktop.core.report.outline.build_outline` (the HTML page shows the same) are placed top
down with a cursor; :mod:`~ppdp_desktop.core.report.pdf_document` writes the file (why the app writes PDF itself:
see there). The font is DejaVu Sans, shipped with the application (``resources/fonts``), so nothing is downloaded
and every script it covers prints.
"""
from __future__ import annotations

from ppdp_desktop.core.evaluation.fonts import font_file
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.progress import Progress
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.outline import Block, Bullets, Heading, Image, Paragraph, Table, build_outline
from ppdp_desktop.core.report.pdf_document import K, PdfDocument, png_size
from ppdp_desktop.core.report.pdf_lines import lines
from ppdp_desktop.core.report.truetype import load_font
from ppdp_desktop.core.visible import shortened

COLORS = {"ok": ((232, 244, 234), (46, 125, 50)), "warning": ((255, 244, 224), (199, 120, 0)),
          "danger": ((253, 236, 234), (198, 40, 40))}
HEADING_SIZES = {0: 17, 1: 14, 2: 12, 3: 10.5}


class ReportPDF(PdfDocument):
    """A4 pages with margins, a cursor (``x``, ``y`` in mm from the top-left) that text moves down, automatic page
    breaks, and a footer on every page naming the report, the page ("page 3 of 12") and the release's fingerprint."""

    l_margin, t_margin, r_margin, b_margin = 16.0, 15.0, 16.0, 20.0
    c_margin = 1.0  # the space between a cell's edge and its text

    def __init__(self, context: ReportContext) -> None:
        super().__init__({"": load_font(str(font_file())), "B": load_font(str(font_file(bold=True)))},
                         title=f"Privacy report: {context.data_label}", creator=context.app_version,
                         created=context.created)
        self.context = context
        self.x, self.y = self.l_margin, self.t_margin
        self.color = (0, 0, 0)
        self.set_font("", 9.5)

    @property
    def epw(self) -> float:
        """The width between the margins."""
        return self.w - self.l_margin - self.r_margin

    @property
    def page_break_trigger(self) -> float:
        return self.h - self.b_margin

    def add_page(self) -> None:
        super().add_page()
        self.x, self.y = self.l_margin, self.t_margin

    def ln(self, h: float) -> None:
        self.x, self.y = self.l_margin, self.y + h

    def cell(self, w: float, h: float, text: str, align: str = "L", move: str = "right") -> None:
        """One line of ``text`` in a box ``w`` x ``h`` at the cursor (``w`` 0: to the right margin), on the next page
        if it would reach the bottom margin; then the cursor moves ``move``: "right" (after the box), "next" (the
        left margin of the next line) or "below" (under the box)."""
        if self.y + h > self.page_break_trigger:
            x = self.x
            self.add_page()
            self.x = x
        w = w or self.w - self.r_margin - self.x
        left = self.x + (w - self.c_margin - self.string_width(text) if align == "R" else self.c_margin)
        self.text(left, self._baseline(self.y, h), text, self.color)
        if move == "right":
            self.x += w
        else:
            self.x = self.l_margin if move == "next" else self.x
            self.y += h

    def finish(self) -> None:
        """Draw every page's footer, now that the number of pages is known."""
        label = f"Privacy report: {self.context.data_label}"
        for page in range(self.page_no):
            self.turn_to(page)
            self.set_font("", 7)
            self.text(self.l_margin + self.c_margin, self._baseline(self.h - 14, 3.5),
                      f"{label}  ·  page {page + 1} of {self.page_no}", (110, 110, 110))
            if self.context.fingerprint:
                self.text(self.l_margin + self.c_margin, self._baseline(self.h - 10.5, 3.5),
                          f"Release fingerprint {self.context.fingerprint}", (110, 110, 110))

    def _baseline(self, top: float, h: float) -> float:
        """The baseline of a line of the current size in a box ``h`` mm high from ``top``: a little below its middle."""
        return top + 0.5 * h + 0.3 * self.size / K


def render_pdf(reports: list[MethodReport], context: ReportContext, progress: Progress) -> bytes:
    """The report's blocks laid out on A4 pages: the PDF file's bytes."""
    pdf = ReportPDF(context)
    lay_out(pdf, build_outline(reports, context), progress)
    return pdf.output()


def lay_out(pdf: ReportPDF, blocks: list[Block], progress: Progress) -> None:
    """Draw ``blocks`` on ``pdf``'s pages, from a first page on, then the footers; ``progress`` is told of each
    figure."""
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
    pdf.finish()


def flow(pdf: ReportPDF, width: float, height: float, text: str) -> None:
    """``text`` from the cursor in lines ``height`` mm apart, no wider than ``width`` mm (0: to the right margin),
    then the cursor at the left margin under it."""
    w = width or pdf.w - pdf.r_margin - pdf.x
    x = pdf.x
    for line in lines(text, w - 2 * pdf.c_margin, pdf.size, pdf.advances()):
        pdf.x = x
        pdf.cell(w, height, line, move="below")
    pdf.x = pdf.l_margin


def _keep_with_figure(pdf: ReportPDF, following: list[Block]) -> None:
    """A heading (and its one-line meaning) followed by a figure starts a page if the figure would not fit
    under it: never a heading alone at the foot of a page."""
    image = next((b for b in following if isinstance(b, Image)), None)
    if image is not None and pdf.y + 25 + _image_size(pdf, image)[1] > pdf.page_break_trigger:
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
    if block.level == 1 and pdf.y > pdf.t_margin + 1:
        pdf.add_page()
    elif block.level >= 2 and pdf.y > pdf.h - 50:  # never a heading alone at the foot of a page
        pdf.add_page()
    pdf.ln(2 if block.level else 0)
    pdf.set_font("B", HEADING_SIZES.get(block.level, 10))
    flow(pdf, 0, HEADING_SIZES.get(block.level, 10) * 0.5, block.text)
    if block.level == 2:
        pdf.line(pdf.l_margin, pdf.y + 0.5, pdf.w - pdf.r_margin, pdf.y + 0.5, (200, 200, 200))
    pdf.ln(2)
    pdf.set_font("", 9.5)


#: a verdict's box: line height, padding above and below, padding left and right (mm)
BOX_LINE, BOX_PAD_Y, BOX_PAD_X = 5.0, 1.5, 2.5


def _paragraph(pdf: ReportPDF, block: Paragraph) -> None:
    if block.style in COLORS:
        _box(pdf, block.text, *COLORS[block.style])
    elif block.style == "meaning":
        pdf.set_font("", 8.5)  # grey, not italic: one font file less to embed
        pdf.color = (85, 85, 85)
        flow(pdf, 0, 4.2, block.text)
        pdf.ln(1.5)
    elif block.style == "small":
        pdf.set_font("", 7.5)
        pdf.color = (100, 100, 100)
        flow(pdf, 0, 3.8, block.text)
        pdf.ln(2)
    else:
        pdf.set_font("", 9.5)
        flow(pdf, 0, 4.8, block.text)
        pdf.ln(1.5)
    pdf.color = (0, 0, 0)
    pdf.set_font("", 9.5)


def _box(pdf: ReportPDF, text: str, fill: tuple[int, int, int], bar: tuple[int, int, int]) -> None:
    """A verdict in bold on a tinted box with a coloured bar on its left, as in the HTML page; a box taller than
    the room left on the page goes on, box and bar, on the next."""
    pdf.set_font("B", 9.5)
    left, width = pdf.l_margin + 2, pdf.epw - 2
    todo = lines(text, width - 2 * BOX_PAD_X, pdf.size, pdf.advances())  # the padding holds the cell margins
    while todo:
        room = int((pdf.page_break_trigger - pdf.y - 2 * BOX_PAD_Y) // BOX_LINE)
        if room < min(len(todo), 2):  # not even the box's first lines fit: the next page
            pdf.add_page()
            continue
        part, todo = todo[:room], todo[room:]
        top, height = pdf.y, 2 * BOX_PAD_Y + BOX_LINE * len(part)
        pdf.rect(left, top, width, height, fill)
        pdf.rect(pdf.l_margin, top, 1.6, height, bar)
        pdf.y = top + BOX_PAD_Y
        for line in part:
            pdf.x = left + BOX_PAD_X
            pdf.cell(width - 2 * BOX_PAD_X, BOX_LINE, line, move="below")
        pdf.ln(BOX_PAD_Y)
    pdf.ln(1.5)


def _bullets(pdf: ReportPDF, block: Bullets) -> None:
    pdf.set_font("", 9.5)
    for item in block.items:
        pdf.x = pdf.l_margin + 2
        pdf.cell(4, 4.8, "•")
        flow(pdf, pdf.epw - 6, 4.8, item)
        pdf.ln(0.6)
    pdf.ln(1.5)


#: a table cell of the PDF shows at most this many characters (a row must fit on a page; the HTML report and the
#: values CSV give the whole value)
MAX_CELL = 300


def _table(pdf: ReportPDF, block: Table) -> None:
    """A table drawn cell by cell: each cell's text wrapped to its column, a row never split, and the header
    drawn again at the top of every page the table reaches."""
    size = 7 if len(block.header) > 4 else 8.5
    line = size * 0.42
    weights = block.widths or tuple(1.0 for _ in block.header)
    widths = [pdf.epw * w / sum(weights) for w in weights]
    right = [i >= block.numeric_from for i in range(len(block.header))]

    def draw(cells: tuple[str, ...], bold: bool) -> None:
        pdf.set_font("B" if bold else "", size)
        advance = pdf.advances()
        wrapped = [lines(shortened(c, MAX_CELL), w - 1.6, size, advance)  # into the margins: "Estimated" whole
                   for c, w in zip(cells, widths)]
        height = max(len(w) for w in wrapped) * line + 1.2
        if pdf.y + height > pdf.page_break_trigger:
            pdf.add_page()
            if not bold:
                draw(block.header, True)
                pdf.set_font("", size)
        y, x = pdf.y, pdf.l_margin
        if bold:
            pdf.rect(pdf.l_margin, y, pdf.epw, height, (232, 232, 232))
        for texts, w, align in zip(wrapped, widths, right):
            for k, text in enumerate(texts):
                pdf.x, pdf.y = x + 0.8, y + 0.6 + k * line
                pdf.cell(w - 1.6, line, text, align="R" if align else "L")
            x += w
        pdf.line(pdf.l_margin, y + height, pdf.l_margin + pdf.epw, y + height, (210, 210, 210))
        pdf.x, pdf.y = pdf.l_margin, y + height

    draw(block.header, True)
    for row in block.rows:
        draw(row, False)
    pdf.ln(3)
    pdf.set_font("", 9.5)


def _image_size(pdf: ReportPDF, block: Image) -> tuple[float, float]:
    """Width and height (mm) of a figure: the page width, or narrower if it is taller than a page."""
    width_px, height_px = png_size(block.report.image(block.name))
    width = pdf.epw
    height = width * height_px / width_px
    room = pdf.h - pdf.t_margin - pdf.b_margin - 40  # a page, less the caption and room for a heading above
    if height > room:  # a tall figure (many values) fits one page, narrower
        width, height = width * room / height, room
    return width, height


def _image(pdf: ReportPDF, block: Image) -> None:
    png = block.report.image(block.name)
    width, height = _image_size(pdf, block)
    if pdf.y + height + 12 > pdf.h - pdf.b_margin:
        pdf.add_page()
    pdf.image(png, pdf.l_margin + (pdf.epw - width) / 2, pdf.y, width, height)
    pdf.y += height
    pdf.set_font("", 8)
    pdf.color = (85, 85, 85)
    flow(pdf, 0, 4, block.label())
    pdf.color = (0, 0, 0)
    pdf.set_font("", 9.5)
    pdf.ln(3)
