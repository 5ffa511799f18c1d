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
``python dev.py test-lowest`` creates ``.venv-lowest`` with every direct dependency at its declared
                        minimum (uv's ``--resolution lowest-direct``) and runs the core and
                        command-line tests there (``LOWEST_TESTS`` below says which and why);
                        ``.ci/run`` runs it after ``test``.
``python dev.py bundle`` builds the one-folder application bundle ``dist/ppdp-desktop`` with
                        PyInstaller in ``.venv-bundle``, installed from the lock
                        (``packaging/requirements-bundle.txt``, ``--require-hashes``), and runs its
                        self-test (see ``packaging/README.md``).
``python dev.py lock [--upgrade]`` re-locks after a change to the dependencies in ``pyproject.toml``:
                        ``uv lock`` writes ``uv.lock`` and ``uv export`` the two hash-pinned files
                        in ``packaging/`` that the bundle and the wheelhouse are built from.

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
LOWEST_VENV = ROOT / ".venv-lowest"
BUNDLE_VENV = ROOT / ".venv-bundle"
BUNDLE_LOCK = ROOT / "packaging" / "requirements-bundle.txt"
WHEELHOUSE_LOCK = ROOT / "packaging" / "requirements-wheelhouse.txt"
UV = "uv>=0.5"  # --resolution lowest-direct, uv lock/export with hashes

# The lower-bound stage (``test-lowest``): the tests of everything the dependencies' old versions can
# break without a window -- reading every input format (pandas, pyarrow, openpyxl, calamine,
# pyreadstat), the methods and their checks (numpy, scipy), the release package, its export in every
# format and verification, the sealed key and signatures (cryptography), the reports (matplotlib,
# fpdf2, scikit-learn; pypdf reads the PDF back), streaming (pyarrow) and the command line end to end.
# Left out, to keep the stage near 3 minutes on a 2-core machine: the window's tests (PySide6 6.6 is
# started by one window test only: test_gui_wizard), the PyInstaller bundle, the Dask engine, and the
# long property and fuzz batteries, which exercise our own arithmetic rather than a dependency's API.
LOWEST_TESTS = (
    "test_cli.py", "test_formats.py", "test_loading.py", "test_kinds.py", "test_release_package.py",
    "test_keyfile.py", "test_signing.py", "test_report.py", "test_report_document.py", "test_streaming.py",
    "test_dp_microagg.py", "test_rr_method.py", "test_partition_method.py", "test_generalization.py",
    "test_project.py", "test_verify_forgeries.py", "test_model_utility.py", "test_gui_wizard.py",
)


def _venv_python(venv_dir: Path = VENV) -> Path:
    if os.name == "nt":
        return venv_dir / "Scripts" / "python.exe"
    return venv_dir / "bin" / "python"


def _venv_script(python: Path, name: str) -> Path:
    """A console script installed in the environment: it sits next to the environment's python."""
    return python.parent / (f"{name}.exe" if os.name == "nt" else name)


def _ensure_env(extras: str) -> Path:
    """Create the virtual environment and install the project (editable) with ``extras``."""
    python = _create(VENV)
    wanted = f"{extras}|{(ROOT / 'pyproject.toml').stat().st_mtime_ns}"
    if not STAMP.exists() or STAMP.read_text() != wanted:
        print("Installing PPDP Desktop and its dependencies ...", flush=True)
        target = f"{ROOT}[{extras}]" if extras else str(ROOT)
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", "-e", target])
        STAMP.write_text(wanted)
    return python


def _create(venv_dir: Path) -> Path:
    if sys.version_info < (3, 11):
        sys.exit(f"PPDP Desktop needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    python = _venv_python(venv_dir)
    if not python.exists():
        print(f"Creating virtual environment in {venv_dir} ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    return python


def lowest_install_command(python: Path) -> list[str]:
    """uv installs the project with its test extras, every direct dependency at its declared minimum
    (``--resolution lowest-direct``; the dependencies of those at their newest) and only from wheels
    (``--no-build``: a minimum that has no wheel for this Python cannot be a real minimum here)."""
    return [str(_venv_script(python, "uv")), "pip", "install", "--quiet", "--python", str(python),
            "--resolution", "lowest-direct", "--no-build", "-e", f"{ROOT}[test]"]


def _ensure_lowest_env() -> Path:
    """``.venv-lowest``: uv installed with pip, then the project at the lower bounds of pyproject.toml."""
    python = _create(LOWEST_VENV)
    stamp = LOWEST_VENV / ".ppdp-installed"
    wanted = f"lowest|{(ROOT / 'pyproject.toml').stat().st_mtime_ns}"
    if not stamp.exists() or stamp.read_text() != wanted:
        print("Installing PPDP Desktop with every direct dependency at its declared minimum ...", flush=True)
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", UV])
        subprocess.check_call(lowest_install_command(python))
        stamp.write_text(wanted)
    return python


def locked_install_commands(python: Path) -> list[list[str]]:
    """The bundle's environment from the lock: every package pinned by version and SHA-256
    (``--require-hashes``: pip refuses anything the lock does not name), then the app itself with
    no dependencies of its own (they are all in the lock)."""
    return [[str(python), "-m", "pip", "install", "--quiet", "--require-hashes", "-r", str(BUNDLE_LOCK)],
            [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(ROOT)]]


def _ensure_bundle_env() -> Path:
    """``.venv-bundle``: exactly the locked packages (reinstalled when the lock file changes)."""
    python = _create(BUNDLE_VENV)
    stamp = BUNDLE_VENV / ".ppdp-installed"
    wanted = f"{BUNDLE_LOCK.read_text(encoding='utf-8')}|{(ROOT / 'pyproject.toml').stat().st_mtime_ns}"
    if not stamp.exists() or stamp.read_text(encoding="utf-8") != wanted:
        print(f"Installing the locked packages ({BUNDLE_LOCK.name}) ...", flush=True)
        for command in locked_install_commands(python):
            subprocess.check_call(command)
        stamp.write_text(wanted, encoding="utf-8")
    return python


def lock_commands(uv: Path, upgrade: bool = False) -> list[list[str]]:
    """``uv lock`` (universal: every platform, Python 3.11+) and the two hash-pinned exports from it."""
    export = [str(uv), "export", "--quiet", "--frozen", "--no-emit-project", "--no-dev", "--format", "requirements-txt"]
    return [[str(uv), "lock", *(["--upgrade"] if upgrade else [])],
            [*export, "-o", str(WHEELHOUSE_LOCK.relative_to(ROOT).as_posix())],
            [*export, "--extra", "package", "-o", str(BUNDLE_LOCK.relative_to(ROOT).as_posix())]]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "test-lowest", "bundle", "lock"}:
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
    if command == "test-lowest":
        python = _ensure_lowest_env()
        env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
        tests = [f"tests/{name}" for name in LOWEST_TESTS]
        return subprocess.call([str(python), "-m", "pytest", "-p", "no:cacheprovider", *tests, *rest], cwd=ROOT, env=env)
    if command == "bundle":
        python = _ensure_bundle_env()
        return subprocess.call([str(python), str(ROOT / "packaging" / "build_bundle.py"), "--selftest", *rest], cwd=ROOT)
    if command == "lock":  # uv from .venv (installed with pip there if missing)
        python = _ensure_env("test")
        uv = _venv_script(python, "uv")
        if not uv.exists():
            subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", UV])
        for step in lock_commands(uv, upgrade="--upgrade" in rest):
            code = subprocess.call(step, cwd=ROOT)
            if code != 0:
                return code
        return subprocess.call([str(python), str(ROOT / "packaging" / "lock_check.py")], cwd=ROOT)
    python = _ensure_env("")
    if rest[:1] == ["--gui"]:
        return subprocess.call([str(python), "-m", "ppdp_desktop.gui.app", "--demo", *rest[1:]], cwd=ROOT)
    out = rest or ["--out", str(ROOT / "demo-release"), "--overwrite"]
    return subprocess.call([str(python), "-m", "ppdp_desktop", "demo", *out], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
