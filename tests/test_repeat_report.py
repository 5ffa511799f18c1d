"""The reports' "Repeated releases" section (issue 30): a release made for a project says, in the custodian's report
and in the report inside the package, which release of the project it is, its statement (each sentence naming its
attacker) and the key figures, which are the job's own (``result.repeat``). A release without a project has none.
"""
from __future__ import annotations

import html
import math
import re

import pandas as pd
import pytest
from conftest import shared_adult

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.release.package_report import custodian_report_path
from ppdp_desktop.core.report.document import ReportContext
from ppdp_desktop.core.report.outline import Heading, Table, build_outline
from ppdp_desktop.core.report.repeated import TITLE, epsilon_text
from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings, SensitivitySettings

N = 1500
PASSPHRASE = "correct horse battery staple orbit"


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, nrows=N)
    frame.insert(0, "patient_id", [f"P{i:05d}" for i in range(len(frame))])
    return frame


def _settings(budget: float | None = None, project: str = "report-monthly") -> AnonymizationSettings:
    settings = AnonymizationSettings("occupation", "finegrain", ["patient_id"], [], SensitivitySettings(rho1=0.1, rho2=0.5))
    if project:
        settings.repeat = RepeatSettings(project_id=project, keys=PersistentKeys(bytes(range(32))), budget=budget)
    return settings


def _section(blocks) -> tuple[list, dict[str, str]]:
    """The section's blocks (up to the next section) and its table as {figure: value}."""
    start = next(i for i, b in enumerate(blocks) if isinstance(b, Heading) and b.text == TITLE)
    end = next(i for i in range(start + 1, len(blocks)) if isinstance(blocks[i], Heading) and blocks[i].level <= 2)
    section = blocks[start:end]
    table = next(b for b in section if isinstance(b, Table))
    return section, dict(table.rows)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _text(path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))))


def test_the_section_s_figures_are_the_job_s(adult, tmp_path):
    write_release(anonymize(Dataset(adult), _settings(budget=6.0)), tmp_path / "r1", include_report=False)
    changed = pd.concat([adult.sample(frac=1.0, random_state=3), adult.head(200).assign(
        patient_id=[f"N{i:04d}" for i in range(200)])]).reset_index(drop=True)
    changed.loc[changed.index[:50], "occupation"] = "Sales"  # some patients' values change: drawn anew, composing
    result = anonymize(Dataset(changed), _settings(budget=6.0))
    repeat, c = result.repeat, result.repeat.cumulative
    assert c.previous_releases == 1 and c.changed > 0 and c.new == 200
    section, figures = _section(build_outline([], ReportContext.from_anonymization(result)))
    assert section[2].text == "Release 2 of project 'report-monthly', after 1 earlier release in this computer's release ledger."
    assert list(section[3].items) == repeat.sentences()
    assert figures["Project"] == "report-monthly"
    assert [_int(figures[name]) for name in ("Release in the project", "Earlier releases counted",
                                              "Records in this release", "Patients released before (matched)",
                                              "of them unchanged (drawn as before)", "of them changed (drawn anew)",
                                              "New patients", "Records above the budget")] == [
        c.ordinal, c.previous_releases, c.records, c.matched, c.unchanged, c.changed, c.new, c.over_budget]
    for name, value in (("Epsilon of this release (largest)", c.epsilon_release),
                        ("Cumulative epsilon (largest, all releases)", c.epsilon_cumulative_max),
                        ("Budget of the project", 6.0)):
        shown = float(figures[name])
        assert value <= shown < value + 1e-4  # rounded up: still a bound
    assert c.budget == 6.0 and figures["Persistent randomness"] == "yes"
    assert figures["Stable pseudonyms"] == "no (fresh in each release)"
    # both written reports hold the section: the custodian's beside the key and the one inside the package
    out, key = tmp_path / "r2", tmp_path / "r2.ppdpkey"
    write_release(result, out, key_path=key, passphrase=PASSPHRASE)
    for report in (custodian_report_path(out, key), out / "report.html"):
        text = _text(report)
        assert TITLE in text and repeat.sentences()[1] in text
        for figure, value in figures.items():
            assert f"{figure} {value}" in text
    assert (out / "report.pdf").stat().st_size > 0


def test_no_project_no_section(adult):
    result = anonymize(Dataset(adult), _settings(project=""))
    assert result.repeat is None
    blocks = build_outline([], ReportContext.from_anonymization(result))
    assert not any(isinstance(b, Heading) and b.text == TITLE for b in blocks)


def test_epsilons_are_rounded_up():
    assert epsilon_text(2.19722) == "2.1973" and epsilon_text(1.0) == "1" and epsilon_text(0.0) == "0"
    assert epsilon_text(math.inf) == "unbounded" and float(epsilon_text(0.12345)) >= 0.12345


def test_a_streamed_release_s_reports_hold_the_section_of_the_whole_release(adult, tmp_path):
    """The reports of a streamed release are drawn on a sample of its records; the section is the whole release's."""
    from ppdp_desktop.cli import main

    data = tmp_path / "adult.csv"
    adult.to_csv(data, index=False)
    passphrase = tmp_path / "pass.txt"
    passphrase.write_text(PASSPHRASE + "\n", encoding="utf-8")
    assert main(["-q", "anonymize", str(data), "--out", str(tmp_path / "r"), "--key", str(tmp_path / "r.ppdpkey"),
                 "--passphrase-file", str(passphrase), "--sensitive", "occupation", "--identifier", "patient_id",
                 "--rho1", "0.1", "--rho2", "0.5", "--project", "streamed-monthly", "--streaming"]) == 0
    for report in (custodian_report_path(tmp_path / "r", tmp_path / "r.ppdpkey"), tmp_path / "r" / "report.html"):
        text = _text(report)
        assert TITLE in text and "Release 1 of project 'streamed-monthly'" in text
        assert f"Records in this release {len(adult):,}" in text
