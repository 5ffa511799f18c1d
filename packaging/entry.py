"""Entry of the bundled executable ``ppdp-desktop``: the window, or the command line.

One executable serves both so the bundle carries one copy of the Python archive:
``ppdp-desktop [--demo] [FILE]`` opens the window, ``ppdp-desktop --selftest`` checks the
installation, and ``ppdp-desktop cli ARGS`` (or the ``ppdp`` launcher beside it, which the build
adds: a symbolic link on Linux/macOS, ``ppdp.cmd`` on Windows) is the ``ppdp`` command line.
"""
import multiprocessing
import os
import sys


def main() -> int:
    argv = sys.argv[1:]
    called_as = os.path.splitext(os.path.basename(sys.argv[0]))[0].lower()
    if called_as == "ppdp" or argv[:1] == ["cli"]:
        from ppdp_desktop.cli import main as cli_main

        return cli_main(argv[1:] if argv[:1] == ["cli"] else argv)
    from ppdp_desktop.gui.app import main as gui_main

    return gui_main(argv)


if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
