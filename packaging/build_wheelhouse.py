#!/usr/bin/env python3
"""Build an offline wheelhouse: ``python packaging/build_wheelhouse.py [--out wheelhouse]``.

On a machine with network access, this builds the PPDP Desktop wheel and downloads the wheel of every
dependency pinned in ``packaging/requirements-wheelhouse.txt`` (exported from ``uv.lock``: exact
versions, each file checked against its SHA-256 with ``--require-hashes``) into one folder, with a
``requirements.txt`` that pins all of them and the app's wheel by hash. Copy the folder to the
air-gapped PC and install with no index at all::

    python -m venv ppdp-env
    ppdp-env/bin/python -m pip install --no-index --find-links wheelhouse --require-hashes -r wheelhouse/requirements.txt
    (Windows: ppdp-env\\Scripts\\python -m pip install ... the same)

then run ``ppdp-env/bin/ppdp selftest`` and ``ppdp-env/bin/ppdp-desktop``. ``--platform`` and
``--python-version`` fetch the wheels of another target (e.g. ``win_amd64`` and ``3.11``) from here:
the lock's markers are evaluated for that target, not for this machine.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pins import WHEELHOUSE_REQUIREMENTS, pins_for, read_pins, target_environment, write_pins  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def download_command(requirements: Path, out: Path, platform: str | None = None,
                     python_version: str | None = None) -> list[str]:
    """The ``pip download`` of exactly the pinned wheels in ``requirements`` (no resolution, hashes checked)."""
    command = [sys.executable, "-m", "pip", "download", "--dest", str(out), "--no-deps", "--require-hashes",
               "--only-binary=:all:", "-r", str(requirements)]
    if platform:
        command += ["--platform", platform]
    if python_version:
        digits = python_version.replace(".", "")
        command += ["--python-version", python_version, "--implementation", "cp", "--abi", f"cp{digits}"]
    return command


def build_wheelhouse(out: Path, platform: str | None = None, python_version: str | None = None,
                     lock: Path = WHEELHOUSE_REQUIREMENTS) -> list[Path]:
    """The app's wheel plus the pinned wheel of every dependency for the target in ``out``, and
    ``out/requirements.txt`` pinning all of them by hash; returns the wheels."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("ppdp_desktop-*.whl"):
        old.unlink()
    # the app itself (pure Python: one wheel for every platform)
    subprocess.check_call([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(ROOT)])
    app = sorted(out.glob("ppdp_desktop-*.whl"))[-1]
    pins = pins_for(read_pins(lock), target_environment(platform, python_version))
    target = f"{platform or 'this machine'}, Python {python_version or '%d.%d' % sys.version_info[:2]}"
    pinned = write_pins(pins, out / "dependencies.txt", f"{lock.name}, for {target}")
    subprocess.check_call(download_command(pinned, out, platform, python_version))
    pinned.unlink()
    digest = hashlib.sha256(app.read_bytes()).hexdigest()
    app_pin = f"ppdp-desktop=={app.name.split('-')[1]} --hash=sha256:{digest}"
    header = (f"Every wheel of this folder, pinned by hash ({lock.name}, for {target}). Install offline with\n"
              "python -m pip install --no-index --find-links WHEELHOUSE --require-hashes -r WHEELHOUSE/requirements.txt")
    write_pins(pins, out / "requirements.txt", header)
    with (out / "requirements.txt").open("a", encoding="utf-8") as handle:
        handle.write(app_pin + "\n")
    wanted = {app.name} | {_wheel_key(p.name, p.version) for p in pins}
    return sorted(w for w in out.glob("*.whl") if w.name == app.name or _wheel_key_of(w) in wanted)


def _wheel_key(name: str, version: str) -> str:
    return f"{name.replace('-', '_').replace('.', '_').lower()}-{version}"


def _wheel_key_of(wheel: Path) -> str:
    name, version = wheel.name.split("-")[:2]
    return _wheel_key(name, version)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "wheelhouse", help="folder for the wheels (default wheelhouse/)")
    parser.add_argument("--platform", help="pip platform tag of the target, e.g. win_amd64, manylinux_2_34_x86_64, "
                                           "macosx_14_0_arm64")
    parser.add_argument("--python-version", help="Python version of the target, e.g. 3.11")
    args = parser.parse_args(argv)
    wheels = build_wheelhouse(args.out.resolve(), args.platform, args.python_version)
    size = sum(w.stat().st_size for w in wheels) / 2**20
    print(f"{len(wheels)} wheels, {size:.0f} MB, in {args.out}")
    print(f"install offline: python -m pip install --no-index --find-links {args.out} --require-hashes "
          f"-r {args.out / 'requirements.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
