#!/usr/bin/env python3
"""One file to carry to the air-gapped PC: the bundle as a zip, with ``SHA256SUMS`` and its signature.

``python packaging/carry.py [--bundle dist/ppdp-desktop] [--out dist/transfer] [--sign-key FILE]`` (``python
dev.py bundle`` runs it after the self-test passed) writes into ``--out``:

- ``ppdp-desktop-VERSION-PLATFORM.zip``: the bundle folder, deflated; symbolic links (Linux, macOS) are stored
  as links, as ``unzip`` and ``tar -xf`` restore them, so a library is carried once;
- ``SHA256SUMS``: the zip's SHA-256 in ``sha256sum`` form (``sha256sum -c SHA256SUMS``);
- with a release key: ``SHA256SUMS.sig``, an OpenSSH signature of ``SHA256SUMS`` (:mod:`sshsig`), and
  ``ppdp-release.allowed_signers``, the public key for ``ssh-keygen -Y verify``. The key is a ``ppdp
  signing-key`` file (``--sign-key FILE`` or ``PPDP_RELEASE_KEY``; its passphrase from
  ``--sign-passphrase-file``, ``PPDP_SIGNING_PASSPHRASE`` or a prompt), opened by the app's own code: never
  in the repository. Without one, the sums are written and the output says plainly they are unsigned (and an
  older signature in ``--out`` is removed, so it can never seem to vouch for a new zip).

docs/install.md is the page on checking the files on the target PC.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import platform
import stat
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sshsig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SUMS = "SHA256SUMS"
SIGNATURE = SUMS + ".sig"
SIGNERS = "ppdp-release.allowed_signers"
KEY_ENV_VAR = "PPDP_RELEASE_KEY"


def platform_tag() -> str:
    """``linux-x86_64``, ``windows-x86_64``, ``macos-arm64``...: the OS and machine the bundle runs on."""
    system = {"win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform.rstrip("0123456789"))
    machine = platform.machine().lower()
    return f"{system}-{ {'amd64': 'x86_64', 'aarch64': 'arm64'}.get(machine, machine) }"


def app_version() -> str:
    """The version in pyproject.toml (the bundle is built from this tree)."""
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    raise RuntimeError("no version in pyproject.toml")


def zip_folder(folder: Path, target: Path, level: int = 6) -> Path:
    """Write ``folder`` (as the zip's top folder) to ``target``, deflated at ``level``; a symbolic link is
    stored as a link (Unix mode bits and its target as content), never as a second copy of what it points to.
    Written beside ``target`` first and renamed, so an interrupted run leaves no half zip under the name."""
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as archive:
        for path in sorted(folder.rglob("*")):
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                continue
            entry = zipfile.ZipInfo(f"{folder.name}/{path.relative_to(folder).as_posix()}", _date_time(info.st_mtime))
            entry.create_system = 3  # Unix: the mode bits below are read by unzip and bsdtar
            entry.external_attr = (stat.S_IFMT(info.st_mode) | stat.S_IMODE(info.st_mode)) << 16
            if stat.S_ISLNK(info.st_mode):
                archive.writestr(entry, os.readlink(path), compress_type=zipfile.ZIP_STORED)
            elif stat.S_ISREG(info.st_mode):
                entry.compress_type = zipfile.ZIP_DEFLATED
                entry._compresslevel = level  # what ZipFile.write sets; open(entry, "w") reads it (3.13: an alias)
                with path.open("rb") as source, archive.open(entry, "w", force_zip64=info.st_size > 2**31) as sink:
                    while chunk := source.read(1 << 20):
                        sink.write(chunk)
    partial.replace(target)
    return target


def _date_time(mtime: float) -> tuple[int, int, int, int, int, int]:
    import time

    return max(time.localtime(mtime)[:6], (1980, 1, 1, 0, 0, 0))  # zip cannot say earlier than 1980


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def write_sums(folder: Path, files: list[Path]) -> Path:
    """``SHA256SUMS`` in ``folder``: one ``HEX  NAME`` line per file, as ``sha256sum`` writes and ``-c`` reads
    (``\\n`` line ends on every OS, so the signed bytes are the same everywhere)."""
    text = "".join(f"{sha256_file(f)}  {f.name}\n" for f in files)
    path = folder / SUMS
    path.write_bytes(text.encode("ascii"))
    return path


def check_sums(folder: Path) -> list[str]:
    """Every problem ``sha256sum -c`` would report for ``folder/SHA256SUMS`` (an empty list: all match)."""
    problems = []
    for line in (folder / SUMS).read_text(encoding="ascii").splitlines():
        expected, _, name = line.partition("  ")
        if not (folder / name).is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(folder / name) != expected:
            problems.append(f"{name}: FAILED")
    return problems or ([] if (folder / SUMS).read_text(encoding="ascii").strip() else [f"{SUMS} is empty"])


@dataclass(frozen=True)
class Carry:
    """What :func:`make_carry` wrote: the zip, the sums, and (signed) the signature and the public key."""

    zip: Path
    sums: Path
    signature: Path | None = None
    signers: Path | None = None
    ssh_fingerprint: str | None = None


def make_carry(bundle: Path, out: Path, private=None, level: int = 6) -> Carry:
    """Zip ``bundle`` into ``out``, write ``SHA256SUMS`` and, with ``private`` (an Ed25519 private key), sign it.
    Sums and signature of an earlier run in ``out`` are removed first."""
    out.mkdir(parents=True, exist_ok=True)
    for old in (SUMS, SIGNATURE, SIGNERS):
        (out / old).unlink(missing_ok=True)
    archive = zip_folder(bundle, out / f"{bundle.name}-{app_version()}-{platform_tag()}.zip", level)
    sums = write_sums(out, [archive])
    if private is None:
        return Carry(archive, sums)
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    signature = out / SIGNATURE
    signature.write_bytes(sshsig.sign(private, sums.read_bytes()).encode("ascii"))
    signers = out / SIGNERS
    signers.write_bytes((sshsig.allowed_signers_line(public) + "\n").encode("ascii"))
    return Carry(archive, sums, signature, signers, sshsig.ssh_fingerprint(public))


def open_release_key(path: str | Path, passphrase_file: str | None = None):
    """The release key's Ed25519 private key, from a ``ppdp signing-key`` file, opened by the app's own code
    (its passphrase: ``passphrase_file``, else ``PPDP_SIGNING_PASSPHRASE``, else a prompt)."""
    from ppdp_desktop.cli.passphrase import SIGNING_ENV_VAR, read_passphrase
    from ppdp_desktop.core.release.signing import open_signing_key

    passphrase = read_passphrase(passphrase_file, confirm=False, env_var=SIGNING_ENV_VAR, what="the release key")
    return open_signing_key(path, passphrase).private


def describe(carry: Carry) -> str:
    """What to tell the person who built it: the files, and plainly whether they are signed."""
    lines = [f"to carry: {carry.zip} ({carry.zip.stat().st_size / 2**20:.0f} MB)", f"          {carry.sums}"]
    if carry.signature is None:
        lines.append(f"UNSIGNED: {SUMS} has no signature (give --sign-key FILE or set {KEY_ENV_VAR} to sign it "
                     "with the release key); the target PC can check the zip's hash but not who made it.")
    else:
        lines += [f"          {carry.signature}", f"          {carry.signers}",
                  f"signed by the release key {carry.ssh_fingerprint} (publish this fingerprint; docs/install.md)"]
    return "\n".join(lines)


def add_signing_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sign-key", metavar="FILE", default=os.environ.get(KEY_ENV_VAR) or None,
                        help=f"the release key (a ppdp signing-key file; default: ${KEY_ENV_VAR}); unsigned without")
    parser.add_argument("--sign-passphrase-file", metavar="FILE",
                        help="the release key's passphrase (else PPDP_SIGNING_PASSPHRASE, else a prompt)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "ppdp-desktop")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "transfer")
    add_signing_arguments(parser)
    args = parser.parse_args(argv)
    private = open_release_key(args.sign_key, args.sign_passphrase_file) if args.sign_key else None
    print(describe(make_carry(args.bundle, args.out, private)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
