"""A read-only ``QAbstractTableModel`` over a pandas DataFrame, formatting cells lazily.

Nothing is copied into items: a million-row table costs the view only the rows on screen.
"""
from __future__ import annotations

import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

_Index = QModelIndex | QPersistentModelIndex


class DataFrameModel(QAbstractTableModel):
    def __init__(self, frame: pd.DataFrame | None = None, parent=None) -> None:
        super().__init__(parent)
        self._frame = frame if frame is not None else pd.DataFrame()
        self._columns = self._arrays(self._frame)

    def set_frame(self, frame: pd.DataFrame) -> None:
        self.beginResetModel()
        self._frame = frame
        self._columns = self._arrays(frame)
        self.endResetModel()

    @staticmethod
    def _arrays(frame: pd.DataFrame) -> list:
        """Each column's backing array, without copying or converting (cells are read one by one)."""
        return [frame[c].array for c in frame.columns]

    @property
    def frame(self) -> pd.DataFrame:
        return self._frame

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self._frame)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        value = self._columns[index.column()][index.row()]
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            return ""
        return str(value)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return str(self._frame.columns[section])
        return str(section + 1)
