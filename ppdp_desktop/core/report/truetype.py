"""A TrueType font as the PDF needs it: the glyph of a character, its advance width, the metrics of the font
descriptor, and a subset holding only the glyphs a document draws.

Why our own: the PDF report embeds one font (DejaVu Sans, regular and bold, ``resources/fonts``) and needs only
these few tables; a general font library costs more to import than the whole PDF takes to write (issue 34). Only
``glyf``-outline TrueType fonts are read (DejaVu is one); the tables are read where they are needed, never parsed
whole. The subset renumbers the glyphs it keeps in the order asked (glyph 0, ``.notdef``, first), so a glyph's new
number is its CID in the PDF (``/CIDToGIDMap /Identity``).
"""
from __future__ import annotations

import struct
from bisect import bisect_right
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from ppdp_desktop.core.errors import PPDPError

#: composite glyph flags (OpenType ``glyf``): the argument sizes and transforms that follow a component's glyph id
_WORDS, _SCALE, _MORE, _XY_SCALE, _TWO_BY_TWO = 0x0001, 0x0008, 0x0020, 0x0040, 0x0080
#: the tables the subset keeps (PDF 32000-1 9.9: a CIDFontType2 program needs the first six; hinting programs and
#: ``OS/2`` are copied when present; ``post`` is written without glyph names)
_KEPT = ("head", "hhea", "maxp", "hmtx", "loca", "glyf", "cvt ", "fpgm", "prep", "OS/2", "post")


class FontError(PPDPError):
    """A font file the PDF cannot embed (not TrueType outlines, or damaged)."""


class Descriptor(NamedTuple):
    """What a PDF ``/FontDescriptor`` states of a font (lengths in 1/1000 em)."""

    ascent: int
    descent: int
    cap: int
    bbox: tuple[int, ...]
    angle: float
    weight: int
    fixed: bool


class TrueTypeFont:
    """One TrueType font file, read lazily: ``glyph(code point)``, ``width(glyph)`` in 1/1000 em, the
    descriptor's metrics and :meth:`subset`."""

    def __init__(self, data: bytes, name: str = "font") -> None:
        self.data, self.name = data, name
        try:
            count = struct.unpack_from(">H", data, 4)[0]
            self.tables = {data[12 + 16 * i:16 + 16 * i].decode("latin-1"):
                           struct.unpack_from(">II", data, 20 + 16 * i) for i in range(count)}
            for tag in ("head", "hhea", "maxp", "hmtx", "loca", "glyf"):
                if tag not in self.tables:
                    raise FontError(f"The font {name} has no '{tag}' table: the PDF needs a TrueType font with "
                                    "glyph outlines (.ttf).")
            head, hhea = self.tables["head"][0], self.tables["hhea"][0]
            self.units_per_em = struct.unpack_from(">H", data, head + 18)[0]
            self.bbox = struct.unpack_from(">4h", data, head + 36)
            self.long_loca = struct.unpack_from(">h", data, head + 50)[0] == 1
            self.ascent, self.descent = struct.unpack_from(">hh", data, hhea + 4)
            self.n_metrics = struct.unpack_from(">H", data, hhea + 34)[0]
            self.n_glyphs = struct.unpack_from(">H", data, self.tables["maxp"][0] + 4)[0]
            self._lookup = _cmap(data, self.tables["cmap"][0], name) if "cmap" in self.tables else None
        except (struct.error, UnicodeDecodeError) as exc:
            raise FontError(f"The font {name} is damaged ({exc}).") from exc

    # -- characters and widths ---------------------------------------------------------------------------------
    def glyph(self, code_point: int) -> int:
        """The glyph drawing ``code_point``; 0 (``.notdef``, an empty box) when the font has none (or no character
        map: a subset)."""
        return self._lookup(code_point) if self._lookup is not None else 0

    def width(self, glyph: int) -> int:
        """The advance width of ``glyph`` in 1/1000 em, rounded (the PDF's ``/W`` unit and the layout's)."""
        offset = self.tables["hmtx"][0] + 4 * min(glyph, self.n_metrics - 1)
        return round(struct.unpack_from(">H", self.data, offset)[0] * 1000 / self.units_per_em)

    def scaled(self, value: int) -> int:
        """A font-unit ``value`` in 1/1000 em."""
        return round(value * 1000 / self.units_per_em)

    def postscript_name(self) -> str:
        """The font's PostScript name (``name`` table, id 6), or its file name without spaces."""
        if "name" in self.tables:
            start = self.tables["name"][0]
            count, strings = struct.unpack_from(">2xHH", self.data, start)
            for i in range(count):
                platform, _, _, name_id, length, offset = struct.unpack_from(">6H", self.data, start + 6 + 12 * i)
                if name_id == 6:
                    raw = self.data[start + strings + offset:start + strings + offset + length]
                    return raw.decode("utf-16-be" if platform in (0, 3) else "latin-1", "replace")
        return "".join(c for c in self.name if c.isalnum() or c in "-_") or "Font"

    def descriptor_values(self) -> Descriptor:
        """What a PDF ``/FontDescriptor`` states: ascent, descent, cap height, bounding box (1/1000 em), italic
        angle, weight, and whether the font is fixed-pitch."""
        cap, weight = self.ascent, 400
        if "OS/2" in self.tables:
            start, length = self.tables["OS/2"]
            weight = struct.unpack_from(">H", self.data, start + 4)[0]
            if length >= 90 and struct.unpack_from(">H", self.data, start)[0] >= 2:
                cap = struct.unpack_from(">h", self.data, start + 88)[0]
        angle, fixed = 0.0, False
        if "post" in self.tables:
            start = self.tables["post"][0]
            angle = struct.unpack_from(">i", self.data, start + 4)[0] / 65536
            fixed = struct.unpack_from(">I", self.data, start + 12)[0] != 0
        return Descriptor(self.scaled(self.ascent), self.scaled(self.descent), self.scaled(cap),
                          tuple(self.scaled(v) for v in self.bbox), angle, weight, fixed)

    # -- subsetting --------------------------------------------------------------------------------------------
    def _glyph_data(self, glyph: int) -> bytes:
        loca = self.tables["loca"][0]
        if self.long_loca:
            start, end = struct.unpack_from(">II", self.data, loca + 4 * glyph)
        else:
            start, end = (2 * v for v in struct.unpack_from(">HH", self.data, loca + 2 * glyph))
        base = self.tables["glyf"][0]
        return self.data[base + start:base + end]

    def _components(self, glyph_data: bytes) -> list[tuple[int, int]]:
        """``(offset of the glyph id, glyph id)`` of each component of a composite glyph (none for a simple one)."""
        if len(glyph_data) < 10 or struct.unpack_from(">h", glyph_data, 0)[0] >= 0:
            return []
        out, at = [], 10
        while True:
            flags, glyph = struct.unpack_from(">HH", glyph_data, at)
            out.append((at + 2, glyph))
            at += 4 + (4 if flags & _WORDS else 2)
            at += 2 if flags & _SCALE else 4 if flags & _XY_SCALE else 8 if flags & _TWO_BY_TWO else 0
            if not flags & _MORE:
                return out

    def closure(self, glyphs: list[int]) -> list[int]:
        """``glyphs`` (kept in order, duplicates allowed) followed by every glyph their composites draw that is not
        among them yet, and so on."""
        out, seen, k = list(glyphs), set(glyphs), 0
        while k < len(out):
            for _, component in self._components(self._glyph_data(out[k])):
                if component not in seen:
                    seen.add(component)
                    out.append(component)
            k += 1
        return out

    def subset(self, glyphs: list[int]) -> bytes:
        """A font file holding ``glyphs`` (a :meth:`closure`: every component present) numbered 0, 1, 2, ... in
        that order; a glyph listed twice is stored twice (two characters drawn by ``.notdef``, each its own CID)."""
        new: dict[int, int] = {}
        for i, g in enumerate(glyphs):
            new.setdefault(g, i)
        glyf, offsets, metrics = bytearray(), [0], bytearray()
        for g in glyphs:
            data = bytearray(self._glyph_data(g))
            for at, component in self._components(bytes(data)):
                struct.pack_into(">H", data, at, new[component])
            glyf += data + b"\0" * (-len(data) % 4)
            offsets.append(len(glyf))
            m = self.tables["hmtx"][0]
            advance = struct.unpack_from(">H", self.data, m + 4 * min(g, self.n_metrics - 1))[0]
            bearing = (struct.unpack_from(">h", self.data, m + 2 + 4 * g)[0] if g < self.n_metrics else
                       struct.unpack_from(">h", self.data, m + 4 * self.n_metrics + 2 * (g - self.n_metrics))[0])
            metrics += struct.pack(">Hh", advance, bearing)
        tables = {tag: bytearray(self.data[self.tables[tag][0]:sum(self.tables[tag])])
                  for tag in _KEPT if tag in self.tables}
        tables["glyf"], tables["hmtx"] = glyf, metrics
        tables["loca"] = bytearray(struct.pack(f">{len(offsets)}I", *offsets))
        struct.pack_into(">I", tables["head"], 8, 0)  # checkSumAdjustment: set below, over the whole file
        struct.pack_into(">h", tables["head"], 50, 1)  # long offsets in loca
        struct.pack_into(">H", tables["hhea"], 34, len(glyphs))
        struct.pack_into(">H", tables["maxp"], 4, len(glyphs))
        if "post" in tables:
            tables["post"] = bytearray(struct.pack(">I", 0x00030000) + bytes(tables["post"][4:32]))  # no names
        return _font_file(tables)


def _font_file(tables: dict[str, bytearray]) -> bytes:
    """An sfnt file of ``tables``, with their directory, checksums and the head's checksum adjustment."""
    tags = sorted(tables)
    n = len(tags)
    power = 1 << (n.bit_length() - 1)
    header = struct.pack(">IHHHH", 0x00010000, n, 16 * power, power.bit_length() - 1, 16 * (n - power))
    directory, body = bytearray(), bytearray()
    offset = 12 + 16 * n
    for tag in tags:
        data = bytes(tables[tag])
        padded = data + b"\0" * (-len(data) % 4)
        directory += struct.pack(">4sIII", tag.encode("latin-1"), _checksum(padded), offset + len(body), len(data))
        body += padded
    out = bytearray(header + directory + body)
    head = 12 + 16 * n + sum(len(tables[t]) + (-len(tables[t]) % 4) for t in tags[:tags.index("head")])
    struct.pack_into(">I", out, head + 8, (0xB1B0AFBA - _checksum(bytes(out))) & 0xFFFFFFFF)
    return bytes(out)


def _checksum(data: bytes) -> int:
    padded = data + b"\0" * (-len(data) % 4)
    return sum(struct.unpack(f">{len(padded) // 4}I", padded)) & 0xFFFFFFFF


def _cmap(data: bytes, start: int, name: str):
    """A lookup ``code point -> glyph`` from the best Unicode subtable: format 12 (all planes) or format 4 (the
    Basic Multilingual Plane), searched by bisection on each call."""
    count = struct.unpack_from(">H", data, start + 2)[0]
    found: dict[int, int] = {}
    for i in range(count):
        platform, encoding, offset = struct.unpack_from(">HHI", data, start + 4 + 8 * i)
        if (platform, encoding) in ((3, 10), (0, 4), (0, 6)):
            found.setdefault(12, start + offset)
        elif (platform, encoding) in ((3, 1), (0, 3), (0, 1), (0, 0)):
            found.setdefault(4, start + offset)
    for fmt in (12, 4):
        at = found.get(fmt)
        if at is not None and struct.unpack_from(">H", data, at)[0] == fmt:
            return _format12(data, at) if fmt == 12 else _format4(data, at)
    raise FontError(f"The font {name} has no Unicode character map (cmap format 4 or 12).")


def _format12(data: bytes, at: int):
    count = struct.unpack_from(">I", data, at + 12)[0]
    groups = [struct.unpack_from(">III", data, at + 16 + 12 * i) for i in range(count)]
    starts = [g[0] for g in groups]

    def lookup(c: int) -> int:
        k = bisect_right(starts, c) - 1
        if k < 0 or c > groups[k][1]:
            return 0
        return groups[k][2] + c - groups[k][0]
    return lookup


def _format4(data: bytes, at: int):
    segments = struct.unpack_from(">H", data, at + 6)[0] // 2
    ends = struct.unpack_from(f">{segments}H", data, at + 14)
    starts = struct.unpack_from(f">{segments}H", data, at + 16 + 2 * segments)
    deltas = struct.unpack_from(f">{segments}h", data, at + 16 + 4 * segments)
    ranges_at = at + 16 + 6 * segments
    ranges = struct.unpack_from(f">{segments}H", data, ranges_at)

    def lookup(c: int) -> int:
        k = bisect_right(ends, c - 1)  # the first segment ending at or after c
        if c > 0xFFFF or k >= segments or c < starts[k]:
            return 0
        if ranges[k] == 0:
            return (c + deltas[k]) & 0xFFFF
        glyph = struct.unpack_from(">H", data, ranges_at + 2 * k + ranges[k] + 2 * (c - starts[k]))[0]
        return (glyph + deltas[k]) & 0xFFFF if glyph else 0
    return lookup


@lru_cache(maxsize=4)
def load_font(path: str) -> TrueTypeFont:
    """The font file at ``path``, read once per process."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FontError(f"Cannot read the font {path}: {exc.strerror or exc}.") from exc
    return TrueTypeFont(data, Path(path).name)
