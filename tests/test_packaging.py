"""Packaging for air-gapped PCs: the PyInstaller bundle and the offline wheelhouse, built for real.

Both tests are slow (a bundle build takes about two minutes on a 2-core machine) but run in CI: a
bundle that cannot start on the target PC is the one failure a custodian cannot work around.
"""
from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))

import build_bundle  # noqa: E402
import build_wheelhouse  # noqa: E402

OFFSCREEN = dict(os.environ, QT_QPA_PLATFORM="offscreen")
EXE = "ppdp-desktop.exe" if os.name == "nt" else "ppdp-desktop"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("bundle")
    return build_bundle.build(base / "dist", base / "work")


@pytest.mark.slow
def test_bundle_selftest_passes_offscreen(bundle):
    run = subprocess.run([str(bundle / EXE), "--selftest"], env=OFFSCREEN, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    for step in ("load the demo data", "plan and verify", "apply", "build the report", "export release, seal key",
                 "verify the release", "open the key, reverse lookup", "build and draw the window"):
        assert f"ok   {step}" in run.stdout, run.stdout
    print(f"bundle: {build_bundle.folder_size(bundle) / 2**20:.0f} MB")


@pytest.mark.slow
def test_bundle_runs_the_command_line_and_the_window(bundle, tmp_path):
    launcher = bundle / ("ppdp.cmd" if os.name == "nt" else "ppdp")
    version = subprocess.run([str(launcher), "--version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("ppdp "), version.stderr
    out = tmp_path / "release"
    demo = subprocess.run([str(bundle / EXE), "cli", "demo", "--out", str(out), "--method", "dp-microagg",
                           "--no-report"], env=dict(OFFSCREEN, PPDP_PASSPHRASE="correct horse battery staple"),
                          capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr
    verify = subprocess.run([str(launcher), "verify", str(out)], capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0 and "OK" in verify.stdout, verify.stderr
    bad = subprocess.run([str(launcher), "verify", str(tmp_path / "missing")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 3 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr  # input error
    shown = subprocess.run([str(bundle / EXE), "--demo", "--quit-when-shown"], env=OFFSCREEN,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "shown" in shown.stdout, shown.stderr


@pytest.mark.slow
def test_bundle_leaves_out_what_the_app_never_uses(bundle):
    files = {p.name for p in (bundle / "_internal").rglob("*")}
    for unused in ("libQt6Network.so.6", "libQt6Qml.so.6", "libqvnc.so", "libarrow_flight.so.2600", "_tkinter",
                   "libqgtk3.so"):
        assert not any(name.startswith(unused) for name in files), unused
    packages = {p.name for p in (bundle / "_internal").iterdir()}
    assert not {"pytest", "hypothesis", "tkinter", "PyInstaller", "dask", "distributed"} & packages
    assert (bundle / "_internal" / "ppdp_desktop" / "resources" / "demo" / "patients.csv").is_file()


def test_the_spec_has_no_os_specific_paths():
    spec = (ROOT / "packaging" / "ppdp.spec").read_text(encoding="utf-8")
    for fragment in ("/usr/", "/lib/", "C:\\", "/work/", "/home/", ".venv"):
        assert fragment not in spec
    assert "SPECPATH" in spec and "os.path.join" in spec


@pytest.mark.slow
def test_offline_wheelhouse_installs_with_no_index(tmp_path):
    wheels = build_wheelhouse.build_wheelhouse(tmp_path / "wheelhouse")
    names = {w.name.split("-")[0].lower() for w in wheels}
    assert {"ppdp_desktop", "numpy", "pandas", "scipy", "pyside6_essentials", "cryptography", "pyarrow"} <= names
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    # every wheel checked against the hash the wheelhouse's requirements.txt pins (the lock's, the app's own)
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--find-links",
                              str(tmp_path / "wheelhouse"), "--require-hashes", "-r",
                              str(tmp_path / "wheelhouse" / "requirements.txt")], capture_output=True, text=True,
                             timeout=900)
    assert install.returncode == 0, install.stderr[-2000:]
    selftest = subprocess.run([str(python), "-m", "ppdp_desktop", "selftest"], env=OFFSCREEN, capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)
    assert selftest.returncode == 0, selftest.stdout + selftest.stderr
