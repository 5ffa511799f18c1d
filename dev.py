#!/usr/bin/env python3
"""Bootstrap for PPDP Desktop: one command to run the app, one to test it.

``python dev.py run``   creates ``.venv`` (if missing), installs the app into it and runs the
                        main job on the embedded demo data (``ppdp demo``, on the command line: no
                        window opens); ``--gui`` opens the window instead, with the demo data, or
                        ``--gui FILE`` with your own file.
``python dev.py test``  creates ``.venv`` (if missing), installs the app with its test extras (they include
                        the ``cluster`` extra, Dask, so the Dask engine's tests run too), checks
                        the import rules with ``lint-imports`` (import-linter contracts in
                        ``pyproject.toml``), lints with ``ruff check ppdp_desktop tests benchmarks``
                        and type-checks the core with ``mypy ppdp_desktop/core`` (``[tool.ruff]``,
                        ``[tool.mypy]``; it stops at the first that fails) and then runs the whole
                        test suite with pytest (extra arguments go to pytest).
``python dev.py test-lowest`` creates ``.venv-lowest`` with every direct dependency at its declared
                        minimum (uv's ``--resolution lowest-direct``) and runs the core and
                        command-line tests there (``LOWEST_TESTS`` below says which and why);
                        ``.ci/run`` runs it after ``test``.
``python dev.py bundle [--sign-key FILE]`` builds the one-folder application bundle ``dist/ppdp-desktop``
                        with PyInstaller in ``.venv-bundle``, installed from the lock
                        (``packaging/requirements-bundle.txt``, ``--require-hashes``), runs its
                        self-test and writes the one file to carry, ``dist/transfer/ppdp-desktop-*.zip``,
                        with ``SHA256SUMS`` and, given the release key (``--sign-key`` or
                        ``PPDP_RELEASE_KEY``), its signature (``packaging/README.md``, ``docs/install.md``).
``python dev.py lock [--upgrade]`` re-locks after a change to the dependencies in ``pyproject.toml``:
                        ``uv lock`` writes ``uv.lock`` and ``uv export`` the two hash-pinned files
                        in ``packaging/`` that the bundle and the wheelhouse are built from.

It needs only Python 3.11+ with ``venv`` and works the same on Windows, macOS and Linux (where ``python`` is often
called ``python3``).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
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
WINDOW_HINT = ("\nThat was the command line: no window opens. To work in the window:  python dev.py run --gui  "
               "(the demo data)  or  python dev.py run --gui YOUR_FILE")

# The lower-bound stage (``test-lowest``): the tests of what an old version of a dependency can break,
# each file chosen for the libraries it drives -- the command line end to end (all of them at once),
# every input format read (pandas, pyarrow, openpyxl, python-calamine, pyreadstat) and every release
# format written and read back and verified (the same, plus the zip), the kinds of columns (pandas'
# dtypes), the sealed key and signatures (cryptography, zxcvbn), the report documents (Pillow,
# the app's PDF writer, pypdf reads the PDF back), the models of "does my analysis survive?" (scikit-learn, scipy),
# streaming (pyarrow's CSV reader and writer) and the whole wizard once (PySide6 at its minimum).
# Left out, to keep the stage near 3 minutes on a 2-core machine: the window's other tests, the
# PyInstaller bundle (tests/test_packaging.py; the bundle is built from the lock, not the minimums),
# the Dask engine, and the methods' property and battery tests, which exercise our own arithmetic
# on numpy arrays rather than a dependency's API.
LOWEST_TESTS = (
    "test_cli.py", "test_loading.py", "test_formats.py", "test_kinds.py", "test_release_package.py",
    "test_keyfile.py", "test_signing.py", "test_report_document.py", "test_model_utility.py",
    "test_streaming.py", "test_gui_wizard.py",
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


def static_checks(python: Path) -> list[list[str]]:
    """What ``test`` runs before pytest, in order: the import rules (import-linter's contracts in
    ``pyproject.toml``), lint and import order (ruff, ``[tool.ruff]``) and the core's types (mypy,
    ``[tool.mypy]``). The caches are kept out of the work tree (``--no-cache``, ``--cache-dir``)."""
    return [[str(_venv_script(python, "lint-imports")), "--no-cache"],
            [str(_venv_script(python, "ruff")), "check", "--no-cache", "ppdp_desktop", "tests", "benchmarks"],
            [str(python), "-m", "mypy", "--cache-dir", os.devnull, "ppdp_desktop/core"]]


def lowest_install_command(python: Path) -> list[str]:
    """uv installs the project with its test extras, every direct dependency at its declared minimum
    (``--resolution lowest-direct``; the dependencies of those at their newest) and only from wheels
    (``--no-build``: a minimum that has no wheel for this Python cannot be a real minimum here)."""
    return [str(_venv_script(python, "uv")), "pip", "install", "--quiet", "--python", str(python),
            "--resolution", "lowest-direct", "--no-build", "-e", f"{ROOT}[test]"]


def _uv_env() -> dict[str, str]:
    """uv's environment: the system's certificate store, which pip uses too (uv's own bundled roots refuse a
    site's TLS-inspecting proxy that the system trusts; seen on a build machine with a clean environment)."""
    return {**os.environ, "UV_NATIVE_TLS": "1"}


def _ensure_lowest_env() -> Path:
    """``.venv-lowest``: uv installed with pip, then the project at the lower bounds of pyproject.toml."""
    python = _create(LOWEST_VENV)
    stamp = LOWEST_VENV / ".ppdp-installed"
    wanted = f"lowest|{(ROOT / 'pyproject.toml').stat().st_mtime_ns}"
    if not stamp.exists() or stamp.read_text() != wanted:
        print("Installing PPDP Desktop with every direct dependency at its declared minimum ...", flush=True)
        subprocess.check_call([str(python), "-m", "pip", "install", "--quiet", UV])
        subprocess.check_call(lowest_install_command(python), env=_uv_env())
        stamp.write_text(wanted)
    return python


def declared_minimums(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, str]:
    """``name: X`` for every dependency pyproject.toml declares as ``name>=X`` (extras too; not the project)."""
    with pyproject.open("rb") as handle:
        project = tomllib.load(handle)["project"]
    declared = list(project["dependencies"]) + [r for rs in project.get("optional-dependencies", {}).values() for r in rs]
    minimums = {}
    for requirement in declared:
        match = re.match(r"\s*([A-Za-z0-9._-]+)\s*(?:\[[^]]*\])?\s*([^;]*)", requirement)
        bound = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", match.group(2)) if match else None
        name = match.group(1).lower().replace("_", "-") if match else ""
        if bound and name != project["name"]:
            minimums[name] = bound.group(1)
    return minimums


def minimums_not_installed(installed: dict[str, str], minimums: dict[str, str]) -> list[str]:
    """Each declared minimum that is not the version installed: the bound is not what the tests saw."""
    def key(version: str) -> tuple:
        parts = [int(p) if p.isdigit() else p for p in version.split(".")]
        while parts and parts[-1] == 0:
            parts.pop()
        return tuple(parts)
    return [f"{name}>={low}: {installed.get(name, 'nothing')} installed (the lowest that installs from a wheel "
            f"here); raise the bound in pyproject.toml" for name, low in sorted(minimums.items())
            if key(installed.get(name, "0")) != key(low)]


def _installed(python: Path) -> dict[str, str]:
    script = ("import importlib.metadata as m, json; print(json.dumps({d.metadata['Name'].lower().replace('_', '-'): "
              "d.version for d in m.distributions()}))")
    return json.loads(subprocess.check_output([str(python), "-c", script], text=True))


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
        for check in static_checks(python):  # each stops the command if it fails
            code = subprocess.call(check, cwd=ROOT, env=env)
            if code != 0:
                return code
        return subprocess.call([str(python), "-m", "pytest", *rest], cwd=ROOT, env=env)
    if command == "test-lowest":
        python = _ensure_lowest_env()
        raised = minimums_not_installed(_installed(python), declared_minimums())
        if raised:  # uv found no wheel for this Python at the bound (or the resolver had to go higher)
            print("Declared minimums that are not what is tested:", *raised, sep="\n  ")
            return 1
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
            code = subprocess.call(step, cwd=ROOT, env=_uv_env())
            if code != 0:
                return code
        return subprocess.call([str(python), str(ROOT / "packaging" / "lock_check.py")], cwd=ROOT)
    python = _ensure_env("")
    code = subprocess.call(run_command(python, rest), cwd=ROOT)
    if code == 0 and rest[:1] != ["--gui"]:  # the demo ran on the command line: say what opens the window
        print(WINDOW_HINT)
    return code


def run_command(python: Path, rest: list[str]) -> list[str]:
    """``run``: the demo job on the command line (``ppdp demo``, extra arguments go to it), or with ``--gui`` the
    window, on the demo data or on the file named after ``--gui``."""
    if rest[:1] == ["--gui"]:
        return [str(python), "-m", "ppdp_desktop.gui.app", *(rest[1:] or ["--demo"])]
    return [str(python), "-m", "ppdp_desktop", "demo", *(rest or ["--out", str(ROOT / "demo-release"), "--overwrite"])]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
