"""The PDF's fonts map only the characters the report draws (fpdf2's ``unicode_range``): the same PDF, byte for
byte, as with every character of the fonts mapped, for text in many scripts (some of them not in DejaVu)."""
from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime

import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.progress import no_progress
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.outline import Bullets, Paragraph, Table, build_outline
from ppdp_desktop.core.report.pdf import ReportPDF, characters, lay_out
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

LABEL = "Patients – Ωμέγα, Ærø, Łódź, Привет, 病院 ☃ 𝔘 ﬁ"  # Greek, Cyrillic, CJK (not in DejaVu), astral


def _pdf(context: ReportContext, blocks: list, mapped: bool) -> bytes:
    pdf = ReportPDF(context, blocks if mapped else None)
    pdf.set_creation_date(datetime(2026, 1, 2, tzinfo=UTC))
    lay_out(pdf, blocks, no_progress)
    return re.sub(rb"/ID \[<[0-9A-F]+><[0-9A-F]+>\]", b"", bytes(pdf.output()))


@pytest.fixture(scope="module")
def report_and_context():
    demo = load_table(resource_path(DEMO_DATA))
    settings = AnonymizationSettings("diagnosis", method="uniform", identifiers=["patient_id", "name"],
                                     sensitivity=SensitivitySettings(theta=3), seed=7)
    result = anonymize(demo, settings)
    context = dataclasses.replace(ReportContext.from_anonymization(result), data_label=LABEL,
                                  fingerprint="ﬁngerprint ✓ 0123", created="2026-01-02T00:00:00+00:00")
    return build_report(result), context


def test_mapped_characters_give_the_same_pdf(report_and_context):
    report, context = report_and_context
    blocks = build_outline([report], context)
    blocks += [Paragraph("Überprüfung — “quoted” ½ ≤ ≥ ∞ ∑ → ✗", "warning"), Bullets(("Ĳ ŉ ǅ", "ﬀ ﬂ ‰ € ₹")),
               Table(("Wert", "Anzahl"), (("Ⅻ ⅓ ①", "1 234"), ("x" * 400, "5")))]  # a cell shortened: "…"
    mapped, full = _pdf(context, blocks, True), _pdf(context, blocks, False)
    assert mapped[:4] == b"%PDF"
    assert mapped == full


def test_characters_hold_every_text_and_the_footer(report_and_context):
    report, context = report_and_context
    blocks = build_outline([report], context)
    shown = characters(blocks, context)
    assert {ord(c) for c in LABEL + context.fingerprint + "page of · • …0123456789"} <= shown
    assert {ord(c) for c in blocks[-1].rows[0][0]} <= shown  # the data table's first cell
    assert ord("病") in shown and ord("Ж") not in shown  # only what the report says
