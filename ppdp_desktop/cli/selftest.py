"""``ppdp selftest`` (also ``--selftest`` of both bundled executables): the demo job end to end."""
from __future__ import annotations

import argparse
import sys
import time

from ppdp_desktop.cli.exit_codes import ExitCode
from ppdp_desktop.core.selftest import SelftestStep, run_selftest


def run(args: argparse.Namespace | None = None) -> int:
    """Print each step as it passes; exit 0 only if every step passed, 1 otherwise."""
    start = time.perf_counter()

    def show(step: SelftestStep) -> None:
        print(step.line(), flush=True)

    steps = run_selftest(show)
    failed = [s for s in steps if not s.passed]
    total = time.perf_counter() - start
    if failed:
        print(f"selftest FAILED at '{failed[0].name}' after {total:.1f} s", file=sys.stderr)
        return ExitCode.FAILED
    print(f"selftest passed: {len(steps)} steps in {total:.1f} s")
    return ExitCode.OK
