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


REGISTRY_PROBE = """
import sys
from ppdp_desktop.core.methods import DEFAULT_METHOD, REGISTRY, get_method
before = sorted(m for m in ("scipy", "ppdp_desktop.core.methods.perturbation", "ppdp_desktop.core.methods.dp",
                            "ppdp_desktop.core.methods.rr") if m in sys.modules)
print("BEFORE", ",".join(before))
print("NAMES", ",".join(REGISTRY))
print("DEFAULT", DEFAULT_METHOD, type(get_method(None)).__name__)
"""


def test_the_registry_imports_its_method_families_on_first_use_only():
    """Importing the registry imports no method family (nor scipy); the first use fills it, in the same order, and
    the default is fine-grain perturbation."""
    run = subprocess.run([sys.executable, "-c", REGISTRY_PROBE], capture_output=True, text=True, check=True)
    lines = {x.split(" ")[0]: x.split(" ")[1:] for x in run.stdout.splitlines()}
    assert lines["BEFORE"] == [""]
    assert lines["NAMES"] == ["uniform,finegrain,partition,rr,personalized,dp-microagg,generalization"]
    assert lines["DEFAULT"] == ["finegrain", "FineGrainPerturbation"]
