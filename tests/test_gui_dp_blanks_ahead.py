"""Step 4's blank cells of the sensitive column counted ahead on a thread when it is tagged (issue 34: counting a
million cells when step 4 opened held the window)."""
from __future__ import annotations

import threading

import pandas as pd
import pytest

pytest.importorskip("PySide6")

from ppdp_desktop.core.data.dataset import Dataset  # noqa: E402
from ppdp_desktop.gui import dp_blanks  # noqa: E402


def table(rows: int = 300) -> Dataset:
    cells = ["x", " ", None, "y", ""] * (rows // 5)
    return Dataset(pd.DataFrame({"diag": pd.array(cells, dtype="string"), "n": range(len(cells))}))


def test_the_count_started_ahead_is_the_one_shown_and_made_on_another_thread(monkeypatch, qtbot):
    threads = []
    mask = dp_blanks.blank_mask

    def recorded(column):
        threads.append(threading.current_thread())
        return mask(column)

    monkeypatch.setattr(dp_blanks, "blank_mask", recorded)
    data = table()
    expected = dp_blanks._count(data, "diag")  # 180 blank cells: " ", missing and ""
    assert expected[0] == 180
    threads.clear()
    dp_blanks.count_ahead(data, "diag")
    choices = dp_blanks.BlankChoices()
    assert choices.blanks_of(data, "diag") == expected
    assert threads and threading.main_thread() not in threads  # counted on the counting thread only


def test_counts_of_another_table_are_let_go():
    first, second = table(), table()
    dp_blanks.count_ahead(first, "diag")
    dp_blanks.count_ahead(second, "diag")
    assert all(ref() is second for ref, _future in dp_blanks._ahead.values())
    assert dp_blanks._counted(first, "diag") == dp_blanks._count(first, "diag")  # counted now, the same
