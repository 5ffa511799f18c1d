"""The whole wizard driven with qtbot on the demo data, and its error paths.

Load, tag, edit a taxonomy node and an alias, set a rho, pick fine-grain, run, read the report,
export with a passphrase, then open the key in the lookup dialog and decode a pseudonym.
"""
from __future__ import annotations

import json

import pandas as pd
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDialogButtonBox, QTextBrowser

from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import read_release
from ppdp_desktop.gui.main_window import MainWindow
from ppdp_desktop.gui.screenshots import drive_demo
from ppdp_desktop.gui.sensitivity_model import RHO1, RHO2

PASSPHRASE = "correct horse battery"


def _wait_loaded(qtbot, window):
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)


def test_whole_wizard_on_the_demo(window, qtbot, tmp_path):
    shots = drive_demo(window, tmp_path / "shots", tmp_path)
    assert len(shots) == 7 and all(p.stat().st_size > 10_000 for p in shots.values())
    state = window.state
    # The taxonomy edits made in step 2 are what the release used.
    taxonomy = state.taxonomies["diagnosis"]
    assert taxonomy.node("HIV infection").parent.label == "Blood-borne infection"
    assert taxonomy.leaf("HIV infection").alias1 == "Chronic infection"
    # The report shows the verified guarantee and compares the two methods.
    report_page = window.pages[5]
    assert "verified" in report_page.privacy_label.text().lower()
    assert [r.method for r in state.outcome.reports] == ["finegrain", "uniform"]
    # The export is a valid release with its key beside it.
    folder = tmp_path / "release"
    assert any("checksums" in line for line in verify_release(read_release(folder)))
    assert (tmp_path / "release.ppdpkey").is_file()
    # Reverse lookup of a pseudonym in the dialog gives the patient back.
    dialog = window.open_lookup()
    qtbot.addWidget(dialog)
    dialog.folder_edit.setText(str(folder))
    dialog.key_edit.setText(str(tmp_path / "release.ppdpkey"))
    dialog.passphrase_edit.setText(PASSPHRASE)
    dialog.open_key()
    qtbot.waitUntil(lambda: dialog.ring is not None, timeout=20_000)
    pseudonym = pd.read_csv(folder / "release.csv")["pseudonym"][0]
    dialog.pseudonym_edit.setText(pseudonym)
    dialog.decode_pseudonym()
    cells = [dialog.pseudonym_table.item(r, 1).text() for r in range(dialog.pseudonym_table.rowCount())]
    assert any(c.startswith("P0") for c in cells)  # the patient_id came back


def test_setting_a_rho_and_refusing_an_invalid_one(window, qtbot):
    window.load_demo()
    _wait_loaded(qtbot, window)
    window.go_to(2)
    page = window.pages[2]
    model = page.model
    row = model.labels.index("HIV infection")
    assert model.setData(model.index(row, RHO2), "0.008")
    assert window.state.project.pairs["HIV infection"][1] == 0.008
    assert page.is_complete()
    model.setData(model.index(row, RHO1), "0.5")  # rho1 above rho2: refused, marked, page blocked
    assert (row, RHO1) in model.invalid and not page.is_complete()
    assert "0 < rho1 < rho2 < 1" in model.data(model.index(row, RHO1), 3)  # tooltip says what is allowed
    assert window.state.project.pairs["HIV infection"][0] != 0.5
    assert not window.next.isEnabled()
    model.setData(model.index(row, RHO1), "0.0005")
    assert page.is_complete() and window.next.isEnabled()


def test_malformed_file_shows_a_message_and_the_window_stays_usable(window, qtbot, tmp_path):
    bad = tmp_path / "broken.csv"
    bad.write_text("id,dx\n1,a\n2,b,extra\n")
    window.load_data(bad)
    page = window.pages[0]
    # the uneven rows make the first look unsure: the import options open, their preview says what is wrong
    qtbot.waitUntil(lambda: page.import_dialog is not None and "line 3" in page.import_dialog.status.text(),
                    timeout=10_000)
    dialog = page.import_dialog
    assert "broken.csv" in dialog.status.text()
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)
    assert window.state.dataset is None and not window.next.isEnabled()
    window.load_demo()  # still usable
    _wait_loaded(qtbot, window)
    assert window.next.isEnabled()


def test_infeasible_parameter_is_reported_and_fixable(window, qtbot):
    window.load_demo()
    _wait_loaded(qtbot, window)
    window.state.project.theta = 1000.0  # no value needs protection: the method refuses
    window.go_to(3)
    window.pages[3].choose("uniform")
    window.go_to(4)
    run = window.pages[4]
    qtbot.waitUntil(lambda: run.error_box is not None and run.error_box.isVisible(), timeout=20_000)
    assert "needs protection" in run.error_box.text()
    run.error_box.close()
    window.state.project.theta = 3.0
    run.start()
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=30_000)


def test_wrong_passphrase_in_lookup_is_shown_inline(window, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    from ppdp_desktop.cli import main

    assert main(["demo", "--out", str(tmp_path / "r"), "--method", "personalized"]) == 0
    dialog = window.open_lookup()
    qtbot.addWidget(dialog)
    dialog.folder_edit.setText(str(tmp_path / "r"))
    dialog.key_edit.setText(str(tmp_path / "r.ppdpkey"))
    dialog.passphrase_edit.setText("not the passphrase")
    dialog.open_key()
    qtbot.waitUntil(lambda: "Wrong passphrase" in dialog.message.text(), timeout=20_000)
    assert dialog.isVisible() and dialog.ring is None


def test_project_file_round_trip_restores_the_choices(window, qtbot, tmp_path, monkeypatch):
    window.load_demo()
    _wait_loaded(qtbot, window)
    window.go_to(3)
    window.pages[3].choose("uniform", compare=["finegrain"])
    path = tmp_path / "monthly.ppdp.json"
    assert window.save_project(path)
    data = json.loads(path.read_text())
    assert data["method"] == "uniform" and data["compare"] == ["finegrain"]
    assert data["roles"]["diagnosis"] == "sensitive" and "diagnosis" in data["taxonomies"]
    other = MainWindow(QSettings(str(tmp_path / "s2.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(other)
    assert other.open_project(path)
    qtbot.waitUntil(lambda: other.state.dataset is not None, timeout=30_000)
    assert other.state.project.method == "uniform"
    assert other.state.project.roles["patient_id"] == "identifier"
    assert other.recent_files() == []  # the embedded demo data is not a recent file (a real file is, see test_gui_files)
    other.state.worker.shutdown()


def test_closing_while_running_stops_the_job(window, qtbot):
    window.load_demo()
    _wait_loaded(qtbot, window)
    window.go_to(4)  # starts the run
    assert window.state.worker.is_running() or window.state.outcome is not None
    window.close()
    assert not window.state.worker.is_running()


def test_methods_help_lists_every_registered_method(window, qtbot):
    dialog = window._on_methods_help()
    qtbot.addWidget(dialog)
    from ppdp_desktop.core.methods import REGISTRY

    text = dialog.findChild(QTextBrowser).toPlainText()
    assert all(m.title in text for m in REGISTRY.values())
    assert dialog.height() <= 768 - 80  # fits a 1366x768 screen; the text scrolls


def test_linking_method_runs_from_the_wizard(window, qtbot):
    window.load_demo()
    _wait_loaded(qtbot, window)
    window.go_to(3)
    page = window.pages[3]
    page.choose("rr")
    page.editors["rr"].l.setValue(4.0)
    assert window.state.project.method_settings("rr").l == 4.0 and window.state.project.method == "rr"
    window.go_to(4)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=60_000)
    guarantee = window.state.outcome.main.guarantee
    assert guarantee["l"] == 4.0 and guarantee["max_risk"] <= 0.25 + 1e-9
