"""Re-identification in the window: the live uniqueness figure while tagging quasi-identifiers, the
"protect the quasi-identifiers" section, and a k-anonymous export."""
from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402

from ppdp_desktop.core.data.released import read_release  # noqa: E402
from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.generalization import check_k_anonymity  # noqa: E402
from ppdp_desktop.core.release.analysis import verify_release  # noqa: E402

ROLES_STEP, METHOD_STEP, RUN_STEP, REPORT_STEP, EXPORT_STEP = 1, 3, 4, 5, 6
PASSPHRASE = "correct horse battery staple 9"


def test_tagging_quasi_identifiers_shows_the_uniques_live(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(ROLES_STEP)
    panel = window.pages[ROLES_STEP].risk
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=10_000)
    assert "1,155 of 20,000 records (5.8 %) are the only one with their age, sex and postcode" in panel.label.text()
    window.pages[ROLES_STEP].set_role("admission_year", Role.QUASI_IDENTIFIER)
    assert panel.analysis is None  # recomputed in the background, a moment later
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=10_000)
    assert "11,520 of 20,000 records (57.6 %)" in panel.label.text()
    for column in ("age", "sex", "postcode", "admission_year"):
        window.pages[ROLES_STEP].set_role(column, Role.INSENSITIVE)
    qtbot.waitUntil(lambda: "No quasi-identifier tagged" in panel.label.text(), timeout=10_000)


def test_k_anonymous_export_from_the_window(window, qtbot, tmp_path):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    section = page.protection
    page.scroll.ensureWidgetVisible(section.enabled)
    qtbot.mouseClick(section.enabled, Qt.MouseButton.LeftButton, pos=QPoint(8, section.enabled.height() // 2))
    assert section.enabled.isChecked() and not page.is_complete()  # age needs interval widths
    assert "Give interval widths for age" in section.message.text()
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    assert page.is_complete() and window.state.project.protection["intervals"] == {"age": [5.0, 10.0, 20.0]}
    assert window.state.project.protection["k"] == 5
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    window.go_to(REPORT_STEP)
    report_page = window.pages[REPORT_STEP]
    text = report_page.privacy_label.text()
    assert "Sensitive values: Guarantee verified" in text and "Re-identification: protected" in text
    window.go_to(EXPORT_STEP)
    export = window.pages[EXPORT_STEP]
    export.folder_edit.setText(str(tmp_path / "release"))
    export.key_edit.setText(str(tmp_path / "release.ppdpkey"))
    export.passphrase.first.setText(PASSPHRASE)
    export.passphrase.second.setText(PASSPHRASE)
    export.export()
    qtbot.waitUntil(lambda: (tmp_path / "release" / "release.csv").is_file(), timeout=60_000)
    table = pd.read_csv(tmp_path / "release" / "release.csv", dtype=str, keep_default_na=False)
    ok, suppressed = check_k_anonymity(table[["age", "sex", "postcode"]], 5, 0.05)
    assert ok and suppressed <= 1000
    assert any(line.startswith("k-anonymity") for line in verify_release(read_release(tmp_path / "release")))
    meta = json.loads((tmp_path / "release" / "release.json").read_text())
    assert meta["reidentification"]["generalization"]["k"] == 5


def test_cut_points_for_a_numeric_quasi_identifier(window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    section = window.pages[METHOD_STEP].protection
    qtbot.mouseClick(section.enabled, Qt.MouseButton.LeftButton, pos=QPoint(8, section.enabled.height() // 2))
    section.modes["age"].setCurrentText("cut points")
    qtbot.keyClicks(section.widths["age"], "18,40,65/40")
    assert window.state.project.protection["cuts"] == {"age": [[18.0, 40.0, 65.0], [40.0]]}
    assert window.pages[METHOD_STEP].is_complete()
    settings = window.state.project.settings()
    assert settings.protection.cuts == {"age": [[18.0, 40.0, 65.0], [40.0]]} and settings.protection.k == 5


def test_stating_the_share_of_the_population_estimates_population_uniques(window, qtbot):
    """Typed like a person: 2 % into the roles page's share box; the live figure adds the population estimate,
    equal to the core's on the demo's class sizes, and clearing the box takes it away."""
    from ppdp_desktop.core.privacy.uniqueness import estimate_uniqueness

    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(ROLES_STEP)
    panel = window.pages[ROLES_STEP].risk
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=10_000)
    assert "Population uniqueness" not in panel.label.text()
    panel.fraction.lineEdit().selectAll()
    qtbot.keyClicks(panel.fraction.lineEdit(), "2")
    qtbot.keyClick(panel.fraction.lineEdit(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.uniqueness is not None, timeout=10_000)
    sizes = window.state.dataset.frame.groupby(["age", "sex", "postcode"], dropna=False).size().value_counts().to_dict()
    expected = estimate_uniqueness(sizes, 0.02)
    assert panel.uniqueness.uniques == pytest.approx(expected.uniques, rel=1e-9)
    assert f"about {round(expected.uniques):,} people" in panel.label.text() and "Population uniqueness" in panel.label.text()
    panel.fraction.lineEdit().selectAll()
    qtbot.keyClicks(panel.fraction.lineEdit(), "0")
    qtbot.keyClick(panel.fraction.lineEdit(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=10_000)
    assert panel.uniqueness is None and "Population uniqueness" not in panel.label.text()
