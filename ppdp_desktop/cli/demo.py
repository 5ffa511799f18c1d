"""``ppdp demo --out DIR``: the main job on the embedded demo data, a release and its sealed key.

Without ``--passphrase-file`` or ``PPDP_PASSPHRASE`` a passphrase is made up for the key. It is never printed
(a terminal's scroll-back, a CI log or a screen share would keep it): it is written to a file of its own beside
the key, ``DIR.passphrase.txt`` (readable by its owner only where the system allows), which ``ppdp lookup
--passphrase-file`` reads. A demo's convenience only: a real key's passphrase is kept apart from the key.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from ppdp_desktop.cli.commands import FOLDER, SECRET, _finish, _other_files
from ppdp_desktop.cli.output import stdout_of, wants_json
from ppdp_desktop.cli.passphrase import ENV_VAR, generate_passphrase, read_new_passphrase
from ppdp_desktop.cli.streams import refuse_stdio
from ppdp_desktop.core.errors import InputError


def passphrase_file_for(key: Path) -> Path:
    """Where a made-up passphrase of ``key`` is written: ``rel.ppdpkey`` -> ``rel.passphrase.txt``."""
    return key.with_name((key.stem if key.suffix else key.name) + ".passphrase.txt")


def run_demo(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.demo import demo_settings
    from ppdp_desktop.core.release.package import check_destination, release_target

    refuse_stdio(args.out, "--out", FOLDER)
    refuse_stdio(args.key, "--key", SECRET)
    out = Path(args.out)
    key = Path(args.key) if args.key else out.with_name(out.name + ".ppdpkey")
    check_destination(release_target(out, args.zip), key, args.overwrite, others=_other_files(args))
    made: Path | None = None
    if args.passphrase_file or os.environ.get(ENV_VAR):
        passphrase = read_new_passphrase(args.passphrase_file, allow_weak=args.allow_weak_passphrase,
                                         names=(str(out), str(key)))
    else:
        passphrase, made = generate_passphrase(), passphrase_file_for(key)
        if made.exists() and not args.overwrite:
            raise InputError(f"{made} already exists; choose another release folder, or give --overwrite to replace it.")
    dataset = load_table(resource_path(DEMO_DATA))
    settings = demo_settings(dataset, args.method, theta=args.theta, seed=args.seed)
    if made is not None:
        _write_secret(made, passphrase)  # first: a key is never sealed with a passphrase that was not kept
    try:
        code = _finish(dataset, settings, args, True, str(key), passphrase,
                       {"passphrase_file": str(made)} if made is not None else None)
    except BaseException:
        if made is not None:
            made.unlink(missing_ok=True)  # nothing is written when the job fails
        raise
    if made is not None and not wants_json(args):  # shown also with --quiet: without it the key never opens
        print(f"  key file {key} is sealed with a passphrase made up for this demo and written to {made} (open the key "
              f"with --passphrase-file {made}); keep a real key's passphrase apart from the key.", file=stdout_of(args))
    return code


def _write_secret(path: Path, text: str) -> None:
    """``text`` and a line break in a new file that only its owner may read (mode 0600 on POSIX)."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
