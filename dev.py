#!/usr/bin/env python3
"""Bootstrap for PPDP Desktop: one command to run the app, one to test it.

``python dev.py run``   creates ``.venv`` (if missing), installs the app into it and runs the
                        main job on the embedded demo data (``ppdp demo``); with ``--gui`` it opens
                        the window instead.
``python dev.py test``  creates ``.venv`` (if missing), installs the app with its test extras (they include
                        the ``cluster`` extra, Dask, so the Dask engine's tests run too), checks
                        the import rules with ``lint-imports`` (import-linter contracts in
                        ``pyproject.toml``; stops there if one is broken) and then runs the whole
                        test suite with pytest (extra arguments go to pytest).
``python dev.py bundle`` builds the one-folder application bundle ``dist/ppdp-desktop`` with
                        PyInstaller and runs its self-test (see ``packaging/README.md``).

It needs only Python 3.11+ with ``venv`` and works the same on Windows, macOS and Linux.
"""
from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".ppdp-installed"


def _venv_python() -> Path:
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def _venv_script(python: Path, name: str) -> Path:
    """A console script installed in the environment: it sits next to the environment's python."""
    return python.parent / (f"{name}.exe" if os.name == "nt" else name)


def _ensure_env(extras: str) -> Path:
    """Create the virtual environment and install the project (editable) with ``extras``."""
    if sys.version_info < (3, 11):
        sys.exit(f"PPDP Desktop needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    python = _venv_python()
    if not python.exists():
        print(f"Creating virtual environment in {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    wanted = f"{extras}|{(ROOT / 'pyproject.toml').stat().st_mtime_ns}"
    if not STAMP.exists() or STAMP.read_text() != wanted:
        print("Installing PPDP Desktop and its dependencies ...", flush=True)
        target = f"{ROOT}[{extras}]" if extras else str(ROOT)
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", "-e", target])
        STAMP.write_text(wanted)
    return python


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "bundle"}:
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "test":
        python = _ensure_env("test")  # "test" pulls in "cluster" (pyproject.toml): tests/test_dask_engine.py
        env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
        # --no-cache: no .import_linter_cache directory in the work tree.
        code = subprocess.call([str(_venv_script(python, "lint-imports")), "--no-cache"], cwd=ROOT, env=env)
        if code != 0:
            return code
        return subprocess.call([str(python), "-m", "pytest", *rest], cwd=ROOT, env=env)
    if command == "bundle":  # the test extras include PyInstaller (tests/test_packaging.py builds it too)
        python = _ensure_env("test")
        return subprocess.call([str(python), str(ROOT / "packaging" / "build_bundle.py"), "--selftest", *rest], cwd=ROOT)
    python = _ensure_env("")
    if rest[:1] == ["--gui"]:
        return subprocess.call([str(python), "-m", "ppdp_desktop.gui.app", "--demo", *rest[1:]], cwd=ROOT)
    out = rest or ["--out", str(ROOT / "demo-release"), "--overwrite"]
    return subprocess.call([str(python), "-m", "ppdp_desktop", "demo", *out], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
