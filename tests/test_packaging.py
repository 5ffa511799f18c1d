"""Packaging for air-gapped PCs: the PyInstaller bundle and the offline wheelhouse, built for real.

Both tests are slow (a bundle build takes about two minutes on a 2-core machine) but run in CI: a
bundle that cannot start on the target PC is the one failure a custodian cannot work around.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))

import build_bundle  # noqa: E402
import build_wheelhouse  # noqa: E402
import carry  # noqa: E402
import sshsig  # noqa: E402

OFFSCREEN = dict(os.environ, QT_QPA_PLATFORM="offscreen")
EXE = "ppdp-desktop.exe" if os.name == "nt" else "ppdp-desktop"
#: issue 35: what a custodian carries to the air-gapped PC, the bundle zipped (deflate), at most this
MAX_ZIPPED_MB = 160


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """A bundle built here, or the one ``PPDP_TEST_BUNDLE`` names (e.g. ``dist/ppdp-desktop`` after ``python dev.py
    bundle``, to test the very bundle that will be carried without building another)."""
    given = os.environ.get("PPDP_TEST_BUNDLE")
    if given:
        return Path(given).resolve()
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


@pytest.mark.slow
def test_bundle_zipped_is_at_most_160_mb_with_libraries_once(bundle, tmp_path):
    archive = carry.zip_folder(bundle, tmp_path / "bundle.zip")
    zipped, on_disk = archive.stat().st_size / 2**20, build_bundle.folder_size(bundle) / 2**20
    print(f"bundle: {on_disk:.0f} MB on disk, {zipped:.1f} MB zipped")
    assert zipped <= MAX_ZIPPED_MB, f"{zipped:.1f} MB zipped (limit {MAX_ZIPPED_MB}); see packaging/README.md"
    if os.name != "nt":  # a library the wheels hold under several names is one file and links
        seen: dict[tuple[int, int], Path] = {}
        for path in (bundle / "_internal").rglob("*.so*"):
            if path.is_file() and not path.is_symlink() and path.stat().st_size > 2**20:
                size_and_head = (path.stat().st_size, hash(path.read_bytes()[:65536]))
                assert size_and_head not in seen, f"{path} is a copy of {seen[size_and_head]}"
                seen[size_and_head] = path
    files = {p.name for p in (bundle / "_internal").rglob("*")}
    for unused in ("libQt6WaylandClient", "libqwayland", "libqevdev", "libgssapi_krb5", "readline.", "_webp."):
        assert not any(name.startswith(unused) for name in files), unused
    for folder in ("sklearn/cluster", "sklearn/datasets", "scipy/cluster", "matplotlib", "PySide6/QtSvg.abi3.so"):
        assert not (bundle / "_internal" / folder).exists(), folder
    assert (bundle / "_internal" / "ppdp_desktop" / "resources" / "fonts" / "DejaVuSans.ttf").is_file()


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


# The file to carry (packaging/carry.py): fast, on a small stand-in folder, in the normal suite.
RELEASE_PASSPHRASE = "the release key's passphrase 35"


@pytest.fixture(scope="module")
def release_key(tmp_path_factory) -> Path:
    """A throwaway release key: a ``ppdp signing-key`` file, as the real one is (never in the repository)."""
    from ppdp_desktop.core.release.signing import new_signing_key

    path = tmp_path_factory.mktemp("release-key") / "release.ppdpsign"
    new_signing_key(path, RELEASE_PASSPHRASE)
    return path


def _stand_in_bundle(parent: Path) -> Path:
    folder = parent / "ppdp-desktop"
    (folder / "_internal" / "lib").mkdir(parents=True)
    (folder / "ppdp-desktop").write_bytes(b"#!/bin/sh\necho ppdp\n" + bytes(range(256)) * 64)
    (folder / "ppdp-desktop").chmod(0o755)
    (folder / "_internal" / "lib" / "libthing.so.1.0").write_bytes(os.urandom(5000))
    if os.name != "nt":
        (folder / "ppdp").symlink_to("ppdp-desktop")
        (folder / "_internal" / "libthing.so.1").symlink_to("lib/libthing.so.1.0")
    return folder


def test_the_zip_stores_links_as_links_and_unzip_restores_them(tmp_path):
    folder = _stand_in_bundle(tmp_path / "src")
    archive = carry.zip_folder(folder, tmp_path / "b.zip")
    with zipfile.ZipFile(archive) as opened:
        entries = {i.filename: i for i in opened.infolist()}
        assert opened.testzip() is None
    assert set(entries) >= {"ppdp-desktop/ppdp-desktop", "ppdp-desktop/_internal/lib/libthing.so.1.0"}
    assert entries["ppdp-desktop/ppdp-desktop"].external_attr >> 16 & 0o777 == 0o755
    stored = carry.zip_folder(folder, tmp_path / "stored.zip", level=0)  # the level reaches every file
    assert stored.stat().st_size > archive.stat().st_size + 10_000
    if os.name == "nt" or shutil.which("unzip") is None:
        return
    link = entries["ppdp-desktop/_internal/libthing.so.1"]
    assert stat.S_ISLNK(link.external_attr >> 16) and link.file_size == len("lib/libthing.so.1.0")
    subprocess.run(["unzip", "-q", str(archive), "-d", str(tmp_path / "out")], check=True)
    out = tmp_path / "out" / "ppdp-desktop"
    assert (out / "ppdp").is_symlink() and os.readlink(out / "ppdp") == "ppdp-desktop"
    assert (out / "_internal" / "libthing.so.1").read_bytes() == (folder / "_internal" / "lib" / "libthing.so.1.0").read_bytes()
    assert os.access(out / "ppdp-desktop", os.X_OK)


def test_signed_sums_verify_and_a_changed_zip_or_sums_fails(tmp_path, release_key, monkeypatch):
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", RELEASE_PASSPHRASE)
    private = carry.open_release_key(release_key)
    made = carry.make_carry(_stand_in_bundle(tmp_path / "src"), tmp_path / "transfer", private)
    out = tmp_path / "transfer"
    assert sorted(p.name for p in out.iterdir()) == sorted([made.zip.name, carry.SUMS, carry.SIGNATURE, carry.SIGNERS])
    assert made.zip.name == f"ppdp-desktop-{carry.app_version()}-{carry.platform_tag()}.zip"
    sums = (out / carry.SUMS).read_bytes()
    assert sums == f"{carry.sha256_file(made.zip)}  {made.zip.name}\n".encode()
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    sshsig.verify((out / carry.SIGNATURE).read_text(), sums, public)
    assert carry.check_sums(out) == []
    assert "signed by the release key " + made.ssh_fingerprint in carry.describe(made)
    ssh_keygen = shutil.which("ssh-keygen")
    verify = [ssh_keygen, "-Y", "verify", "-f", str(out / carry.SIGNERS), "-I", sshsig.PRINCIPAL, "-n", "file",
              "-s", str(out / carry.SIGNATURE)]
    if ssh_keygen:  # OpenSSH's own check, as the target PC runs it
        good = subprocess.run(verify, input=sums, capture_output=True)
        assert good.returncode == 0 and made.ssh_fingerprint.encode() in good.stdout + good.stderr, good.stderr
    if shutil.which("sha256sum"):
        assert subprocess.run(["sha256sum", "-c", carry.SUMS], cwd=out, capture_output=True).returncode == 0

    with made.zip.open("r+b") as handle:  # one byte of the zip changed: the sums catch it
        handle.seek(100)
        byte = handle.read(1)
        handle.seek(100)
        handle.write(bytes([byte[0] ^ 1]))
    assert carry.check_sums(out) == [f"{made.zip.name}: FAILED"]
    if shutil.which("sha256sum"):
        assert subprocess.run(["sha256sum", "-c", carry.SUMS], cwd=out, capture_output=True).returncode != 0

    forged = sums.replace(sums[:4], b"0000" if sums[:4] != b"0000" else b"1111")  # sums rewritten to match a new zip
    (out / carry.SUMS).write_bytes(forged)
    with pytest.raises(sshsig.SignatureError, match="changed after signing"):
        sshsig.verify((out / carry.SIGNATURE).read_text(), forged, public)
    if ssh_keygen:
        assert subprocess.run(verify, input=forged, capture_output=True).returncode != 0


def test_a_signature_by_another_key_is_refused(tmp_path):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    ours, theirs = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    signature = sshsig.sign(theirs, b"text")
    with pytest.raises(sshsig.SignatureError, match="another key"):
        sshsig.verify(signature, b"text", ours.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))
    with pytest.raises(sshsig.SignatureError, match="not an SSH signature"):
        sshsig.verify("garbage", b"text", ours.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))


def test_unsigned_sums_say_so_and_an_older_signature_is_removed(tmp_path, release_key, monkeypatch):
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", RELEASE_PASSPHRASE)
    folder = _stand_in_bundle(tmp_path / "src")
    carry.make_carry(folder, tmp_path / "transfer", carry.open_release_key(release_key))
    (folder / "new-file").write_text("a later build")
    unsigned = carry.make_carry(folder, tmp_path / "transfer")
    assert not (tmp_path / "transfer" / carry.SIGNATURE).exists() and not (tmp_path / "transfer" / carry.SIGNERS).exists()
    assert unsigned.signature is None and "UNSIGNED" in carry.describe(unsigned)
    assert carry.check_sums(tmp_path / "transfer") == []


def test_a_wrong_release_key_passphrase_stops_before_the_build(tmp_path, release_key, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", "not the passphrase")
    monkeypatch.setattr(build_bundle, "lock_mismatches", lambda installed: [])
    monkeypatch.setattr(build_bundle, "build", lambda dist, work: pytest.fail("built with a key that cannot open"))
    assert build_bundle.main(["--sign-key", str(release_key), "--carry", str(tmp_path / "t")]) == 2
    assert "Cannot open the release key" in capsys.readouterr().out
    assert not (tmp_path / "t").exists()
