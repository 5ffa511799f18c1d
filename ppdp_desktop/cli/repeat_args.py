"""The command line's options for repeated releases (issue 30): the project a release belongs to, its custodian
secret (persistent randomness), its budget and the reason to go past it, and its stable pseudonyms."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from ppdp_desktop.core.declarations import finite_float
from ppdp_desktop.core.settings import RepeatSettings

SECRET_PASSPHRASE_VAR = "PPDP_SECRET_PASSPHRASE"


def add_repeat_arguments(p: argparse.ArgumentParser, *, project: bool = True) -> None:
    """Add the repeated-release options to ``p`` (``project``: with ``--project``, which ``ppdp run`` takes from
    the project file instead)."""
    g = p.add_argument_group("repeated releases (the same patients released again)")
    if project:
        g.add_argument("--project", metavar="NAME", help="the project this release belongs to: its releases are "
                       "counted together in the release ledger (ppdp history) and share one custodian secret "
                       "(default: the data file's name without its extension)")
    g.add_argument("--secret", metavar="FILE", help="the project's custodian secret file (default: the one kept for "
                   "the project in this computer's application-data folder, made on the project's first release); it "
                   "makes an unchanged patient's released values the same in every release")
    g.add_argument("--secret-passphrase-file", metavar="FILE", help="the custodian secret's passphrase (else "
                   f"{SECRET_PASSPHRASE_VAR}, else the key's passphrase when it comes from a file or the environment)")
    g.add_argument("--budget", type=finite_float, metavar="EPSILON", help="the largest cumulative epsilon a patient "
                   "may reach over the project's releases; kept in the ledger for the next releases")
    g.add_argument("--over-budget-reason", metavar="TEXT", help="publish past the budget, or with records that "
                   "combining this release with the project's previous generalized one puts in a group smaller than "
                   "k, for this reason (kept in the ledger)")
    g.add_argument("--stable-pseudonyms", action=argparse.BooleanOptionalAction, default=None,
                   help="give each patient the same pseudonym in every release of the project (made with the custodian "
                   "secret; needs an identifier column) instead of fresh ones; the project's choice, kept in the ledger "
                   "(default: as in the project's last release, else fresh)")


def _secret_passphrase(args: argparse.Namespace, key_passphrase: str | None, key_made: bool) -> str | None:
    path = getattr(args, "secret_passphrase_file", None)
    if path:
        from ppdp_desktop.cli.passphrase import read_passphrase

        return read_passphrase(path, confirm=False, env_var=SECRET_PASSPHRASE_VAR, what="the custodian secret")
    if os.environ.get(SECRET_PASSPHRASE_VAR):
        return os.environ[SECRET_PASSPHRASE_VAR]
    return None if key_made else key_passphrase


def repeat_settings(args: argparse.Namespace, project_id: str, key_passphrase: str | None,
                    key_made: bool = False) -> RepeatSettings:
    """The job's repeated-release settings: the project's custodian secret opened (made on the project's first
    release when a passphrase is at hand), the budget (``--budget``, else the project's last one in the ledger).

    Notes (a secret made, or none at hand: each record released again then composes) go into the settings and
    so into the release's statement and the summary, after the work. A wrong passphrase is refused with the key
    file's own message (a :class:`KeyFileError`).
    """
    from ppdp_desktop.core.privacy.persistent import PersistentKeys
    from ppdp_desktop.core.release.custodian_secret import create_secret, open_secret, secret_exists, secret_path
    from ppdp_desktop.core.repeat.ledger import Ledger

    passphrase = _secret_passphrase(args, key_passphrase, key_made)
    given = getattr(args, "secret", None)
    keys, notes = None, []
    seed = getattr(args, "seed", None)
    if seed is not None and not given:  # testing only (warned): reproducible, so the secret is the seed's
        keys = PersistentKeys(seeded_secret(seed))
    elif passphrase:
        if secret_exists(project_id, given):
            keys = PersistentKeys(open_secret(project_id, passphrase, given).key)
        else:
            made = create_secret(project_id, passphrase, given)
            keys = PersistentKeys(made.key)
            where = given or secret_path(project_id)
            notes.append(f"Made the custodian secret of project {project_id!r} at {where} (sealed with the "
                         "passphrase); keep it: an unchanged patient gets the same released values in every release "
                         "made with it, and without it the next release counts as independent.")
    else:
        notes.append(f"No custodian secret for project {project_id!r} (give --secret-passphrase-file or "
                     f"{SECRET_PASSPHRASE_VAR}): this release draws fresh randomness, so every patient released "
                     "before composes (see ppdp history).")
    budget, stable = getattr(args, "budget", None), getattr(args, "stable_pseudonyms", None)
    if budget is None or stable is None:
        with Ledger() as ledger:
            releases = ledger.releases(project_id)
        if budget is None:
            budget = next((r.budget for r in reversed(releases) if r.budget is not None), None)
        if stable is None:  # the project's choice: as its last release
            stable = releases[-1].stable_pseudonyms if releases else False
    return RepeatSettings(project_id=project_id, keys=keys, budget=budget,
                          override_reason=getattr(args, "over_budget_reason", None) or None, notes=notes,
                          stable_pseudonyms=bool(stable))


def seeded_secret(seed: int) -> bytes:
    """The custodian secret of a job with a fixed ``--seed`` (testing only): reproducible, as its draws are."""
    import hashlib

    return hashlib.sha256(b"PPDP Desktop seeded custodian secret\x00" + str(int(seed)).encode()).digest()


def default_project(data: str | None, given: str | None) -> str:
    """``--project`` or the data file's name without its extension ("stdin" for ``-``)."""
    if given:
        return given.strip()
    if not data or data == "-":
        return "stdin"
    return Path(data).stem
