"""Step 1's progress row while a file is read: a bar, Cancel, and for how long it has been reading (the page's
message line above says what is read).

Reading a file is one library call that reports no fraction of its own, so the bar is a busy indicator until
the job reports one; the seconds count up, so a long read of a large workbook visibly goes on.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget


class LoadProgress(QWidget):
    """Hidden when idle; :meth:`begin` shows it, :meth:`end` hides it. ``cancel_clicked`` when Cancel is pressed."""

    cancel_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(260)
        self.label = QLabel()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop reading the file: the data in use, if any, stays loaded as it was")
        self.cancel_button.clicked.connect(self.cancel_clicked)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar)
        row.addWidget(self.cancel_button)
        row.addWidget(self.label, 1)
        self._since = 0.0
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._show_time)
        self.setVisible(False)

    def begin(self) -> None:
        """Reading started."""
        self._since = time.monotonic()
        self.bar.setRange(0, 0)  # busy until a fraction is reported
        self.cancel_button.setEnabled(True)
        self._show_time()
        self._clock.start()
        self.setVisible(True)

    def report(self, fraction: float) -> None:
        """The job's fraction done (0..1); a read that has not begun, or is finishing, keeps the busy bar."""
        if 0.0 < fraction < 1.0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(round(1000 * fraction))

    def end(self) -> None:
        self._clock.stop()
        self.setVisible(False)

    def _show_time(self) -> None:
        seconds = int(time.monotonic() - self._since)
        self.label.setText(f"{seconds} s" if seconds >= 1 else "")
