"""Save a PNG of every wizard page on the demo data: ``python -m ppdp_desktop.gui.screenshots OUTDIR``.

Drives the real window offscreen through the whole workflow (load, roles, taxonomy, sensitivity,
method, run, report, export) as a user would, so the pictures show what a user sees.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QCoreApplication, QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from ppdp_desktop.core.methods import DEFAULT_METHOD, REGISTRY  # noqa: E402
from ppdp_desktop.core.settings import NoSettings  # noqa: E402
from ppdp_desktop.gui.main_window import MainWindow  # noqa: E402


def wait_until(condition, timeout_s: float = 60.0) -> None:
    """Process events until ``condition()`` holds (or fail after ``timeout_s``)."""
    loop_time = 0.0
    while not condition():
        loop = QEventLoop()
        QTimer.singleShot(20, loop.quit)
        loop.exec()
        loop_time += 0.02
        if loop_time > timeout_s:
            raise TimeoutError("the window did not reach the expected state in time")


def drive_demo(window: MainWindow, out_dir: Path | None = None, export_dir: Path | None = None) -> dict[str, Path]:
    """Walk the wizard on the demo data; if ``out_dir`` is given, grab each page to a PNG."""
    shots: dict[str, Path] = {}
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)

    def grab(name: str) -> None:
        if out_dir is not None:
            QCoreApplication.processEvents()
            path = out_dir / f"{len(shots) + 1:02d}-{name}.png"
            window.grab().save(str(path))
            shots[name] = path

    window.load_demo()
    wait_until(lambda: window.state.dataset is not None)
    grab("load")
    window.go_to(1)
    roles = window.pages[1]
    roles.table.setCurrentCell(list(window.state.dataset.frame.columns).index("diagnosis"), 0)
    editor = roles.editor
    editor.add_child(editor.model.index_for("Infectious"), "Blood-borne infection")
    for value in ("HIV infection", "Hepatitis C"):
        editor.move(editor.model.index_for(value), editor.model.index_for("Blood-borne infection"))
    editor.set_alias(editor.model.index_for("HIV infection"), 1, "Chronic infection")
    editor.tree.expandAll()
    editor.tree.scrollToTop()
    grab("roles-taxonomy")
    window.go_to(2)
    grab("sensitivity")
    window.go_to(3)
    # the default method, compared with the first other one that needs no parameters of its own
    page = window.pages[3]
    plain = [n for n, m in REGISTRY.items() if m.settings_type is NoSettings and n != DEFAULT_METHOD]
    page.choose(DEFAULT_METHOD, compare=plain[:1])
    grab("method")
    window.go_to(4)
    wait_until(lambda: window.state.outcome is not None, 120)
    grab("run")
    window.go_to(5)
    grab("report")
    window.go_to(6)
    export = window.pages[6]
    target = export_dir or Path(tempfile.mkdtemp(prefix="ppdp-shots-"))
    export.folder_edit.setText(str(target / "release"))
    export.key_edit.setText(str(target / "release.ppdpkey"))
    export.passphrase.first.setText("correct horse battery")
    export.passphrase.second.setText("correct horse battery")
    export.export()
    wait_until(lambda: export.is_complete(), 60)
    grab("export")
    return shots


def grab_dp_method(window: MainWindow, path: Path) -> Path:
    """After :func:`drive_demo`: the method page with differential privacy chosen, age's domain declared
    and income's still taken from the data (so its warning shows). Leaves that method chosen."""
    window.go_to(3)
    page = window.pages[3]
    name = next(n for n, m in REGISTRY.items() if m.window_editor == "dp")
    page.choose(name)
    dp = page.editors[name].parameters
    dp.check("diagnosis", False)
    for column in ("age", "income"):
        dp.check(column)
    dp.k.setValue(20)
    dp.set_domain("age", 0, 120)
    QCoreApplication.processEvents()
    page.scroll.ensureWidgetVisible(page.cards[name], 0, 0)
    page.scroll.ensureWidgetVisible(dp.message if dp.message.isVisible() else dp.plan)
    QCoreApplication.processEvents()
    window.grab().save(str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out_dir = Path(argv[0] if argv else "docs/screenshots")
    out_dir.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    window.resize(1280, 800)
    window.show()
    shots = drive_demo(window, out_dir)
    shots["method-dp"] = grab_dp_method(window, out_dir / f"{len(shots) + 1:02d}-method-dp.png")
    for path in shots.values():
        print(path)
    window.close()
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
