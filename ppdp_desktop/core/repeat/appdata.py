"""The user's application-data folder of PPDP Desktop: the release ledger and each project's custodian secret.

The folder follows each platform's convention for data an application keeps for its user (not settings, which
go to the configuration folder of :mod:`ppdp_desktop.core.release.installation`):

* ``PPDP_DATA_DIR`` when it is set (tests, a portable installation, a custodian who keeps it on an encrypted disk);
* Windows: ``%LOCALAPPDATA%\\PPDP Desktop`` (per user and per computer, not the roaming profile);
* macOS: ``~/Library/Application Support/PPDP Desktop``;
* Linux and other POSIX systems: ``$XDG_DATA_HOME/ppdp-desktop``, else ``~/.local/share/ppdp-desktop``.

It holds ``ledger.sqlite3`` (:mod:`.ledger`) and, per project, ``projects/<16 hex digits>/`` (the first 64 bits
of the SHA-256 of the project's id: a folder name that is safe on every file system whatever the project is
called). The folders are made readable by their owner only (mode 0700 on POSIX) when something is written to
them.
"""
from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

from ppdp_desktop.core.errors import ParameterError

__all__ = ["DATA_VARIABLE", "LEDGER_FILE", "data_dir", "ledger_path", "private_folder", "project_folder",
           "project_folder_name"]

#: the environment variable that names the data folder instead of the platform's default
DATA_VARIABLE = "PPDP_DATA_DIR"
LEDGER_FILE = "ledger.sqlite3"
PROJECTS = "projects"


def data_dir() -> Path:
    """The user's application-data folder of PPDP Desktop (``PPDP_DATA_DIR`` when set); not created here."""
    override = os.environ.get(DATA_VARIABLE)
    if override:
        return Path(override)
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "PPDP Desktop"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "PPDP Desktop"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "ppdp-desktop"


def ledger_path() -> Path:
    """Where the release ledger is kept: ``data_dir() / ledger.sqlite3``."""
    return data_dir() / LEDGER_FILE


def _check_project_id(project_id: str) -> str:
    if not isinstance(project_id, str) or not project_id.strip():
        raise ParameterError(f"A project needs a name (its project id); got {project_id!r}.", setting="project",
                             value=project_id)
    return project_id


def project_folder_name(project_id: str) -> str:
    """The folder name of a project: the SHA-256 of its id (UTF-8) as hex, first 16 digits."""
    return hashlib.sha256(_check_project_id(project_id).encode("utf-8")).hexdigest()[:16]


def project_folder(project_id: str, create: bool = False) -> Path:
    """The project's own folder, ``data_dir() / projects / <project_folder_name>``; made owner-only when
    ``create`` (:func:`private_folder`)."""
    folder = data_dir() / PROJECTS / project_folder_name(project_id)
    return private_folder(folder) if create else folder


def private_folder(folder: Path) -> Path:
    """Make ``folder`` and the missing folders above it, readable by their owner only; return ``folder``.

    On POSIX every folder made here gets mode 0700, and ``folder`` itself, when it existed already with wider
    permissions and belongs to this user, is set to 0700; on Windows the per-user ``%LOCALAPPDATA%`` folder
    already keeps other users out.
    """
    folder = Path(folder)
    missing = [path for path in (folder, *folder.parents) if not path.exists()]
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)
    if os.name == "posix":
        status = folder.stat()
        if stat.S_IMODE(status.st_mode) & 0o077 and status.st_uid == os.geteuid():
            os.chmod(folder, 0o700)
    return folder
