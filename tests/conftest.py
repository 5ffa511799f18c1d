"""Shared fixtures: paths to the shared real data (skipped when absent) and small tables."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# this run's own provenance secret (core/release/installation.py), never the user's
os.environ.setdefault("PPDP_CONFIG_DIR", tempfile.mkdtemp(prefix="ppdp-test-config-"))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
ADULT_DIR = SHARED_DATA / "adult"


def shared_adult(name: str = "adult.csv") -> Path:
    """A file of the shared Adult data set (``../shared/data/adult``); skips the test, saying where it
    looked, when the file is absent (the data README's rule)."""
    path = ADULT_DIR / name
    if not path.is_file():
        pytest.skip(f"the shared adult data set is not at {path}")
    return path


@pytest.fixture
def adult_csv() -> Path:
    return shared_adult()


@pytest.fixture
def window(qtbot, tmp_path):
    """The main window shown offscreen, with settings of its own; its worker stopped afterwards."""
    from PySide6.QtCore import QSettings

    from ppdp_desktop.gui.main_window import MainWindow

    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    yield win
    win.state.worker.shutdown()
    win.pages[1].risk.shutdown()


@pytest.fixture(scope="session")
def demo_data():
    """The embedded demo patients (20,000 records), read once for the tests that only read it."""
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path

    return load_table(resource_path(DEMO_DATA))
