"""The pinned builds: hash-pinned requirement files exported from ``uv.lock``, chosen per target.

``uv.lock`` (repository root, written by ``uv lock``) is the one universal lock: exact versions for
every platform and Python the project supports, with the file name and SHA-256 of every wheel. The
build scripts do not need uv: they read the requirement files that ``uv export`` writes from it
(see ``packaging/README.md``, "Pinned builds", for the commands that refresh all three):

- ``packaging/requirements-wheelhouse.txt`` -- what the app needs at run time;
- ``packaging/requirements-bundle.txt`` -- that plus PyInstaller (the ``package`` extra).

Each line is ``name==version ; marker --hash=sha256:...``. pip evaluates a marker on the machine
that runs it, even when it downloads for another platform (``pip download --platform``), so
:func:`pins_for` evaluates them for the *target* and the builders hand pip a marker-free file that
holds exactly the target's packages (``--no-deps --require-hashes``: nothing is resolved again and
every file is checked against the lock's hashes).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

try:  # packaging: PyInstaller's dependency (the bundle's environment), else pip's own copy below
    from packaging.markers import Marker, default_environment
except ImportError:  # pragma: no cover - a bare interpreter: pip's own copy
    from pip._vendor.packaging.markers import Marker, default_environment

ROOT = Path(__file__).resolve().parents[1]
UV_LOCK = ROOT / "uv.lock"
WHEELHOUSE_REQUIREMENTS = ROOT / "packaging" / "requirements-wheelhouse.txt"
BUNDLE_REQUIREMENTS = ROOT / "packaging" / "requirements-bundle.txt"

_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;]+)\s*(?:;(?P<marker>.*))?$")

# marker variables of a target, by the start (Windows, macOS) or end (Linux) of its pip platform tag
_OS = {"win": ("win32", "Windows", "nt"), "macosx": ("darwin", "Darwin", "posix"),
       "linux": ("linux", "Linux", "posix"), "manylinux": ("linux", "Linux", "posix"),
       "musllinux": ("linux", "Linux", "posix")}
_MACHINE = {"amd64": "AMD64", "win32": "x86", "arm64": "ARM64", "x86_64": "x86_64", "aarch64": "aarch64",
            "universal2": "arm64"}


@dataclass(frozen=True)
class Pin:
    """One pinned package: ``name==version``, the marker saying where it is needed, its hashes."""

    name: str
    version: str
    marker: str | None
    hashes: tuple[str, ...]

    def line(self) -> str:
        """The requirement line for pip, without the marker (already evaluated for the target)."""
        return " ".join([f"{self.name}=={self.version}", *(f"--hash={h}" for h in self.hashes)])


def read_pins(path: Path) -> list[Pin]:
    """The pins of a requirement file written by ``uv export`` (continued lines joined, comments dropped).

    Raises
    ------
    ValueError
        A line that is not ``name==version [; marker] --hash=...`` with at least one hash: the file
        was not written by ``uv export`` with hashes, and a build from it would not be pinned.
    """
    text = path.read_text(encoding="utf-8")
    entries, current = [], ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("--hash") else raw.strip()
        if not line:
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        entries.append(current + line)
        current = ""
    if current.strip():
        entries.append(current)
    pins = []
    for entry in entries:
        requirement, *hashes = entry.strip().split("--hash=")
        match = _PIN.match(requirement.strip())
        if match is None or not hashes:
            raise ValueError(f"{path.name}: not a hash-pinned requirement: {entry.strip()[:80]}")
        marker = (match["marker"] or "").strip() or None
        hashes = tuple(h.strip() for h in hashes)
        pins.append(Pin(match["name"].lower(), match["version"], marker, hashes))
    return pins


def target_environment(platform: str | None = None, python_version: str | None = None) -> dict[str, str]:
    """Marker variables of the target: this machine, with the platform tag and Python version changed.

    ``platform`` is a pip platform tag (``win_amd64``, ``manylinux2014_x86_64``, ``macosx_11_0_arm64``);
    ``python_version`` is ``"3.11"`` or ``"311"``.
    """
    env = dict(default_environment())
    if python_version:
        digits = python_version.replace(".", "")
        major_minor = python_version if "." in python_version else f"{digits[0]}.{digits[1:]}"
        env.update(python_version=major_minor, python_full_version=f"{major_minor}.0",
                   implementation_version=f"{major_minor}.0")
    if platform:
        family = next((os for os in ("manylinux", "musllinux", "macosx", "linux", "win") if platform.startswith(os)), None)
        machine = next((m for m in _MACHINE if platform.endswith(m)), None)
        if family is None or machine is None:
            raise ValueError(f"unknown platform tag {platform!r} (e.g. win_amd64, manylinux2014_x86_64, macosx_11_0_arm64)")
        sys_platform, system, os_name = _OS[family]
        env.update(sys_platform=sys_platform, platform_system=system, os_name=os_name,
                   platform_machine=_MACHINE[machine] if family == "win" or machine in {"universal2"} else machine)
    return env


def pins_for(pins: list[Pin], env: dict[str, str]) -> list[Pin]:
    """The pins whose marker holds on the target ``env`` (one version per package)."""
    chosen = [p for p in pins if p.marker is None or Marker(p.marker).evaluate(dict(env, extra=""))]
    names = [p.name for p in chosen]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise ValueError(f"more than one pinned version for this target: {', '.join(doubled)}")
    return chosen


def write_pins(pins: list[Pin], path: Path, header: str) -> Path:
    """A marker-free, hash-pinned requirement file for ``pip install/download --require-hashes -r``."""
    lines = [f"# {line}" for line in header.splitlines()] + [p.line() for p in pins]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
