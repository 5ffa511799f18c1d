"""Hostile files opened in the window (issue 32, points 10 and 12): a named pipe (which would hang the first look
at the file) and a cell of millions of characters are refused on step 1, saying what the file is and where, and the
window stays usable."""
from __future__ import annotations

import os
import shutil

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path  # noqa: E402
from ppdp_desktop.gui.pages import load_page  # noqa: E402
from tests.test_gui_files import _Chooser  # noqa: E402


def _open(window, qtbot, monkeypatch, path) -> str:
    """File > Open data… answered with ``path``; the message step 1 ends on."""
    monkeypatch.setattr(load_page, "QFileDialog", _Chooser(path))
    window._on_open_data()
    page = window.pages[0]
    qtbot.waitUntil(lambda: "Could not load" in page.message.text() or window.state.dataset is not None,
                    timeout=60_000)
    return page.message.text()


def _huge(tmp_path):
    frame = pd.read_csv(resource_path(DEMO_DATA))
    frame = frame.astype({frame.columns[-1]: object})
    frame.iloc[7, -1] = "x" * 2_000_000
    path = tmp_path / "huge.csv"
    frame.to_csv(path, index=False)
    return path, f"column {frame.columns[-1]!r}, data row 8 holds a cell of 2,000,000 characters"


def _fifo(tmp_path):
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path, "pipe.csv: is a named pipe (FIFO), not a regular file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("make", [_huge, _fifo], ids=["a 2-million-character cell", "a named pipe"])
def test_a_hostile_file_is_refused_on_step_1_and_the_window_stays_usable(window, qtbot, tmp_path, monkeypatch, make):
    path, said = make(tmp_path)
    message = _open(window, qtbot, monkeypatch, path)
    assert window.state.dataset is None and said in message, message
    good = tmp_path / "patients.csv"
    shutil.copy(resource_path(DEMO_DATA), good)
    _open(window, qtbot, monkeypatch, good)  # the next file opens as usual
    assert window.state.dataset is not None
