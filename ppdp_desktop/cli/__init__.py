"""``ppdp``: every job of the wizard from a terminal, for scripts and headless tests.

Errors a user can cause print one line on stderr and exit with status 2; nothing is written.
"""
from __future__ import annotations

import sys
from typing import Sequence

from ppdp_desktop.cli import commands, selftest
from ppdp_desktop.cli.parser import EXIT_USER_ERROR, build_parser
from ppdp_desktop.core.errors import PPDPError, os_error_message

EXIT_INTERNAL = 70

COMMANDS = {
    "anonymize": commands.run_anonymize,
    "demo": commands.run_demo,
    "verify": commands.run_verify,
    "estimate": commands.run_estimate,
    "lookup": commands.run_lookup,
    "report": commands.run_report,
    "compare": commands.run_compare,
    "run": commands.run_project_file,
    "risk": commands.run_risk,
    "signing-key": commands.run_signing_key,
    "selftest": selftest.run,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--selftest"]:  # the bundled executables' spelling
        argv = ["selftest"]
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a malformed command line (already said in one line)
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    try:
        return COMMANDS[args.command](args)
    except PPDPError as exc:
        print(f"ppdp: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except OSError as exc:  # a full disk, a read-only folder, a missing folder: the user's to fix
        message = os_error_message(exc)
        if message is None:
            if args.debug:
                raise
            print(f"ppdp: internal error: {type(exc).__name__}: {exc} (run with --debug and report it)", file=sys.stderr)
            return EXIT_INTERNAL
        print(f"ppdp: error: {message}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("ppdp: interrupted; nothing was written.", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        if args.debug:
            raise
        print(f"ppdp: internal error: {type(exc).__name__}: {exc} (run with --debug and report it)", file=sys.stderr)
        return EXIT_INTERNAL
