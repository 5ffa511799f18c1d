"""The preview model reads cells lazily from the DataFrame's own arrays (no copy of a big table)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from ppdp_desktop.gui.table_model import DataFrameModel


def test_cells_headers_and_missing_values(qtbot):
    frame = pd.DataFrame({"n": [1, 2, 3], "s": pd.array(["a", None, "c"], dtype="string"),
                          "f": [0.5, np.nan, 2.0], "c": pd.Categorical(["x", None, "y"])})
    model = DataFrameModel(frame)
    assert (model.rowCount(), model.columnCount()) == (3, 4)
    assert [model.data(model.index(1, c)) for c in range(4)] == ["2", "", "", ""]
    assert model.data(model.index(2, 3)) == "y"
    assert model.headerData(1, Qt.Orientation.Horizontal) == "s"
    assert model.headerData(0, Qt.Orientation.Vertical) == "1"


def test_a_million_rows_are_not_copied(qtbot):
    frame = pd.DataFrame({"id": np.arange(1_000_000), "s": pd.array(np.arange(1_000_000).astype(str), dtype="string")})
    model = DataFrameModel(frame)
    assert model.rowCount() == 1_000_000
    assert model._columns[1] is frame["s"].array  # the view reads the frame's own storage
    assert model.data(model.index(999_999, 1)) == "999999"
