"""``ppdp``: every job of the wizard from a terminal, for scripts and headless tests.

Errors a user can cause print one line on stderr and exit with the status of their kind
(:mod:`ppdp_desktop.cli.exit_codes`: 1 a failed check, 2 usage, 3 input, 4 cancelled); nothing is written.
"""
from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Sequence

from ppdp_desktop.cli.exit_codes import ExitCode, exit_code_for
from ppdp_desktop.cli.parser import COMMAND_NAMES, build_parser
from ppdp_desktop.core.collection import collection_paused
from ppdp_desktop.core.errors import PPDPError, os_error_message
from ppdp_desktop.core.visible import visible

EXIT_USER_ERROR = ExitCode.USAGE  # the former names, kept for callers
EXIT_INTERNAL = ExitCode.INTERNAL

#: each command's module (in ppdp_desktop.cli) and function, imported when it runs: ``ppdp --help`` and one
#: command import no other command's libraries (issue 34: ``ppdp --help`` within 1.2x of importing numpy+pandas)
COMMANDS = {
    "anonymize": ("commands", "run_anonymize"),
    "demo": ("demo", "run_demo"),
    "verify": ("commands", "run_verify"),
    "estimate": ("commands", "run_estimate"),
    "lookup": ("commands", "run_lookup"),
    "report": ("report", "run_report"),
    "compare": ("compare", "run_compare"),
    "run": ("project_run", "run_project_file"),
    "risk": ("commands", "run_risk"),
    "signing-key": ("commands", "run_signing_key"),
    "selftest": ("selftest", "run"),
    "history": ("history", "run_history"),
}


def command(name: str) -> Callable[..., int]:
    """The function that runs the command ``name`` (its module imported now)."""
    module, function = COMMANDS[name]
    return getattr(importlib.import_module(f"ppdp_desktop.cli.{module}"), function)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``ppdp`` command; return its exit status (:class:`~ppdp_desktop.cli.exit_codes.ExitCode`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--selftest"]:  # the bundled executables' spelling
        argv = ["selftest"]
    try:
        with collection_paused():  # the commands' imports (pandas, the method families) live as long as the process
            parser = build_parser(set(argv) & set(COMMAND_NAMES))
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a malformed command line (already said in one line)
        return exc.code if isinstance(exc.code, int) else ExitCode.USAGE
    if args.quiet and args.verbose:
        print("ppdp: error: --quiet and --verbose contradict each other; give one. (see ppdp --help)", file=sys.stderr)
        return ExitCode.USAGE
    from ppdp_desktop.cli.output import console
    from ppdp_desktop.core.release.publish import published

    start = time.perf_counter()
    held = None
    _sweep()
    before = len(published())
    try:
        with console(args) as held:
            code = int(command(args.command)(args))
    except (PPDPError, KeyboardInterrupt) as exc:
        code = exit_code_for(exc)
        if isinstance(exc, KeyboardInterrupt):
            print(f"ppdp: interrupted; {_what_was_written(before) or 'nothing was written.'}", file=sys.stderr)
        else:
            _error(args, code, _honest(str(exc), before))
        return code
    except OSError as exc:  # a full disk, a read-only folder, a missing folder: the user's to fix
        message = os_error_message(exc)
        if message is None:
            return _internal(args, exc)
        _error(args, ExitCode.INPUT, _honest(message, before))
        return ExitCode.INPUT
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        return _internal(args, exc)
    if code != ExitCode.OK:  # a command that reports its own failure (selftest): its lines are the error
        _replay(held)
    if args.verbose:
        print(f"ppdp: {args.command} finished in {time.perf_counter() - start:.2f} s, exit status {code} "
              f"({_name(code)})", file=sys.stderr)
    return code


def _sweep() -> None:
    """What a killed job left (:func:`~ppdp_desktop.core.release.leftovers.sweep`): an old release it had moved
    aside is put back (said on stderr), its temporary files are removed."""
    from ppdp_desktop.core.release.leftovers import sweep

    for line in sweep():
        print(f"ppdp: note: {line}.", file=sys.stderr)


def _what_was_written(before: int) -> str:
    """The releases this command put in place before it failed, as a sentence ("" when none)."""
    from ppdp_desktop.core.release.publish import published

    done = published()[before:]
    if not done:
        return ""
    return " ".join(f"The release {out} and its key {key} were published before this, and are complete."
                    if key is not None else f"The release {out} was published before this, and is complete."
                    for out, key in done)


def _honest(message: str, before: int) -> str:
    """``message``, whose "nothing was published" is replaced by what was when a release is in place already."""
    done = _what_was_written(before)
    if not done or "published and complete" in message:
        return message
    for phrase in ("Nothing was published.", "nothing was published.", "Nothing was written.", "nothing was written."):
        message = message.replace(phrase, "")
    return f"{message.rstrip()} {done}"


def _replay(held) -> None:
    """What ``--quiet`` held back on stderr, shown because the command failed without raising (the lines that
    say why). A raised error prints its own one line; the warnings before it stay held back."""
    if held is not None and held.getvalue():
        sys.stderr.write(held.getvalue())


def _name(code: int) -> str:
    try:
        return ExitCode(code).name.lower()
    except ValueError:
        return "unknown"


def _error(args, code: int, message: str) -> None:
    detail = f" [exit {int(code)}: {_name(code)}]" if args.verbose else ""
    print(f"ppdp: error: {visible(message)}{detail}", file=sys.stderr)  # a release's text can quote anything


def _internal(args, exc: BaseException) -> int:
    if args.debug:
        raise exc
    print(f"ppdp: internal error: {type(exc).__name__}: {visible(exc)} (run with --debug and report it)",
          file=sys.stderr)
    return ExitCode.INTERNAL
