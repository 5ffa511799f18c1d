#!/usr/bin/env python3
"""Check ``uv.lock`` offline: ``python packaging/lock_check.py`` (also run by tests/test_lockfile.py).

Two questions, answered from the lock's own records (no network, no uv):

1. **Does every pinned package install from a wheel on each target?** Starting from the project,
   the lock's dependency edges are followed with their markers evaluated for each target --
   Windows x86-64, Linux x86-64 (manylinux, glibc 2.34: RHEL 9, Ubuntu 22.04 and later, which Qt 6.9+
   wheels need) and macOS
   arm64 (macOS 14) -- on each Python the project supports (3.11 to 3.14), and every package
   reached must list a wheel whose tags that target accepts (a pure-Python ``py3-none-any`` wheel
   counts for all). A package that exists only as source would need a compiler on the target PC.
2. **Does the lock agree with pyproject.toml?** Every declared dependency (extras too) is pinned,
   every pinned version lies in its declared range, and the lock was made from the current list
   (uv records the list it resolved; a dependency added or changed since means ``uv lock`` again).
"""
from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ((3, 11), (3, 12), (3, 13), (3, 14))
MANYLINUX_GLIBC = (2, 34)  # PySide6 6.11's wheels are manylinux_2_34
MACOS = (14, 0)


@dataclass(frozen=True)
class Target:
    """One platform the pinned packages must install on."""

    name: str
    platforms: tuple[str, ...]  # pip platform tags it accepts, most specific first
    markers: dict[str, str]  # marker variables other than the Python version


def _manylinux(arch: str) -> tuple[str, ...]:
    glibc = [f"manylinux_2_{minor}_{arch}" for minor in range(MANYLINUX_GLIBC[1], 4, -1)]
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    return tuple(glibc + [f"{legacy[m]}_{arch}" for m in legacy if m <= MANYLINUX_GLIBC[1]])


TARGETS = (
    Target("Windows x86-64", ("win_amd64",),
           dict(sys_platform="win32", platform_system="Windows", os_name="nt", platform_machine="AMD64")),
    Target("Linux x86-64", _manylinux("x86_64"),
           dict(sys_platform="linux", platform_system="Linux", os_name="posix", platform_machine="x86_64")),
    Target("macOS arm64", tuple(mac_platforms(MACOS, "arm64")),
           dict(sys_platform="darwin", platform_system="Darwin", os_name="posix", platform_machine="arm64")),
)


def load_lock(path: Path = ROOT / "uv.lock") -> dict:
    """The parsed ``uv.lock``."""
    with path.open("rb") as handle:
        return tomllib.load(handle)


def _project(lock: dict) -> dict:
    return next(p for p in lock["package"] if p.get("source", {}).get("editable") == "." or
                p.get("source", {}).get("virtual") == ".")


def _environment(target: Target, python: tuple[int, int]) -> dict[str, str]:
    version = f"{python[0]}.{python[1]}"
    return dict(default_environment(), **target.markers, python_version=version, python_full_version=f"{version}.0",
                implementation_name="cpython", platform_python_implementation="CPython", extra="")


def reachable(lock: dict, env: dict[str, str], extras: tuple[str, ...] | None = None) -> set[tuple[str, str]]:
    """``(name, version)`` of every locked package installed on ``env`` with the project's ``extras``
    (default: every extra)."""
    by_name: dict[str, list[dict]] = {}
    for package in lock["package"]:
        by_name.setdefault(package["name"], []).append(package)
    project = _project(lock)
    todo = [(project, tuple(project.get("optional-dependencies", {})) if extras is None else extras)]
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    while todo:
        package, extras = todo.pop()
        key = (package["name"], package.get("version", ""), extras)
        if key in seen:
            continue
        seen.add(key)
        edges = list(package.get("dependencies", []))
        for extra in extras:
            edges += package.get("optional-dependencies", {}).get(extra, [])
        for edge in edges:
            if "marker" in edge and not Marker(edge["marker"]).evaluate(env):
                continue
            candidates = [p for p in by_name[edge["name"]] if "version" not in edge or p.get("version") == edge["version"]]
            if len(candidates) != 1:
                raise ValueError(f"uv.lock: cannot tell which {edge['name']} {package['name']} needs")
            todo.append((candidates[0], tuple(edge.get("extra", ()))))
    return {(name, version) for name, version, _ in seen if (name, version) != (project["name"], project.get("version", ""))}


def accepted_tags(target: Target, python: tuple[int, int]) -> set[Tag]:
    """Every wheel tag CPython ``python`` on ``target`` installs."""
    interpreter = f"cp{python[0]}{python[1]}"
    return (set(cpython_tags(python, [interpreter], target.platforms))
            | set(compatible_tags(python, interpreter, target.platforms)))


def missing_wheels(lock: dict) -> list[str]:
    """``"name version: no wheel for TARGET, Python X.Y"`` for every gap; empty when all install from wheels."""
    packages = {(p["name"], p.get("version", "")): p for p in lock["package"]}
    gaps = []
    for target in TARGETS:
        for python in PYTHONS:
            tags = accepted_tags(target, python)
            for name, version in sorted(reachable(lock, _environment(target, python))):
                wheels = [w["url"].rsplit("/", 1)[-1] for w in packages[(name, version)].get("wheels", [])]
                if not any(parse_wheel_filename(w)[3] & tags for w in wheels):
                    gaps.append(f"{name} {version}: no wheel for {target.name}, Python {python[0]}.{python[1]}")
    return gaps


def declared_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[tuple[str | None, Requirement]]:
    """``(extra or None, requirement)`` for every dependency pyproject.toml declares, but the project itself."""
    with pyproject.open("rb") as handle:
        project = tomllib.load(handle)["project"]
    declared = [(None, Requirement(r)) for r in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        declared += [(extra, Requirement(r)) for r in requirements]
    own = canonicalize_name(project["name"])
    return [(extra, r) for extra, r in declared if canonicalize_name(r.name) != own]


def disagreements(lock: dict, pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """Where the lock and pyproject.toml disagree; empty when every declared dependency is pinned in range
    and the lock was made from the dependency list pyproject.toml has now."""
    versions: dict[str, list[str]] = {}
    for package in lock["package"]:
        versions.setdefault(canonicalize_name(package["name"]), []).append(package.get("version", ""))
    problems = []
    for extra, requirement in declared_requirements(pyproject):
        name = canonicalize_name(requirement.name)
        if name not in versions:
            problems.append(f"{requirement} ({extra or 'dependencies'}) is not pinned in uv.lock")
        for version in versions.get(name, []):
            if not requirement.specifier.contains(version, prereleases=True):
                problems.append(f"uv.lock pins {name} {version}, outside {requirement} ({extra or 'dependencies'})")
    declared = {(canonicalize_name(r.name), str(SpecifierSet(str(r.specifier))), extra or "")
                for extra, r in declared_requirements(pyproject)}
    recorded = set()
    own = canonicalize_name(_project(lock)["name"])
    for entry in _project(lock).get("metadata", {}).get("requires-dist", []):
        if canonicalize_name(entry["name"]) == own:
            continue
        extra = entry.get("marker", "").removeprefix("extra == '").removesuffix("'")
        recorded.add((canonicalize_name(entry["name"]), str(SpecifierSet(entry.get("specifier", ""))), extra))
    for name, specifier, extra in sorted(declared - recorded):
        problems.append(f"pyproject.toml declares {name}{specifier} ({extra or 'dependencies'}) but uv.lock was "
                        "made without it: run `uv lock` (packaging/README.md, Pinned builds)")
    for name, specifier, extra in sorted(recorded - declared):
        problems.append(f"uv.lock was made with {name}{specifier} ({extra or 'dependencies'}), which pyproject.toml "
                        "no longer declares: run `uv lock`")
    return problems


def main() -> int:
    lock = load_lock()
    problems = disagreements(lock) + missing_wheels(lock)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"uv.lock: {len(lock['package']) - 1} pinned packages, each with a wheel for "
              + ", ".join(t.name for t in TARGETS) + "; in step with pyproject.toml")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
