"""No core message spells a command-line option: it refers to a setting by its key (``setting_ref``), and each
face phrases it (the command line as ``--key``, the window as the control that sets it).

The scan reads the source of ``ppdp_desktop/core`` (ast): every string constant and f-string part inside a
``raise X(...)`` call, inside what a ``precheck`` returns or appends, and in the module-level constants those
name (message lists such as ``UNLINKED_K``).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import ppdp_desktop.core
from ppdp_desktop.core.errors import ParameterError, phrase, setting_keys, setting_ref

CORE = Path(ppdp_desktop.core.__file__).parent
OPTION = re.compile(r"--[a-z]")
#: (file relative to core, text that may stay) -- keep it short, and say why
ALLOWED: set[tuple[str, str]] = set()


def _strings(node: ast.AST) -> list[str]:
    """The string constants in ``node`` (an f-string's literal parts included)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _messages(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, text)`` of every message string of a module, as the module docstring describes."""
    found: list[tuple[int, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            found.append((node.lineno, node.exc))
        if isinstance(node, ast.FunctionDef) and node.name == "precheck":
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and inner.value is not None:
                    found.append((inner.lineno, inner.value))
                if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                        and inner.func.attr in ("append", "extend")):
                    found.append((inner.lineno, inner))
    named = set().union(*(_names(node) for _, node in found)) if found else set()
    for node in tree.body:  # module-level message constants named by a raise or a precheck
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in named for t in node.targets):
            found.append((node.lineno, node.value))
    return [(line, text) for line, node in found for text in _strings(node)]


def test_no_core_message_spells_a_command_line_option():
    offending = []
    for path in sorted(CORE.rglob("*.py")):
        where = str(path.relative_to(CORE))
        for line, text in _messages(ast.parse(path.read_text(encoding="utf-8"))):
            if OPTION.search(text) and (where, text) not in ALLOWED:
                offending.append(f"core/{where}:{line}: {text!r}")
    assert not offending, "messages that spell an option (use setting_ref):\n" + "\n".join(offending)


def test_the_scan_finds_an_option_spelled_in_a_raise_and_in_a_precheck():
    source = '''
HINT = "give --quasi COLS"

def f():
    raise ValueError(f"bad {x}: give --rho1 X")

class M:
    def precheck(self, settings):
        problems = []
        problems.append(HINT)
        return problems + ["set --theta"]
'''
    texts = [text for _, text in _messages(ast.parse(source))]
    assert sorted(t for t in texts if OPTION.search(t)) == [": give --rho1 X", "give --quasi COLS", "set --theta"]


def test_a_reference_is_the_option_on_the_command_line_and_keeps_its_fields_through_pickling():
    import pickle

    error = ParameterError(f"set {setting_ref('rho1', 'X')} and {setting_ref('rho2', 'Y')}", setting="rho1", value=None)
    assert str(error) == "set --rho1 X and --rho2 Y" and setting_keys(error.message) == ["rho1", "rho2"]
    assert error.phrase(lambda key, metavar: key.upper()) == "set RHO1 and RHO2"
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) and again.setting == "rho1" and again.has_value and again.value is None
    assert phrase(again.message) == str(error)
