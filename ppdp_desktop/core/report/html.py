"""The HTML report: one self-contained offline file (inline style, figures as inline PNG, no external reference).

It lays out the blocks of :func:`~ppdp_desktop.core.report.outline.build_outline`; the figures are the PNG
images each report drew once (:meth:`MethodReport.image`), so writing the page costs no drawing.
"""
from __future__ import annotations

import base64
import html
import re

from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.progress import Progress
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.outline import Block, Bullets, Heading, Image, Paragraph, Table, build_outline

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:62rem;margin:2rem auto;
padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.7rem}h2{font-size:1.35rem;border-bottom:2px solid #ccc;margin-top:2.5rem}h3{font-size:1.15rem;margin-top:1.8rem}
h4{font-size:1rem;margin-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.meaning{color:#555;font-style:italic;margin-top:.2rem}.small{color:#666;font-size:.85rem}
.ok{background:#e8f4ea;border-left:5px solid #2e7d32;padding:.6rem 1rem}
.warning{background:#fff4e0;border-left:5px solid #c77800;padding:.6rem 1rem;font-weight:bold}
.danger{background:#fdecea;border-left:5px solid #c62828;padding:.6rem 1rem;font-weight:bold}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555}figure img{max-width:100%;height:auto}
"""

_NUMERIC = re.compile(r"[-+]?[\d,.]+( %)?( to [-+]?[\d,.]+)?|-|inf")


def _looks_numeric(cell: str) -> bool:
    return bool(_NUMERIC.fullmatch(cell))


def _table(block: Table) -> str:
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in block.header)
    body = []
    for row in block.rows:
        cells = "".join(
            f'<td class="num">{esc(c)}</td>' if i >= max(block.numeric_from, 1) and _looks_numeric(c) else f"<td>{esc(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _image(block: Image) -> str:
    data = base64.b64encode(block.report.image(block.name)).decode("ascii")
    text = html.escape(block.label())
    return (f'<figure><img alt="{html.escape(block.name)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{text}</figcaption></figure>")


def _block(block: Block) -> str:
    esc = html.escape
    if isinstance(block, Heading):
        level = block.level + 1  # level 0 is the title (h1)
        return f"<h{level}>{esc(block.text)}</h{level}>"
    if isinstance(block, Paragraph):
        css = "" if block.style == "normal" else f' class="{block.style}"'
        return f"<p{css}>{esc(block.text)}</p>"
    if isinstance(block, Bullets):
        return "<ul>" + "".join(f"<li>{esc(item)}</li>" for item in block.items) + "</ul>"
    if isinstance(block, Table):
        return _table(block)
    return _image(block)


def render_html(reports: list[MethodReport], context: ReportContext, progress: Progress) -> str:
    """The report page as one string."""
    blocks = build_outline(reports, context)
    images = max(sum(isinstance(b, Image) for b in blocks), 1)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Privacy report: {html.escape(context.data_label)}</title>",
        f"<style>{STYLE}</style></head><body>",
    ]
    done = 0
    for block in blocks:
        if isinstance(block, Image):
            progress(done / images, f"Figure {done + 1} of {images}: {block.name}")
            done += 1
        parts.append(_block(block))
    parts.append("</body></html>")
    return "\n".join(parts)
