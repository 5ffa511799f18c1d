#!/usr/bin/env python3
"""Build an offline wheelhouse: ``python packaging/build_wheelhouse.py [--out wheelhouse]``.

On a machine with network access (the same OS, CPU and Python minor version as the target PC), this
builds the PPDP Desktop wheel and collects a wheel of every dependency into one folder. Copy the
folder to the air-gapped PC and install with no index at all::

    python -m venv ppdp-env
    ppdp-env/bin/python -m pip install --no-index --find-links wheelhouse ppdp-desktop
    (Windows: ppdp-env\\Scripts\\python -m pip install --no-index --find-links wheelhouse ppdp-desktop)

then run ``ppdp-env/bin/ppdp selftest`` and ``ppdp-env/bin/ppdp-desktop``. ``--platform`` and
``--python-version`` fetch wheels for another target (e.g. ``win_amd64`` and ``3.11``) from here.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_wheelhouse(out: Path, platform: str | None = None, python_version: str | None = None) -> list[Path]:
    """The app's wheel plus every dependency's wheel in ``out``; returns the wheels."""
    out.mkdir(parents=True, exist_ok=True)
    python = [sys.executable, "-m", "pip"]
    # the app itself (pure Python: one wheel for every platform)
    subprocess.check_call([*python, "wheel", "--no-deps", "--wheel-dir", str(out), str(ROOT)])
    app = sorted(out.glob("ppdp_desktop-*.whl"))[-1]
    target = []
    if platform or python_version:  # binary wheels for another machine
        target = ["--only-binary=:all:"]
        target += ["--platform", platform] if platform else []
        target += ["--python-version", python_version] if python_version else []
    # every dependency of that wheel, as wheels (cached downloads are reused)
    subprocess.check_call([*python, "download", "--dest", str(out), *target, str(app)])
    wheels = sorted(out.glob("*.whl"))
    sdists = [p for p in out.iterdir() if p.suffix in {".gz", ".zip"}]
    for sdist in sdists:  # a source package would need a compiler on the target: build its wheel here
        subprocess.check_call([*python, "wheel", "--no-deps", "--wheel-dir", str(out), str(sdist)])
        sdist.unlink()
    return sorted(out.glob("*.whl")) if sdists else wheels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "wheelhouse", help="folder for the wheels (default wheelhouse/)")
    parser.add_argument("--platform", help="pip platform tag of the target, e.g. win_amd64 or manylinux2014_x86_64")
    parser.add_argument("--python-version", help="Python version of the target, e.g. 3.11")
    args = parser.parse_args(argv)
    wheels = build_wheelhouse(args.out.resolve(), args.platform, args.python_version)
    size = sum(w.stat().st_size for w in wheels) / 2**20
    print(f"{len(wheels)} wheels, {size:.0f} MB, in {args.out}")
    print(f"install offline: python -m pip install --no-index --find-links {args.out} ppdp-desktop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
