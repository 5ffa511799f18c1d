#!/usr/bin/env python3
"""Build the one-folder application bundle: ``python packaging/build_bundle.py``.

Runs PyInstaller on ``packaging/ppdp.spec`` (work files in ``build/pyinstaller``), puts the
bundle in ``dist/ppdp-desktop`` (or ``--dist DIR``), adds the ``ppdp`` command-line launcher beside
the executable (a symbolic link on Linux/macOS, ``ppdp.cmd`` on Windows), prints the folder's size
and, with ``--selftest``, runs the bundle's self-test; then (unless ``--no-carry``) writes the one file to
carry, ``dist/transfer/ppdp-desktop-VERSION-PLATFORM.zip``, with ``SHA256SUMS`` and, given the release key
(``--sign-key FILE`` or ``PPDP_RELEASE_KEY``), its signature (:mod:`carry`). Works the same on Windows, macOS
and Linux.

The bundle holds the packages of the environment that runs this script, so it first checks them
against the lock (``packaging/requirements-bundle.txt``, exported from ``uv.lock``) and refuses to
build from anything else; ``python dev.py bundle`` makes that environment (``.venv-bundle``, installed
with ``pip --require-hashes`` from the lock). ``--unlocked`` builds from whatever is installed (for
trying a newer dependency; such a bundle is not a release).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import carry  # noqa: E402
from pins import BUNDLE_REQUIREMENTS, pins_for, read_pins, target_environment  # noqa: E402

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


SHARED_LIBRARY_MAGIC = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")  # ELF, Mach-O 64, universal


def link_duplicates(bundle: Path) -> int:
    """Linux/macOS: a shared library present more than once with the same bytes (PyInstaller copies the
    wheel's ``libarrow_python.so -> .so.2600 -> .so.2600.1.0`` links as three files; numpy and scipy carry
    the same libgfortran) is kept once, the other names becoming relative symbolic links to it (the name
    with the longest file name stays the file, as in the wheels). The dynamic loader opens one file, once.
    Windows keeps its copies (links there need privileges). Returns the bytes saved."""
    if os.name == "nt":
        return 0
    groups: dict[tuple[int, str], list[Path]] = {}
    for path in sorted(bundle.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.stat().st_size < 4096:
            continue
        with path.open("rb") as handle:
            if handle.read(4) not in SHARED_LIBRARY_MAGIC:
                continue
        groups.setdefault((path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest()), []).append(path)
    saved = 0
    for (size, _), paths in groups.items():
        if len(paths) < 2:
            continue
        keep = max(paths, key=lambda p: (len(p.name), str(p)))
        for path in paths:
            if path != keep:
                path.unlink()
                path.symlink_to(os.path.relpath(keep, path.parent))
                saved += size
    return saved


def installed_versions() -> dict[str, str]:
    """``name: version`` of every distribution this interpreter sees (names lower-case, ``-`` for ``_``)."""
    return {d.metadata["Name"].lower().replace("_", "-").replace(".", "-"): d.version for d in metadata.distributions()}


def lock_mismatches(installed: dict[str, str], requirements: Path = BUNDLE_REQUIREMENTS) -> list[str]:
    """Every package the lock pins for this machine that ``installed`` lacks or has at another version."""
    problems = []
    for pin in pins_for(read_pins(requirements), target_environment()):
        name = pin.name.replace("_", "-").replace(".", "-")
        have = installed.get(name)
        if have != pin.version:
            problems.append(f"{pin.name}: locked {pin.version}, installed {have or 'nothing'}")
    return problems


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
    linked = link_duplicates(bundle)
    if linked:
        print(f"{linked / 2**20:.1f} MB of duplicate libraries replaced by links")
    print(f"built {bundle} in {time.perf_counter() - start:.0f} s: {folder_size(bundle) / 2**20:.0f} MB")
    return bundle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the bundle folder goes (default dist/)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller", help="PyInstaller's work folder")
    parser.add_argument("--clean", action="store_true", help="start from an empty work folder")
    parser.add_argument("--selftest", action="store_true", help="run the bundle's --selftest after building")
    parser.add_argument("--unlocked", action="store_true", help="build from the installed packages even if they "
                                                                "are not the locked ones (not for a release)")
    parser.add_argument("--carry", type=Path, default=ROOT / "dist" / "transfer", metavar="DIR",
                        help="where the file to carry goes: the zip, SHA256SUMS and its signature (default "
                             "dist/transfer; see packaging/carry.py)")
    parser.add_argument("--no-carry", action="store_true", help="build the folder only, no zip")
    carry.add_signing_arguments(parser)
    args = parser.parse_args(argv)
    mismatches = lock_mismatches(installed_versions())
    if mismatches and not args.unlocked:
        print(f"This environment is not the locked one ({BUNDLE_REQUIREMENTS.name}):", *mismatches, sep="\n  ")
        print("Build with `python dev.py bundle` (it installs the lock into .venv-bundle), or pass --unlocked.")
        return 2
    private = None
    if args.sign_key and not args.no_carry:  # opened before the minutes of the build: a wrong passphrase fails now
        try:
            private = carry.open_release_key(args.sign_key, args.sign_passphrase_file)
        except Exception as exc:  # the app's KeyFileError / ParameterError, in its own words
            print(f"Cannot open the release key {args.sign_key}: {exc}")
            return 2
    if args.clean and args.work.exists():
        shutil.rmtree(args.work)
    bundle = build(args.dist.resolve(), args.work.resolve())
    if args.selftest:
        exe = bundle / (NAME + (".exe" if os.name == "nt" else ""))
        code = subprocess.call([str(exe), "--selftest"])
        if code != 0:
            return code
    if not args.no_carry:
        print(carry.describe(carry.make_carry(bundle, args.carry.resolve(), private)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
