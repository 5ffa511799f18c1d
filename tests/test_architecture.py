"""The core never imports Qt: importing every core module with PySide6 blocked must work."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "ppdp_desktop" / "core"

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
import ppdp_desktop.cli
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
