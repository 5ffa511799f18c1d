"""``ppdp-desktop``: start the window (``--demo`` opens it with the embedded demo data)."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ppdp-desktop", description="PPDP Desktop window")
    parser.add_argument("--demo", action="store_true", help="open with the embedded demo data loaded")
    parser.add_argument("data", nargs="?", help="a data file to open")
    args = parser.parse_args(argv)

    from PySide6.QtWidgets import QApplication

    from ppdp_desktop.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("PPDP Desktop")
    window = MainWindow()
    if args.demo:
        window.load_demo()
    elif args.data:
        window.load_data(args.data)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
