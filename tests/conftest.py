"""Shared fixtures: paths to the shared real data and small tables.

A test that needs the shared data (``../shared/data``) is skipped when the file is absent, unless
``PPDP_REQUIRE_SHARED_DATA`` is set (``.ci/run`` sets it): then it fails, naming the missing file, so
that CI cannot pass by skipping the tests on real data."""
from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import NoReturn

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# this run's own provenance secret (core/release/installation.py), never the user's
os.environ.setdefault("PPDP_CONFIG_DIR", tempfile.mkdtemp(prefix="ppdp-test-config-"))
# this run's own release ledger and custodian secrets (core/repeat/appdata.py), never the user's
os.environ.setdefault("PPDP_DATA_DIR", tempfile.mkdtemp(prefix="ppdp-test-data-"))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
ADULT_DIR = SHARED_DATA / "adult"


#: set (to anything but "" or "0") in CI: a test whose shared data file is missing fails instead of skipping
REQUIRE_SHARED_DATA = "PPDP_REQUIRE_SHARED_DATA"


def shared_data_required() -> bool:
    """Whether a missing shared data file fails the test (CI) rather than skipping it (a local run)."""
    return os.environ.get(REQUIRE_SHARED_DATA, "").strip() not in ("", "0")


def missing_shared_data(path: Path) -> NoReturn:
    """Skip the test because ``path`` is absent (the data README's rule), or fail it, naming the path,
    when :data:`REQUIRE_SHARED_DATA` is set."""
    message = f"the shared adult data set is not at {path}"
    if shared_data_required():
        pytest.fail(f"{message} ({REQUIRE_SHARED_DATA} is set: this run needs the shared data; "
                    f"put it at {SHARED_DATA} or unset the variable to skip)", pytrace=False)
    pytest.skip(message)


def shared_adult(name: str = "adult.csv") -> Path:
    """A file of the shared Adult data set (``../shared/data/adult``); when the file is absent the test
    is skipped, saying where it looked, or fails in CI (:func:`missing_shared_data`)."""
    path = ADULT_DIR / name
    if not path.is_file():
        missing_shared_data(path)
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


@pytest.fixture(autouse=True)
def own_release_ledger(tmp_path_factory, monkeypatch):
    """Each test its own release ledger and custodian secrets (PPDP_DATA_DIR): a test's releases are the first of
    their project unless the test makes more, and no test reads the records of every release made before it."""
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path_factory.mktemp("ppdp-data")))


@pytest.fixture(scope="module")
def cluster() -> str:
    """One Dask LocalCluster of two single-threaded worker processes for the module (the Dask engine's tests): its
    scheduler's address."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR, scheduler_kwargs={"dashboard_address": ":0"}) as local:
        yield local.scheduler_address
