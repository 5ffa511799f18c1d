"""A small PDF writer for the report: A4 pages of text in one embedded TrueType family, filled rectangles, rules
and PNG figures, in millimetres from the top-left corner like a page layout (the file's own unit is the point from
the bottom-left).

Why our own: the report draws nothing else, and the layout library it used cost more CPU to import than the rest
of the report took to build (issue 34: a job's report within 1.3x of the job). Text is written as glyph numbers of
a font subset (``/Type0``, ``/Identity-H``) with a ``/ToUnicode`` map, so the text can be searched, copied and read
back (tested with pypdf); a character the font lacks is drawn as its empty box and still read back as itself. PNG
figures are embedded as they are (their compressed rows are a PDF ``/FlateDecode`` stream with the PNG
predictors), without decoding them.
"""
from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from ppdp_desktop.core.report.truetype import TrueTypeFont

#: points per millimetre
K = 72 / 25.4
A4 = (210.0, 297.0)


@dataclass
class _Face:
    """One font of the document and the characters drawn with it, each given a CID in first-use order."""

    font: TrueTypeFont
    name: str
    cids: dict[str, int] = field(default_factory=dict)
    glyphs: list[int] = field(default_factory=lambda: [0])  # CID -> glyph of the original font; CID 0 .notdef
    widths: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.widths.append(self.font.width(0))

    def encode(self, text: str) -> bytes:
        """``text`` as the hex digits of its CIDs (every character its own CID, a missing one drawn by glyph 0)."""
        out = []
        for c in text:
            cid = self.cids.get(c)
            if cid is None:
                cid = self.cids[c] = len(self.glyphs)
                glyph = self.font.glyph(ord(c))
                self.glyphs.append(glyph)
                self.widths.append(self.font.width(glyph))
            out.append(cid)
        return struct.pack(f">{len(out)}H", *out).hex().upper().encode("ascii")

    def advance(self, c: str) -> int:
        """The width of ``c`` in 1/1000 em."""
        cid = self.cids.get(c)
        return self.widths[cid] if cid is not None else self.font.width(self.font.glyph(ord(c)))


@dataclass
class _Image:
    width: int
    height: int
    dictionary: bytes
    data: bytes
    name: bytes = b""


class PdfDocument:
    """Pages laid out top-down in millimetres: :meth:`text`, :meth:`rect`, :meth:`line` and :meth:`image` draw on
    the current page; :meth:`add_page` starts the next; :meth:`output` writes the file."""

    def __init__(self, fonts: dict[str, TrueTypeFont], title: str = "", creator: str = "",
                 created: str = "") -> None:
        """``fonts``: style ("" regular, "B" bold, ...) -> font; ``created``: an ISO date for the file's
        creation date (the same input gives the same bytes)."""
        self.faces = {style: _Face(font, f"F{i + 1}") for i, (style, font) in enumerate(fonts.items())}
        self.title, self.creator, self.created = title, creator, created
        self.w, self.h = A4
        self.pages: list[list[bytes]] = []
        self.page = -1  # the page drawn on: the last one, or an earlier one for its footer (:meth:`turn_to`)
        self.images: list[_Image] = []
        self.style, self.size = next(iter(fonts)), 10.0
        self._fill: tuple[int, int, int] | None = None

    # -- state --------------------------------------------------------------------------------------------------
    @property
    def page_no(self) -> int:
        return len(self.pages)

    def add_page(self) -> None:
        self.pages.append([b"0.57 w 0 J"])  # 0.2 mm rules
        self.turn_to(len(self.pages) - 1)

    def turn_to(self, page: int) -> None:
        """Draw on page ``page`` (0-based) from now on."""
        self.page, self._fill = page, None

    def set_font(self, style: str, size: float) -> None:
        self.style, self.size = style, size

    def string_width(self, text: str) -> float:
        """The width of ``text`` in the current font and size, in millimetres."""
        face = self.faces[self.style]
        return sum(face.advance(c) for c in text) * self.size / 1000 / K

    def advances(self) -> Callable[[str], int]:
        """The current face's width of a character in 1/1000 em (for line breaking)."""
        return self.faces[self.style].advance

    # -- drawing ------------------------------------------------------------------------------------------------
    def _put(self, op: bytes) -> None:
        self.pages[self.page].append(op)

    def _fill_color(self, rgb: tuple[int, int, int]) -> None:
        if rgb != self._fill:
            self._fill = rgb
            self._put(b"%s rg" % _rgb(rgb))

    def text(self, x: float, baseline: float, text: str, rgb: tuple[int, int, int] = (0, 0, 0)) -> None:
        """``text`` in the current font from ``x`` on the ``baseline`` (mm from the top)."""
        if not text:
            return
        face = self.faces[self.style]
        self._fill_color(rgb)
        self._put(b"BT /%s %s Tf %s %s Td <%s> Tj ET" % (face.name.encode(), _num(self.size), _num(x * K),
                                                        _num((self.h - baseline) * K), face.encode(text)))

    def rect(self, x: float, y: float, w: float, h: float, rgb: tuple[int, int, int]) -> None:
        """A filled rectangle, ``(x, y)`` its top-left corner."""
        self._fill_color(rgb)
        self._put(b"%s %s %s %s re f" % (_num(x * K), _num((self.h - y) * K), _num(w * K), _num(-h * K)))

    def line(self, x1: float, y1: float, x2: float, y2: float, rgb: tuple[int, int, int]) -> None:
        self._put(b"%s RG %s %s m %s %s l S" % (_rgb(rgb), _num(x1 * K), _num((self.h - y1) * K), _num(x2 * K),
                                                 _num((self.h - y2) * K)))

    def image(self, png: bytes, x: float, y: float, w: float, h: float) -> None:
        """A PNG figure placed ``w`` x ``h`` mm with its top-left corner at ``(x, y)``."""
        picture = png_image(png)
        picture.name = b"I%d" % (len(self.images) + 1)
        self.images.append(picture)
        self._put(b"q %s 0 0 %s %s %s cm /%s Do Q" % (_num(w * K), _num(h * K), _num(x * K),
                                                      _num((self.h - y - h) * K), picture.name))

    # -- the file -----------------------------------------------------------------------------------------------
    def output(self) -> bytes:
        """The whole PDF file."""
        objects: list[bytes] = []

        def add(body: bytes) -> int:
            objects.append(body)
            return len(objects)

        def stream(dictionary: bytes, data: bytes, compress: bool = True) -> int:
            if compress:
                data, dictionary = zlib.compress(data, 6), dictionary + b" /Filter /FlateDecode"
            return add(b"<< %s /Length %d >>\nstream\n%s\nendstream" % (dictionary, len(data), data))

        catalog, pages = add(b""), add(b"")  # filled in once the pages' numbers are known
        fonts = b" ".join(b"/%s %d 0 R" % (face.name.encode(), _font_objects(face, add, stream))
                          for face in self.faces.values() if len(face.glyphs) > 1)
        images = b" ".join(b"/%s %d 0 R" % (im.name, stream(im.dictionary, im.data, compress=False))
                           for im in self.images)
        resources = add(b"<< /Font << %s >> /XObject << %s >> >>" % (fonts, images))
        kids = []
        for content in self.pages:
            body = stream(b"", b"\n".join(content))
            kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources %d 0 R /Contents %d 0 R >>"
                            % (pages, _num(self.w * K), _num(self.h * K), resources, body)))
        objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages
        objects[pages - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
            b" ".join(b"%d 0 R" % k for k in kids), len(kids))
        info = add(b"<< /Title %s /Creator %s /Producer (PPDP Desktop) %s>>" % (
            _text_string(self.title), _text_string(self.creator), _date(self.created)))
        out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, obj in enumerate(objects, start=1):
            offsets.append(len(out))
            out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
        xref = len(out)
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
        out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
            len(objects) + 1, catalog, info, xref)
        return bytes(out)


def _font_objects(face: _Face, add: Callable[[bytes], int], stream: Callable[..., int]) -> int:
    """The objects of one embedded font subset; the number of its ``/Type0`` font."""
    font = face.font
    kept = font.closure(face.glyphs)  # the CIDs' glyphs first, in CID order, then composites' parts
    program = font.subset(kept)
    base = b"/" + _name(f"{_tag(face.name)}+{font.postscript_name()}")
    v = font.descriptor_values()
    flags = 32 | (1 if v.fixed else 0)  # nonsymbolic
    file_ = stream(b"/Length1 %d" % len(program), program)
    descriptor = add(b"<< /Type /FontDescriptor /FontName %s /Flags %d /FontBBox [%s] /ItalicAngle %s /Ascent %d "
                     b"/Descent %d /CapHeight %d /StemV %d /FontFile2 %d 0 R >>"
                     % (base, flags, b" ".join(b"%d" % n for n in v.bbox), _num(v.angle), v.ascent, v.descent, v.cap,
                        50 + v.weight // 65, file_))
    widths = b" ".join(b"%d" % w for w in face.widths)
    cid_font = add(b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont %s /CIDSystemInfo << /Registry (Adobe) "
                   b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /DW %d /W [0 [%s]] "
                   b"/CIDToGIDMap /Identity >>" % (base, descriptor, face.widths[0], widths))
    to_unicode = stream(b"", _cmap(face))
    return add(b"<< /Type /Font /Subtype /Type0 /BaseFont %s /Encoding /Identity-H /DescendantFonts [%d 0 R] "
               b"/ToUnicode %d 0 R >>" % (base, cid_font, to_unicode))


def _cmap(face: _Face) -> bytes:
    """The ``/ToUnicode`` map: each CID to its character (UTF-16BE)."""
    pairs = [b"<%04X> <%s>" % (cid, c.encode("utf-16-be").hex().upper().encode()) for c, cid in face.cids.items()]
    chunks = [b"%d beginbfchar\n%s\nendbfchar" % (len(pairs[i:i + 100]), b"\n".join(pairs[i:i + 100]))
              for i in range(0, len(pairs), 100)]
    return (b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo << /Registry (Adobe) "
            b"/Ordering (UCS) /Supplement 0 >> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
            b"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n%s\nendcmap\nCMapName currentdict /CMap "
            b"defineresource pop\nend\nend" % b"\n".join(chunks))


def png_image(png: bytes) -> _Image:
    """A PNG as a PDF image: its IDAT data kept compressed, the PNG row filters undone by the reader
    (``/Predictor 15``). Gray, RGB and palette images, 8 bits or fewer per sample, not interlaced; anything else is
    first converted with Pillow."""
    width, height = png_size(png)
    depth, color, _, _, interlace = struct.unpack_from(">BBBBB", png, 24)
    if depth > 8 or color not in (0, 2, 3) or interlace:
        return png_image(_plain_png(png))
    at, idat, palette = 8, bytearray(), b""
    while at < len(png):
        length, kind = struct.unpack_from(">I4s", png, at)
        chunk = png[at + 8:at + 8 + length]
        if kind == b"IDAT":
            idat += chunk
        elif kind == b"PLTE":
            palette = chunk
        at += 12 + length
    colors = {0: 1, 2: 3, 3: 1}[color]
    space = {0: b"/DeviceGray", 2: b"/DeviceRGB"}.get(color) or b"[/Indexed /DeviceRGB %d <%s>]" % (
        len(palette) // 3 - 1, palette.hex().encode())
    dictionary = (b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent %d "
                  b"/Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors %d /BitsPerComponent %d /Columns %d >>"
                  % (width, height, space, depth, colors, depth, width))
    return _Image(width, height, dictionary, bytes(idat))


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG in pixels (from its IHDR chunk)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG image")
    return struct.unpack_from(">II", png, 16)


def _plain_png(png: bytes) -> bytes:
    """``png`` re-saved as an 8-bit RGB image, not interlaced (an alpha channel is laid on white)."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        rgba = im.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        buf = io.BytesIO()
        flat.save(buf, format="png", compress_level=1)
        return buf.getvalue()


def _num(value: float) -> bytes:
    """A number as PDF writes it: at most two decimals, no trailing zeros."""
    text = b"%.2f" % value
    text = text.rstrip(b"0").rstrip(b".")
    return b"0" if text in (b"-0", b"") else text


def _rgb(rgb: tuple[int, int, int]) -> bytes:
    return b" ".join(b"%.3f" % (c / 255) if c % 255 else (b"1" if c else b"0") for c in rgb)


def _text_string(text: str) -> bytes:
    """A PDF text string: UTF-16BE with its byte-order mark, as hex (any character, nothing to escape)."""
    return b"<FEFF%s>" % text.encode("utf-16-be").hex().upper().encode()


def _name(text: str) -> bytes:
    """A PDF name's characters (anything outside printable ASCII or a delimiter written as #XX)."""
    return b"".join(bytes([b]) if 33 <= b <= 126 and chr(b) not in "()<>[]{}/%#" else b"#%02X" % b
                    for b in text.encode("utf-8"))


def _tag(name: str) -> str:
    """A subset's six-capital-letter tag (PDF 32000-1 9.9.2), distinct per font of the document."""
    number = int.from_bytes(name.encode(), "big")
    return "".join(chr(65 + (number // 26 ** i) % 26) for i in range(6))


def _date(created: str) -> bytes:
    """``/CreationDate`` from an ISO timestamp (UTC), or nothing."""
    digits = "".join(c for c in created[:19] if c.isdigit())
    return b"/CreationDate (D:%sZ) " % digits.encode() if len(digits) == 14 else b""
