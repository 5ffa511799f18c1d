"""``python dev.py run`` runs the demo on the command line and says that no window opened and what opens one;
``--gui`` opens the window on the demo data, ``--gui FILE`` on the user's own file (issue 31, point 13)."""
from __future__ import annotations

import sys
from pathlib import Path

import dev


def _calls(monkeypatch) -> list[list[str]]:
    calls: list[list[str]] = []
    monkeypatch.setattr(dev, "_ensure_env", lambda extras: Path(sys.executable))
    monkeypatch.setattr(dev.subprocess, "call", lambda command, **kwargs: calls.append([str(c) for c in command]) or 0)
    return calls


def test_run_is_the_command_line_demo_and_says_what_opens_the_window(monkeypatch, capsys):
    calls = _calls(monkeypatch)
    assert dev.main(["run"]) == 0
    assert calls == [[sys.executable, "-m", "ppdp_desktop", "demo", "--out", str(dev.ROOT / "demo-release"), "--overwrite"]]
    assert "no window opens" in capsys.readouterr().out and "python dev.py run --gui" in dev.WINDOW_HINT


def test_run_gui_opens_the_window_on_the_demo_or_on_a_file(monkeypatch, capsys):
    calls = _calls(monkeypatch)
    assert dev.main(["run", "--gui"]) == 0 and dev.main(["run", "--gui", "klinik.xlsx"]) == 0
    assert calls == [[sys.executable, "-m", "ppdp_desktop.gui.app", "--demo"],
                     [sys.executable, "-m", "ppdp_desktop.gui.app", "klinik.xlsx"]]
    assert capsys.readouterr().out == ""
