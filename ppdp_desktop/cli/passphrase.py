"""Where the CLI gets a passphrase: a file, the environment, or a prompt (never the command line,
where it would be seen in the process list and the shell history)."""
from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path

from ppdp_desktop.core.errors import ParameterError

ENV_VAR = "PPDP_PASSPHRASE"
SIGNING_ENV_VAR = "PPDP_SIGNING_PASSPHRASE"


def read_passphrase(passphrase_file: str | None, *, confirm: bool, env_var: str = ENV_VAR,
                    what: str = "the key file") -> str:
    """``--passphrase-file`` (first line), else ``env_var`` (``PPDP_PASSPHRASE``), else a prompt (twice to seal)."""
    if passphrase_file:
        try:
            lines = Path(passphrase_file).read_text(encoding="utf-8-sig").splitlines()  # Notepad's BOM
        except (OSError, UnicodeDecodeError) as exc:
            raise ParameterError(f"Cannot read the passphrase file {passphrase_file}: {exc}.") from exc
        if not lines or not lines[0]:
            raise ParameterError(f"The passphrase file {passphrase_file} is empty.")
        return lines[0]
    if os.environ.get(env_var):
        return os.environ[env_var]
    if not sys.stdin.isatty():
        raise ParameterError(f"A passphrase for {what} is needed: give its passphrase file or set {env_var}.")
    first = getpass.getpass(f"Passphrase for {what}: ")
    if confirm and getpass.getpass("Repeat the passphrase: ") != first:
        raise ParameterError("The two passphrases differ; nothing was written.")
    return first


def generate_passphrase(words: int = 5) -> str:
    """A random passphrase for the demo, e.g. ``"kavu-rime-tosa-nelo-pidu"`` (about 60 bits)."""
    import secrets

    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    return "-".join(
        "".join(secrets.choice(consonants) + secrets.choice(vowels) for _ in range(2)) for _ in range(words)
    )
