"""The pinned builds: uv.lock installs from wheels on every target, agrees with pyproject.toml, and is
what the bundle and the wheelhouse are really built from. Offline and fast: everything is read from
the lock's own records (file names and hashes of every wheel); nothing is downloaded or built."""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))

import build_bundle  # noqa: E402
import build_wheelhouse  # noqa: E402
import lock_check  # noqa: E402
import pins  # noqa: E402

import dev  # noqa: E402


@pytest.fixture(scope="module")
def lock() -> dict:
    return lock_check.load_lock()


def test_every_pinned_package_has_a_wheel_for_windows_linux_and_macos(lock):
    assert lock_check.missing_wheels(lock) == []
    linux = lock_check.TARGETS[1]
    reached = lock_check.reachable(lock, lock_check._environment(linux, (3, 11)))
    assert {"numpy", "pandas", "pyside6-essentials", "cryptography", "pyinstaller", "pytest"} <= {n for n, _ in reached}


def test_the_wheel_check_finds_a_package_without_a_wheel_for_a_target(lock):
    broken = copy.deepcopy(lock)
    pyarrow = next(p for p in broken["package"] if p["name"] == "pyarrow")
    pyarrow["wheels"] = [w for w in pyarrow["wheels"] if "win_amd64" not in w["url"]]
    gaps = lock_check.missing_wheels(broken)
    assert gaps and all(g.startswith(f"pyarrow {pyarrow['version']}: no wheel for Windows x86-64") for g in gaps)
    pure = next(p for p in broken["package"] if p["name"] == "openpyxl")  # py2.py3-none-any counts for all
    assert all("none-any" in w["url"] for w in pure["wheels"])


def test_wheel_tags_are_matched_per_platform_and_python():
    windows, linux, macos = lock_check.TARGETS
    def accepts(target, name, python=(3, 11)):
        from packaging.utils import parse_wheel_filename
        return bool(parse_wheel_filename(name)[3] & lock_check.accepted_tags(target, python))
    assert accepts(windows, "cryptography-50.0.2-cp311-abi3-win_amd64.whl")
    assert not accepts(windows, "numpy-2.4.6-cp311-cp311-win32.whl")
    assert accepts(linux, "numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl")
    assert not accepts(linux, "numpy-2.4.6-cp312-cp312-manylinux_2_27_x86_64.whl")  # another Python
    assert not accepts(linux, "x-1-cp311-cp311-manylinux_2_39_x86_64.whl")  # newer glibc than the target's
    assert not accepts(linux, "x-1-cp311-cp311-musllinux_1_2_x86_64.whl")
    assert accepts(macos, "x-1-cp311-cp311-macosx_11_0_arm64.whl")
    assert accepts(macos, "x-1-cp310-abi3-macosx_13_0_universal2.whl")
    assert not accepts(macos, "x-1-cp311-cp311-macosx_10_9_x86_64.whl")
    assert all(accepts(t, "openpyxl-3.1.5-py2.py3-none-any.whl", (3, 14)) for t in lock_check.TARGETS)


def test_the_lock_agrees_with_pyproject(lock, tmp_path):
    assert lock_check.disagreements(lock) == []
    declared = {r.name.lower() for _, r in lock_check.declared_requirements()}
    assert {"numpy", "pyside6-essentials", "pyinstaller", "pytest"} <= declared
    # a dependency added to pyproject.toml after locking, and a range the pinned version leaves
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    changed = tmp_path / "pyproject.toml"
    changed.write_text(text.replace('"numpy>=1.26",', '"numpy>=1.26,<2", "left-pad>=1.0",'), encoding="utf-8")
    problems = "\n".join(lock_check.disagreements(lock, changed))
    assert "left-pad>=1.0 (dependencies) is not pinned" in problems
    assert "outside numpy<2,>=1.26" in problems
    assert "run `uv lock`" in problems


@pytest.mark.parametrize("exported, extras", [(pins.WHEELHOUSE_REQUIREMENTS, ()),
                                              (pins.BUNDLE_REQUIREMENTS, ("package",))])
def test_the_exported_requirements_are_the_lock(lock, exported, extras):
    """packaging/requirements-*.txt pin exactly the lock's versions with the lock's hashes, and pin
    every package the app (and PyInstaller, for the bundle) needs on every target."""
    locked = {(p["name"], p["version"]): {f["hash"] for f in [p.get("sdist", {}), *p.get("wheels", [])] if f}
              for p in lock["package"] if "version" in p}
    exported_pins = pins.read_pins(exported)
    for pin in exported_pins:
        assert (pin.name, pin.version) in locked, pin
        assert pin.hashes and set(pin.hashes) <= locked[(pin.name, pin.version)], pin.name
    needed = set()
    for target in lock_check.TARGETS:
        for python in lock_check.PYTHONS:
            needed |= lock_check.reachable(lock, lock_check._environment(target, python), extras)
    assert needed == {(p.name, p.version) for p in exported_pins}


def test_pins_are_chosen_for_the_target_not_this_machine():
    bundle = pins.read_pins(pins.BUNDLE_REQUIREMENTS)
    windows = {p.name: p for p in pins.pins_for(bundle, pins.target_environment("win_amd64", "3.11"))}
    linux = {p.name: p for p in pins.pins_for(bundle, pins.target_environment("manylinux_2_34_x86_64", "3.11"))}
    mac = {p.name for p in pins.pins_for(bundle, pins.target_environment("macosx_14_0_arm64", "3.13"))}
    assert "pywin32-ctypes" in windows and "pywin32-ctypes" not in linux and "macholib" in mac
    numpy = [p.version for p in bundle if p.name == "numpy"]
    assert windows["numpy"].version in numpy and "; " not in windows["numpy"].line()
    with pytest.raises(ValueError, match="unknown platform tag"):
        pins.target_environment("solaris_sparc")


def test_an_unpinned_requirement_file_is_refused(tmp_path):
    loose = tmp_path / "loose.txt"
    loose.write_text("numpy==2.4.6 \\\n    --hash=sha256:abc\npandas>=2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="pandas>=2"):
        pins.read_pins(loose)


def test_the_wheelhouse_downloads_only_the_locked_wheels_for_its_target(tmp_path):
    command = build_wheelhouse.download_command(tmp_path / "deps.txt", tmp_path, "win_amd64", "3.11")
    for flag in ("--require-hashes", "--no-deps", "--only-binary=:all:"):
        assert flag in command
    assert command[command.index("-r") + 1] == str(tmp_path / "deps.txt")
    assert command[command.index("--platform") + 1] == "win_amd64" and "cp311" in command
    assert build_wheelhouse.build_wheelhouse.__defaults__[-1] == pins.WHEELHOUSE_REQUIREMENTS
    # the file handed to pip: the lock's pins for that target, every one with its hashes, no markers
    chosen = pins.pins_for(pins.read_pins(pins.WHEELHOUSE_REQUIREMENTS), pins.target_environment("win_amd64", "3.11"))
    written = pins.write_pins(chosen, tmp_path / "deps.txt", "test")
    assert [p.version for p in pins.read_pins(written)] == [p.version for p in chosen]


def test_the_bundle_is_built_from_the_lock(tmp_path, monkeypatch, capsys):
    install, project = dev.locked_install_commands(tmp_path / "python")
    assert "--require-hashes" in install and install[install.index("-r") + 1] == str(pins.BUNDLE_REQUIREMENTS)
    assert "--no-deps" in project
    locked = {p.name: p.version for p in pins.pins_for(pins.read_pins(pins.BUNDLE_REQUIREMENTS),
                                                         pins.target_environment())}
    assert build_bundle.lock_mismatches(locked) == []
    assert build_bundle.lock_mismatches(dict(locked, numpy="1.26.0")) == [f"numpy: locked {locked['numpy']}, installed 1.26.0"]
    # build_bundle.py refuses an environment that is not the lock (before PyInstaller starts)
    monkeypatch.setattr(build_bundle, "installed_versions", lambda: dict(locked, numpy="1.26.0"))
    assert build_bundle.main(["--dist", str(tmp_path / "dist"), "--work", str(tmp_path / "work")]) == 2
    assert "numpy: locked" in capsys.readouterr().out and not (tmp_path / "dist").exists()


def test_the_lock_command_refreshes_all_three_files():
    lock_, wheelhouse, bundle = dev.lock_commands(Path("uv"), upgrade=True)
    assert lock_[1:] == ["lock", "--upgrade"]
    assert "--frozen" in wheelhouse and wheelhouse[-1] == "packaging/requirements-wheelhouse.txt"
    assert "--extra" in bundle and bundle[-1] == "packaging/requirements-bundle.txt"


def test_the_lowest_stage_installs_at_the_declared_minimums():
    command = dev.lowest_install_command(Path("python"))
    assert command[command.index("--resolution") + 1] == "lowest-direct" and "--no-build" in command
    assert command[-1].endswith("[test]")
    minimums = dev.declared_minimums()
    assert minimums["pandas"] == "2.1" and minimums["dask"] == "2024.1" and "ppdp-desktop" not in minimums
    assert dev.minimums_not_installed({"pandas": "2.1.0", "dask": "2024.1.0"}, {"pandas": "2.1", "dask": "2024.1"}) == []
    # a bound with no wheel for this Python: uv took a higher version, and the stage says so
    raised = dev.minimums_not_installed({"zxcvbn": "4.5.0"}, {"zxcvbn": "4.4.28"})
    assert raised and raised[0].startswith("zxcvbn>=4.4.28: 4.5.0 installed")
    assert all((ROOT / "tests" / name).is_file() for name in dev.LOWEST_TESTS)
