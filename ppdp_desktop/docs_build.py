"""Render the user guide (``docs/guide/*.md``) to one self-contained HTML file that ships with the app:
``python -m ppdp_desktop.docs_build`` writes ``resources/guide/user-guide.html``.

The window shows that file in a QTextBrowser (F1, Help > User guide): no browser, no network. So the HTML
holds everything itself: the CSS inline and every screenshot as a ``data:`` URI. The renderer is our own and
handles only the Markdown the guide uses (so the output does not change with a library's version, and the
test that the shipped file is up to date compares bytes):

- ``# Title {#anchor}`` (levels 1-3; the anchor is what F1 opens; without one, a slug of the title);
- paragraphs; ``- `` and ``1. `` lists whose items continue on lines indented by two spaces or more;
- pipe tables (a header row, a ``|---|`` row, body rows);
- definition lists: a ``**Term**`` line followed by ``: text`` (continued on indented lines);
- an image alone on its line, ``![caption](../screenshots/NAME.png)``, embedded at its own size (a browser
  fits it to the page with CSS; the window's guide scales it itself, see ``gui/guide_dialog.py``);
- inline ``**bold**``, ``*emphasis*``, ```code``` and ``[text](#anchor)`` links (only links inside the guide).
"""
from __future__ import annotations

import base64
import html
import re
import sys
from pathlib import Path

from ppdp_desktop.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
GUIDE_DIR = ROOT / "docs" / "guide"
OUTPUT = ROOT / "resources" / "guide" / "user-guide.html"

CSS = """
body { font-family: sans-serif; font-size: 11pt; line-height: 1.4; color: #1a1a1a; margin: 1em 2em; max-width: 60em; }
h1 { font-size: 18pt; color: #0b3d6b; margin-top: 1.6em; border-bottom: 1px solid #9ab; }
h2 { font-size: 14pt; color: #0b3d6b; margin-top: 1.2em; }
h3 { font-size: 12pt; }
code { font-family: monospace; background-color: #eef1f4; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #9ab; padding: 4px 8px; vertical-align: top; }
th { background-color: #e3ebf3; text-align: left; }
dt { font-weight: bold; margin-top: 0.6em; }
dd { margin-left: 1.5em; }
img { max-width: 100%; height: auto; border: 1px solid #9ab; }
p.figure { text-align: center; }
p.caption { text-align: center; font-style: italic; color: #444; }
p.toc { margin-left: 1em; }
"""

_HEADING = re.compile(r"^(#{1,3})\s+(.*?)\s*(?:\{#([a-z0-9-]+)\})?\s*$")
_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)\s]+)\)\s*$")
_BULLET = re.compile(r"^- (.*)$")
_NUMBERED = re.compile(r"^\d+\. (.*)$")
_ANCHOR_LINK = re.compile(r"\[([^\]]+)\]\((#[a-z0-9-]+)\)")


def slug(title: str) -> str:
    """A heading's anchor when it names none: lower case, words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def inline(text: str) -> str:
    """Escape ``text`` and apply the inline markup: code first (its content stays literal), then links,
    bold and emphasis."""
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1], quote=False)}</code>")
            continue
        part = html.escape(part, quote=False)
        part = _ANCHOR_LINK.sub(r'<a href="\2">\1</a>', part)
        part = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", part)
        part = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", part)
        out.append(part)
    return "".join(out)


def _image(alt: str, target: str, source: Path) -> str:
    path = (source.parent / target).resolve()
    if path.suffix.lower() != ".png" or not path.is_file():
        raise InputError(f"{source.name}: the image {target} is not a PNG file beside the guide.")
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    caption = html.escape(alt)
    return (f'<p class="figure"><img src="data:image/png;base64,{data}" alt="{caption}"></p>\n'
            f'<p class="caption">{caption}</p>')


def _table(rows: list[str]) -> str:
    def cells(row: str) -> list[str]:
        return [cell.strip() for cell in row.strip().strip("|").split("|")]

    head, body = cells(rows[0]), [cells(r) for r in rows[2:]]
    lines = ["<table>", "<tr>" + "".join(f"<th>{inline(c)}</th>" for c in head) + "</tr>"]
    lines += ["<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>" for row in body]
    return "\n".join(lines + ["</table>"])


def _blocks(lines: list[str]) -> list[list[str]]:
    """Split lines into blocks at blank lines."""
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            blocks[-1].append(line.rstrip())
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _items(block: list[str], pattern: re.Pattern[str]) -> list[str]:
    """A list's items: each starts with the marker; indented lines continue the item before."""
    items: list[str] = []
    for line in block:
        match = pattern.match(line)
        if match:
            items.append(match.group(1))
        elif items and line.startswith("  "):
            items[-1] += " " + line.strip()
        else:
            raise InputError(f"A list line neither starts an item nor is indented: {line!r}")
    return items


def render_file(source: Path, headings: list[tuple[int, str, str]]) -> str:
    """One Markdown file as HTML; appends (level, anchor, title) of its headings to ``headings``."""
    out: list[str] = []
    for block in _blocks(source.read_text(encoding="utf-8").splitlines()):
        first = block[0]
        if (match := _HEADING.match(first)) and len(block) == 1:
            level, title = len(match.group(1)), match.group(2)
            anchor = match.group(3) or slug(title)
            headings.append((level, anchor, title))
            out.append(f'<h{level} id="{anchor}"><a name="{anchor}"></a>{inline(title)}</h{level}>')
        elif (match := _IMAGE.match(first)) and len(block) == 1:
            out.append(_image(match.group(1), match.group(2), source))
        elif first.startswith("|") and len(block) >= 2 and set(block[1].replace("|", "").strip()) <= set("-: "):
            out.append(_table(block))
        elif _BULLET.match(first):
            out.append("<ul>\n" + "\n".join(f"<li>{inline(i)}</li>" for i in _items(block, _BULLET)) + "\n</ul>")
        elif _NUMBERED.match(first):
            out.append("<ol>\n" + "\n".join(f"<li>{inline(i)}</li>" for i in _items(block, _NUMBERED)) + "\n</ol>")
        elif len(block) >= 2 and block[1].startswith(": "):
            terms: list[str] = []
            for line in block:
                if line.startswith(": "):
                    terms.append(f"<dd>{inline(line[2:])}")
                elif line.startswith("  ") and terms:
                    terms[-1] += " " + inline(line.strip())
                else:
                    terms.append(f"<dt>{inline(line.strip().strip('*'))}</dt>")
            out.append("<dl>\n" + "\n".join(t if t.startswith("<dt>") else t + "</dd>" for t in terms) + "\n</dl>")
        else:
            out.append(f"<p>{inline(' '.join(line.strip() for line in block))}</p>")
    return "\n".join(out)


def render_guide(guide_dir: Path = GUIDE_DIR) -> str:
    """The whole guide as one HTML document: the files in name order, a contents list first."""
    sources = sorted(guide_dir.glob("*.md"))
    if not sources:
        raise InputError(f"No Markdown files in {guide_dir}.")
    headings: list[tuple[int, str, str]] = []
    body = [render_file(source, headings) for source in sources]
    anchors = [anchor for _level, anchor, _title in headings]
    duplicates = sorted({a for a in anchors if anchors.count(a) > 1})
    if duplicates:
        raise InputError(f"Two headings share the anchor(s) {', '.join(duplicates)}.")
    for target in re.findall(r'href="#([a-z0-9-]+)"', "\n".join(body)):
        if target not in anchors:
            raise InputError(f"A link points to #{target}, which no heading of the guide has.")
    toc = "\n".join(f'<p class="toc"><a href="#{anchor}">{inline(title)}</a></p>'
                    for level, anchor, title in headings[1:] if level == 1)
    title = headings[0][2]
    contents = f'<h2 id="contents"><a name="contents"></a>Contents</h2>\n{toc}'
    first, rest = body[0].split("\n", 1)  # the contents list right under the guide's title
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join([first, contents, rest] + body[1:]) + "\n</body>\n</html>\n")


def main(argv: list[str] | None = None) -> int:
    """Write the rendered guide (to ``argv[0]`` if given, else the shipped resource)."""
    argv = sys.argv[1:] if argv is None else argv
    target = Path(argv[0]) if argv else OUTPUT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_guide(), encoding="utf-8", newline="\n")
    print(f"{target} ({target.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
