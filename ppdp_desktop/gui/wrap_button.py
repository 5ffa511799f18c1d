"""A check box and a radio button whose text wraps onto more lines when the window is narrow (an 800 px screen).

Qt's own buttons draw their text on one line and ask for its whole width as their minimum, so one long title ("Randomized
quasi-identifiers and/or sensitive value (linking-attack bound)") keeps the window wider than a small screen. These
ask only for their longest word and grow in height instead; the whole button stays clickable and ``text()`` is the text.
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QCheckBox, QRadioButton, QSizePolicy, QStyle, QStyleOptionButton, QStylePainter, QWidget

FLAGS = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap


class _Wrapping:
    """The shared part: the indicator at the first line's height, the text wrapped to the right of it."""

    _metrics: tuple[QStyle.PixelMetric, QStyle.PixelMetric, QStyle.ControlElement]

    def _setup(self) -> None:
        policy = self.sizePolicy()  # type: ignore[attr-defined]
        policy.setHeightForWidth(True)
        policy.setHorizontalPolicy(QSizePolicy.Policy.Preferred)
        self.setSizePolicy(policy)  # type: ignore[attr-defined]

    def _indent(self) -> int:
        indicator, spacing, _ = self._metrics
        style = self.style()  # type: ignore[attr-defined]
        return style.pixelMetric(indicator, None, self) + style.pixelMetric(spacing, None, self)

    def _text_height(self, width: int) -> int:
        rect = QRect(0, 0, max(1, width - self._indent()), 100_000)
        return self.fontMetrics().boundingRect(rect, FLAGS, self.text()).height()  # type: ignore[attr-defined]

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt API
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt API
        indicator = self.style().pixelMetric(self._metrics[0], None, self)  # type: ignore[attr-defined]
        return max(indicator, self._text_height(width)) + 2

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        words = self.text().split() or [""]  # type: ignore[attr-defined]
        width = self._indent() + max(self.fontMetrics().horizontalAdvance(w) for w in words) + 2  # type: ignore[attr-defined]
        return QSize(width, self.heightForWidth(width))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        width = self._indent() + self.fontMetrics().horizontalAdvance(self.text()) + 4  # type: ignore[attr-defined]
        return QSize(width, self.heightForWidth(width))

    def hitButton(self, pos: QPoint) -> bool:  # noqa: N802 - Qt API
        return self.rect().contains(pos)  # type: ignore[attr-defined]

    def paintEvent(self, _event: object) -> None:  # noqa: N802 - Qt API
        painter = QStylePainter(self)  # type: ignore[arg-type]
        option = QStyleOptionButton()
        self.initStyleOption(option)  # type: ignore[attr-defined]
        option.text = ""
        line = self.fontMetrics().height()  # type: ignore[attr-defined]
        option.rect = QRect(0, 0, self._indent(), line + 2)
        painter.drawControl(self._metrics[2], option)
        text = QRect(self._indent(), 1, self.width() - self._indent(), self.height())  # type: ignore[attr-defined]
        painter.drawItemText(text, int(FLAGS.value), self.palette(), self.isEnabled(), self.text())  # type: ignore[attr-defined]


class WrapCheckBox(_Wrapping, QCheckBox):
    """A :class:`QCheckBox` whose text wraps."""

    _metrics = (QStyle.PixelMetric.PM_IndicatorWidth, QStyle.PixelMetric.PM_CheckBoxLabelSpacing,
                QStyle.ControlElement.CE_CheckBox)

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._setup()


class WrapRadioButton(_Wrapping, QRadioButton):
    """A :class:`QRadioButton` whose text wraps."""

    _metrics = (QStyle.PixelMetric.PM_ExclusiveIndicatorWidth, QStyle.PixelMetric.PM_RadioButtonLabelSpacing,
                QStyle.ControlElement.CE_RadioButton)

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._setup()
