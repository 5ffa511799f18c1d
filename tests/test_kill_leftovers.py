"""kill -9 in the middle of a job (issue 32, points 2 and 3): no file beside the release holds an identifier in
clear after a streamed or Dask job is killed while it spills, what it left is removed at the next start of the app,
and an ``--overwrite`` killed between "old release moved aside" and "new release in place", followed by a second run
killed too, still leaves the last complete release and its key."""
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

from ppdp_desktop.cli import main
from ppdp_desktop.core.release.keyfile import read_header
from ppdp_desktop.core.repeat.ledger_rows import manifest_of

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX")
REPO = Path(__file__).resolve().parents[1]
PASSPHRASE = "correct horse battery staple zebra"
#: what an identifier looks like in the test data: no released or random byte string holds it
ID_MARK, NAME_MARK = b"PID-", b"Zyxname-"


def _patients(path: Path, n: int) -> Path:
    rng = np.random.default_rng(5)
    pd.DataFrame({
        "patient_id": [f"PID-{i:07d}" for i in range(n)],
        "name": [f"Zyxname-{i}" for i in range(n)],
        "age": rng.integers(20, 90, n),
        "dx": rng.choice(["flu", "asthma", "gout", "copd"], n),
    }).to_csv(path, index=False)
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PPDP_PASSPHRASE": PASSPHRASE, "PYTHONPATH": str(REPO)}


def _kill_when_spilling(command: list[str], where: Path, env: dict[str, str], pattern: str = "key-records*") -> None:
    """Start ``command`` and kill -9 it once a file ``pattern`` under ``where`` has some bytes (by default the key's
    record table, the identifiers, being spilled)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
    children = []
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            spilled = [p for p in where.rglob(pattern) if p.is_file() and p.stat().st_size > 4096]
            if spilled:
                break
            if process.poll() is not None:
                pytest.fail("the run ended before it could be killed")
            time.sleep(0.02)
        else:
            pytest.fail("the run never spilled the key's records")
        try:
            import psutil

            children = psutil.Process(process.pid).children(recursive=True)  # Dask's worker processes
        except Exception:  # noqa: BLE001 - without psutil the workers end with their parent's pipes
            children = []
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    for child in children:  # the workers the killed run left (a real crash takes them with it, or they time out)
        try:
            child.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass


def _clear_text(folder: Path) -> list[str]:
    """Every file under ``folder`` that holds an identifier of the test data in clear."""
    return [str(p) for p in folder.rglob("*") if p.is_file() and (ID_MARK in (data := p.read_bytes())
                                                                    or NAME_MARK in data)]


@pytest.mark.parametrize(("engine", "moment"), [("streaming", "key-records*"), ("streaming", "release.csv"),
                                                ("dask", "key-records*")])
def test_a_job_killed_while_it_spills_leaves_no_identifier_in_clear(tmp_path: Path, engine: str, moment: str) -> None:
    """Killed in pass 2 (the identifiers spilled for the key) or while the data file is written (the spill whole)."""
    if engine == "dask":
        pytest.importorskip("distributed")
    data = _patients(tmp_path / "patients.csv", 120_000 if engine == "streaming" else 60_000)
    shared = tmp_path / "shared"  # the release's parent folder (a shared drive)
    shared.mkdir()
    out, key = shared / "release", shared / "release.ppdpkey"
    args = ["anonymize", str(data), "--out", str(out), "--key", str(key), "--sensitive", "dx", "--identifier",
            "patient_id,name", "--theta", "3", "--method", "uniform", "--no-report", "--quiet", "--chunk-size", "2000"]
    args += ["--streaming"] if engine == "streaming" else ["--engine", "dask", "--workers", "1"]
    _kill_when_spilling([sys.executable, "-m", "ppdp_desktop", *args], shared, _env(tmp_path), moment)
    assert not out.exists() and not key.exists()
    left = [p for p in shared.iterdir() if p.name.startswith(".")]
    assert left  # the killed run's hidden folder is still there...
    assert _clear_text(shared) == []  # ...and holds no identifier in clear: its spill is sealed
    # the next start of the app (any command) removes what the killed run left
    subprocess.run([sys.executable, "-m", "ppdp_desktop", "history"], env=_env(tmp_path), cwd=REPO, timeout=120,
                   capture_output=True, check=False)
    assert [p.name for p in shared.iterdir()] == []


_PUBLISH = """
import os, signal, sys
import numpy as np, pandas as pd
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.release.pipeline import TableSource, publish_release
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings
out, step, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(seed)
frame = pd.DataFrame({"patient": [f"P{i:05d}" for i in range(200)], "age": rng.integers(20, 80, 200),
                      "diagnosis": rng.choice(["flu", "asthma", "diabetes", "copd"], 200)})
settings = AnonymizationSettings("diagnosis", "uniform", ["patient"], ["age"], SensitivitySettings(theta=3.0),
                                 seed=seed)

def hook(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)

publish_release(TableSource(anonymize(Dataset(frame), settings)), out, overwrite=True, include_report=False,
                key_path=out + ".ppdpkey", passphrase=os.environ["PPDP_PASSPHRASE"], hook=hook)
"""


def _publish(tmp_path: Path, out: Path, step: str, seed: int) -> int:
    done = subprocess.run([sys.executable, "-c", _PUBLISH, str(out), step, str(seed)], env=_env(tmp_path), cwd=REPO,
                          timeout=300, capture_output=True, text=True)
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    return done.returncode


def _pair(out: Path) -> tuple[str | None, str | None]:
    key = out.with_name(out.name + ".ppdpkey")
    return manifest_of(out), (read_header(key).manifest_sha256 if key.is_file() else None)


@pytest.mark.parametrize("step", ["old release moved aside", "old key moved aside", "new key in place"])
def test_a_killed_overwrite_then_a_killed_run_keeps_the_last_complete_release_and_key(tmp_path: Path, step) -> None:
    out = tmp_path / "rel"
    assert _publish(tmp_path, out, "", 1) == 0
    old = _pair(out)
    assert old[0] is not None and old[0] == old[1]  # a release and its own key
    assert _publish(tmp_path, out, step, 2) == -signal.SIGKILL  # between "old moved aside" and "new in place"
    assert not out.exists()  # the old release is only a hidden backup now
    assert _publish(tmp_path, out, "start", 3) == -signal.SIGKILL  # the next run, killed too before its renames
    assert _pair(out) == old  # the old release and its key were put back before anything else
    assert _publish(tmp_path, out, "", 4) == 0  # and a run that ends replaces them as asked
    new = _pair(out)
    assert new[0] == new[1] != old[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "rel.ppdpkey"]


def test_the_next_start_of_the_app_puts_back_what_a_killed_overwrite_moved_aside(tmp_path: Path, capsys) -> None:
    out = tmp_path / "rel"
    assert _publish(tmp_path, out, "", 1) == 0
    old = _pair(out)
    assert _publish(tmp_path, out, "new key in place", 2) == -signal.SIGKILL
    assert main(["verify", str(out)]) == 0  # any command: the old pair is back before it runs
    assert f"{out} was put back" in capsys.readouterr().err
    assert _pair(out) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "rel.ppdpkey"]


def test_after_the_new_release_is_in_place_the_backups_go_and_the_new_pair_stays(tmp_path: Path) -> None:
    out = tmp_path / "rel"
    assert _publish(tmp_path, out, "", 1) == 0
    assert _publish(tmp_path, out, "new release in place", 2) == -signal.SIGKILL
    new = _pair(out)
    assert [p for p in tmp_path.iterdir() if p.name.endswith(".old")]  # the replaced pair, moved aside
    assert main(["verify", str(out)]) == 0
    assert _pair(out) == new and new[0] == new[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel", "rel.ppdpkey"]


def test_the_next_start_of_the_window_settles_what_a_killed_job_left(tmp_path: Path) -> None:
    pytest.importorskip("PySide6")
    out = tmp_path / "rel"
    assert _publish(tmp_path, out, "", 1) == 0
    old = _pair(out)
    assert _publish(tmp_path, out, "new key in place", 2) == -signal.SIGKILL
    shown = subprocess.run([sys.executable, "-c", "import sys; from ppdp_desktop.gui.app import main; "
                            "sys.exit(main(['--quit-when-shown']))"], env={**_env(tmp_path), "QT_QPA_PLATFORM": "offscreen"},
                           cwd=REPO, timeout=300, capture_output=True, text=True)
    assert "shown" in shown.stdout, shown.stderr
    assert f"{out} was put back" in shown.stderr
    assert _pair(out) == old and sorted(p.name for p in tmp_path.iterdir()) == ["rel", "rel.ppdpkey"]
