"""The report's own PDF writer (:mod:`~ppdp_desktop.core.report.truetype`,
:mod:`~ppdp_desktop.core.report.pdf_document`): the embedded font subsets draw exactly the original glyphs, every
character drawn reads back as itself (pypdf), figures keep their pixels, and one input gives one file."""
from __future__ import annotations

import dataclasses
import io
import re
import struct
import zlib

import numpy as np
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.evaluation.fonts import font_file
from ppdp_desktop.core.progress import no_progress
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.outline import Bullets, Paragraph, Table, build_outline
from ppdp_desktop.core.report.pdf import ReportPDF, lay_out
from ppdp_desktop.core.report.pdf_document import PdfDocument, png_image
from ppdp_desktop.core.report.truetype import FontError, TrueTypeFont, load_font

pypdf = pytest.importorskip("pypdf")

LABEL = "Patients – Ωμέγα, Ærø, Łódź, Привет, 病院 ☃ 𝔘 ﬁ"  # Greek, Cyrillic, CJK (not in DejaVu), astral
EXTRA = "Überprüfung — “quoted” ½ ≤ ≥ ∞ ∑ → ✗ Ĳ ŉ ǅ ﬀ ﬂ ‰ € ₹ Ⅻ ⅓ ①"


@pytest.fixture(scope="module")
def report_and_context():
    demo = load_table(resource_path(DEMO_DATA))
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

    settings = AnonymizationSettings("diagnosis", method="uniform", identifiers=["patient_id", "name"],
                                     sensitivity=SensitivitySettings(theta=3), seed=7)
    result = anonymize(demo, settings)
    context = dataclasses.replace(ReportContext.from_anonymization(result), data_label=LABEL,
                                  fingerprint="ﬁngerprint ✓ 0123", created="2026-01-02T03:04:05+00:00")
    return build_report(result), context


def _pdf(report, context) -> bytes:
    blocks = build_outline([report], context)
    blocks += [Paragraph(EXTRA, "warning"), Bullets(("Ĳ ŉ ǅ", "ﬀ ﬂ ‰ € ₹")),
               Table(("Wert", "Anzahl"), (("Ⅻ ⅓ ①", "1 234"), ("x" * 400, "5")))]  # a cell shortened: "…"
    pdf = ReportPDF(context)
    lay_out(pdf, blocks, no_progress)
    return pdf.output()


def _text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)


def test_every_character_drawn_reads_back(report_and_context):
    report, context = report_and_context
    data = _pdf(report, context)
    text = _text(data)
    flat = re.sub(r"\s+", " ", text)
    assert LABEL in flat  # CJK and an astral character too: drawn as the empty box, read back as themselves
    for word in EXTRA.split():
        assert word in flat, word
    assert "page 1 of" in flat and "Release fingerprint ﬁngerprint ✓ 0123" in flat
    assert report.title in flat and "x" * 30 in flat and "x…" in flat  # the long cell wrapped, shortened
    reader = pypdf.PdfReader(io.BytesIO(data))
    assert reader.metadata.title == f"Privacy report: {LABEL}" and reader.metadata.creation_date.year == 2026
    pages = len(reader.pages)
    assert f"page {pages} of {pages}" in flat


def test_the_same_report_gives_the_same_bytes(report_and_context):
    report, context = report_and_context
    assert _pdf(report, context) == _pdf(report, context)


def _glyph(font: TrueTypeFont, glyph: int) -> bytes:
    return font._glyph_data(glyph)


def _embedded_fonts(data: bytes) -> list[bytes]:
    """The font programs of the file (``/FontFile2`` streams), decompressed."""
    out = []
    for match in re.finditer(rb"<< /Length1 (\d+) /Filter /FlateDecode /Length (\d+) >>\nstream\n", data):
        start = match.end()
        out.append(zlib.decompress(data[start:start + int(match.group(2))]))
        assert len(out[-1]) == int(match.group(1))
    return out


@pytest.mark.parametrize("bold", [False, True])
def test_a_subset_draws_the_original_glyphs(bold):
    font = load_font(str(font_file(bold)))
    text = LABEL + EXTRA + "Åǻ"  # Åǻ: composites of DejaVu, drawn from components the text does not name
    glyphs = list(dict.fromkeys([0] + [font.glyph(ord(c)) for c in text]))
    kept = font.closure(glyphs)
    assert kept[:len(glyphs)] == glyphs and len(kept) > len(glyphs)  # components appended
    subset = TrueTypeFont(font.subset(kept), "subset")
    assert subset.n_glyphs == len(kept)
    renumber = {old: new for new, old in enumerate(kept)}
    for new, old in enumerate(kept):
        original, copied = _glyph(font, old), _glyph(subset, new)
        assert len(original) <= len(copied) <= len(original) + 3  # padded to four bytes
        components = font._components(original)
        assert [renumber[g] for _, g in components] == [g for _, g in subset._components(copied)]
        if not components:
            assert copied[:len(original)] == original
        assert subset.width(new) == font.width(old)


def test_the_subset_file_checksum_is_right():
    font = load_font(str(font_file()))
    data = font.subset(font.closure([0, font.glyph(ord("A")), font.glyph(ord("Å"))]))
    padded = data + b"\0" * (-len(data) % 4)
    assert sum(struct.unpack(f">{len(padded) // 4}I", padded)) & 0xFFFFFFFF == 0xB1B0AFBA


def test_character_lookup_and_widths_match_the_font_tables():
    font = load_font(str(font_file()))
    assert font.glyph(ord(" ")) != 0 and font.glyph(ord("A")) != font.glyph(ord("B"))
    assert font.glyph(0x75C5) == 0 and font.glyph(0x1D518) == 0  # 病, 𝔘: not in DejaVu Sans
    assert font.width(font.glyph(ord("i"))) < font.width(font.glyph(ord("W")))
    assert font.postscript_name() == "DejaVuSans"


def test_a_damaged_font_is_refused():
    with pytest.raises(FontError, match="table"):
        TrueTypeFont(b"\0\1\0\0\0\0" + b"\0" * 6, "broken.ttf")
    with pytest.raises(FontError, match="damaged"):
        TrueTypeFont(load_font(str(font_file())).data[:300], "cut.ttf")


@pytest.mark.parametrize("mode", ["P", "RGB", "L", "RGBA", "LA"])
def test_figures_keep_their_pixels(mode, tmp_path):
    """Each PNG is embedded as it is (or, RGBA, laid on white): a renderer-free check decodes the PDF's image
    stream with its predictor and compares the pixels."""
    from PIL import Image

    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 255, size=(23, 37, 4), dtype=np.uint8)
    image = Image.fromarray(pixels, "RGBA").convert(mode if mode != "P" else "RGB")
    if mode == "P":
        image = image.quantize(200)
    buf = io.BytesIO()
    image.save(buf, format="png")
    doc = PdfDocument({"": load_font(str(font_file()))})
    doc.add_page()
    doc.image(buf.getvalue(), 10, 10, 37, 23)
    reader = pypdf.PdfReader(io.BytesIO(doc.output()))
    shown = reader.pages[0].images[0].image
    expected = image.convert("RGBA")
    flat = Image.new("RGB", expected.size, (255, 255, 255))
    flat.paste(expected, mask=expected.getchannel("A"))
    assert np.array_equal(np.asarray(shown.convert("RGB")), np.asarray(flat))
    assert png_image(buf.getvalue()).width == 37


def test_a_small_palette_is_embedded_as_the_png_holds_it():
    """Pillow writes a palette of at most 16 colours with 4 bits a pixel (the report's figures): the image stream is
    the PNG's own compressed rows, decoded with the PNG predictor at that depth, on the PNG's palette. (pypdf
    decodes sub-byte predictors wrongly, so the bytes are compared; poppler shows the pixels exactly.)"""
    from PIL import Image

    image = Image.fromarray(np.random.default_rng(4).integers(0, 255, (9, 11, 3), dtype=np.uint8)).quantize(12)
    buf = io.BytesIO()
    image.save(buf, format="png")
    png = buf.getvalue()
    assert png[24] == 4  # bit depth
    picture = png_image(png)
    assert b"/BitsPerComponent 4" in picture.dictionary and b"/Predictor 15 /Colors 1" in picture.dictionary
    palette = bytes(image.getpalette()[:36])
    assert b"[/Indexed /DeviceRGB 11 <%s>]" % palette.hex().encode() in picture.dictionary
    rows = zlib.decompress(picture.data)
    assert len(rows) == 9 * (1 + 6)  # a filter byte and ceil(11 * 4 / 8) bytes a row


def test_text_drawn_is_where_it_was_put():
    doc = PdfDocument({"": load_font(str(font_file()))})
    doc.add_page()
    doc.set_font("", 12)
    doc.text(20, 30, "Left")
    seen = []
    page = pypdf.PdfReader(io.BytesIO(doc.output())).pages[0]
    page.extract_text(visitor_text=lambda text, cm, tm, font, size: seen.append((text, tm[4], tm[5])))
    text, x, y = next(s for s in seen if s[0].strip())
    assert text == "Left" and x == pytest.approx(20 * 72 / 25.4, abs=0.01)
    assert y == pytest.approx((297 - 30) * 72 / 25.4, abs=0.01)
