"""Architecture rules: the core never imports Qt (importing every core module with PySide6 blocked
must work), the import-linter contracts in pyproject.toml hold, no module is part of an import
cycle, and method names are spelled only inside ``ppdp_desktop/core/methods``."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ppdp_desktop"
CORE = PACKAGE / "core"
METHODS = CORE / "methods"

SCRIPT = """
import importlib, pkgutil, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6', 'PyQt5', 'PyQt6'):
            raise ImportError('Qt is forbidden in ppdp_desktop.core: ' + name)
sys.meta_path.insert(0, Block())
import ppdp_desktop.core as core
for info in pkgutil.walk_packages(core.__path__, 'ppdp_desktop.core.'):
    importlib.import_module(info.name)
import ppdp_desktop.cli as cli
for info in pkgutil.walk_packages(cli.__path__, 'ppdp_desktop.cli.'):  # the commands are imported when they run
    importlib.import_module(info.name)
print('ok')
"""


def test_core_and_cli_import_without_qt():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_no_qt_import_statements_in_core():
    offenders = [
        str(p) for p in CORE.rglob("*.py") if any(w in p.read_text() for w in ("import PySide6", "from PySide6"))
    ]
    assert offenders == []


def test_import_contracts_hold():
    """``lint-imports`` (the console script of the running environment) keeps every contract."""
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint_imports is None:
        pytest.fail(f"lint-imports is not installed next to {sys.executable}; install the test extras")
    result = subprocess.run(
        [lint_imports, "--no-cache"],  # no .import_linter_cache in the work tree
        cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, COLUMNS="200"),
    )
    assert result.returncode == 0, f"lint-imports failed:\n{result.stdout}\n{result.stderr}"


def test_no_import_cycles():
    """No direct import A -> B is closed by a chain B -> ... -> A (imports inside functions count)."""
    graph = grimp.build_graph("ppdp_desktop", exclude_type_checking_imports=True, cache_dir=None)
    cycles: set[tuple[str, ...]] = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                cycle = (importer, *back[:-1])  # importer -> imported -> ... -> (back to) importer
                start = cycle.index(min(cycle))
                cycles.add(cycle[start:] + cycle[:start])  # one rotation per cycle
    groups: list[set[str]] = []  # modules tied together by cycles (strongly connected components)
    for cycle in cycles:
        joined = set(cycle).union(*(g for g in groups if g & set(cycle)))
        groups = [g for g in groups if not g & joined] + [joined]
    report = "\n".join(
        [f"modules in cycles: {', '.join(sorted(g))}" for g in sorted(groups, key=min)]
        + ["chains:"] + [" -> ".join((*cycle, cycle[0])) for cycle in sorted(cycles)]
    )
    assert not cycles, f"{len(cycles)} import cycles in {len(groups)} groups:\n{report}"


def _method_name_literals(source: str, filename: str, names: set[str]) -> list[str]:
    """``file:line:value`` for each string constant in ``source`` equal to one of ``names``."""
    tree = ast.parse(source, filename=filename)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.add(id(first.value))
    chosen = _choosing_a_method(tree)
    hits = sorted(
        (node.lineno, node.col_offset, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and node.value in names and id(node) not in docstrings
        and (node.value not in DATA_KEYS or id(node) in chosen)
    )
    return [f"{filename}:{line}:{value!r}" for line, _, value in hits]


#: method names that are also keys of release.json ("generalization": the k-anonymous generalization's figures, which
#: every method may carry): such a string is a method name only where it picks a method (:func:`_choosing_a_method`)
DATA_KEYS = {"generalization"}


def _choosing_a_method(tree: ast.AST) -> set[int]:
    """The string constants that pick a method: compared (``method == "x"``, ``in ("x", ...)``), passed as
    ``method=`` or to ``get_method`` / ``REGISTRY[...]``."""
    out: set[int] = set()

    def strings(node: ast.AST) -> list[int]:
        return [id(n) for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for part in (node.left, *node.comparators):
                out.update(strings(part))
        elif isinstance(node, ast.keyword) and node.arg == "method":
            out.update(strings(node.value))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "get_method":
            for arg in node.args:
                out.update(strings(arg))
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "REGISTRY":
            out.update(strings(node.slice))
    return out


def test_no_method_names_outside_methods():
    """Only ppdp_desktop/core/methods spells the registered method names; everything else asks it."""
    from ppdp_desktop.core.methods import REGISTRY

    names = set(REGISTRY)
    assert names, "the method registry is empty"
    # The scanner itself: it finds a planted name and skips docstrings.
    planted = '"""rr"""\ndef f(x):\n    """rr"""\n    return x == "rr"\n'
    assert _method_name_literals(planted, "planted.py", names | {"rr"}) == ["planted.py:4:'rr'"]
    # a method name that is also a release.json key counts only where it picks a method
    keyed = 'g = entry.get("generalization")\nif name == "generalization":\n    get_method("generalization")\n'
    assert _method_name_literals(keyed, "keyed.py", names) == ["keyed.py:2:'generalization'", "keyed.py:3:'generalization'"]
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(METHODS):
            continue
        found += _method_name_literals(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix(), names)
    assert found == [], f"{len(found)} method names outside ppdp_desktop/core/methods:\n" + "\n".join(found)


CONTRACT = "methods-only-through-the-registry"


def _families() -> set[str]:
    """The method family packages: the sub-packages of ppdp_desktop/core/methods."""
    return {f"ppdp_desktop.core.methods.{p.parent.name}" for p in METHODS.glob("*/__init__.py")}


def _registry_contract() -> dict:
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    found = [c for c in contracts if c.get("id") == CONTRACT]
    assert len(found) == 1, f"pyproject.toml has no import-linter contract {CONTRACT!r}"
    return found[0]


def test_methods_only_through_the_registry_contract():
    """The contract protects every method family (a new family package must be listed) and lets only
    ``ppdp_desktop.core.methods`` import them; it is kept, and it breaks when a module outside imports a family
    directly (not when it imports the registry, which imports every family)."""
    from importlinter.contracts.protected import ProtectedContract

    contract = _registry_contract()
    assert contract["type"] == "protected"
    assert set(contract["protected_modules"]) == _families() and len(_families()) >= 6
    assert contract["allowed_importers"] == ["ppdp_desktop.core.methods"]
    options = {k: v for k, v in contract.items() if k not in ("id", "name", "type")}
    check = ProtectedContract(contract["name"], {"root_packages": ["ppdp_desktop"]}, options)
    graph = grimp.build_graph("ppdp_desktop", exclude_type_checking_imports=True, cache_dir=None)
    assert graph.find_shortest_chain(importer="ppdp_desktop.gui.main_window",
                                     imported="ppdp_desktop.core.methods.rr.method") is not None  # via the registry
    assert check.check(graph, verbose=False).kept
    for importer, imported in [("ppdp_desktop.core.report.build", "ppdp_desktop.core.methods.rr.settings"),
                               ("ppdp_desktop.gui.method_editors", "ppdp_desktop.core.methods.dp")]:
        graph.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
        result = check.check(graph, verbose=False)
        graph.remove_import(importer=importer, imported=imported)
        assert not result.kept
        links = [link for m in result.metadata["illegal_imports"] for link in m.illegal_links]
        assert [(link["importer"], link["imported"]) for link in links] == [(importer, imported)]


def _family_imports(source: str, filename: str, families: set[str]) -> list[str]:
    """``file:line:module`` for each import statement in ``source`` that names a family's module (also under
    ``if TYPE_CHECKING:``, which import-linter leaves out)."""
    hits = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        hits += [f"{filename}:{node.lineno}:{n}" for n in names
                 if any(n == f or n.startswith(f + ".") for f in families)]
    return hits


def test_no_family_imports_outside_methods():
    """grep-level: no import statement outside ppdp_desktop/core/methods names a family's module (the scanner
    finds a planted one, in either spelling)."""
    families = _families()
    planted = ("from ppdp_desktop.core.methods import dp\nimport ppdp_desktop.core.methods.rr.settings\n"
               "from ppdp_desktop.core.methods import REGISTRY\n")
    assert _family_imports(planted, "planted.py", families) == [
        "planted.py:1:ppdp_desktop.core.methods.dp", "planted.py:2:ppdp_desktop.core.methods.rr.settings"]
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if not path.is_relative_to(METHODS):
            found += _family_imports(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix(), families)
    assert found == [], f"{len(found)} imports of a method family outside ppdp_desktop/core/methods:\n" + "\n".join(found)
