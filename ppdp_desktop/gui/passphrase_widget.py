"""Entering a new passphrase twice, with a strength meter (for sealing a key file)."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QWidget

from ppdp_desktop.core.release.keyfile import MIN_PASSPHRASE, passphrase_strength

_COLOURS = ("#c0392b", "#d35400", "#b7950b", "#27ae60", "#1e8449")  # by score 0..4


class PassphraseFields(QWidget):
    """Two password fields ("Passphrase", "Repeat"), a strength bar and a message.

    The passphrase is valid when it has at least ``MIN_PASSPHRASE`` characters and both fields
    are equal. Nothing is stored anywhere but in the two fields.

    Signals
    -------
    validity_changed(bool)
        Emitted when the entry becomes valid or stops being valid.
    """

    validity_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.first = QLineEdit()
        self.second = QLineEdit()
        for edit, hint in ((self.first, f"at least {MIN_PASSPHRASE} characters"), (self.second, "type it again")):
            edit.setEchoMode(QLineEdit.EchoMode.Password)
            edit.setPlaceholderText(hint)
            edit.textChanged.connect(self._update)
        self.first.setAccessibleName("Passphrase")
        self.second.setAccessibleName("Repeat passphrase")
        self.strength_bar = QProgressBar()
        self.strength_bar.setRange(0, 4)
        self.strength_bar.setTextVisible(False)
        self.strength_bar.setMaximumHeight(8)
        self.strength_label = QLabel()
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c0392b;")
        strength = QHBoxLayout()
        strength.addWidget(self.strength_bar, 1)
        strength.addWidget(self.strength_label)
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("Passphrase", self.first)
        layout.addRow("Repeat", self.second)
        layout.addRow("Strength", strength)
        layout.addRow("", self.message)
        self._valid = False
        self._update()

    def passphrase(self) -> str | None:
        """The passphrase if it is long enough and typed the same twice, else None."""
        text = self.first.text()
        return text if self._check(text, self.second.text()) is None else None

    def is_valid(self) -> bool:
        """Whether :meth:`passphrase` would return a passphrase."""
        return self._valid

    def clear(self) -> None:
        """Empty both fields (after the key is sealed, so the passphrase does not linger)."""
        self.first.clear()
        self.second.clear()

    @staticmethod
    def _check(first: str, second: str) -> str | None:
        """What is wrong with the entry (a message), or None when it is valid."""
        if len(first) < MIN_PASSPHRASE:
            return f"The passphrase needs at least {MIN_PASSPHRASE} characters ({len(first)} so far)."
        if first != second:
            return "The two passphrases differ." if second else "Type the passphrase again in Repeat."
        return None

    def _update(self) -> None:
        first = self.first.text()
        score, word = passphrase_strength(first)
        self.strength_bar.setValue(score if first else 0)
        self.strength_bar.setStyleSheet(f"QProgressBar::chunk {{ background: {_COLOURS[score]}; }}")
        self.strength_label.setText(word if first else "")
        problem = self._check(first, self.second.text())
        self.message.setText(problem if problem and (first or self.second.text()) else "")
        valid = problem is None
        if valid != self._valid:
            self._valid = valid
            self.validity_changed.emit(valid)
