"""The garbage collector kept off while the report's libraries import (issue 34: its collections traversed the
imported modules' objects again and again), and as it was before once they are imported."""
from __future__ import annotations

import gc
import threading

import pytest

from ppdp_desktop.core.collection import collection_paused


@pytest.fixture(autouse=True)
def collector_restored():
    was = gc.isenabled()
    yield
    gc.unfreeze()  # what the tests froze goes back under the collector's eye
    gc.enable() if was else gc.disable()


def test_off_inside_on_after_and_what_lived_then_frozen() -> None:
    gc.enable()
    frozen = gc.get_freeze_count()
    with collection_paused():
        assert not gc.isenabled()
        kept = [[] for _ in range(1000)]  # containers the collector tracks, alive after the block
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(kept)


def test_a_collector_that_was_off_stays_off_and_nothing_is_frozen() -> None:
    gc.disable()
    frozen = gc.get_freeze_count()
    with collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled() and gc.get_freeze_count() == frozen


def test_blocks_on_two_threads_keep_it_off_until_the_last_ends() -> None:
    gc.enable()
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collection_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with collection_paused():
        pass
    assert not gc.isenabled()  # the other thread's block still runs
    leave.set()
    thread.join(10)
    assert gc.isenabled()


def test_an_error_inside_turns_it_back_on() -> None:
    gc.enable()
    with pytest.raises(ValueError), collection_paused():
        raise ValueError("import failed")
    assert gc.isenabled()


def test_the_report_libraries_imported_with_the_collector_on_afterwards() -> None:
    import sys

    from ppdp_desktop.core.report.preload import import_report_libraries

    gc.enable()
    import_report_libraries()
    import_report_libraries()  # a second call does nothing
    assert gc.isenabled()
    assert "PIL.ImageFont" in sys.modules and "ppdp_desktop.core.report.pdf_document" in sys.modules


@pytest.mark.parametrize("argv", [["anonymize", "--help"], ["no-such-command"], ["--version"]])
def test_the_command_line_turns_it_back_on_after_its_parser(argv, capsys) -> None:
    """``ppdp`` builds its parser (the commands' imports) with the collector paused; whatever the command line, the
    collector is on again afterwards (a help text, an error and a version end in SystemExit)."""
    from ppdp_desktop.cli import main

    gc.enable()
    frozen = gc.get_freeze_count()
    main(argv)
    capsys.readouterr()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen
