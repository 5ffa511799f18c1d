"""The report as a sequence of blocks (headings, paragraphs, lists, tables, figures), built once and laid out
by both renderers, so the HTML page and the PDF say the same things in the same order.

The first part is the plain-words page (:mod:`ppdp_desktop.core.report.summary`); each method's technical
sections follow, each heading with a one-line meaning for a reader who is not a statistician.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.generalization.alternatives import considered_lines
from ppdp_desktop.core.privacy.population import MEANING as POPULATION_MEANING
from ppdp_desktop.core.privacy.population import TITLE as POPULATION_TITLE
from ppdp_desktop.core.report import groups, repeated
from ppdp_desktop.core.report.document import (
    VALUE_HEADER,
    ReportContext,
    caption,
    comparison_table,
    figure_title,
    guarantee_headline,
    utility_rows,
    value_rows,
)
from ppdp_desktop.core.report.summary import first_page
from ppdp_desktop.core.report.values import hidden_sentence, shown_values

if TYPE_CHECKING:
    from ppdp_desktop.core.repeat.outcome import RepeatOutcome


CONSIDERED_TITLE = "Other generalizations considered"
CONSIDERED_MEANING = ("The same search's next best generalizations, best first: where each differs from the chosen one, "
                      "the records it would suppress and its value of the metric the choice was made by (lower is "
                      "better), as the search found them (before any local recoding). Each meets the same criteria; "
                      "the chosen one is the best.")


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2  # 1: the report's parts (a new page in the PDF), 2: sections, 3: sub-sections


@dataclass(frozen=True)
class Paragraph:
    text: str
    style: str = "normal"  # normal | meaning | ok | warning | danger | small


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric_from: int = 1  # columns from this index on are right-aligned when they hold numbers
    widths: tuple[float, ...] | None = None  # relative widths (the PDF); None: from the content


@dataclass(frozen=True)
class Image:
    name: str
    report: MethodReport  # the figure's PNG comes from ``report.image(name)``: drawn once, for every renderer
    caption: str

    def label(self) -> str:
        """The line under the figure: its title and caption ("Counts. Original counts and ...")."""
        return f"{figure_title(self.name)}. {self.caption}".strip()


Block = Heading | Paragraph | Bullets | Table | Image

MEANINGS = {
    "guarantee": "What was checked before the release was written, in the method's own terms: rho1 and rho2 are "
                 "the largest belief about a person's value before and after seeing the release; gamma is how much "
                 "one released value can favour one original value over another; epsilon puts the same protection "
                 "on the scale of differential privacy (smaller is more private).",
    "reidentification": "Who could be singled out by facts an acquaintance may know, such as age, sex and postcode "
                        "(the quasi-identifiers): a record is safer the more records share its quasi-identifiers.",
    "values": "Each sensitive value: how many records hold it, the count estimated from the release with its 95 % "
              "interval, the chance p that a record keeps it, and the bound it is held to.",
    "analysis": "Models trained on the original and on the release, both tested on original records the models "
                "never saw: close figures mean an analysis of the release reaches the same conclusions.",
    "utility": "How far the distribution estimated from the release is from the original (0 means identical), and "
               "the average error of counts over many test queries.",
    "figures": "The figures behind the sentences on the first page.",
    "method": "How the release was made, with every parameter, for a statistician who wants to check or repeat it.",
    "comparison": "The methods side by side on the same data.",
    "data": "Every column of the input with its role and what the release did to it.",
}


def build_outline(reports: list[MethodReport], context: ReportContext) -> list[Block]:
    """The whole report as blocks: the plain first page, then each method's technical sections, then the data."""
    blocks: list[Block] = [Heading(f"Privacy report: {context.data_label}", 0)]
    meta = f"Created {context.created} by {context.app_version}."
    if context.fingerprint:
        meta += f" Release fingerprint: {context.fingerprint}."
    blocks.append(Paragraph(meta, "small"))
    page = first_page(reports, context.changes, context.n_records, context.sensitive)
    blocks += [Heading("What was released"), Bullets(tuple(page.released))]
    if context.sample:
        blocks.append(Paragraph(context.sample_note(), "meaning"))
    blocks.append(Heading("Verdicts"))
    for title, verdicts in page.verdicts:
        if len(reports) > 1:
            blocks.append(Heading(title, 3))
        blocks += [Paragraph(v.text, v.level) for v in verdicts]
    blocks += first_page_groups(reports)
    if context.repeat is not None:
        blocks += repeated_blocks(context.repeat)
    blocks.append(Heading("What the release is good for"))
    for title, sentences in page.good_for:
        if len(reports) > 1:
            blocks.append(Heading(title, 3))
        blocks.append(Bullets(tuple(sentences)))
    if len(reports) > 1:
        header, body = comparison_table(reports)
        blocks += [Heading("Comparison of the methods"), Paragraph(MEANINGS["comparison"], "meaning"),
                   Table(tuple(header), tuple(map(tuple, body)))]
    for r in reports:
        blocks += method_blocks(r, context.values_file)
    blocks += [Heading("Data", 1), Paragraph(MEANINGS["data"], "meaning"),
               Table(("Column", "Role", "In the release"),
                     tuple((c.name, c.role, c.sentence().split(": ", 1)[1]) for c in context.changes),
                     numeric_from=99, widths=(1.2, 1.0, 3.0))]
    return blocks


def method_blocks(r: MethodReport, values_file: str = "") -> list[Block]:
    """The technical sections of one method's report (``values_file``: the CSV appendix with its full
    per-value table, named where that table is shortened)."""
    out: list[Block] = [Heading(f"Details: {r.title} ({r.method})", 1)]
    out += [Heading("Privacy guarantee"), Paragraph(MEANINGS["guarantee"], "meaning"),
            Paragraph(guarantee_headline(r), "ok" if r.has_guarantee and r.guarantee.get("verified") else "danger"),
            Bullets(tuple(r.privacy_lines()))]
    if r.has_guarantee and r.kind.startswith("upward"):
        downward = "are reported, not prevented" if "downward_breaches" in r.guarantee else "are not covered"  # partition
        out.append(Paragraph(
            "The guarantee is upward: for each protected value, no released value can raise an adversary's belief "
            "above rho2 when the prior belief is at most rho1. It was verified numerically on the published matrix "
            f"before the release was written. Downward breaches (belief in a common value falling) {downward}."))
    verdict = r.reidentification_lines()
    out += [Heading("Re-identification"), Paragraph(MEANINGS["reidentification"], "meaning"),
            Paragraph(verdict[0], r.risk_level)]
    if len(verdict) > 1:
        out.append(Bullets(tuple(verdict[1:])))
    out += population_blocks(r)
    out += considered_blocks(r)
    out += group_blocks(r)
    out += value_blocks(r, values_file)
    analysis = getattr(r, "analysis", None)
    if analysis is not None:
        out += [Heading("Does my analysis survive?"), Paragraph(MEANINGS["analysis"], "meaning"),
                Bullets(tuple(analysis.lines()))]
        coefficients = analysis.coefficient_rows()
        if coefficients:
            out.append(Table(tuple(analysis.COEFFICIENT_HEADER), tuple(map(tuple, coefficients))))
    rows = utility_rows(r)
    if rows or r.utility_lines():
        out += [Heading("Utility measures"), Paragraph(MEANINGS["utility"], "meaning"), Bullets(tuple(r.utility_lines()))]
        if rows:
            out.append(Table(("Measure", "Value"), tuple(map(tuple, rows)), widths=(4.0, 1.0)))
    if r.figures:
        out += [Heading("Figures"), Paragraph(MEANINGS["figures"], "meaning")]
        out += [Image(name, r, caption(name, r)) for name in r.figures]
    out += [Heading("Method and parameters"), Paragraph(MEANINGS["method"], "meaning"), Bullets(tuple(r.lines))]
    return out


def considered_blocks(r: MethodReport) -> list[Block]:
    """ "Other generalizations considered": the search's runners-up (release.json's ``alternatives``), one line each."""
    reid = r.reidentification
    if reid is None:
        return []
    entry = reid.generalization.to_json() if reid.generalization is not None else (reid.claimed or {})
    lines = considered_lines(entry)
    if not lines:
        return []
    return [Heading(CONSIDERED_TITLE), Paragraph(CONSIDERED_MEANING, "meaning"), Bullets(tuple(lines))]


def population_blocks(r: MethodReport) -> list[Block]:
    """The "Risk in the population" section, when the custodian stated a sampling fraction or a population table:
    the attacker, each model's estimate and the rule's choice, and the journalist risk."""
    population = r.reidentification.population if r.reidentification is not None else None
    if population is None:
        return []
    return [Heading(POPULATION_TITLE), Paragraph(POPULATION_MEANING, "meaning"), Bullets(tuple(population.lines()))]


def first_page_groups(reports: list[MethodReport]) -> list[Block]:
    """The first page's words on what the release reveals about a group: the headline and the clinician's example
    of each report (the technical section follows with the method)."""
    found = [(r.title, r.group_disclosure) for r in reports if r.group_disclosure is not None]
    if not found:
        return []
    blocks: list[Block] = [Heading(groups.TITLE), Paragraph(groups.MEANING, "meaning")]
    for title, d in found:
        if len(found) > 1:
            blocks.append(Heading(title, 3))
        blocks.append(Paragraph(groups.headline(d), groups.level(d)))
        if groups.example(d):
            blocks.append(Paragraph(groups.example(d)))
    return blocks


def repeated_blocks(repeat: RepeatOutcome) -> list[Block]:
    """The "Repeated releases" section: which release of its project this is (coloured by
    :func:`~ppdp_desktop.core.report.repeated.level`), the statement's sentences and the key figures."""
    c = repeat.cumulative
    earlier = "no earlier release" if not c.previous_releases else (
        "1 earlier release" if c.previous_releases == 1 else f"{c.previous_releases:,} earlier releases")
    head = f"Release {c.ordinal:,} of project '{repeat.project_id}', after {earlier} in this computer's release ledger."
    return [Heading(repeated.TITLE), Paragraph(repeated.meaning(repeat), "meaning"), Paragraph(head, repeated.level(repeat)),
            Bullets(tuple(repeat.sentences())),
            Table(repeated.HEADER, tuple(repeated.figure_rows(repeat)), widths=(3.0, 2.0))]


def group_blocks(r: MethodReport) -> list[Block]:
    """The section on what the release reveals about a group: the headline, the sentences and the groups above
    the bound (most records first)."""
    d = r.group_disclosure
    if d is None:
        return []
    out: list[Block] = [Heading(groups.TITLE), Paragraph(groups.MEANING, "meaning"),
                        Paragraph(groups.headline(d), groups.level(d))]
    sentences = groups.lines(d)
    if sentences:
        out.append(Bullets(tuple(sentences)))
    rows = groups.table(d)
    if rows:
        out.append(Table(groups.TABLE_HEADER, tuple(rows), widths=(3.4, 0.9, 1.6, 0.7)))
    return out


VALUE_WIDTHS = (2.2, 1.1, 1.1, 1.6, 0.9, 0.8, 0.8, 1.0, 1.8)


def value_blocks(r: MethodReport, values_file: str = "") -> list[Block]:
    """The per-value table: every value of a small domain; of a large one the most frequent and the most
    protected values, each group under its own heading, and a line saying how many are left out and where the
    full table is (``values_file``). Only the rows shown are formatted and laid out."""
    shown = shown_values(r)
    if not shown.groups:
        return []
    out: list[Block] = [Heading("Estimated counts per value"), Paragraph(MEANINGS["values"], "meaning")]
    for group in shown.groups:
        if group.title:
            out.append(Heading(group.title, 3))
        out.append(Table(VALUE_HEADER, tuple(map(tuple, value_rows(r, group.indices))), widths=VALUE_WIDTHS))
    if shown.hidden:
        out.append(Paragraph(hidden_sentence(shown, values_file)))
    return out
