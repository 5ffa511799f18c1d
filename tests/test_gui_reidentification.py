"""Re-identification in the window: the live uniqueness figure while tagging quasi-identifiers, the
"protect the quasi-identifiers" section, and a k-anonymous export."""
from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from window_files import export_release  # noqa: E402

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
    export_release(qtbot, window, tmp_path / "release", PASSPHRASE, EXPORT_STEP)
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


def test_a_population_table_chosen_with_the_button_gives_the_journalist_risk(window, qtbot, monkeypatch, tmp_path):
    """Clicked like a person: the roles page's Population table… button, the file dialog answering. A table that
    does not fit (a missing column, a negative count, a count smaller than the data's own) is refused in a dialog
    naming the file, the line and the value, and not kept; one that fits puts the journalist risk beside the
    sample's, equal to a recount, and the project keeps it for the release (step 4's edits leave it alone)."""
    from test_gui_kind_change import answer_question

    from ppdp_desktop.gui import risk_panel

    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(ROLES_STEP)
    panel = window.pages[ROLES_STEP].risk
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=10_000)
    quasi = ["age", "sex", "postcode"]
    frame = window.state.dataset.frame
    census = frame[quasi].astype(str).groupby(quasi, sort=True).size().reset_index(name="n")
    census["count"] = census["n"] * 30
    census.loc[census.index[census["n"] == 1][0], "count"] = 7  # a record alone in the data, among 7 people
    census.drop(columns="n").to_csv(tmp_path / "census.csv", sep=";", index=False)
    shared = int(census.index[census["n"] > 1][0])  # a combination several records of the data have
    table = census.drop(columns="n")
    bad = {"nosex.csv": table.drop(columns="sex"), "negative.csv": table.assign(count=table["count"].where(
        table.index != 4, -3)), "small.csv": table.assign(count=table["count"].where(
            table.index != shared, census["n"] - 1))}
    for name, rows in bad.items():
        rows.to_csv(tmp_path / name, sep=";", index=False)
    combination = ", ".join(f"{q}={census.loc[shared, q]!r}" for q in quasi)
    n = int(census.loc[shared, "n"])
    expected = {"nosex.csv": "nosex.csv: the population table has no column 'sex'",
                "negative.csv": "negative.csv, line 6: the count '-3' is not a whole number of at least 1.",
                "small.csv": (f"small.csv, line {shared + 2}: {n - 1:,} people have {combination}, but the data alone "
                              f"holds {n:,} such records")}
    for name, message in expected.items():
        monkeypatch.setattr(risk_panel.QFileDialog, "getOpenFileName", lambda *a, n=name, **k: (str(tmp_path / n), ""))
        seen: list[str] = []
        answer_question(qtbot, "OK", seen)
        qtbot.mouseClick(panel.choose_table, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda seen=seen: bool(seen), timeout=10_000)
        assert message in seen[0], (message, seen[0])
        assert panel.population is None and not window.state.project.protection.get("population")
        assert panel.table_name.text().startswith("none")
    monkeypatch.setattr(risk_panel.QFileDialog, "getOpenFileName", lambda *a, **k: (str(tmp_path / "census.csv"), ""))
    qtbot.mouseClick(panel.choose_table, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.journalist is not None, timeout=10_000)
    counts = frame[quasi].astype(str).merge(census, on=quasi, how="left")["count"].to_numpy()
    assert panel.journalist.highest_risk == pytest.approx(1 / 7) and panel.journalist.average_risk == pytest.approx(
        (1.0 / counts).mean())
    text = panel.label.text()
    assert "are the only one with their age, sex and postcode" in text  # the sample's risk, and beside it:
    assert f"Against the population table census.csv ({census['count'].sum():,} people): the highest risk is 14.3 %" in text
    assert panel.table_name.text() == "census.csv"
    window.go_to(METHOD_STEP)
    section = window.pages[METHOD_STEP].protection
    section.enabled.click()  # an edit on step 4 keeps the table
    assert window.state.project.settings().protection.population == str(tmp_path / "census.csv")
    window.go_to(ROLES_STEP)
    qtbot.mouseClick(panel.forget_table, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.analysis is not None, timeout=10_000)
    assert panel.journalist is None and "Against the population" not in panel.label.text()
    assert window.state.project.settings().protection.population is None
