"""A Dask job fails in one line, as every other job (issue 32, point 13): Ctrl+C in the terminal (which reaches every
process of the job, the workers too) and a write that fails on a worker (a full disk; here a file-size limit, which
fails the same writes with EFBIG) printed worker tracebacks and Dask's "Compute Failed" log before ``ppdp``'s line."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="process groups and limits are POSIX")
REPO = Path(__file__).resolve().parents[1]


def _job(tmp_path: Path, n: int, chunk: int = 5000) -> list[str]:
    rng = np.random.default_rng(3)
    data = tmp_path / "patients.csv"
    pd.DataFrame({"id": [f"P{i:07d}" for i in range(n)], "age": rng.integers(20, 90, n),
                  "dx": rng.choice(["flu", "asthma", "gout"], n)}).to_csv(data, index=False)
    return [sys.executable, "-m", "ppdp_desktop", "anonymize", str(data), "--out", str(tmp_path / "out" / "release"),
            "--sensitive", "dx", "--identifier", "id", "--theta", "3", "--engine", "dask", "--workers", "2",
            "--chunk-size", str(chunk), "--no-report", "--quiet"]


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


def test_ctrl_c_during_a_dask_job_prints_one_line(tmp_path: Path) -> None:
    command = _job(tmp_path, 200_000)
    (tmp_path / "out").mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                               cwd=REPO, start_new_session=True)  # its own process group, as a terminal's job
    try:
        deadline = time.monotonic() + 240
        while not any((tmp_path / "out").rglob("part-*")):  # pass 2 runs on the workers
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the job ended or stalled before pass 2: {process.stderr.read() if process.stderr else ''}")
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)  # Ctrl+C: the terminal signals every process of the group
        _, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == 4, err
    assert _errors(err) == ["ppdp: interrupted; nothing was written."], err
    assert not (tmp_path / "out" / "release").exists()


def test_a_write_that_fails_on_a_dask_worker_prints_one_line(tmp_path: Path) -> None:
    import resource

    def small_files() -> None:  # every write past 50 kB fails (EFBIG), as on a full disk (ENOSPC)
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    from ppdp_desktop.core.repeat.ledger import Ledger

    Ledger().close()  # the release ledger made beforehand (its first pages would pass the limit themselves)
    command = _job(tmp_path, 100_000, chunk=20_000)  # each worker's spill passes 50 kB at once
    (tmp_path / "out").mkdir()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                          cwd=REPO, timeout=600, preexec_fn=small_files)
    lines = _errors(done.stderr)
    assert done.returncode == 3, done.stderr
    assert len(lines) == 1 and lines[0].startswith("ppdp: error: Cannot write") and "File too large" in lines[0], lines
    assert "Nothing was published" in lines[0] and not (tmp_path / "out" / "release").exists()
