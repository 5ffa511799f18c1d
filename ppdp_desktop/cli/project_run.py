"""``ppdp run PROJECT``: a project saved by the window, run headless through the window's own jobs.

``--out DIR`` alone is enough to publish somewhere else than the project's release folder: the sealed key then
goes beside the new folder (``DIR.ppdpkey``, as the window's Export step proposes) rather than to the project's
key path, which may name a folder that is gone or the key of the release left behind; ``--key FILE`` chooses
another, and the summary says where it went.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ppdp_desktop.cli.commands import FOLDER, SECRET, _emit_released, _other_files, _warn_seed, open_signer, print_summary
from ppdp_desktop.cli.passphrase import read_new_passphrase
from ppdp_desktop.cli.streams import refuse_stdio
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.visible import visible

KEY_SUFFIX = ".ppdpkey"


def key_beside(folder: str) -> str:
    """The key file for a release folder: ``<folder>.ppdpkey`` beside it."""
    path = Path(folder)
    return str(path.with_name(path.name + KEY_SUFFIX))


def _same_path(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and os.path.abspath(a) == os.path.abspath(b)


def chosen_key(args: argparse.Namespace, project) -> tuple[str | None, str]:
    """The sealed key's path for this run, and what the summary adds when it is not the project's: ``--key``;
    else, with ``--out`` naming another folder than the project's, the key beside that folder (only when the
    project seals a key at all); else the project's key path."""
    if args.key:
        return args.key, ""
    if not project.key_path:
        return None, ""
    if args.out and not _same_path(args.out, project.release_folder):
        return key_beside(args.out), (f"written beside the new release folder, not to the project's {project.key_path}; "
                                      "--key FILE chooses another")
    return project.key_path, ""


def run_project_file(args: argparse.Namespace) -> int:
    """``ppdp run PROJECT``: a project saved by the window, headless, through the window's own jobs."""
    from ppdp_desktop.core.jobs import run_project
    from ppdp_desktop.core.progress import CancelToken
    from ppdp_desktop.core.project import Project
    from ppdp_desktop.core.release.package import check_destination, release_target

    refuse_stdio(args.project, "PROJECT", "a project names its data file by a path beside it; give the .ppdp file")
    refuse_stdio(args.out, "--out", FOLDER)
    refuse_stdio(args.key, "--key", SECRET)
    project = Project.load(args.project)
    project.check_signing(args.sign)  # the project's rule (require_signing), before any passphrase is asked
    out = args.out or project.release_folder
    key, key_note = chosen_key(args, project)
    if not out:
        raise ParameterError(f"{Path(args.project).name} names no release folder; give --out DIR.")
    check_destination(release_target(out, args.zip), key, args.overwrite, [args.project, project.data_path],
                      _other_files(args))
    from ppdp_desktop.core.release.provenance import current_provenance, file_sha256
    from ppdp_desktop.core.release.provenance_compare import PreviousRelease

    previous = PreviousRelease.read(release_target(out, args.zip))  # before it is replaced: compared at the end
    passphrase = (read_new_passphrase(args.passphrase_file, allow_weak=args.allow_weak_passphrase,
                                      names=(args.project, project.data_path, out, key)) if key else None)
    _warn_seed(args.seed)
    start = time.perf_counter()
    signer = open_signer(args)
    from ppdp_desktop.cli.repeat_args import repeat_settings
    from ppdp_desktop.cli.stages import StageLines

    repeat = repeat_settings(args, project.repeat_project_id(args.project), passphrase)
    if args.budget is None and project.budget is not None:
        repeat.budget = project.budget  # the project file's budget; --budget overrides it for this run
    result, folder = run_project(project, out, key, passphrase, args.overwrite, StageLines.from_args(args), CancelToken(),
                                 seed=args.seed, fmt=args.fmt, zip_file=args.zip, bom=not args.no_bom,
                                 project_path=args.project, signer=signer, repeat=repeat)
    print_summary(result, folder, key, time.perf_counter() - start, False, signer, key_note=key_note)
    run = current_provenance(result.dataset.digest, file_sha256(args.project))  # the plain digests: never published
    for line in previous.compare(run, input_path=project.data_path):  # versions, input or project that differ
        print(f"ppdp: note: {visible(line)}", file=sys.stderr)
    _emit_released(args, result, folder, key, time.perf_counter() - start, False, signer)
    return 0
