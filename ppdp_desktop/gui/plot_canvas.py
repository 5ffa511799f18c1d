"""A widget showing a matplotlib ``Figure`` built in Qt-free code (matplotlib's embedding example).

Core code builds :class:`matplotlib.figure.Figure` objects (never pyplot); this widget only wraps
one in a ``FigureCanvasQTAgg`` so the same figure can also be saved to PNG or PDF by a report.
"""
from __future__ import annotations

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

MIN_HEIGHT = 220  # pixels
MIN_PIXELS_PER_INCH = 72  # below this a figure's labels would overlap; put the canvas in a scroll area


class PlotCanvas(QWidget):
    """Shows one figure; :meth:`set_figure` swaps it for another.

    Parameters
    ----------
    figure : Figure, optional
        The figure to show; an empty one if omitted.
    parent : QWidget, optional
    """

    def __init__(self, figure: Figure | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.canvas: FigureCanvasQTAgg | None = None
        self.set_figure(figure if figure is not None else Figure(layout="constrained"))

    @property
    def figure(self) -> Figure:
        return self.canvas.figure

    def set_figure(self, figure: Figure) -> None:
        """Show ``figure`` (a figure can be attached to one canvas at a time; the old canvas is dropped)."""
        old = self.canvas
        self.canvas = FigureCanvasQTAgg(figure)
        self.canvas.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        natural = figure.get_figheight() * MIN_PIXELS_PER_INCH  # tall figures (many bars) keep their labels readable
        self.canvas.setMinimumHeight(max(MIN_HEIGHT, int(natural)))
        if old is not None:
            self._layout.replaceWidget(old, self.canvas)
            old.setParent(None)
            old.deleteLater()
        else:
            self._layout.addWidget(self.canvas)
        self.canvas.draw_idle()
