"""The HTML report: one self-contained file (inline style, figures as inline SVG, no external reference)."""
from __future__ import annotations

import html
import io
import re

from matplotlib.figure import Figure

from ppdp_desktop.core.progress import Progress
from ppdp_desktop.core.report.build import MethodReport
from ppdp_desktop.core.report.document import (
    VALUE_HEADER, ReportContext, caption, comparison_table, figure_count, guarantee_headline, utility_rows, value_rows,
)

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;max-width:62rem;margin:2rem auto;
padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.3rem;border-bottom:2px solid #ccc;margin-top:2.5rem}h3{font-size:1.1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{background:#e8f4ea;border-left:5px solid #2e7d32;padding:.6rem 1rem}
.none{background:#fdecea;border-left:5px solid #c62828;padding:.6rem 1rem;font-weight:bold;font-size:1.05rem}
.warning{background:#fff4e0;border-left:5px solid #c77800;padding:.6rem 1rem;font-weight:bold}
.danger{background:#fdecea;border-left:5px solid #c62828;padding:.6rem 1rem;font-weight:bold}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:#555}figure svg{max-width:100%;height:auto}
"""

# What matplotlib's SVG carries that an offline, self-contained page must not: the XML prolog, the DTD
# address, namespace URLs (HTML parses inline SVG without them) and the Dublin Core metadata block.
_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


def svg_markup(fig: Figure) -> str:
    """``fig`` as an inline ``<svg>`` element without any external address."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = _XMLNS.sub("", _METADATA.sub("", _PROLOG.sub("", buf.getvalue())))
    return text.replace("http://", "").replace("https://", "")  # nothing left should need them


def _table(header: list[str] | tuple[str, ...], rows: list[list[str]], numeric_from: int = 1) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="num">{html.escape(c)}</td>' if 0 < i and i >= numeric_from and _looks_numeric(c)
            else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _looks_numeric(cell: str) -> bool:
    return bool(re.fullmatch(r"[-+]?[\d,.]+( to [-+]?[\d,.]+)?|-|inf", cell))


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>"


def render_html(reports: list[MethodReport], context: ReportContext, progress: Progress) -> str:
    esc = html.escape
    total = max(figure_count(reports), 1)
    done = 0
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Privacy report: {esc(context.data_label)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Privacy report: {esc(context.data_label)}</h1>",
        _list(context.summary_lines()),
        "<h2>Data</h2>",
        _table(("Column", "Role"), [[name, role] for name, role in context.columns], numeric_from=99),
        "<p>Identifier columns are never released. Methods applied: "
        + esc(", ".join(r.title for r in reports)) + ".</p>",
    ]
    if len(reports) > 1:
        header, body = comparison_table(reports)
        parts += ["<h2>Comparison of the methods</h2>", _table(header, body)]
    for r in reports:
        parts.append(f'<section><h2>{esc(r.title)} <small>({esc(r.method)})</small></h2>')
        parts.append(f'<p class="{"ok" if r.has_guarantee else "none"}">Sensitive values: {esc(guarantee_headline(r))}</p>')
        verdict = r.reidentification_lines()
        parts.append(f'<p class="{r.risk_level}">{esc(verdict[0])}</p>')
        parts += ["<h3>Method</h3>", _list(r.lines)]
        parts += ["<h3>Privacy</h3>", _list(r.privacy_lines())]
        if len(verdict) > 1:
            parts += ["<h3>Re-identification</h3>", _list(verdict[1:])]
        if r.has_guarantee and not r.kind.startswith("epsilon-differential privacy"):
            parts.append(
                "<p>The guarantee is upward: for each protected value, no released value can raise an adversary's "
                "belief above rho2 when the prior belief is at most rho1. It was verified numerically on the "
                "published matrix before the release was written. Downward breaches are reported, not prevented.</p>"
            )
        parts += ["<h3>Utility</h3>", _list(r.utility_lines())]
        rows = utility_rows(r)
        if rows:
            parts.append(_table(("Measure", "Value"), rows))
        rows = value_rows(r)
        if rows:
            parts += ["<h3>Per value</h3>", _table(VALUE_HEADER, rows)]
        if r.figures:
            parts.append("<h3>Figures</h3>")
        for name, fig in r.figures.items():
            progress(done / total, f"Figure {done + 1} of {total}: {name}")
            parts.append(f"<figure>{svg_markup(fig)}<figcaption>{esc(name)}. {esc(caption(name))}</figcaption></figure>")
            done += 1
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)
