"""Issue 31 point 11 on the German clinical file, driven as a person does: the kind of a code column reads
"code / free text" (never "identifier", which is a role), "Patienten-Nr." ends its sentence with one full stop,
and the report's Privacy and Utility panes open with a plain sentence before their figures."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from clinical_data import write_clinical_xlsx  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QDialogButtonBox  # noqa: E402

from ppdp_desktop.core.evaluation.report_model import percent  # noqa: E402

ROLES_STEP, RUN_STEP, REPORT_STEP = 1, 4, 5
ID, SENSITIVE = "Patienten-Nr.", "Hauptdiagnose (ICD-10)"


def _next(qtbot, window) -> None:
    qtbot.waitUntil(window.next.isEnabled, timeout=120_000)
    qtbot.mouseClick(window.next, Qt.MouseButton.LeftButton)


def _choose(qtbot, combo, text: str) -> None:
    """Pick an entry of a combo box with the keyboard: focus it and type its first letters."""
    qtbot.wait(QApplication.keyboardInputInterval() + 100)  # Qt joins keys typed in quick succession
    combo.setFocus()
    qtbot.keyClicks(combo, text)
    assert combo.currentText().lower().startswith(text.lower()), combo.currentText()


def _open_clinical(qtbot, window, tmp_path) -> None:
    """Open the export (a title row above the header): OK in the import options if they open."""
    window.load_data(write_clinical_xlsx(tmp_path / "klinik.xlsx", 600))
    page = window.pages[0]
    opened = lambda: page.import_dialog is not None and page.import_dialog.isVisible()  # noqa: E731
    qtbot.waitUntil(lambda: window.state.dataset is not None or opened(), timeout=30_000)
    if window.state.dataset is None:
        ok = page.import_dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        qtbot.waitUntil(ok.isEnabled, timeout=30_000)
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert ID in window.state.dataset.frame.columns


def _row(window, column: str) -> int:
    return list(window.state.dataset.frame.columns).index(column)


def test_a_code_column_is_of_kind_code_or_free_text_not_identifier(window, qtbot, tmp_path):
    _open_clinical(qtbot, window, tmp_path)
    _next(qtbot, window)
    roles = window.pages[ROLES_STEP]
    assert window.stack.currentIndex() == ROLES_STEP
    kinds = [roles.table.cellWidget(r, 1) for r in range(roles.table.rowCount())]
    shown = {kinds[0].itemText(i) for i in range(kinds[0].count())}
    assert "code / free text" in shown and not any("identifier" in text for text in shown)
    assert kinds[_row(window, "PLZ")].currentText() == "code / free text"  # a postcode: a code, read as written


def test_patienten_nr_ends_its_sentence_with_one_full_stop(window, qtbot, tmp_path):
    _open_clinical(qtbot, window, tmp_path)
    _next(qtbot, window)
    roles = window.pages[ROLES_STEP]
    _choose(qtbot, roles.table.cellWidget(_row(window, ID), 2), "Identifier")
    _choose(qtbot, roles.table.cellWidget(_row(window, SENSITIVE), 2), "Sensitive")
    assert roles.status.text() == f"Sensitive: {SENSITIVE}. Identifiers removed: {ID}"
    assert ".." not in roles.status.text()


def test_report_panes_open_with_a_plain_sentence_on_the_clinical_file(window, qtbot, tmp_path):
    _open_clinical(qtbot, window, tmp_path)
    _next(qtbot, window)
    roles = window.pages[ROLES_STEP]
    _choose(qtbot, roles.table.cellWidget(_row(window, ID), 2), "Identifier")
    _choose(qtbot, roles.table.cellWidget(_row(window, SENSITIVE), 2), "Sensitive")
    _choose(qtbot, roles.table.cellWidget(_row(window, "Geschlecht"), 2), "Quasi")
    while window.stack.currentIndex() < RUN_STEP:
        _next(qtbot, window)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    _next(qtbot, window)
    page = window.pages[REPORT_STEP]
    bar = page.sections.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(1).center())  # "Privacy and utility"
    report = window.state.outcome.reports[0]
    privacy, utility = page.privacy_label.text(), page.utility_label.text()
    # the plain sentence first, then the verdicts and the figures (rho1, rho2, epsilon; record utility, KL)
    assert privacy.startswith("<p>In plain words: someone who was at most ")
    assert privacy.index("In plain words") < privacy.index("Sensitive values: Guarantee verified") \
        < privacy.index("Re-identification:") < privacy.index("Equivalent to epsilon-local")
    assert utility.startswith(f"<b>{report.title}</b><p>In plain words: about {percent(report.record_utility)} of the "
                              f"records show their true {SENSITIVE} value")
    assert utility.index("In plain words") < utility.index("record utility 0.") < utility.index("KL ")
