#!/usr/bin/env python3
"""Build the one-folder application bundle: ``python packaging/build_bundle.py``.

Runs PyInstaller on ``packaging/ppdp.spec`` (work files in ``build/pyinstaller``), puts the
bundle in ``dist/ppdp-desktop`` (or ``--dist DIR``), adds the ``ppdp`` command-line launcher beside
the executable (a symbolic link on Linux/macOS, ``ppdp.cmd`` on Windows), prints the folder's size
and, with ``--selftest``, runs the bundle's self-test. Needs the app installed with its ``package``
extra (``pip install -e .[package]``: PyInstaller); works the same on Windows, macOS and Linux.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "ppdp-desktop"


def folder_size(folder: Path) -> int:
    """Bytes of every regular file under ``folder`` (links not followed)."""
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def add_cli_launcher(bundle: Path) -> Path:
    """``ppdp`` beside the executable: the entry script treats that name as the command line."""
    if os.name == "nt":
        launcher = bundle / "ppdp.cmd"
        launcher.write_text(f'@"%~dp0{NAME}.exe" cli %*\r\n', encoding="ascii")
    else:
        launcher = bundle / "ppdp"
        if launcher.is_symlink() or launcher.exists():
            launcher.unlink()
        launcher.symlink_to(NAME)
    return launcher


def strip_libraries(bundle: Path) -> int:
    """Linux: ``strip --strip-unneeded`` (debug sections and the symbols no relocation needs) on the
    shared libraries. PyInstaller's own full strip breaks auditwheel-patched libraries such as numpy's
    OpenBLAS ("ELF load command not page-aligned"), so libraries under ``*.libs`` folders are left
    alone. Returns the bytes saved."""
    strip = shutil.which("strip")
    if not sys.platform.startswith("linux") or strip is None:
        return 0
    saved = 0
    for path in bundle.rglob("*.so*"):
        if path.is_symlink() or not path.is_file() or any(p.name.endswith(".libs") for p in path.parents):
            continue
        with path.open("rb") as handle:
            if handle.read(4) != b"\x7fELF":
                continue
        before = path.stat().st_size
        subprocess.check_call([strip, "--strip-unneeded", str(path)])
        saved += before - path.stat().st_size
    return saved


def build(dist: Path, work: Path) -> Path:
    """Run PyInstaller and return the bundle folder."""
    start = time.perf_counter()
    subprocess.check_call([sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
                           "--workpath", str(work), "--distpath", str(dist), str(ROOT / "packaging" / "ppdp.spec")])
    bundle = dist / NAME
    add_cli_launcher(bundle)
    saved = strip_libraries(bundle)
    if saved:
        print(f"stripped {saved / 2**20:.0f} MB of debug sections and unneeded symbols")
    print(f"built {bundle} in {time.perf_counter() - start:.0f} s: {folder_size(bundle) / 2**20:.0f} MB")
    return bundle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the bundle folder goes (default dist/)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller", help="PyInstaller's work folder")
    parser.add_argument("--clean", action="store_true", help="start from an empty work folder")
    parser.add_argument("--selftest", action="store_true", help="run the bundle's --selftest after building")
    args = parser.parse_args(argv)
    if args.clean and args.work.exists():
        shutil.rmtree(args.work)
    bundle = build(args.dist.resolve(), args.work.resolve())
    if args.selftest:
        exe = bundle / (NAME + (".exe" if os.name == "nt" else ""))
        return subprocess.call([str(exe), "--selftest"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
