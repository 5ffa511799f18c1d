"""What CI relies on: a test that needs the shared data fails in CI (``PPDP_REQUIRE_SHARED_DATA``) rather
than skipping, and ``python dev.py test`` runs the static checks (import rules, ruff, mypy) before pytest,
stopping at the first that fails."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dev
from tests.conftest import REQUIRE_SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]

# a test that asks for a shared file that is not there (conftest's shared_adult, with the data folder moved)
NEEDS_MISSING_DATA = '''
from pathlib import Path

import tests.conftest as conftest


def test_needs_the_shared_data():
    conftest.ADULT_DIR = Path({folder!r})
    conftest.shared_adult("adult.csv")
'''


def _run_needing_missing_data(tmp_path: Path, required: str | None) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_needs_data.py"
    test_file.write_text(NEEDS_MISSING_DATA.format(folder=str(tmp_path / "no-shared-data")), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the project's settings
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_SHARED_DATA}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    if required is not None:
        env[REQUIRE_SHARED_DATA] = required
    return subprocess.run([sys.executable, "-m", "pytest", "-rsf", "-p", "no:cacheprovider", str(test_file)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_missing_shared_data_skips_a_local_run(tmp_path):
    for required in (None, "", "0"):
        result = _run_needing_missing_data(tmp_path, required)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "1 skipped" in result.stdout and "no-shared-data" in result.stdout


def test_missing_shared_data_fails_ci_naming_the_file(tmp_path):
    result = _run_needing_missing_data(tmp_path, "1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout and "skipped" not in result.stdout
    assert str(tmp_path / "no-shared-data" / "adult.csv") in result.stdout
    assert REQUIRE_SHARED_DATA in result.stdout


@pytest.mark.parametrize("failing", [None, 0, 1, 2])
def test_dev_test_runs_the_static_checks_before_pytest(monkeypatch, failing):
    calls: list[list[str]] = []

    def call(command, **kwargs):
        calls.append([str(part) for part in command])
        return 1 if failing is not None and len(calls) == failing + 1 else 0

    monkeypatch.setattr(dev, "_ensure_env", lambda extras: Path(sys.executable))
    monkeypatch.setattr(dev.subprocess, "call", call)
    code = dev.main(["test", "-k", "x"])
    tools = [Path(c[0]).name.removesuffix(".exe") if c[0] != sys.executable else c[2] for c in calls]
    expected = ["lint-imports", "ruff", "mypy", "pytest"]
    if failing is None:
        assert code == 0 and tools == expected
        assert calls[1][1:] == ["check", "--no-cache", "ppdp_desktop", "tests", "benchmarks"]
        assert calls[2][-1] == "ppdp_desktop/core" and calls[3][-2:] == ["-k", "x"]
    else:  # the first check that fails stops the command with its code; nothing after it runs
        assert code == 1 and tools == expected[: failing + 1]
