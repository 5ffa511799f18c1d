"""A read-only ``QAbstractTableModel`` over a pandas DataFrame, formatting cells lazily.

Nothing is copied into items: a million-row table costs the view only the rows on screen.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

if TYPE_CHECKING:  # pandas comes with the first frame: an empty model (the window's first page) needs none
    import pandas as pd

_Index = QModelIndex | QPersistentModelIndex


class DataFrameModel(QAbstractTableModel):
    def __init__(self, frame: pd.DataFrame | None = None, parent=None) -> None:
        super().__init__(parent)
        self._frame: pd.DataFrame | None = None
        self._columns: list = []
        self._missing: object = None  # pandas' NA, once there is a frame
        if frame is not None:
            self._set(frame)

    def set_frame(self, frame: pd.DataFrame) -> None:
        self.beginResetModel()
        self._set(frame)
        self.endResetModel()

    def _set(self, frame: pd.DataFrame) -> None:
        import pandas as pd

        self._frame, self._columns, self._missing = frame, self._arrays(frame), pd.NA

    @staticmethod
    def _arrays(frame: pd.DataFrame) -> list:
        """Each column's backing array, without copying or converting (cells are read one by one)."""
        return [frame[c].array for c in frame.columns]

    @property
    def frame(self) -> pd.DataFrame:
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame()
        return self._frame

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() or self._frame is None else len(self._frame)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        value = self._columns[index.column()][index.row()]
        if value is None or value is self._missing or (isinstance(value, float) and value != value):
            return ""
        return str(value)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return str(self.frame.columns[section])
        return str(section + 1)
