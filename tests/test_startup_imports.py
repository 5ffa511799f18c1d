"""Start-up (issue 34): ``ppdp --help`` and one command import only what they need.

Not timed (timings are in benchmarks/bench_startup.py): each test runs a fresh interpreter and checks which
modules it imported, so that a new top-level import of the method families or the report's libraries shows up.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from ppdp_desktop.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = sorted(m for m in ("ppdp_desktop.core.methods", "ppdp_desktop.cli.commands", "scipy", "pandas", "numpy",
                           "sklearn", "matplotlib", "cryptography") if m in sys.modules)
print("IMPORTED", ",".join(heavy))
"""


def _imported(argv: list[str]) -> list[str]:
    run = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, check=True)
    line = next(x for x in run.stdout.splitlines() if x.startswith("IMPORTED"))
    return [m for m in line.removeprefix("IMPORTED").strip().split(",") if m]


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["verify", "--help"], ["signing-key", "--help"]])
def test_help_imports_no_method_family_nor_numerical_library(argv):
    assert _imported(argv) == []


def test_a_command_builds_its_own_options_only():
    from ppdp_desktop.cli.parser import build_parser

    parser = build_parser({"verify"})
    sub = parser._subparsers._group_actions[0].choices
    assert "--signer" in sub["verify"].format_help()
    assert "--method" not in sub["anonymize"].format_help()  # named, with its help line, but not built
    assert parser.format_help() == build_parser().format_help()  # ppdp --help is the same either way
