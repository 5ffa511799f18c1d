"""The generalization-only method in the window (issue 33): chosen with a click among the methods, k ticked in the
protection section, run, and exported to a release that verifies, with nothing randomized."""
from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from window_files import export_release  # noqa: E402

from ppdp_desktop.core.data.released import read_release  # noqa: E402
from ppdp_desktop.core.release.analysis import verify_release  # noqa: E402

ROLES_STEP, METHOD_STEP, RUN_STEP, REPORT_STEP, EXPORT_STEP = 1, 3, 4, 5, 6
PASSPHRASE = "correct horse battery staple 9"


def test_generalization_only_is_chosen_run_and_exported_from_the_window(window, qtbot, tmp_path):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    original = window.state.dataset.frame
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    card = page.cards["generalization"]
    page.scroll.ensureWidgetVisible(card.choose)
    qtbot.mouseClick(card.choose, Qt.MouseButton.LeftButton, pos=QPoint(8, card.choose.height() // 2))
    assert window.state.project.method == "generalization" and not page.is_complete()
    assert "Generalization only needs k-anonymity" in page.notes.text()  # nothing asked yet: refused, in red
    section = page.protection
    page.scroll.ensureWidgetVisible(section.enabled)
    qtbot.mouseClick(section.enabled, Qt.MouseButton.LeftButton, pos=QPoint(8, section.enabled.height() // 2))
    qtbot.keyClicks(section.widths["age"], "5,10,20")
    assert page.is_complete() and window.state.project.protection["k"] == 5
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    window.go_to(REPORT_STEP)
    assert "Re-identification: protected" in window.pages[REPORT_STEP].privacy_label.text()
    export_release(qtbot, window, tmp_path / "release", PASSPHRASE, EXPORT_STEP)
    checks = verify_release(read_release(tmp_path / "release"))
    assert any(line.startswith("generalization only: nothing randomized") for line in checks)
    meta = json.loads((tmp_path / "release" / "release.json").read_text(encoding="utf-8"))
    assert meta["method"] == "generalization" and meta["reidentification"]["generalization"]["k"] == 5
    table = pd.read_csv(tmp_path / "release" / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    assert sorted(table["diagnosis"]) == sorted(original["diagnosis"].astype(str))  # the sensitive column unchanged


def test_with_generalization_only_no_sensitive_column_is_needed(window, qtbot):
    """Chosen on step 4, back on step 2 diagnosis is set to Insensitive (the page's own setter, as the roles tests
    do): the step stays complete and says what happens to the columns."""
    from ppdp_desktop.core.data.schema import Role

    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    card = page.cards["generalization"]
    page.scroll.ensureWidgetVisible(card.choose)
    qtbot.mouseClick(card.choose, Qt.MouseButton.LeftButton, pos=QPoint(8, card.choose.height() // 2))
    window.go_to(ROLES_STEP)
    roles = window.pages[ROLES_STEP]
    roles.set_role("diagnosis", Role.INSENSITIVE)
    assert window.state.project.sensitive is None and roles.is_complete()
    assert roles.status.text() == ("No sensitive column: Generalization only (k-anonymity, l-diversity, t-closeness) "
                                   "generalizes the quasi-identifiers tagged here and releases the other columns unchanged.")
