"""The minimal window, driven offscreen with pytest-qt."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from ppdp_desktop.core.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.gui.main_window import MainWindow  # noqa: E402


def test_window_opens_demo_data(qtbot):
    window = MainWindow()
    qtbot.addWidget(window)
    assert window.open_path(resource_path(DEMO_DATA))
    model = window.table.model()
    assert model.rowCount() == 20_000
    assert model.headerData(0, Qt.Orientation.Horizontal) == "patient_id"
    assert model.data(model.index(0, 0)) == "P000001"
    assert "20,000 records" in window.summary.text()


def test_load_error_is_a_dialog_not_a_traceback(qtbot, tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: shown.append(text))
    bad = tmp_path / "empty.csv"
    bad.write_text("")
    window = MainWindow()
    qtbot.addWidget(window)
    assert not window.open_path(bad)
    assert shown and "empty.csv" in shown[0]
    assert window.dataset is None
